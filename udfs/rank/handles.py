"""STRAND handles: subtract language-specific substrings (LSS) from URLs, bucket equal handles.

Resnik & Smith (2003, §4.3) paired Internet Archive URLs without looking at content:
remove every substring that names a language (codes, names, locales, charset labels)
and URLs left with identical "handles" are candidate translations. Here:

- the LSS list of a language comes from conf/languages.yaml (ISO 639-1/2/3 codes,
  English name, endonym, names, locale variants) plus conf/lss.yaml (extra
  substrings, charset labels), with ASCII-folded and percent-encoded variants;
- substrings are removed only as URL tokens (between / . _ - ? & = # ; , : + ~ or
  the string ends), never inside words: /energy/ keeps its "en";
- a token is removed together with the delimiter before it (/en/page -> /page), a query
  parameter `lang=<LSS>` likewise, and handles write '?' as '&', so a page whose default
  language carries no marker gets the same handle (page.php?id=3 vs page.php?lang=fr&id=3);
- one regular expression does it in Python (`re`); on the JVM, `handle_column` runs a hand-written
  trie scan with the same meaning (jvm/src/main/java/parascout/, a Java UDF in udfs/parascout-udfs.jar,
  about 4x the rate of regexp_replace with a Parquet scan) and falls back to the same regex in Spark's
  regexp_replace where the jar is not on the classpath; tests check that all three agree;
- `learn_lss` mines host-specific markers from language labels (STRAND's BBN
  variant learned substitution patterns): a path/query token present in most URLs
  of one language on a host and almost none of the other's.

Why one module: the LSS lists, the one regex built from them for both engines (Python re and
java.util.regex), its Spark column and the learned LSS share one token grammar; split, they drift apart.
"""
from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from urllib.parse import quote, urlsplit

import pandas as pd
import yaml

from parascout.udfs.common.jvm import java_function_available
from parascout.udfs.common.langs import CONF_DIR, load_languages, to_iso639_3
from parascout.udfs.common.urls import MAX_URL_CHARS, url_host

LSS_FILE = CONF_DIR / "lss.yaml"
JVM_HANDLE_CLASS = "parascout.StrandHandle"
JVM_HANDLE_FUNCTION = "parascout_strand_handle"
#: separators of `HandleStripper.jvm_spec`: between its three word lists, between words (HandleStripper.java)
SPEC_LIST_SEPARATOR, SPEC_WORD_SEPARATOR = "\x1e", "\x1f"

log = logging.getLogger("parascout.handles")

#: characters that delimit URL tokens; an LSS only matches between two of them (or the ends)
DELIMITERS = "/._-?&=#;,:+~"
DELIM_CLASS = "[/._\\-?&=#;,:+~]"
NON_DELIM_CLASS = "[^/._\\-?&=#;,:+~]"
#: a URL with a scheme and a non-empty host (checked on the lower-cased URL)
URL_SHAPE = (r"^[a-z][a-z0-9+.\-]*://(?:[^/?#]*@)?(?:\[[0-9a-f:.]+\]|[^/?#:@\[\] \t\n\x0b\f\r]+)"
             r"(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[0-5]?[0-9]{0,4}))?"
             r"(?:[/?#][\s\S]*)?(?![\s\S])")
#: delimiters of the tokens that `learn_lss` mines ('=' is kept: `clang=1` is one token)
TOKEN_SPLIT = r"[/._\-?&#;,:+~]"
#: a token worth learning: letters/digits, optionally key=value (Python spelling; JVM below)
TOKEN_SHAPE = r"^[^\W_]+(?:=[^\W_]+)?$"
TOKEN_SHAPE_JVM = r"^[\p{L}\p{N}]+(=[\p{L}\p{N}]+)?$"

_URL_SHAPE_RE = re.compile(URL_SHAPE)
_TOKEN_SPLIT_RE = re.compile(TOKEN_SPLIT)
_TOKEN_SHAPE_RE = re.compile(TOKEN_SHAPE)
_PERCENT_RE = re.compile(r"%[0-9a-fA-F]{2}")


# ---- LSS lists --------------------------------------------------------------------------
@functools.lru_cache(maxsize=8)
def add_learned_lss_arguments(parser) -> None:
    """The options of host-specific LSS learning (learn_lss), for every job that strips handles."""
    parser.add_argument("--learn-lss", action="store_true",
                        help="also strip host-specific markers learned from the language labels")
    parser.add_argument("--learn-min-frac", type=float, default=0.9,
                        help="a learned marker is in at least this share of one language's URLs of the host")
    parser.add_argument("--learn-max-other-frac", type=float, default=0.05,
                        help="... and in at most this share of the other language's")
    parser.add_argument("--learn-min-support", type=int, default=5,
                        help="... on a host with at least this many URLs in each language")


def load_lss_conf(extra_paths: tuple[str, ...] = ()) -> dict:
    """conf/lss.yaml merged with user files (every list adds up: keys, and per language extra/charsets)."""
    merged: dict = {"query_keys": [], "language_keys": [], "languages": {}}
    for path in (str(LSS_FILE), *extra_paths):
        if not Path(path).exists():
            raise FileNotFoundError(f"LSS config {path}: no such file")
        with open(path, encoding="utf-8") as handle:
            loaded = yaml.safe_load(handle) or {}
        if not isinstance(loaded, dict):
            raise TypeError(f"LSS config {path}: expected a mapping with `languages:` and `query_keys:`")
        for key in ("query_keys", "language_keys"):
            merged[key] = sorted({*merged[key], *map(str.lower, loaded.get(key) or ())})
        for code, entry in (loaded.get("languages") or {}).items():
            iso3 = to_iso639_3(str(code))
            target = merged["languages"].setdefault(iso3, {"extra": [], "charsets": []})
            for key in ("extra", "charsets"):
                target[key] = [*target[key], *[str(s) for s in (entry or {}).get(key) or ()]]
    return merged


def _ascii_fold(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def _url_variants(text: str) -> set[str]:
    """How a name may appear in a URL: lower-cased, spaces as - _ + or nothing, ASCII-folded, %-encoded."""
    base = text.strip().lower()
    if not base:
        return set()
    forms = {base.replace(" ", sep) for sep in ("-", "_", "+", "")} if " " in base else {base}
    forms |= {_ascii_fold(form) for form in forms}
    forms |= {quote(form, safe="-_.+~").lower() for form in forms if not form.isascii()}
    return {form for form in forms if form}


@functools.lru_cache(maxsize=256)
def cldr_locales(iso639_1: str | None) -> tuple[str, ...]:
    """CLDR locale identifiers of a language as URLs write them: en-gb, en-001, zh-hant-tw."""
    if not iso639_1:
        return ()
    from babel.localedata import locale_identifiers

    found = {ident.lower().replace("_", "-") for ident in locale_identifiers()
             if ident.split("_")[0] == iso639_1 and "_" in ident and "POSIX" not in ident}
    return tuple(sorted(found))


def language_substrings(language: str, lss_conf: dict | None = None) -> list[str]:
    """The LSS list of one language: codes, names, endonym, locale variants, extras and charsets."""
    iso3 = to_iso639_3(language)
    entry = load_languages()[iso3]
    conf = (lss_conf or load_lss_conf())["languages"].get(iso3, {})
    words: set[str] = set()
    for text in (*entry.codes, *entry.names_in_urls, *conf.get("extra", ())):
        words |= _url_variants(text)
    if entry.iso639_1:
        words.add(f"{entry.iso639_1}-{entry.iso639_1}")
    for locale in (*entry.locales, *[w for w in conf.get("extra", ()) if "-" in w], *cldr_locales(entry.iso639_1)):
        words |= {locale.lower(), locale.lower().replace("-", "_")}
    for charset in conf.get("charsets", ()):
        words |= {charset.lower(), charset.lower().replace("-", "_"), charset.lower().replace("_", "-")}
    return sorted(words, key=lambda w: (-len(w), w))


# ---- one regex, two engines -------------------------------------------------------------
def _escape(char: str) -> str:
    """Escape a literal char the same way for Python re and java.util.regex."""
    if char.isascii() and not char.isalnum():
        return "\\" + char
    return char


def alternation(words: Iterable[str]) -> str:
    """A prefix-trie regex matching any of `words`, longest first (same meaning in Python and Java)."""
    trie: dict = {}
    for word in words:
        if not word:
            continue
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict) -> str:
        branches = [_escape(char) + emit(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if "" in node:
            return ("(?:" + body + ")?") if len(branches) == 1 and len(body) > 1 else body + "?"
        return body

    if not trie:
        return "(?!)"
    return emit(trie)


def lss_pattern(substrings: Iterable[str], query_keys: Iterable[str], language_keys: Iterable[str] = ()) -> str:
    """The handle regex over a lower-cased URL body ('/' + host...; '?' written '&'); matches are removed.

    Every match starts with a delimiter (so both engines skip other characters fast): a '#'
    with the whole fragment; a language key with any value (clang=2); a query parameter
    `key=<LSS>`; or an LSS token -- the last two followed by a delimiter or the end
    (/fr/page, page-fr.html, fr.example.com, &lang=fr).
    """
    lss = alternation(substrings)
    keys = alternation(query_keys)
    always = rf"|(?:{alternation(language_keys)})=[^/&;#]*" if language_keys else ""
    return (rf"{DELIM_CLASS}(?:(?<=#)[\s\S]*{always}|(?:{keys})=(?:{lss})(?!{NON_DELIM_CLASS})"
            rf"|(?:{lss})(?!{NON_DELIM_CLASS}))")


def learned_pattern(tokens: Iterable[str]) -> str | None:
    """Regex removing host-specific learned tokens (letters/digits[=letters/digits]) with their delimiter."""
    ordered = sorted(set(tokens), key=lambda t: (-len(t), t))
    if not ordered:
        return None
    return f"{DELIM_CLASS}(?:{'|'.join(ordered)})(?!{NON_DELIM_CLASS})"


def learned_pattern_column(token):
    """`learned_pattern` as a Spark aggregate over a token column (use in groupBy(host).agg)."""
    from pyspark.sql import functions as F

    ordered = F.array_sort(F.collect_set(token), lambda a, b: (
        F.when(F.length(a) != F.length(b), F.length(b) - F.length(a))
        .when(a < b, F.lit(-1)).when(a > b, F.lit(1)).otherwise(F.lit(0))))
    return F.concat(F.lit(DELIM_CLASS + "(?:"), F.array_join(ordered, "|"), F.lit(")(?!" + NON_DELIM_CLASS + ")"))


@dataclass(frozen=True)
class HandleStripper:
    """Turns URLs into STRAND handles for one language pair."""

    languages: tuple[str, ...]
    substrings: tuple[str, ...]
    query_keys: tuple[str, ...]
    language_keys: tuple[str, ...] = ()
    pattern: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", lss_pattern(self.substrings, self.query_keys, self.language_keys))

    @functools.cached_property
    def _regex(self) -> re.Pattern:
        return re.compile(self.pattern)

    @functools.cached_property
    def known(self) -> frozenset[str]:
        return frozenset(self.substrings)

    def handle(self, url: str, learned: re.Pattern | None = None) -> str:
        """The handle of one URL: lower-cased, scheme and fragment dropped, '?' as '&', LSS tokens removed."""
        lowered = url.lower()
        body = lowered[lowered.find("://") + 2:].replace("?", "&")  # from the slash before the host
        stripped = self._regex.sub("", body)
        if learned is not None:
            stripped = learned.sub("", stripped)
        return stripped[1:]

    def handles(self, urls: pd.Series, learned: re.Pattern | None = None) -> pd.Series:
        """Handles of a Series of URLs (pandas in, pandas out)."""
        return pd.Series([self.handle(u, learned) for u in urls], index=urls.index, dtype=object)

    @functools.cached_property
    def jvm_spec(self) -> bytes:
        """The word lists as the Java UDF reads them: UTF-8, lists split by \\x1e, words by \\x1f."""
        lists = (self.substrings, self.query_keys, self.language_keys)
        if any(SPEC_LIST_SEPARATOR in word or SPEC_WORD_SEPARATOR in word for words in lists for word in words):
            raise ValueError("LSS words must not contain the control characters \\x1e or \\x1f")
        return SPEC_LIST_SEPARATOR.join(SPEC_WORD_SEPARATOR.join(words) for words in lists).encode("utf-8")


def build_stripper(languages: Iterable[str], lss_paths: tuple[str, ...] = ()) -> HandleStripper:
    """The stripper for a language pair (or any set): the union of the languages' LSS lists."""
    conf = load_lss_conf(tuple(lss_paths))
    codes = tuple(to_iso639_3(code) for code in languages)
    substrings: set[str] = set()
    for code in codes:
        substrings.update(language_substrings(code, conf))
    return HandleStripper(codes, tuple(sorted(substrings, key=lambda w: (-len(w), w))), tuple(conf["query_keys"]),
                          tuple(conf["language_keys"]))


def plain_stripper(tokens: Iterable[str]) -> HandleStripper:
    """A stripper removing only the given tokens (the naive 'strip en/fr' baseline)."""
    return HandleStripper((), tuple(sorted({t.lower() for t in tokens}, key=lambda w: (-len(w), w))), ())


def jvm_handles_available(spark) -> bool:
    """Whether `spark` can run the Java handle UDF (registered once per session; False without the jar)."""
    return java_function_available(spark, JVM_HANDLE_FUNCTION, JVM_HANDLE_CLASS, "handles", "Spark's regexp_replace")


def handle_column(url, stripper: HandleStripper, learned_patterns=None, use_jvm_udf: bool = True):
    """The same handle as `HandleStripper.handle`, computed on the JVM (Spark Column).

    By the Java UDF where the active session can load it, else (or with use_jvm_udf=False) by the regex
    in regexp_replace. Learned patterns (a column of `learned_pattern`s, per host) are a second regexp_replace.
    """
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    lowered = F.lower(url)
    body = lowered.substr(F.instr(lowered, "://") + F.lit(2), F.length(lowered))
    spark = SparkSession.getActiveSession() if use_jvm_udf else None
    if spark is not None and jvm_handles_available(spark):
        handle = F.call_function(JVM_HANDLE_FUNCTION, url, F.lit(stripper.jvm_spec))
        if learned_patterns is None:
            return handle
        # the learned regex needs the char the handle dropped; the body's first char behaves the same
        # (both delimiters or both not: a learned pattern starts with a delimiter and has no lookbehind)
        stripped = F.concat(body.substr(1, 1), handle)
    else:
        stripped = F.regexp_replace(F.replace(body, F.lit("?"), F.lit("&")), stripper.pattern, "")
    if learned_patterns is not None:
        stripped = F.when(learned_patterns.isNull(), stripped).otherwise(
            F.regexp_replace(stripped, learned_patterns, F.lit("")))
    return stripped.substr(F.lit(2), F.length(stripped))


def column_by_pair(pair_column: str, strippers: Mapping[str, HandleStripper],
                   column_of: Callable[[HandleStripper], object]):
    """`column_of(stripper)` with the stripper of each row's language pair (`strippers`: the pair's label, as the
    `pair_column` holds it -> its stripper), so several pairs are handled in one pass: one branch per distinct
    stripper, none when there is one."""
    from pyspark.sql import functions as F

    labels_of: dict[HandleStripper, list[str]] = {}
    for label, stripper in strippers.items():
        labels_of.setdefault(stripper, []).append(label)
    if len(labels_of) == 1:
        return column_of(next(iter(labels_of)))
    column = None
    for stripper, labels in labels_of.items():
        matches = F.col(pair_column).isin(*labels)
        column = F.when(matches, column_of(stripper)) if column is None else column.when(matches, column_of(stripper))
    return column


# ---- bad input --------------------------------------------------------------------------
BAD_URL_REASONS = ("empty_url", "url_too_long", "unparsable_url")


def url_problem(url: str | None) -> str | None:
    """Why a URL cannot be used ('empty_url', 'url_too_long', 'unparsable_url'), None when fine."""
    if url is None or not isinstance(url, str) or not url.strip():
        return "empty_url"
    if len(url) > MAX_URL_CHARS:
        return "url_too_long"
    if not _URL_SHAPE_RE.match(url.lower()):
        return "unparsable_url"
    try:
        _ = urlsplit(url).port  # raises on an invalid port or IPv6 literal
    except ValueError:
        return "unparsable_url"
    return None


def url_problem_column(url):
    """`url_problem` on the JVM (Spark Column): same reasons, same order."""
    from pyspark.sql import functions as F

    lowered = F.lower(url)
    return (F.when(url.isNull() | (F.length(F.trim(url)) == 0), F.lit("empty_url"))
            .when(F.length(url) > MAX_URL_CHARS, F.lit("url_too_long"))
            .when(~lowered.rlike(URL_SHAPE), F.lit("unparsable_url")))


def url_flags(url: str) -> list[str]:
    """Harmless peculiarities worth counting: 'idn_host' (unicode or punycode) and 'percent_encoded'."""
    flags = []
    host = url_host(url) or ""
    if not host.isascii() or "xn--" in host:
        flags.append("idn_host")
    if _PERCENT_RE.search(url):
        flags.append("percent_encoded")
    return flags


def url_flags_columns(url) -> dict:
    """`url_flags` on the JVM: boolean columns idn_host and percent_encoded."""
    from pyspark.sql import functions as F

    host = F.regexp_extract(F.lower(url), r"^[a-z][a-z0-9+.\-]*://(?:[^/?#]*@)?([^/?#:]*)", 1)
    return {"idn_host": host.rlike(r"[^\x00-\x7f]|xn--"), "percent_encoded": url.rlike("%[0-9a-fA-F]{2}")}


# ---- learned LSS (host-specific markers) --------------------------------------------------
def learnable_tokens(url: str) -> set[str]:
    """Distinct path/query tokens of a URL worth learning (lower-cased; key=value kept whole)."""
    lowered = url.lower().split("#", 1)[0]
    after_scheme = lowered.split("://", 1)[-1]
    cut = min((i for i in (after_scheme.find("/"), after_scheme.find("?")) if i >= 0), default=len(after_scheme))
    return {t for t in _TOKEN_SPLIT_RE.split(after_scheme[cut:]) if t and _TOKEN_SHAPE_RE.match(t)}


def learnable_tokens_column(url, known: Iterable[str] = (), language_keys: Iterable[str] = ()):
    """`learnable_tokens` on the JVM, minus known tokens (as `is_known_token`): an array column."""
    from pyspark.sql import functions as F

    body = F.regexp_replace(F.lower(url), "#[\\s\\S]*", "")
    path_query = F.regexp_extract(body, r"^[a-z][a-z0-9+.\-]*://[^/?]*([\s\S]*)", 1)
    known, language_keys = sorted(known), sorted(language_keys)
    return F.filter(F.array_distinct(F.split(path_query, TOKEN_SPLIT)), lambda t: (
        t.rlike(TOKEN_SHAPE_JVM) & ~t.isin(known) & ~F.regexp_extract(t, "([^=]*)$", 1).isin(known)
        & ~F.regexp_extract(t, "^([^=]*)=", 1).isin(language_keys)))


def is_known_token(token: str, known: frozenset[str], language_keys: Iterable[str] = ()) -> bool:
    """A token the base LSS list already removes (itself, the value of key=value, or a language key's pair)."""
    key, equals, _ = token.partition("=")
    return token in known or token.rsplit("=", 1)[-1] in known or bool(equals and key in language_keys)


def learn_lss(frame: pd.DataFrame, src_lang: str, trg_lang: str, known: frozenset[str] = frozenset(),
              min_frac: float = 0.9, max_other_frac: float = 0.05, min_support: int = 5,
              language_keys: Iterable[str] = ()) -> pd.DataFrame:
    """Host-specific LSS: tokens in >= min_frac of one language's URLs of a host and <= max_other_frac of
    the other's (both languages with >= min_support URLs on the host). Columns: host, token, lang,
    support, frac_lang, frac_other."""
    columns = ["host", "token", "lang", "support", "frac_lang", "frac_other"]
    rows = []
    for host, group in frame[frame["lang"].isin([src_lang, trg_lang])].groupby("host", sort=True):
        totals = group["lang"].value_counts()
        if totals.get(src_lang, 0) < min_support or totals.get(trg_lang, 0) < min_support:
            continue
        counts = {lang: Counter() for lang in (src_lang, trg_lang)}
        for url, lang in zip(group["url"], group["lang"]):
            counts[lang].update(learnable_tokens(url))
        for lang, other in ((src_lang, trg_lang), (trg_lang, src_lang)):
            for token, support in counts[lang].items():
                frac, frac_other = support / totals[lang], counts[other].get(token, 0) / totals[other]
                if (support >= min_support and frac >= min_frac and frac_other <= max_other_frac
                        and not is_known_token(token, known, language_keys)):
                    rows.append((host, token, lang, support, round(frac, 4), round(frac_other, 4)))
    return pd.DataFrame(rows, columns=columns)


# ---- STRAND candidate pairs (pandas; the Spark job does the same with a sort/group) ----------
def url_similarity(src_url: str, trg_url: str) -> float:
    """Character similarity of two URLs in [0, 1]: ranks pairs that share a handle."""
    return round(SequenceMatcher(None, src_url.lower(), trg_url.lower(), autojunk=False).ratio(), 6)


def strand_pairs(frame: pd.DataFrame, src_lang: str, trg_lang: str, max_bucket: int = 50) -> tuple[pd.DataFrame, dict]:
    """Pairs of src×trg URLs sharing a handle (each side capped at max_bucket URLs, sorted by URL).

    frame: host, url, lang, handle. Returns (host, src_url, trg_url, handle, score) and counts.
    """
    wanted = frame[frame["lang"].isin([src_lang, trg_lang])].sort_values("url", kind="stable")
    wanted = wanted.assign(rank=wanted.groupby(["handle", "lang"]).cumcount())
    sides = {lang: wanted[wanted["lang"] == lang] for lang in (src_lang, trg_lang)}
    sizes = wanted.groupby(["handle", "lang"]).size().unstack(fill_value=0)
    for lang in (src_lang, trg_lang):
        if lang not in sizes:
            sizes[lang] = 0
    paired = sizes[(sizes[src_lang] > 0) & (sizes[trg_lang] > 0)]
    capped = paired[(paired[src_lang] > max_bucket) | (paired[trg_lang] > max_bucket)]
    src = sides[src_lang][sides[src_lang]["rank"] < max_bucket][["host", "url", "handle"]]
    trg = sides[trg_lang][sides[trg_lang]["rank"] < max_bucket][["url", "handle"]]
    pairs = src.merge(trg, on="handle", suffixes=("_src", "_trg"))
    pairs = pairs.rename(columns={"url_src": "src_url", "url_trg": "trg_url"})[["host", "src_url", "trg_url", "handle"]]
    pairs["score"] = [url_similarity(s, t) for s, t in zip(pairs["src_url"], pairs["trg_url"])]
    stats = {
        "buckets": len(sizes),
        "buckets_with_both_languages": len(paired),
        "capped_buckets": len(capped),
        "urls_capped": int((capped.clip(lower=max_bucket) - max_bucket).to_numpy().sum()),
        "largest_bucket": int(sizes.sum(axis=1).max()) if len(sizes) else 0,
        "candidate_pairs": len(pairs),
    }
    return pairs.reset_index(drop=True), stats


def strand_candidates(pool: pd.DataFrame, stripper: HandleStripper, src_lang: str, trg_lang: str,
                      max_bucket: int = 50, learn: bool = False, min_frac: float = 0.9,
                      max_other_frac: float = 0.05, min_support: int = 5) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
    """STRAND on a pool (host, url, lang): handles (+ learned host markers), bucketed pairs, stats, learned."""
    learned = (learn_lss(pool, src_lang, trg_lang, stripper.known, min_frac, max_other_frac, min_support,
                         stripper.language_keys)
               if learn else learn_lss(pool.iloc[0:0], src_lang, trg_lang))
    patterns = {host: re.compile(learned_pattern(tokens)) for host, tokens in learned.groupby("host")["token"]}
    handles = [stripper.handle(url, patterns.get(host)) for url, host in zip(pool["url"], pool["host"])]
    pairs, stats = strand_pairs(pool.assign(handle=handles), src_lang, trg_lang, max_bucket)
    stats["learned_tokens"] = len(learned)
    stats["hosts_with_learned_tokens"] = len(patterns)
    return pairs, stats, learned
