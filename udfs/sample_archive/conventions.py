"""URL conventions for translations, and the code-strip baseline that measures how hard a mix is.

A convention is a marker (how a URL names its language: /en/, en.host, ?lang=en,
?l=2, page-en.html, /en-gb/, /english/, or nothing) and a path style (the same
path in every language, translated slugs, or different numeric ids).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

from parascout.udfs.common.langs import Language, load_languages

MARKERS = ("dir_code", "subdomain", "query_code", "query_id", "suffix", "locale", "name", "none")
PATH_STYLES = ("same", "translated", "ids")
CODE_STYLES = ("iso639_1", "iso639_1", "iso639_1", "iso639_3", "upper", "iso639_2b")
QUERY_CODE_KEYS = ("lang", "lang", "language", "hl", "locale")
QUERY_ID_KEYS = ("l", "L", "lang_id", "lang", "langid")
SUFFIX_STYLES = ("-{code}.html", "_{code}.htm", ".{code}.html", "-{code}.php")
LOCALE_STYLES = ("xx-yy", "xx-YY", "xx_YY")
NAME_STYLES = ("english", "endonym")


@dataclass(frozen=True)
class Convention:
    """How one host (or one of its sections) builds the URL of a page in a language."""

    marker: str
    path_style: str
    primary_unmarked: bool = False
    code_style: str = "iso639_1"
    query_key: str = "lang"
    suffix_style: str = "-{code}.html"
    locale_style: str = "xx-yy"
    name_style: str = "english"

    @property
    def label(self) -> str:
        """The convention as written in truth/pairs.parquet, e.g. 'dir_code' or 'none+translated'."""
        return self.marker if self.path_style == "same" else f"{self.marker}+{self.path_style}"


def draw_convention(rng, marker: str, path_style: str, primary_unmarked: bool) -> Convention:
    """A convention with randomly drawn style details (code case, query key, suffix form...)."""
    if marker == "none" and path_style == "same":
        path_style = "translated"
    return Convention(
        marker=marker, path_style=path_style,
        primary_unmarked=primary_unmarked and marker != "none",
        code_style=rng.choice(CODE_STYLES),
        query_key=rng.choice(QUERY_ID_KEYS if marker == "query_id" else QUERY_CODE_KEYS),
        suffix_style=rng.choice(SUFFIX_STYLES),
        locale_style=rng.choice(LOCALE_STYLES),
        name_style=rng.choice(NAME_STYLES),
    )


def language_code(language: Language, style: str) -> str:
    """The code a URL uses for a language: 'en', 'eng', 'EN' or the 639-2/B code ('fre')."""
    short = language.iso639_1 or language.iso639_3
    if style == "iso639_3":
        return language.iso639_3
    if style == "iso639_2b":
        return language.iso639_2b or short
    if style == "upper":
        return short.upper()
    return short


def locale_token(language: Language, style: str) -> str:
    """'en-gb', 'en-GB' or 'en_GB' from the language's first locale."""
    locale = language.locales[0] if language.locales else f"{language.iso639_1}-{language.iso639_1}"
    base, _, region = locale.partition("-")
    if style == "xx-YY":
        return f"{base}-{region.upper()}"
    if style == "xx_YY":
        return f"{base}_{region.upper()}"
    return f"{base}-{region}"


def name_token(language: Language, style: str) -> str:
    """'icelandic' or the endonym 'islenska' ('%E4%B8%AD%E6%96%87' where it has no Latin form)."""
    from parascout.udfs.sample_archive.vocabulary import slugify

    if style == "endonym" and language.endonym:
        return slugify(language.endonym, ascii_only=True)
    return slugify(language.name)


def build_url(convention: Convention, domain: str, default_host: str, language: Language, language_number: int,
              path: str, query: str, is_primary: bool) -> str:
    """The absolute URL of a page path in a language under a convention."""
    host = default_host
    marker = "none" if (is_primary and convention.primary_unmarked) else convention.marker
    code = language_code(language, convention.code_style)
    if marker == "dir_code":
        path = f"/{code}{path}"
    elif marker == "subdomain":
        host = f"{code.lower()}.{domain}"
    elif marker == "query_code":
        query = _add_param(query, convention.query_key, code)
    elif marker == "query_id":
        query = _add_param(query, convention.query_key, str(language_number))
    elif marker == "suffix":
        path = _with_suffix(path, convention.suffix_style.format(code=code))
    elif marker == "locale":
        path = f"/{locale_token(language, convention.locale_style)}{path}"
    elif marker == "name":
        path = f"/{name_token(language, convention.name_style)}{path}"
    elif convention.marker == "suffix":  # the unmarked primary of a suffix site keeps the extension
        path = _with_suffix(path, "." + convention.suffix_style.rsplit(".", 1)[1])
    return f"https://{host}{path}" + (f"?{query}" if query else "")


def _add_param(query: str, key: str, value: str) -> str:
    return f"{query}&{key}={value}" if query else f"{key}={value}"


def _with_suffix(path: str, suffix: str) -> str:
    if path.endswith("/"):
        return f"{path}index{suffix}"
    return path + suffix


# ---- the code-strip baseline ---------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _language_tokens() -> tuple[frozenset, re.Pattern]:
    codes = set()
    regions = set()
    for language in load_languages().values():
        codes.update(code.lower() for code in language.codes)
        for locale in language.locales:
            _base, _, region = locale.partition("-")
            regions.add(region)
    alternation = "|".join(sorted(codes, key=len, reverse=True))
    region_alternation = "|".join(sorted(regions, key=len, reverse=True))
    pattern = re.compile(rf"(?<![a-z0-9])(?:{alternation})[-_](?:{region_alternation})(?![a-z0-9])")
    return frozenset(codes), pattern


@functools.lru_cache(maxsize=65536)
def strip_language_codes(url: str) -> tuple:
    """A URL with ISO 639 codes and locale tokens removed (host labels, path tokens, query values)."""
    codes, locale_pattern = _language_tokens()
    parts = urlsplit(url.lower())
    host = (parts.hostname or "").removeprefix("www.")
    labels = tuple(label for label in host.split(".") if label not in codes)
    path = locale_pattern.sub("/", unquote(parts.path))
    tokens = tuple(token for token in re.split(r"[\W_]+", path) if token and token not in codes)
    params = tuple(sorted((key, value) for key, value in parse_qsl(parts.query, keep_blank_values=True)
                          if value not in codes and not locale_pattern.fullmatch(value)))
    return labels, tokens, params


def code_strip_recoverable(src_url: str, trg_url: str) -> bool:
    """True when removing language codes from both URLs makes them equal (the simplest baseline)."""
    return strip_language_codes(src_url) == strip_language_codes(trg_url)
