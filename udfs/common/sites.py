"""Sites: the unit parascout ranks, crawls and reports, by `--group-by`:

- `site` (the default): a host without `www` and language labels left of its registered domain
  (en.example.com, www.example.com and example.com are one site);
- `domain`: the registered domain (blog.example.com and example.com are one site);
- `name`: the registered domain's name on every public suffix, `example.*` (example.de, example.fr,
  en.example.com are one site): for sites that put each language on its country's domain. Two unrelated
  sites of one name are then one site too, so it is a choice, not the default; scan-cdx keeps hosts by it
  so that every grouping downstream finds its hosts;
- `host`: the host itself.

One implementation, used by scan-cdx, rank-pairs, discover-sites, fetch-docs, shortlist and replay-crawl."""
from __future__ import annotations

import itertools
from collections.abc import Iterable

import pandas as pd

from parascout.udfs.common.langs import is_language_segment, language_markers

GROUPINGS = ("site", "host", "domain", "name")
#: what follows a registered domain's name in a site grouped by name (example.de, example.fr -> example.*)
ANY_SUFFIX = ".*"
#: the columns naming a row's language pair, in a frame of several pairs
PAIR_LANGUAGE_COLUMNS = ["src_lang", "trg_lang"]


def site_of(host: str, domain: str | None, markers: frozenset[str], grouped_by: str = "site") -> str:
    """The site of a host by `grouped_by` (GROUPINGS; see the module): en.example.com -> example.com (site),
    example.fr -> example.* (name)."""
    host = (host or "").lower().rstrip(".")
    domain = (domain or "").lower()
    if grouped_by == "host":
        return host
    if grouped_by == "domain":
        return domain or host
    if grouped_by == "name":  # an IP address or a single label has no name apart from its suffix
        named = "." in domain and not domain.rsplit(".", 1)[1].isdigit()
        return domain.split(".", 1)[0] + ANY_SUFFIX if named else host
    if not domain or host == domain or not host.endswith("." + domain):
        return host.removeprefix("www.")
    labels = host[: -len(domain)].rstrip(".").split(".")
    kept = [label for label in labels if label and label != "www" and not is_language_segment(label, markers)]
    return ".".join([*kept, domain])


def sites_of_hosts(batches: Iterable[pd.DataFrame], languages: tuple[str, str] | None, grouped_by: str = "site"
                   ) -> Iterable[pd.DataFrame]:
    """mapInPandas: the site of each distinct host by `grouped_by` (site_of); adds domain. `languages` None: each
    row's own pair (its src_lang and trg_lang columns, kept in the output) names the language labels."""
    from parascout.udfs.common.urls import registered_domain

    pair_columns = [] if languages else PAIR_LANGUAGE_COLUMNS
    for batch in batches:
        if batch.empty:
            continue
        batch = batch.copy()
        if "domain" not in batch.columns:
            batch["domain"] = [registered_domain(h) for h in batch["host"]]
        markers = ([language_markers(pair) for pair in zip(batch["src_lang"], batch["trg_lang"])] if pair_columns
                   else itertools.repeat(language_markers(tuple(languages))))
        batch["site"] = [site_of(h, d, m, grouped_by) for h, d, m in zip(batch["host"], batch["domain"], markers)]
        yield batch[["host", "domain", *pair_columns, "site"]]


def with_site(frame, languages: tuple[str, str] | None, grouped_by: str = "site", host_column: str = "host"):
    """Spark: `frame` with a `site` column for its `host_column` (GROUPINGS, as --group-by says);
    the domain comes from a `domain` column where the frame has one. A host that resolves to nothing is its own site.
    `languages` None: a frame of several language pairs, each row's site by its own pair (src_lang, trg_lang)."""
    from pyspark.sql import functions as F

    host = F.col(host_column)
    if grouped_by == "host":
        return frame.withColumn("site", host)
    has_domain = "domain" in frame.columns
    if grouped_by == "name" and has_domain:
        return frame.withColumn("site", name_site_column(host, F.col("domain")))
    pair_columns = [] if languages else PAIR_LANGUAGE_COLUMNS
    hosts = (frame.select(host.alias("host"), *(["domain"] if has_domain else []), *pair_columns)
             .where(host.isNotNull()).distinct())
    schema = ", ".join(f"{column} string" for column in ["host", "domain", *pair_columns, "site"])
    sites = hosts.mapInPandas(bind_sites(languages, grouped_by), schema)
    keys = ["host", "domain"] if has_domain else ["host"]
    sites = sites.select(*keys, *pair_columns, "site").withColumnRenamed("host", host_column)
    keys = [host_column, "domain"] if has_domain else [host_column]
    columns = [*keys, *[column for column in frame.columns if column not in keys], "site"]
    return (frame.join(sites, [*keys, *pair_columns], "left").withColumn("site", F.coalesce("site", host))
            .select(*columns))


def name_site_column(host, domain):
    """Spark: site_of(host, domain, grouped_by="name") as a column (no Python worker: scan-cdx runs it on every
    host of a snapshot)."""
    from pyspark.sql import functions as F

    named = F.when(F.coalesce(domain, F.lit("")).rlike(r"\.[^.]*[^0-9.][^.]*$"),
                   F.concat(F.substring_index(domain, ".", 1), F.lit(ANY_SUFFIX)))
    return F.coalesce(named, F.regexp_replace(F.lower(host), r"\.+$", ""))


def bind_sites(languages: tuple[str, str] | None, grouped_by: str):
    """`sites_of_hosts` with its settings fixed, for mapInPandas (Spark reads no type hints off it)."""
    def sites(batches):
        return sites_of_hosts(batches, languages=tuple(languages) if languages else None, grouped_by=grouped_by)

    return sites


def with_page_hosts(pairs):
    """Spark: a pair table as it is written, its grouping key `host` (the site rank-pairs and verify-pairs group a
    pair's pages by) as `site` first, and `host` the source page's host after it."""
    from pyspark.sql import functions as F

    from parascout.udfs.common.urls import url_host_column

    others = [column for column in pairs.columns if column != "host"]
    return pairs.select(F.col("host").alias("site"), url_host_column(F.col("src_url")).alias("host"), *others)
