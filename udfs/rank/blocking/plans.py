"""Blocking wired to Spark: per-group pair functions for applyInPandas / mapInPandas, bounded sub-groups of
huge sites (language-neutral path prefix, then handle hash), and the DataFrame plans that orient pairs and join
switcher links by SURT. No SparkSession here: DataFrames in, DataFrames out. The blockers' knobs are
BlockingConfig's (udfs.rank.blocking.config), passed down as `config`.

Kept URLs carry their language pair (`lang_pair`, `src_lang`, `trg_lang`; `with_pair` adds one pair's to a frame
without them): a run ranks all its pairs in one pass, a URL in English once for each English pair, and every
grouping, join and orientation here is within one pair."""
from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pandas as pd

from parascout.udfs.common.langs import language_markers
from parascout.udfs.common.spark_functions import bind
from parascout.udfs.rank.blocking.config import DEFAULT, BlockingConfig
from parascout.udfs.rank.blocking.similarity import similar_pairs
from parascout.udfs.rank.blocking.tokens import neutral_handle, neutral_prefixes, url_features

# ---- one group of one host -----------------------------------------------------------------
SIMILAR_SCHEMA = "lang_pair string, host string, src_url string, trg_url string, jaccard double, top_k boolean"
#: the columns naming a kept URL's language pair
LANG_PAIR_COLUMNS = ("lang_pair", "src_lang", "trg_lang")


def cap_group(group: pd.DataFrame, max_urls: int) -> pd.DataFrame:
    """The first `max_urls` URLs of a group by URL order (what Spark reports as capped is the rest)."""
    if len(group) <= max_urls:
        return group
    return group.sort_values("url", kind="stable").head(max_urls)


def similar_pairs_for_group(group: pd.DataFrame, src_lang: str, trg_lang: str, k: int, max_urls: int,
                            lsh_min_pairs: int, strip_to: str = "host", exhaustive_max_pairs: int = 0,
                            config: BlockingConfig = DEFAULT) -> pd.DataFrame:
    """Candidate (src, trg) URL pairs of one host group (columns host, url, lang[, domain]): see similar_pairs."""
    group = cap_group(group, max_urls)
    markers = language_markers((src_lang, trg_lang))
    src = group[group["lang"] == src_lang].reset_index(drop=True)
    trg = group[group["lang"] == trg_lang].reset_index(drop=True)
    if src.empty or trg.empty:
        return pd.DataFrame({"lang_pair": pd.Series(dtype=object), "host": pd.Series(dtype=object),
                             "src_url": pd.Series(dtype=object), "trg_url": pd.Series(dtype=object),
                             "jaccard": pd.Series(dtype=np.float64), "top_k": pd.Series(dtype=bool)})
    def tokens(side: pd.DataFrame) -> list:  # each URL's own domain: a group by name holds example.de and example.fr
        strips = side["domain"] if strip_to == "domain" else [group[strip_to].iloc[0]] * len(side)
        return [url_features(u, markers, strip, config.char_ngram) for u, strip in zip(side["url"], strips)]

    src_tokens, trg_tokens = tokens(src), tokens(trg)
    pairs, _ = similar_pairs(src_tokens, trg_tokens, k, lsh_min_pairs, exhaustive_max_pairs, config)
    return pd.DataFrame({
        "lang_pair": group["lang_pair"].iloc[0] if "lang_pair" in group else f"{src_lang}-{trg_lang}",
        "host": group["host"].iloc[0],
        "src_url": src["url"].to_numpy()[pairs["src_index"].to_numpy()],
        "trg_url": trg["url"].to_numpy()[pairs["trg_index"].to_numpy()],
        "jaccard": pairs["jaccard"].to_numpy(dtype=np.float64),
        "top_k": pairs["top_k"].to_numpy(dtype=bool),
    })


def split_keys(urls: Iterable[str], languages: tuple[str, str], depth: int = 3) -> pd.DataFrame:
    """Per URL: language-neutral prefixes prefix_1..prefix_depth and a 31-bit hash of its neutral handle."""
    markers = language_markers(tuple(languages))
    urls = list(urls)
    prefixes = [neutral_prefixes(u or "", markers, depth) for u in urls]
    handles = pd.Series([neutral_handle(u or "", markers) for u in urls], dtype=object)
    frame = pd.DataFrame(prefixes, columns=[f"prefix_{level}" for level in range(1, depth + 1)])
    frame["handle_hash"] = (pd.util.hash_array(handles.to_numpy()) >> np.uint64(33)).astype(np.int64)
    return frame


# ---- Spark wrappers (mapInPandas / applyInPandas / pandas_udf) -----------------------------
def split_keys_schema(depth: int) -> str:
    """Schema of `with_split_keys` output: the kept-URL columns plus prefixes and handle hash."""
    prefixes = ", ".join(f"prefix_{level} string" for level in range(1, depth + 1))
    return (f"lang_pair string, src_lang string, trg_lang string, site string, url string, surt string, "
            f"lang string, p_lang double, lang_source string, domain string, {prefixes}, handle_hash long")


def with_split_keys(batches: Iterable[pd.DataFrame], depth: int) -> Iterable[pd.DataFrame]:
    """mapInPandas: add the split keys (neutral prefixes, handle hash) to batches of kept URLs, each URL's by the
    language markers of its pair."""
    for batch in batches:
        if batch.empty:
            continue
        for (src_lang, trg_lang), urls in batch.groupby(["src_lang", "trg_lang"], sort=False):
            keys = split_keys(urls["url"], (src_lang, trg_lang), depth)
            yield pd.concat([urls.reset_index(drop=True), keys], axis=1)


def similar_pairs_for_group_frame(group: pd.DataFrame, k: int, max_urls: int, lsh_min_pairs: int,
                                  strip_to: str = "host", exhaustive_max_pairs: int = 0,
                                  config: BlockingConfig = DEFAULT) -> pd.DataFrame:
    """applyInPandas: `similar_pairs_for_group` for a (lang_pair, host, group_key) group of kept URLs."""
    return similar_pairs_for_group(group, group["src_lang"].iloc[0], group["trg_lang"].iloc[0], k, max_urls,
                                   lsh_min_pairs, strip_to, exhaustive_max_pairs, config)


def surt_of_links(batches: Iterator[pd.Series]) -> Iterator[pd.Series]:
    """pandas_udf body: SURT keys of absolute http(s) links (None for anything else)."""
    from parascout.udfs.common.urls import surt

    for links in batches:
        yield pd.Series([surt(link) if isinstance(link, str) and link.lower().startswith(("http://", "https://"))
                         else None for link in links], dtype=object)


# ---- Spark DataFrame plans (no SparkSession here: DataFrames in, DataFrames out) -----------
def with_pair(kept, languages: tuple[str, str] | None = None):
    """Kept URLs with their pair's columns (LANG_PAIR_COLUMNS): as they are, or those of `languages` added."""
    from pyspark.sql import functions as F

    if "lang_pair" in kept.columns:
        return kept
    src_lang, trg_lang = languages
    return kept.select("*", F.lit(f"{src_lang}-{trg_lang}").alias("lang_pair"), F.lit(src_lang).alias("src_lang"),
                       F.lit(trg_lang).alias("trg_lang"))


def bounded_groups(kept, limit: int, depth: int = 3):
    """Add group_key to kept URLs (lang_pair, site, url, lang, ...): '' while a pair's site has <= limit URLs, else its
    language-neutral path prefix (1..depth directories, deepened while a group stays over the limit),
    else prefix#(handle hash mod ceil(n / limit)); `chunked` marks hash-split groups.

    Only aggregations and joins: no site's URLs ever meet in one task before they are bounded.
    """
    from pyspark.sql import functions as F

    levels = max(depth, 1)
    keys = ["lang_pair", "site", "group_key"]
    keyed = kept.select(*LANG_PAIR_COLUMNS, "site", "url", "surt", "lang", "p_lang", "lang_source", "domain").mapInPandas(
        bind(with_split_keys, depth=levels), split_keys_schema(levels)
    ).withColumn("group_key", F.lit(""))
    for level in range(1, depth + 1):
        oversized = (keyed.groupBy(*keys).count().filter(F.col("count") > limit)
                     .select(*keys, F.lit(True).alias("oversized")))
        keyed = (keyed.join(oversized, keys, "left")
                 .withColumn("group_key", F.when(F.col("oversized"), F.col(f"prefix_{level}"))
                             .otherwise(F.col("group_key"))).drop("oversized"))
    sizes = keyed.groupBy(*keys).agg(F.count("*").alias("group_urls"))
    chunk = (F.col("handle_hash") % F.ceil(F.col("group_urls") / F.lit(limit))).cast("string")
    return (keyed.join(sizes, keys)
            .withColumn("chunked", F.col("group_urls") > limit)
            .withColumn("group_key", F.when(F.col("chunked"), F.concat("group_key", F.lit("#"), chunk))
                        .otherwise(F.col("group_key")))
            .drop("group_urls"))


def orient_pairs(pairs, kept):
    """Candidate pairs (lang_pair, src_url, trg_url[, handle]) checked against the kept URLs of their pair: host =
    their site, src in the pair's first language, and `reason` ok | url_not_kept | cross_site | same_language."""
    from pyspark.sql import functions as F

    side = kept.select("lang_pair", "url", "site", "lang", "src_lang")
    handle = F.col("handle") if "handle" in pairs.columns else F.lit(None).cast("string")
    joined = (pairs.select("lang_pair", "src_url", "trg_url", handle.alias("handle"))
              .join(side.toDF("lang_pair", "src_url", "src_site", "a_lang", "first_lang"), ["lang_pair", "src_url"],
                    "left")
              .join(side.toDF("lang_pair", "trg_url", "trg_site", "b_lang", "first_b"), ["lang_pair", "trg_url"],
                    "left"))
    reason = (F.when(F.col("a_lang").isNull() | F.col("b_lang").isNull(), "url_not_kept")
              .when(F.col("src_site") != F.col("trg_site"), "cross_site")
              .when(F.col("a_lang") == F.col("b_lang"), "same_language").otherwise("ok"))
    swap = F.col("a_lang") != F.col("first_lang")
    return joined.select(
        "lang_pair", F.col("src_site").alias("host"),
        F.when(swap, F.col("trg_url")).otherwise(F.col("src_url")).alias("src_url"),
        F.when(swap, F.col("src_url")).otherwise(F.col("trg_url")).alias("trg_url"),
        "handle", reason.alias("reason"))


def page_links(docs):
    """Links of fetched pages (docs: url, outlinks[, outlink_cues, status]) as (page, link_surt, cue): the SURT of
    each absolute http(s) link and the language its context names (docs.outlink_cues, aligned with outlinks; null
    without one), one row per page and target."""
    from pyspark.sql import functions as F

    fetched = docs.filter(F.col("status") == "ok") if "status" in docs.columns else docs
    cues = F.col("outlink_cues") if "outlink_cues" in docs.columns else F.lit(None).cast("array<string>")
    links = (fetched.select(F.col("url").alias("page"), F.posexplode("outlinks").alias("position", "link"),
                            cues.alias("cues"))
             .filter(F.col("link").isNotNull())
             .select("page", F.pandas_udf(surt_of_links, "string")(F.col("link")).alias("link_surt"),
                     F.get("cues", F.col("position")).alias("cue")))
    return links.filter(F.col("link_surt").isNotNull()).groupBy("page", "link_surt").agg(F.max("cue").alias("cue"))


def link_pairs(pages, kept):
    """(lang_pair, src_url = the linking page, trg_url = a URL kept in that pair it links to, matched by SURT, cue)
    from `page_links`."""
    from pyspark.sql import functions as F

    targets = kept.select("lang_pair", F.col("url").alias("trg_url"), F.col("surt").alias("link_surt"))
    return pages.join(targets, "link_surt").select("lang_pair", F.col("page").alias("src_url"), "trg_url", "cue")


def link_evidence(pages, kept, config: BlockingConfig = DEFAULT):
    """Per language pair, site and (src, trg) pair of kept URLs in the pair's two languages that links join,
    what the links say: a link from src to trg, one from trg to src, how many of the two
    directions carry a cue naming their target's language (`cue_links`: a language switcher), whether such a
    target gets a cue link from no other page (`cue_exclusive`: one page's translation, not a site-wide
    'Français' link to the French home page), and how many rare cue-marked targets (third-language
    alternates, at most `config.link_rare_pages` pages cue-link to them) both pages link to (`shared_alternates`).

    `pages`: `page_links` rows; joins and group-bys only."""
    from pyspark.sql import functions as F

    side = kept.select("lang_pair", "url", "site", "lang", "src_lang")
    edges = (link_pairs(pages, kept)
             .join(side.toDF("lang_pair", "src_url", "site", "page_lang", "first_lang"), ["lang_pair", "src_url"])
             .join(side.toDF("lang_pair", "trg_url", "trg_site", "target_lang", "first_b"), ["lang_pair", "trg_url"])
             .filter((F.col("site") == F.col("trg_site")) & (F.col("page_lang") != F.col("target_lang")))
             .withColumn("cued", F.coalesce(F.col("cue") == F.col("target_lang"), F.lit(False))))
    in_pages = edges.filter("cued").groupBy("lang_pair", "trg_url").agg(F.countDistinct("src_url").alias("cue_pages"))
    forward = F.col("page_lang") == F.col("first_lang")
    direct = (edges.join(in_pages, ["lang_pair", "trg_url"], "left")
              .select("lang_pair", F.col("site").alias("host"),
                      F.when(forward, F.col("src_url")).otherwise(F.col("trg_url")).alias("a"),
                      F.when(forward, F.col("trg_url")).otherwise(F.col("src_url")).alias("b"),
                      forward.alias("forward"), "cued",
                      (F.col("cued") & (F.col("cue_pages") == 1)).alias("exclusive"))
              .groupBy("lang_pair", "host", "a", "b").agg(
                  F.max("forward").alias("link_src_to_trg"), F.max(~F.col("forward")).alias("link_trg_to_src"),
                  F.sum(F.col("cued").cast("int")).cast("int").alias("cue_links"),
                  F.max("exclusive").alias("cue_exclusive")))
    return (direct.join(shared_alternates(pages, kept, config), ["lang_pair", "host", "a", "b"], "full")
            .select("lang_pair", "host", F.col("a").alias("src_url"), F.col("b").alias("trg_url"),
                    F.coalesce("link_src_to_trg", F.lit(False)).alias("link_src_to_trg"),
                    F.coalesce("link_trg_to_src", F.lit(False)).alias("link_trg_to_src"),
                    F.coalesce("cue_links", F.lit(0)).alias("cue_links"),
                    F.coalesce("cue_exclusive", F.lit(False)).alias("cue_exclusive"),
                    F.coalesce("shared_alternates", F.lit(0)).alias("shared_alternates")))


def shared_alternates(pages, kept, config: BlockingConfig = DEFAULT):
    """(lang_pair, host, a, b, shared_alternates): pages of a pair's two languages on one site that both link with a
    language cue
    to the same target other than each other, a target at most `config.link_rare_pages` pages cue-link to (more:
    a site-wide switcher target, the other language's home page, not one page's translation)."""
    from pyspark.sql import functions as F

    cued = (pages.filter(F.col("cue").isNotNull())
            .join(kept.select("lang_pair", "src_lang", "trg_lang", F.col("url").alias("page"), "site", "lang",
                              F.col("surt").alias("page_surt")), "page"))
    rare = (cued.groupBy("lang_pair", "link_surt").agg(F.countDistinct("page").alias("n"))
            .filter(F.col("n") <= config.link_rare_pages).select("lang_pair", "link_surt"))
    cued = cued.join(rare, ["lang_pair", "link_surt"])
    src = cued.filter(F.col("lang") == F.col("src_lang")).select("lang_pair", "site", "link_surt", F.col("page").alias("a"),
                                                                 F.col("page_surt").alias("a_surt"))
    trg = cued.filter(F.col("lang") == F.col("trg_lang")).select("lang_pair", "site", "link_surt", F.col("page").alias("b"),
                                                                 F.col("page_surt").alias("b_surt"))
    return (src.join(trg, ["lang_pair", "site", "link_surt"])
            .filter((F.col("link_surt") != F.col("a_surt")) & (F.col("link_surt") != F.col("b_surt")))
            .groupBy("lang_pair", F.col("site").alias("host"), "a", "b")
            .agg(F.countDistinct("link_surt").cast("int").alias("shared_alternates")))


def neighbour_pairs(pages, kept, exact, config: BlockingConfig = DEFAULT):
    """(lang_pair, host, src_url, trg_url, neighbour_jaccard): pages whose URLs pair with nothing, paired by what they
    link. A section page, a renamed node or a page under a translated slug has no partner by URL, but the pages it
    links mostly do (`exact`: oriented pairs whose URLs differ only in their language markers; a URL in two such
    pairs is no one's counterpart): its translation links the counterparts of what it links. Each page becomes the
    set of second-language pages it reaches (its links' counterparts on the first language's side, its links
    themselves on the second's); two pages without counterparts pair when the Jaccard of their sets is at least
    `config.neighbour_min_jaccard`, both sets hold at least `config.neighbour_min_links` pages, and each page is the
    other's one best. A page more than `config.navigation_share` of a language's pages link (and more than
    `config.neighbour_min_links`), or more than `config.neighbour_max_pages` pages, is the site's navigation, no
    evidence: what one linked page joins stays bounded on any site.

    `pages`: `page_links` rows; joins, group-bys and windows only."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    key = ["lang_pair", "site", "lang"]
    unique = (exact.select("lang_pair", "src_url", "trg_url").distinct()
              .withColumn("n_src", F.count("*").over(Window.partitionBy("lang_pair", "src_url")))
              .withColumn("n_trg", F.count("*").over(Window.partitionBy("lang_pair", "trg_url")))
              .filter((F.col("n_src") == 1) & (F.col("n_trg") == 1)).select("lang_pair", "src_url", "trg_url"))
    pages_of = kept.select("lang_pair", F.col("url").alias("page"), "site", "lang", "src_lang")
    links = (link_pairs(pages, kept).select("lang_pair", F.col("src_url").alias("page"), F.col("trg_url").alias("target"))
             .join(pages_of, ["lang_pair", "page"]).filter(F.col("target") != F.col("page")))
    first = F.col("lang") == F.col("src_lang")
    # a first-language page's links stand for their counterparts; a second-language page's for themselves
    nodes = (links.filter(first).join(unique.select("lang_pair", F.col("src_url").alias("target"),
                                                    F.col("trg_url").alias("node")), ["lang_pair", "target"])
             .unionByName(links.filter(~first).join(unique.select("lang_pair", F.col("trg_url").alias("target"),
                                                                  F.col("trg_url").alias("node")), ["lang_pair", "target"]))
             .select(*key, "src_lang", "page", "node").distinct())
    site_pages = pages_of.groupBy(*key).agg(F.count("*").alias("site_pages"))
    navigation = (nodes.groupBy(*key, "node").agg(F.count("*").alias("linking")).join(site_pages, key)
                  .filter((F.col("linking") > config.neighbour_max_pages) | (
                      (F.col("linking") > config.neighbour_min_links)
                      & (F.col("linking") > config.navigation_share * F.col("site_pages"))))
                  .select(*key, "node"))
    with_partner = (unique.select("lang_pair", F.col("src_url").alias("page"))
                    .unionByName(unique.select("lang_pair", F.col("trg_url").alias("page"))))
    nodes = (nodes.join(navigation, [*key, "node"], "left_anti").join(with_partner, ["lang_pair", "page"], "left_anti"))
    sizes = nodes.groupBy("lang_pair", "page").agg(F.count("*").alias("n"))
    nodes = nodes.join(sizes.filter(F.col("n") >= config.neighbour_min_links), ["lang_pair", "page"])
    src = nodes.filter(first).select("lang_pair", "site", "node", F.col("page").alias("src_url"), F.col("n").alias("n_a"))
    trg = nodes.filter(~first).select("lang_pair", "site", "node", F.col("page").alias("trg_url"), F.col("n").alias("n_b"))
    pairs = (src.join(trg, ["lang_pair", "site", "node"])
             .groupBy("lang_pair", "site", "src_url", "trg_url", "n_a", "n_b").agg(F.count("*").alias("shared"))
             .withColumn("neighbour_jaccard", F.col("shared") / (F.col("n_a") + F.col("n_b") - F.col("shared"))))
    best = F.lit(True)
    for side in ("src_url", "trg_url"):  # each page's one best: the pair holding its highest Jaccard, alone
        pairs = (pairs.withColumn(f"{side}_best", F.max("neighbour_jaccard").over(Window.partitionBy("lang_pair", side)))
                 .withColumn(f"{side}_ties", F.count("*").over(Window.partitionBy("lang_pair", side, "neighbour_jaccard"))))
        best &= (F.col("neighbour_jaccard") == F.col(f"{side}_best")) & (F.col(f"{side}_ties") == 1)
    return (pairs.filter(best & (F.col("neighbour_jaccard") >= config.neighbour_min_jaccard))
            .select("lang_pair", F.col("site").alias("host"), "src_url", "trg_url", "neighbour_jaccard"))
