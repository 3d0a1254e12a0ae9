"""The language a URL declares: a language code in a slot of the URL that the site uses for its languages.

Real multilingual sites say a page's language in its URL far more reliably than CLD2 says it of the whole
HTML (a French page that keeps English menus, code or untranslated paragraphs is labelled English):
`/fr/page.html`, `page.fr.html`, `page.html.fr`, `page_fr.html`, `fr.example.com`, `?lang=fr`. A code in such
a slot is a marker only where the site uses the slot for languages (udfs.index.cdx_records validates the slots
per host): CLD2 agrees with the code on most of the pages that carry it, or the page has a sibling (the same URL
with another code in the slot) and CLD2 confirms some code of the slot. So `/it/` of an English site's IT
department is not Italian, and a KiCad `/fr/` page CLD2 calls English (it is mostly untranslated) is French.

One implementation, three engines: `url_marker` (Python, for a URL at a time), parascout.UrlMarker's matchers on
the JVM (where the session loads parascout's jar: read by the index scan's per-host pass, parascout.UrlLanguagePass,
as each row comes in, and a Java UDF for a column) and `url_marker_columns` (Spark expressions, its fallback: eight
regular expressions per URL, ~4x the scan's CPU), pinned together by agreement tests; `url_language_struct` picks
the engine of a column.
"""
from __future__ import annotations

import functools
import re

from parascout.udfs.common.jvm import java_function_available
from parascout.udfs.common.langs import load_languages

#: slots in the order they are tried: the first slot holding a code is the URL's marker
SLOTS = ("query", "suffix", "dir", "tail", "host")
#: a code as URLs write it: 639-1 or 639-3, optionally with a region or script (fr, fra, fr-ca, pt_BR, zh-hant)
CODE = r"[a-z]{2,3}(?:[-_][a-z0-9]{2,4})?"
QUERY_KEYS = ("lang", "language", "locale", "hl", "lng", "lc")
QUERY_PATTERN = rf"[?&](?:{'|'.join(QUERY_KEYS)})=({CODE})(?:[&#]|$)"
#: page.fr.html / page.html.fr (Apache content negotiation)
SUFFIX_PATTERN = rf"^[^.]+.*\.({CODE})\.[a-z0-9]{{2,5}}$|^[^.]+\.html?\.({CODE})$"
#: page_fr.html / page-fr.htm
TAIL_PATTERN = rf"[-_]({CODE})\.[a-z0-9]{{2,5}}$"
DIR_PATTERN = rf"^({CODE})$"
HOST_PATTERN = rf"^({CODE})\.[^.]+\.[^.]+"
#: every code-like token of a URL, wherever it sits: a URL with them all blanked is the same for a page and its
#: translations (the siblings that show a slot holds languages)
CODE_TOKEN = r"(^|[/._=-])[a-z]{2,3}(?:[-_][a-z0-9]{2,4})?(?=[/._&#-]|$)"
JVM_MARKER_CLASS = "parascout.UrlMarker"
JVM_MARKER_FUNCTION = "parascout_url_marker"
#: what parascout.UrlMarker returns (its FIELDS, in order)
JVM_MARKER_DDL = "struct<url_marker_slot string, url_marker_lang string, sibling_key string>"
URL_PARTS = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://([^/?#]*)([^?#]*)")
_COMPILED = {name: re.compile(pattern) for name, pattern in
             (("query", QUERY_PATTERN), ("suffix", SUFFIX_PATTERN), ("tail", TAIL_PATTERN), ("dir", DIR_PATTERN),
              ("host", HOST_PATTERN))}


@functools.lru_cache(maxsize=1)
def code_table() -> dict[str, str]:
    """A URL language code's base (fr of fr-CA, pt of pt_BR) -> ISO 639-3: the 639-1 and 639-3 codes, and the
    bases of the listed locales (no of no-NO)."""
    table: dict[str, str] = {}
    for language in load_languages().values():
        for code in (language.iso639_1, language.iso639_3):
            if code:
                table.setdefault(code.lower(), language.iso639_3)
    for language in load_languages().values():
        for locale in language.locales:
            table.setdefault(locale.lower().replace("_", "-").split("-")[0], language.iso639_3)
    return table


def code_language(code: str | None) -> str | None:
    """The language of a code as a URL writes it (fr, fr-CA, fr_FR, fra), None when it names none."""
    if not code:
        return None
    return code_table().get(code.lower().replace("_", "-").split("-")[0])


@functools.lru_cache(maxsize=1)
def code_spec() -> str:
    """The code table as one string, "|en:eng|fr:fra|...|": a code's language is one substring search away (Spark
    expressions), and the Java UDF parses it once per JVM."""
    return "|" + "|".join(f"{code}:{lang}" for code, lang in sorted(code_table().items())) + "|"


def _first_group(match: re.Match | None) -> str | None:
    return next((group for group in match.groups() if group), None) if match else None


def url_marker(url: str | None) -> tuple[str, str] | None:
    """(slot, ISO 639-3) of the first slot of `url` that holds a language code; None when none does.

    The slot names where the code sits: query, suffix, dirN (the N-th directory, 1-based), tail or host."""
    parts = URL_PARTS.match(url or "")
    if not parts:
        return None
    host, path = parts.group(1).lower(), parts.group(2).lower()
    query = (url or "")[parts.end():].lower()
    segments = path.split("/")
    file_name, directories = segments[-1], segments[1:-1]
    found = {"query": code_language(_first_group(_COMPILED["query"].search(query))),
             "suffix": code_language(_first_group(_COMPILED["suffix"].search(file_name))),
             "tail": code_language(_first_group(_COMPILED["tail"].search(file_name))),
             "host": code_language(_first_group(_COMPILED["host"].search(host)))}
    for index, directory in enumerate(directories, 1):
        language = code_language(_first_group(_COMPILED["dir"].search(directory)))
        if language:
            found["dir"] = (f"dir{index}", language)
            break
    for slot in SLOTS:
        value = found.get(slot)
        if value:
            return value if slot == "dir" else (slot, value)
    return None


def _alternation(codes) -> str:
    """A regular expression matching any of `codes`, grouped by first letter so a non-code fails at once."""
    by_first: dict[str, list[str]] = {}
    for code in sorted(codes, key=lambda code: (-len(code), code)):
        by_first.setdefault(code[0], []).append(re.escape(code[1:]))
    return "|".join(f"{first}(?:{'|'.join(rests)})" for first, rests in sorted(by_first.items()))


def url_marker_columns(url):
    """Spark expressions (url_marker_slot, url_marker_lang) that url_marker computes for a URL column."""
    from pyspark.sql import functions as F

    # "|en:eng|fr:fra|...|": a code's language is found by one substring search (a map literal is searched key by
    # key, 4x the scan's CPU)
    table = F.lit(code_spec())

    def language_of(code):
        base = F.substring_index(F.regexp_replace(code, "_", "-"), "-", 1)
        found = F.instr(table, F.concat(F.lit("|"), base, F.lit(":")))
        return F.when((base != "") & (found > 0), table.substr(found + F.length(base) + 2, F.lit(3)))

    lowered = F.lower(url)
    host = F.regexp_extract(lowered, URL_PARTS.pattern, 1)
    path = F.regexp_extract(lowered, URL_PARTS.pattern, 2)
    query = F.regexp_extract(lowered, r"^[a-z][a-z0-9+.-]*://[^?#]*(.*)$", 1)  # all after the path, as url_marker
    file_name = F.regexp_extract(path, r"([^/]*)$", 1)
    # the first directory that is a known code, by one regular expression over the path (a per-segment lambda is
    # interpreted row by row); its number is the count of slashes before it, plus one
    known = _alternation(code_table())
    directory_pattern = rf"^(.*?)/((?:{known})(?:[-_][a-z0-9]{{2,4}})?)/"
    before = F.regexp_extract(path, directory_pattern, 1)
    directory_code = F.regexp_extract(path, directory_pattern, 2)
    first_directory = F.when(directory_code != "", F.length(before) - F.length(F.regexp_replace(before, "/", "")) + 1
                             ).otherwise(F.lit(0))
    suffix = F.coalesce(F.nullif(F.regexp_extract(file_name, SUFFIX_PATTERN, 1), F.lit("")),
                        F.regexp_extract(file_name, SUFFIX_PATTERN, 2))
    found = [("query", language_of(F.regexp_extract(query, QUERY_PATTERN, 1))),
             ("suffix", language_of(suffix)),
             ("dir", language_of(directory_code)),
             ("tail", language_of(F.regexp_extract(file_name, TAIL_PATTERN, 1))),
             ("host", language_of(F.regexp_extract(host, HOST_PATTERN, 1)))]
    slot, lang = F.lit(None).cast("string"), F.lit(None).cast("string")
    for name, language in reversed(found):
        name_column = F.concat(F.lit("dir"), first_directory.cast("string")) if name == "dir" else F.lit(name)
        slot = F.when(language.isNotNull(), name_column).otherwise(slot)
        lang = F.coalesce(language, lang)
    return slot.alias("url_marker_slot"), lang.alias("url_marker_lang")


def sibling_key_column(url):
    """The URL, lower-cased, with every code-like token blanked: equal for a page and its translations."""
    from pyspark.sql import functions as F

    return F.regexp_replace(F.lower(url), CODE_TOKEN, "$1*")


def url_language_struct(url, use_jvm_udf: bool = True):
    """A struct (url_marker_slot, url_marker_lang, sibling_key) of a URL column: by the Java UDF where the active
    session can load it, else by url_marker_columns and sibling_key_column (the same values)."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = SparkSession.getActiveSession() if use_jvm_udf else None
    if spark is not None and java_function_available(spark, JVM_MARKER_FUNCTION, JVM_MARKER_CLASS,
                                                     "URL language markers", "Spark expressions", JVM_MARKER_DDL):
        return F.call_function(JVM_MARKER_FUNCTION, url, F.lit(code_spec().encode()))
    return F.struct(*url_marker_columns(url), sibling_key_column(url).alias("sibling_key"))
