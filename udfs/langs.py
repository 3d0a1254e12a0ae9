"""ISO 639 language table (conf/languages.yaml): code normalisation and name lookups.

Internally parascout speaks ISO 639-3, as CommonCrawl's CDX `languages` field does;
users may write 639-1, 639-2/B, English names or endonyms.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from importlib import resources

import yaml

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


def parse_lang_pair(text: str) -> tuple[str, str]:
    """Parse `--langs en,is` into a pair of distinct ISO 639-3 codes."""
    parts = [p for p in text.replace(" ", "").split(",") if p]
    if len(parts) != 2:
        raise ValueError(f"--langs needs exactly two languages, e.g. 'en,is'; got {text!r}")
    pair = (to_iso639_3(parts[0]), to_iso639_3(parts[1]))
    if pair[0] == pair[1]:
        raise ValueError(f"--langs needs two different languages; got {text!r}")
    return pair


def cld2_to_iso639_3(cld2_code: str) -> str | None:
    """Map a pycld2 code ('is', 'zh-Hant', 'un') to ISO 639-3, None when unknown."""
    if not cld2_code or cld2_code in ("un", "xxx"):
        return None
    try:
        return to_iso639_3(cld2_code)
    except UnknownLanguage:
        return None
