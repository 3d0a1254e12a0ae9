"""The WMT16 bilingual document alignment baseline (Buck & Koehn, 2016): strip language ids from URLs.

A port to Python 3 of the shared task's `languagestripper.py` and `match_url_pairs.py`
(github.com/christianbuck/wmt16-document-alignment-task), kept faithful:

- the same identifier table, in the same order (codes, English and native names,
  locales, `f`/`e`, `gb`/`us` ...), `-` locales doubled with `_`; one regex, longest
  first, matched case-insensitively (ASCII) between non-alphanumerics;
- path: per segment, `-xx`/`_xx` suffixes then bare ids removed, punctuation the
  stripping exposed at either end trimmed, empty segments dropped, `//`, `__`, `/_`,
  `_/`, `--` repaired, the trailing `/` kept as it was; `;params` dropped;
- query: a parameter whose key is a language id, or whose value was entirely a
  language id, is dropped; with `strip_query_variables` keys starting or ending with
  lang, clang, language, locale, selectedLocale are dropped whatever their value;
  the query is re-encoded as Python 2's urlencode did (bytes kept, `~` as %7E);
- a URL is stripped in four tries, the first that changes it wins: (1) ids of its own
  language, only if the first id found in the path or the query is of that language;
  (2) ids of its own language; (3) the same, also dropping language query keys;
  (4) ids of every language, dropping language query keys;
- pairs, in order: stripped source == unstripped target, stripped target ==
  unstripped source, stripped source == stripped target; then a greedy 1-1 pass
  keeps each pair whose URLs are both still free, in that order.

Deviations, all documented: the stripped URL keeps the original scheme (the original
wrote `http` always, so every https URL counted as "stripped" in try 1); a URL
without a scheme gets `http://` (the original also prefixed `https://...` URLs);
pairs inside one pass are taken in sorted order (the original used set order);
languages missing from the original table get their codes and names from
conf/languages.yaml.
"""
from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Iterable
from urllib.parse import quote_plus, unquote_to_bytes, urlparse, urlunparse

import pandas as pd

from parascout.udfs.common.langs import load_languages, to_iso639_3

#: (ISO 639-1, identifiers) in the order of languagestripper.py; lower case
WMT16_IDENTIFIERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ar", ("arabic", "ara", "ar")),
    ("bg", ("bulgarian", "bul", "bg")),
    ("cs", ("czech", "cze", "cz", "cs")),
    ("de", ("deutsch", "german", "ger", "deu", "de")),
    ("en", ("english", "eng", "en")),
    ("es", ("espanol", "spanish", "spa", "esp", "es")),
    ("fr", ("french", "francais", "fran", "fra", "fre", "fr")),
    ("zh", ("chinese", "chi", "zh")),
    # "new, not in 'Dirt-Cheap'-paper"
    ("de", ("tedesco", "de-de", "de-ch", "de-at", "de-li", "de-lu", "allemand")),
    ("fr", ("fr-be", "fr-ca", "fr-fr", "fr-lu", "fr-ch", "f")),
    ("it", ("italian", "italiano", "ital", "ita", "it-it", "it-ch", "it")),
    ("en", ("en-en", "en-us", "en-uk", "en-ca", "en-bz", "en-ab", "en-in", "en-ie", "en-jm", "en-nz", "en-ph",
            "en-za", "en-tt", "gb", "en-gb", "inglese", "englisch", "us", "e")),
    ("ro", ("romanian", "romana", "romlang", "rom", "ro-ro", "ro")),
    ("so", ("soma", "som", "so", "somal", "somali", "so-so", "af-soomaali", "soomaali")),
    ("tr", ("turkish", "tur", "turkic", "tr-tr", "tr")),
    ("fi", ("finnish", "finnisch", "fin", "suomi", "suomeksi", "suominen", "suomija", "fi-fi", "fi")),
)
#: query keys dropped by tries 3 and 4 (prefix or suffix match, case-insensitive)
STRIP_QUERY_VARIABLES = ("lang", "clang", "language", "locale", "selectedLocale")

_ALNUM = "a-zA-Z0-9"


def _table_code(language: str) -> str:
    """The table's key for a language: ISO 639-1 where it has one, else ISO 639-3."""
    entry = load_languages()[to_iso639_3(language)]
    return entry.iso639_1 or entry.iso639_3


def code_to_language(languages: Iterable[str] | None = None) -> dict[str, str]:
    """identifier -> ISO 639-1 code, restricted to `languages` (639-1 codes) when given."""
    table: dict[str, str] = {}
    for code, identifiers in WMT16_IDENTIFIERS:
        for identifier in identifiers:
            table[identifier] = code
    wanted = None if languages is None else set(languages)
    for code in wanted or ():
        if code not in table.values():  # extension: a language the original table lacks
            entry = load_languages()[to_iso639_3(code)]
            for identifier in (*entry.codes, entry.name.lower(), *entry.names):
                if identifier.isascii():
                    table.setdefault(identifier.lower(), code)
    if wanted is not None:
        table = {k: v for k, v in table.items() if v in wanted}
    for identifier, code in list(table.items()):
        table[identifier.replace("-", "_")] = code
    return table


class LanguageStripper:
    """Removes language identifiers from a URL's path and query (WMT16's languagestripper.py)."""

    def __init__(self, languages: Iterable[str] | None = None, strip_query_variables: bool = False):
        self.strip_query_variables = [k.lower() for k in STRIP_QUERY_VARIABLES] if strip_query_variables else []
        self.code_to_language = code_to_language(languages)
        keys = sorted(self.code_to_language, key=len, reverse=True)
        self.re_code = re.compile(rf"(?<![{_ALNUM}])(?:{'|'.join(map(re.escape, keys))})(?![{_ALNUM}])",
                                  re.IGNORECASE | re.ASCII)
        plain = [k for k in keys if "-" not in k and "_" not in k]  # strip '-eng' with its hyphen, not '-fr' of fr-fr
        self.re_strip = re.compile(rf"[-_](?:{'|'.join(map(re.escape, plain))})(?![{_ALNUM}])",
                                   re.IGNORECASE | re.ASCII)
        self.re_punct_at_start = re.compile(rf"^[^{_ALNUM}]+")
        self.re_punct_at_end = re.compile(rf"[^{_ALNUM}]+$")

    def strip_path(self, path: str) -> str:
        components = []
        for component in path.split("/"):
            stripped = self.re_code.sub("", self.re_strip.sub("", component))
            if stripped and not self.re_punct_at_start.match(component) and self.re_punct_at_start.match(stripped):
                stripped = self.re_punct_at_start.sub("", stripped)
            # (the original tests punct_at_end with .match: only a segment left all punctuation is trimmed)
            if stripped and not self.re_punct_at_end.match(component) and self.re_punct_at_end.match(stripped):
                stripped = self.re_punct_at_end.sub("", stripped)
            if stripped:
                components.append(stripped)
        return "/".join(components)

    def strip_query(self, query: str) -> str:
        kept = []
        for key, value in _parse_qsl_py2(query):
            key_lower = key.lower()
            if any(key_lower.endswith(v) or key_lower.startswith(v) for v in self.strip_query_variables):
                continue
            if not self.re_code.sub("", key):
                continue
            stripped_value = self.re_code.sub("", value)
            if stripped_value == value or stripped_value:
                kept.append((key, value))
        return _urlencode_py2(kept)

    def match(self, text: str) -> str:
        """The language of the first identifier found in `text`, '' when none."""
        found = self.re_code.search(text)
        return self.code_to_language[found.group(0).lower()] if found else ""

    def strip_uri(self, uri: str, expected_language: str | None = None) -> tuple[str, bool]:
        """(stripped URI, whether it changed); ('', False) when the expected language is not found."""
        parsed = urlparse(uri)
        if expected_language is not None and expected_language not in (self.match(parsed.path),
                                                                        self.match(parsed.query)):
            return "", False
        path = self.strip_path(parsed.path)
        for pattern, repair in ((r"//+", "/"), (r"__+", "_"), (r"/_+", "/"), (r"_/", "/"), (r"--+", "-")):
            path = re.sub(pattern, repair, path)
        if path and path[-1] == "/" and parsed.path and parsed.path[-1] != "/":
            path = path[:-1]
        if not path.endswith("/") and parsed.path.endswith("/"):
            path += "/"
        host = parsed.netloc.split("@")[1] if "@" in parsed.netloc else parsed.netloc
        if not host.split(":")[0]:
            return "", False
        stripped = urlunparse((parsed.scheme or "http", parsed.netloc, path, "", self.strip_query(parsed.query), ""))
        return stripped, stripped != uri


def _parse_qsl_py2(query: str) -> list[tuple[str, str]]:
    """Python 2's urlparse.parse_qsl(keep_blank_values=True): '&' and ';' separate, bytes kept."""
    pairs = []
    for part in (p for chunk in query.split("&") for p in chunk.split(";")):
        if not part:
            continue
        name, _, value = part.partition("=")
        pairs.append((_unquote_py2(name), _unquote_py2(value)))
    return pairs


def _unquote_py2(text: str) -> str:
    """Python 2's unquote(text.replace('+', ' ')) on a byte string, as a latin-1 str (bytes kept 1:1)."""
    return unquote_to_bytes(text.replace("+", " ")).decode("latin-1")


def _urlencode_py2(pairs: list[tuple[str, str]]) -> str:
    """Python 2's urllib.urlencode: quote_plus with no safe chars; '~' was quoted then."""
    def encode(text: str) -> str:
        return quote_plus(text.encode("latin-1"), safe="").replace("~", "%7E")
    return "&".join(f"{encode(k)}={encode(v)}" for k, v in pairs)


def normalize_url(url: str) -> str:
    """match_url_pairs.normalize_url: drop a trailing '?', add http:// when there is no scheme."""
    url = url.strip().rstrip("?")
    return url if "://" in url else "http://" + url


@functools.lru_cache(maxsize=32)
def _strippers(language: str) -> tuple[LanguageStripper, LanguageStripper, LanguageStripper]:
    return (LanguageStripper([language]), LanguageStripper([language], strip_query_variables=True),
            LanguageStripper(strip_query_variables=True))


def strip_url(url: str, language: str) -> str | None:
    """The four tries of match_url_pairs.strip_urls; None when no try changes the URL."""
    own, own_query, every = _strippers(language)
    for stripper, expected in ((own, language), (own, None), (own_query, None), (every, None)):
        stripped, success = stripper.strip_uri(url, expected_language=expected)
        if success:
            return stripped
    return None


def wmt16_pairs(src_urls: Iterable[str], trg_urls: Iterable[str], src_lang: str, trg_lang: str) -> pd.DataFrame:
    """Candidate pairs in the baseline's order: columns src_url, trg_url, stage (1, 2, 3), order."""
    src_code, trg_code = _table_code(src_lang), _table_code(trg_lang)
    original = {}
    for urls, side in ((src_urls, "src"), (trg_urls, "trg")):
        for url in urls:
            original.setdefault((side, normalize_url(url)), url)
    sources = sorted(u for side, u in original if side == "src")
    targets = sorted(u for side, u in original if side == "trg")
    source_stripped, target_stripped = defaultdict(set), defaultdict(set)
    for urls, code, stripped in ((sources, src_code, source_stripped), (targets, trg_code, target_stripped)):
        for url in urls:
            result = strip_url(url, code)
            if result is not None:
                stripped[result].add(url)
    target_set, source_set = set(targets), set(sources)
    rows: list[tuple[str, str, int]] = []
    for key in sorted(set(source_stripped) & target_set):         # 1: stripped source == target
        rows += [(s, key, 1) for s in sorted(source_stripped[key])]
    for key in sorted(set(target_stripped) & source_set):         # 2: stripped target == source
        rows += [(key, t, 2) for t in sorted(target_stripped[key])]
    for key in sorted(set(source_stripped) & set(target_stripped)):  # 3: both stripped
        rows += [(s, t, 3) for s in sorted(source_stripped[key]) for t in sorted(target_stripped[key])]
    frame = pd.DataFrame(rows, columns=["src_url", "trg_url", "stage"]).drop_duplicates(["src_url", "trg_url"])
    frame["src_url"] = frame["src_url"].map(lambda u: original[("src", u)])
    frame["trg_url"] = frame["trg_url"].map(lambda u: original[("trg", u)])
    return frame.reset_index(drop=True).assign(order=lambda f: range(len(f)))


#: the score written for a pair found in stage 1, 2 or 3 (the greedy 1-1 follows stage order)
STAGE_SCORE = {1: 1.0, 2: 0.9, 3: 0.8}


def wmt16_candidates(pool: pd.DataFrame, src_lang: str, trg_lang: str) -> pd.DataFrame:
    """The baseline's candidate pairs of a pool (host, url, lang) as host, src_url, trg_url, score, stage."""
    pairs = wmt16_pairs(pool.loc[pool["lang"] == src_lang, "url"], pool.loc[pool["lang"] == trg_lang, "url"],
                        src_lang, trg_lang)
    host_of = dict(zip(pool["url"], pool["host"]))
    return pairs.assign(host=pairs["src_url"].map(host_of), score=pairs["stage"].map(STAGE_SCORE))[
        ["host", "src_url", "trg_url", "score", "stage"]]
