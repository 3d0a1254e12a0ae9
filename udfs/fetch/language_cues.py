"""Language cues of a link: does its context say which language the page behind it is in?

ILSP-FC (Papavassiliou et al.) gives a link on a page in L1 a large bonus when its context points to L2:
the anchor says "Deutsch" or "DE", the link shows a flag, or its attributes name the language. This
module reads that context — anchor text, the link's `hreflang` / `lang` / `title` attributes, and the
alt text and file name of an image inside the link — and returns the language named (ISO 639-3) and the
kind of evidence, or None.

False cues are the risk: 'de' is a Spanish word, 'it' and 'is' English ones, 'fin' and 'est' French,
'UK' means the United Kingdom. So a bare code counts only when it is the whole anchor, title or alt
text (`[DE]`, `de-AT`, `ENG`), an `hreflang`/`lang` attribute, or a flag image's file name
(`flag-de.png`, `/flags/fr.gif`, `de.svg`); three-letter codes in text only in capitals (`DEU`), and
never the 639-2/B codes (`ice`, `may`, `per` are words). Language names (English names and endonyms
from conf/languages.yaml) count as whole words of a short text (at most `max_label_words`, ExtractionConfig's):
"Deutsch", "English version", "Lire en français", not a headline that mentions German.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from parascout.udfs.common.langs import load_languages
from parascout.udfs.fetch.config import DEFAULT

#: kinds of evidence, strongest first; `CUE_KINDS_ANCHOR` is what a link's anchor text alone says
CUE_KINDS = ("hreflang", "anchor_name", "anchor_code", "flag", "title", "alt", "lang")
CUE_KINDS_ANCHOR = frozenset({"anchor_name", "anchor_code"})
#: how much each kind of evidence is trusted (a score in [0, 1] for consumers that weigh cues)
CUE_WEIGHTS = {"hreflang": 1.0, "anchor_name": 1.0, "anchor_code": 0.9, "flag": 0.8, "title": 0.8, "alt": 0.8,
               "lang": 0.6}
#: codes never taken from text: they mean something else there ('UK' is the United Kingdom)
AMBIGUOUS_TEXT_CODES = frozenset({"uk"})
#: flag file names that use a country code where the language code differs
COUNTRY_FLAGS = {"gb": "eng", "uk": "eng", "us": "eng", "en-gb": "eng", "en-us": "eng", "dk": "dan", "se": "swe",
                 "gr": "ell", "cz": "ces", "jp": "jpn", "cn": "zho", "tw": "zho", "kr": "kor", "ua": "ukr",
                 "il": "heb", "ee": "est", "si": "slv", "rs": "srp", "ir": "fas", "al": "sqi", "br": "por",
                 "at": "deu", "mx": "spa", "vn": "vie", "by": "bel", "rs-sr": "srp"}
FLAG_WORDS = frozenset({"flag", "flags", "lang", "langs", "language", "languages", "icon", "icons", "ico",
                        "country", "countries", "small", "big"})
IMAGE_SUFFIX = re.compile(r"\.(png|gif|jpe?g|svg|webp|ico|bmp)$", re.IGNORECASE)
_CODE_LABEL = re.compile(r"[a-z]{2,3}(?:-[a-z0-9]{2,4})?")
_WORD = re.compile(r"[^\W_]+(?:[-_][^\W_]+)?")
_LABEL_PUNCTUATION = " \t\r\n[](){}<>|/\\·•»«›‹:;,.!?*-–—'\"→←"


@dataclass(frozen=True)
class LinkCue:
    """The language a link's context names (ISO 639-3) and the kind of evidence (one of CUE_KINDS)."""

    lang: str
    kind: str

    @property
    def weight(self) -> float:
        return CUE_WEIGHTS[self.kind]


@functools.lru_cache(maxsize=4)
def _tables(path: str | None = None) -> tuple[dict[str, str], dict[str, str], dict[str, str], int]:
    """(attribute codes, text codes, names, longest name in words), all keys case-folded."""
    attribute_codes: dict[str, str] = {}
    text_codes: dict[str, str] = {}
    names: dict[str, str] = {}
    for language in load_languages(path).values():
        for code in (*language.codes, *language.locales):
            attribute_codes.setdefault(code.lower(), language.iso639_3)
        for code in (language.iso639_1, language.iso639_3, *language.locales):
            if code and code.lower() not in AMBIGUOUS_TEXT_CODES:
                text_codes.setdefault(code.lower(), language.iso639_3)
        for name in language.names_in_urls:
            names.setdefault(_fold(name), language.iso639_3)
    longest = max((len(name.split()) for name in names), default=1)
    return attribute_codes, text_codes, names, longest


def _fold(text: str) -> str:
    """Case-folded, NFC, separators as single spaces."""
    return " ".join(unicodedata.normalize("NFC", text).casefold().replace("_", "-").split())


@functools.lru_cache(maxsize=4096)
def code_language(code: str | None, path: str | None = None) -> str | None:
    """The language of an `hreflang`/`lang` value ('de', 'de-AT', 'pt_BR', 'deu'), None when unknown or 'x-default'."""
    if not code:
        return None
    attribute_codes = _tables(path)[0]
    key = _fold(code).strip()
    return attribute_codes.get(key) or attribute_codes.get(key.split("-")[0])


@functools.lru_cache(maxsize=65536)
def text_language(text: str | None, path: str | None = None,
                  max_label_words: int = DEFAULT.max_label_words) -> tuple[str, str] | None:
    """(language, 'name' | 'code') named by a short label (a name: in at most max_label_words words), None when it
    names none or more than one."""
    if not text:
        return None
    label = _fold(text).strip(_LABEL_PUNCTUATION)
    if not label:
        return None
    _, text_codes, names, longest = _tables(path)
    code = _label_code(label, text, text_codes)
    if code:
        return code, "code"
    words = _WORD.findall(label)
    if not words or len(words) > max_label_words:
        return None
    found = {names[" ".join(words[i:i + n])] for n in range(1, longest + 1) for i in range(len(words) - n + 1)
             if " ".join(words[i:i + n]) in names}
    return (found.pop(), "name") if len(found) == 1 else None


def _label_code(label: str, original: str, text_codes: dict[str, str]) -> str | None:
    """A label that is a code and nothing else: 'de', '[FR]', 'pt-br'; three letters only in capitals ('DEU')."""
    if not _CODE_LABEL.fullmatch(label):
        return None
    found = text_codes.get(label) or text_codes.get(label.split("-")[0])
    if not found:
        return None
    base = label.split("-")[0]
    if len(base) == 3 and base.upper() not in original:
        return None
    return found


@functools.lru_cache(maxsize=65536)
def flag_language(file_name: str | None, path: str | None = None) -> str | None:
    """The language of a flag image by its file name or path: 'flag-de.png', '/flags/fr.gif', 'de.svg', 'gb.png'."""
    if not file_name:
        return None
    parts = [part for part in _fold(file_name).split("?")[0].split("/") if part]
    if not parts or not IMAGE_SUFFIX.search(parts[-1]):
        return None
    stem = IMAGE_SUFFIX.sub("", parts[-1])
    attribute_codes, _, names, _ = _tables(path)
    tokens = [token for token in re.split(r"[-_.\s]+", stem) if token]
    in_flag_folder = any(part in FLAG_WORDS for part in parts[:-1])
    whole = stem.replace("_", "-")
    if whole in names:
        return names[whole]
    if whole in COUNTRY_FLAGS:
        return COUNTRY_FLAGS[whole]
    if whole in attribute_codes and (len(whole) != 3 or in_flag_folder):
        return attribute_codes[whole]
    if any(token in FLAG_WORDS for token in tokens) or in_flag_folder:
        rest = [token for token in tokens if token not in FLAG_WORDS and not token.isdigit()]
        if len(rest) == 1 or (len(rest) == 2 and "-".join(rest) in attribute_codes):
            key = "-".join(rest)
            return COUNTRY_FLAGS.get(key) or attribute_codes.get(key) or names.get(key) or \
                COUNTRY_FLAGS.get(rest[0]) or attribute_codes.get(rest[0])
    return None


def link_cue(text: str | None = None, *, hreflang: str | None = None, lang: str | None = None,
             title: str | None = None, image_alt: str | None = None, image: str | None = None,
             kinds: frozenset[str] | tuple[str, ...] = CUE_KINDS, path: str | None = None,
             max_label_words: int = DEFAULT.max_label_words) -> LinkCue | None:
    """The strongest language cue of a link's context among `kinds`, None when its context names no language.

    text: the anchor text; hreflang / lang / title: the link's attributes; image_alt / image: the alt text and
    the file name (or URL path) of an image inside the link; a language name counts in a text of at most
    max_label_words words.
    """
    if not (text or hreflang or lang or title or image_alt or image):
        return None
    return _link_cue(text, hreflang, lang, title, image_alt, image, kinds, path, max_label_words)


@functools.lru_cache(maxsize=65536)
def _link_cue(text, hreflang, lang, title, image_alt, image, kinds, path, max_label_words) -> LinkCue | None:
    """link_cue, cached: a site's navigation repeats the same anchors on every page."""
    found = code_language(hreflang, path) if "hreflang" in kinds else None
    if found:
        return LinkCue(found, "hreflang")
    named = text_language(text, path, max_label_words) if CUE_KINDS_ANCHOR.intersection(kinds) else None
    if named and ("anchor_" + named[1]) in kinds:
        return LinkCue(named[0], "anchor_" + named[1])
    for kind, found in (("flag", lambda: flag_language(image, path)),
                        ("title", lambda: _text_cue(title, path, max_label_words)),
                        ("alt", lambda: _text_cue(image_alt, path, max_label_words)),
                        ("lang", lambda: code_language(lang, path))):
        if kind in kinds and (language := found()):
            return LinkCue(language, kind)
    return None


def _text_cue(text: str | None, path: str | None, max_label_words: int) -> str | None:
    found = text_language(text, path, max_label_words)
    return found[0] if found else None


def wat_link_cue(item: dict, following: dict | None = None, kinds: frozenset[str] | tuple[str, ...] = CUE_KINDS,
                 max_label_words: int = DEFAULT.max_label_words) -> LinkCue | None:
    """The cue of one WAT `Links` / head `Link` entry ({path, url, text, title, hreflang}); an anchor without
    text followed by an image entry (`IMG@/src` with alt) is taken to wrap that image, as WAT lists both flat."""
    image = image_alt = None
    text = item.get("text")
    if following is not None and str(following.get("path", "")).startswith("IMG@") and not (text or "").strip():
        image, image_alt = following.get("url") or following.get("src"), following.get("alt")
    return link_cue(text, hreflang=item.get("hreflang"), lang=item.get("lang"), title=item.get("title"),
                    image_alt=image_alt, image=image, kinds=kinds, max_label_words=max_label_words)
