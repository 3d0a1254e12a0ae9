"""ISO 639 language table (conf/languages.yaml): code normalisation and name lookups.

Internally parascout speaks ISO 639-3, as CommonCrawl's CDX `languages` field does;
users may write 639-1, 639-2/B, English names or endonyms.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from importlib import resources

import yaml

from parascout.udfs.common.urls import tokenize_text

CONF_DIR = resources.files("parascout.conf")  # the packaged YAML files (a folder on disk in every install)
LANGUAGES_FILE = CONF_DIR / "languages.yaml"


@dataclass(frozen=True)
class Language:
    iso639_3: str
    iso639_1: str | None
    name: str
    endonym: str | None
    names: tuple[str, ...] = field(default_factory=tuple)
    locales: tuple[str, ...] = field(default_factory=tuple)
    iso639_2b: str | None = None

    @property
    def codes(self) -> tuple[str, ...]:
        """Every short code that may stand for this language in a URL."""
        return tuple(c for c in (self.iso639_1, self.iso639_3, self.iso639_2b) if c)

    @property
    def names_in_urls(self) -> tuple[str, ...]:
        """Names a URL may use for the language: English name(s) and endonym (as written in the table)."""
        return tuple(n for n in (self.name, self.endonym or "", *self.names) if n)

    @property
    def markers(self) -> tuple[str, ...]:
        """The one source of language markers: codes, names, endonym and locales (en, eng, english, en-gb).
        URL tokenisers, handle LSS lists and the URL models derive their marker sets from this."""
        return (*self.codes, *self.names_in_urls, *self.locales)


class UnknownLanguage(ValueError):
    pass


@functools.lru_cache(maxsize=4)
def load_languages(path: str | None = None) -> dict[str, Language]:
    """The language table keyed by ISO 639-3 code."""
    with open(path or LANGUAGES_FILE, encoding="utf-8") as handle:
        entries = yaml.safe_load(handle)["languages"]
    table = {}
    for entry in entries:
        language = Language(
            iso639_3=entry["iso639_3"],
            iso639_1=entry.get("iso639_1"),
            name=entry["name"],
            endonym=entry.get("endonym"),
            names=tuple(entry.get("names") or ()),
            locales=tuple(entry.get("locales") or ()),
            iso639_2b=entry.get("iso639_2b"),
        )
        table[language.iso639_3] = language
    return table


@functools.lru_cache(maxsize=4)
def _aliases(path: str | None = None) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for language in load_languages(path).values():
        for alias in (*language.codes, *language.names, language.name.lower()):
            aliases.setdefault(alias.lower(), language.iso639_3)
    return aliases


def to_iso639_3(code: str, path: str | None = None) -> str:
    """Normalise a language code or name ('is', 'isl', 'ice', 'Icelandic') to ISO 639-3."""
    key = code.strip().lower().replace("_", "-")
    aliases = _aliases(path)
    if key in aliases:
        return aliases[key]
    base = key.split("-")[0]
    if base in aliases:
        return aliases[base]
    raise UnknownLanguage(f"unknown language {code!r}: use an ISO 639-1/639-3 code listed in {LANGUAGES_FILE}")


LangPair = tuple[str, str]
LANGS_FORMS = "'en,fr' (one pair), 'en:fr,de' (a pivot against each) or 'en-fr,de-fr' (a list of pairs)"


def parse_lang_pairs(text: str) -> list[LangPair]:
    """Parse `--langs` into distinct ISO 639-3 pairs, in the order given: `en,fr` is one pair, `en:fr,de,is`
    a pivot against each listed language, `en-fr,de-fr` a list of pairs (src first in each)."""
    compact = (text or "").replace(" ", "")
    if not compact:
        raise ValueError(f"--langs is empty; write {LANGS_FORMS}")
    if ":" in compact:
        pairs = _pivot_pairs(compact)
    elif "-" in compact:
        pairs = _listed_pairs(compact)
    else:
        parts = [part for part in compact.split(",") if part]
        if len(parts) != 2:
            raise ValueError(f"--langs needs exactly two languages, e.g. 'en,is', or several pairs as {LANGS_FORMS}; "
                             f"got {text!r}")
        pairs = [(to_iso639_3(parts[0]), to_iso639_3(parts[1]))]
    return _checked_pairs(pairs, text)


def _pivot_pairs(compact: str) -> list[LangPair]:
    pivot, _, others = compact.partition(":")
    targets = [part for part in others.split(",") if part]
    if not pivot or not targets or ":" in others or "-" in compact:
        raise ValueError(f"--langs {compact!r}: a pivot list is one language, ':', then languages, e.g. 'en:fr,de'")
    source = to_iso639_3(pivot)
    return [(source, to_iso639_3(target)) for target in targets]


def _listed_pairs(compact: str) -> list[LangPair]:
    items = [item for item in compact.split(",") if item]
    malformed = [item for item in items if item.count("-") != 1 or item.startswith("-") or item.endswith("-")]
    if malformed:
        raise ValueError(f"--langs {compact!r}: {malformed[0]!r} is not a pair; list pairs as 'en-fr,de-fr'")
    return [(to_iso639_3(item.split("-")[0]), to_iso639_3(item.split("-")[1])) for item in items]


def _checked_pairs(pairs: list[LangPair], text: str) -> list[LangPair]:
    """Each pair of two different languages, no pair twice (in either direction)."""
    seen: set[frozenset[str]] = set()
    for src, trg in pairs:
        if src == trg:
            raise ValueError(f"--langs needs two different languages in each pair; got {src}-{trg} in {text!r}")
        if frozenset((src, trg)) in seen:
            raise ValueError(f"--langs names the pair {src}-{trg} twice in {text!r}; list each pair once")
        seen.add(frozenset((src, trg)))
    return pairs


def parse_lang_pair(text: str) -> LangPair:
    """Parse `--langs en,is` into a pair of distinct ISO 639-3 codes (a job or tool that takes one pair)."""
    pairs = parse_lang_pairs(text)
    if len(pairs) != 1:
        raise ValueError(f"--langs: this takes one language pair, e.g. 'en,is'; got {len(pairs)} pairs in {text!r}")
    return pairs[0]


def pair_label(pair: LangPair) -> str:
    """The `lang_pair` value of a pair: its ISO 639-3 codes joined by '-' (eng-fra), src first."""
    return f"{pair[0]}-{pair[1]}"


def cld2_to_iso639_3(cld2_code: str) -> str | None:
    """Map a pycld2 code ('is', 'zh-Hant', 'un') to ISO 639-3, None when unknown."""
    if not cld2_code or cld2_code in ("un", "xxx"):
        return None
    try:
        return to_iso639_3(cld2_code)
    except UnknownLanguage:
        return None


#: a locale-shaped URL segment: a code and its region or script (en-us, pt_br, zh-hant)
LOCALE_SEGMENT = re.compile(r"^([a-z]{2,3})(?:[-_][a-z]{2,4})?$")


@functools.lru_cache(maxsize=64)
def language_markers(languages: tuple[str, ...]) -> frozenset[str]:
    """Lower-cased codes and names that mark a URL as being in one of `languages` (ISO 639-3)."""
    table = load_languages()
    markers: set[str] = set()
    for iso3 in languages:
        language = table.get(iso3)
        if language is None:
            markers.add(iso3)
            continue
        for word in (*language.codes, *language.names_in_urls):
            markers.update(tokenize_text(word))
        markers.update(re.sub(r"[-_]", "", locale.lower()) for locale in language.locales)  # en-gb -> engb
    markers.discard("")
    return frozenset(markers)


def is_language_segment(segment: str, markers: frozenset[str]) -> bool:
    """A path segment that only names a language ('en', 'is', 'en-us', 'english')."""
    segment = segment.lower()
    if segment in markers:
        return True
    match = LOCALE_SEGMENT.match(segment)
    return bool(match and match.group(1) in markers)
