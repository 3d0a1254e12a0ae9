"""Real words of each language: running text, CLDR names for translated slugs and titles.

Running text is "concept aligned": a page's paragraphs are sequences of concept ids,
and each language renders concept k as its k-th frequent word (wordfreq), so a
translation has the same shape and a proportional length. Slugs and titles use
real translations: CLDR country, region and month names through Babel.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import quote

import yaml

from parascout.udfs.common.langs import CONF_DIR, load_languages

SAMPLE_CONF = CONF_DIR / "sample_archive.yaml"
N_CONCEPTS = 3000
NO_SPACE_LANGUAGES = {"zho", "jpn", "tha"}
RIGHT_TO_LEFT = {"ara", "heb", "fas", "urd"}
#: CLDR macro-regions used as site sections (translated by Babel)
REGION_CODES = ("002", "019", "142", "150", "009", "021", "154", "039", "155", "151", "145", "419", "035", "030")
#: CLDR territories that are not countries
NOT_COUNTRIES = {"EU", "EZ", "UN", "ZZ", "QO", "XA", "XB", "XK", "AC", "CP", "DG", "EA", "IC", "TA", "CQ"}
_WORD = re.compile(r"^[^\W\d_]+(?:['’-][^\W\d_]+)*['’-]?$")


class UnsupportedLanguage(ValueError):
    """A language with neither wordfreq data nor a fallback word list."""


@dataclass(frozen=True)
class Vocabulary:
    """Words and CLDR names of one language (ISO 639-3)."""

    lang: str
    words: tuple[str, ...]
    by_concept: tuple[str, ...]
    territories: dict
    regions: dict
    months: tuple[str, ...]
    language_names: dict
    joiner: str
    sentence_end: str

    def word(self, concept: int) -> str:
        return self.by_concept[concept % N_CONCEPTS]

    def sentence(self, concepts) -> str:
        """Render concept ids as one sentence of this language."""
        text = self.joiner.join(map(self.by_concept.__getitem__, concepts)).replace("- ", "-")
        return text[:1].upper() + text[1:] + self.sentence_end

    def title(self, territory: str, month: int) -> str:
        return f"{self.territories[territory]}: {self.months[month]}"


@functools.lru_cache(maxsize=1)
def sample_conf() -> dict:
    """The default mix (conf/sample_archive.yaml)."""
    with open(SAMPLE_CONF, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@functools.lru_cache(maxsize=1)
def supported_languages() -> tuple[str, ...]:
    """ISO 639-3 codes that have running-text vocabulary (wordfreq or a fallback list)."""
    import wordfreq

    available = set(wordfreq.available_languages("small"))
    fallback = set(sample_conf().get("fallback_vocabulary") or {})
    return tuple(sorted(code for code, language in load_languages().items()
                        if code in fallback or (language.iso639_1 and language.iso639_1 in available)))


@functools.cache
def vocabulary(lang: str) -> Vocabulary:
    """The vocabulary of a language, built once per process."""
    language = load_languages()[lang]
    if lang not in supported_languages():
        raise UnsupportedLanguage(f"no vocabulary for {lang!r}; supported: {','.join(supported_languages())}")
    locale = language.iso639_1 or lang
    words = _running_words(lang, language.iso639_1, locale)
    stand_alone = cldr_data(locale, "months", "stand-alone", "wide")
    months = tuple(stand_alone[m] for m in range(1, 13))
    local, english = cldr_data(locale, "territories"), cldr_data("en", "territories")
    territories = {code: local.get(code, english[code]) for code in country_codes()}
    regions = {code: local.get(code, english[code]) for code in REGION_CODES}
    language_names = cldr_data(locale, "languages")
    names = {code: language_names.get(other.iso639_1 or code, other.name) for code, other in load_languages().items()}
    no_space = lang in NO_SPACE_LANGUAGES
    by_concept = tuple(words[concept % len(words)] for concept in range(N_CONCEPTS))
    return Vocabulary(lang, words, by_concept, territories, regions, months, names,
                      joiner="" if no_space else " ", sentence_end="。" if no_space else ".")


@functools.lru_cache(maxsize=1)
def country_codes() -> tuple[str, ...]:
    """Two-letter CLDR territory codes of countries, in a fixed order."""
    return tuple(sorted(code for code in cldr_data("en", "territories")
                        if len(code) == 2 and code.isalpha() and code not in NOT_COUNTRIES))


@functools.cache
def _locale_data(code: str) -> dict:
    """A locale's CLDR data read fresh from Babel's files (root merged in), never Babel's shared cache:
    Babel resolves `months['stand-alone']` in place and leaks one locale's months into another."""
    import pickle

    from babel import localedata

    data: dict = {}
    for name in ("root", code):
        with open(localedata.resolve_locale_filename(name), "rb") as handle:
            localedata.merge(data, pickle.load(handle))
    return data


def cldr_data(code: str, *path: str):
    """CLDR data of a locale at a path, aliases resolved."""
    from babel.localedata import Alias

    data = _locale_data(code)

    def resolve(node):
        if isinstance(node, Alias):
            target = data
            for key in node.keys:
                target = target[key]
            return resolve(target)
        if isinstance(node, tuple):
            alias, overrides = node
            return {**resolve(alias), **overrides}
        return node

    node = data
    for key in path:
        node = resolve(node[key])
    return node


def _running_words(lang: str, iso639_1: str | None, locale: str) -> tuple[str, ...]:
    fallback = (sample_conf().get("fallback_vocabulary") or {}).get(lang)
    if fallback:
        extra = [*cldr_data(locale, "months", "format", "wide").values(),
                 *cldr_data(locale, "days", "format", "wide").values()]
        return tuple(dict.fromkeys(fallback.split() + [w.lower() for w in extra]))
    import wordfreq

    candidates = wordfreq.top_n_list(iso639_1, N_CONCEPTS * 2, wordlist="small")
    excluded = set(sample_conf().get("excluded_words") or ())
    latin = sum(word.isascii() for word in candidates[:200]) > 100
    words = []
    for word in candidates:
        if not _WORD.match(word) or word in excluded or (len(word) < 2 and lang not in NO_SPACE_LANGUAGES):
            continue
        if latin != _is_latin(word):
            continue
        if lang == "ell" and word.endswith("σ"):
            word = word[:-1] + "ς"  # wordfreq folds the final sigma
        words.append(word)
    return tuple(dict.fromkeys(words))[:N_CONCEPTS]


def _is_latin(word: str) -> bool:
    return all(ord(ch) < 0x250 or ch in "'’-" for ch in word)


def slugify(text: str, ascii_only: bool = True) -> str:
    """URL slug of a phrase: lower-case words joined by '-', ASCII-folded or percent-encoded UTF-8."""
    text = text.lower().replace("ß", "ss").replace("æ", "ae").replace("ð", "d").replace("þ", "th")
    text = text.replace("ø", "o").replace("ħ", "h").replace("ł", "l").replace("œ", "oe")
    if ascii_only:
        folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
        if re.search(r"[a-z0-9]", folded):
            text = folded
    slug = re.sub(r"[^\w]+", "-", text).strip("-")
    return quote(slug, safe="-")
