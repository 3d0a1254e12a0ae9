"""Sites: the unit parascout ranks, crawls and reports. A site is a host without `www` and language labels
left of its registered domain (en.example.com, www.example.com and example.com are one site), or, grouped by
domain, the registered domain itself. One implementation, used by rank-pairs, shortlist and replay-crawl."""
from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from parascout.udfs.blocking.tokens import is_language_segment, language_markers


def site_of(host: str, domain: str | None, markers: frozenset[str]) -> str:
    """The host without www and language labels left of its registered domain: en.example.com -> example.com."""
    host = (host or "").lower().rstrip(".")
    domain = (domain or "").lower()
    if not domain or host == domain or not host.endswith("." + domain):
        return host.removeprefix("www.")
    labels = host[: -len(domain)].rstrip(".").split(".")
    kept = [label for label in labels if label and label != "www" and not is_language_segment(label, markers)]
    return ".".join([*kept, domain])


def sites_of_hosts(batches: Iterable[pd.DataFrame], languages: tuple[str, str], grouped_by: str = "site"
                   ) -> Iterable[pd.DataFrame]:
    """mapInPandas: the site of each distinct host (language-neutral host, or registered domain); adds domain."""
    from parascout.udfs.urls import registered_domain

    markers = language_markers(tuple(languages))
    for batch in batches:
        if batch.empty:
            continue
        batch = batch.copy()
        if "domain" not in batch.columns:
            batch["domain"] = [registered_domain(h) for h in batch["host"]]
        if grouped_by == "domain":
            batch["site"] = batch["domain"].fillna(batch["host"])
        else:
            batch["site"] = [site_of(h, d, markers) for h, d in zip(batch["host"], batch["domain"])]
        yield batch[["host", "domain", "site"]]



def with_site(frame, languages: tuple[str, str], grouped_by: str = "site", host_column: str = "host"):
    """Spark: `frame` with a `site` column for its `host_column` (host | domain | site, as --group-by says);
    the domain comes from a `domain` column where the frame has one. A host that resolves to nothing is its own site."""
    from pyspark.sql import functions as F

    host = F.col(host_column)
    if grouped_by == "host":
        return frame.withColumn("site", host)
    has_domain = "domain" in frame.columns
    hosts = frame.select(host.alias("host"), *(["domain"] if has_domain else [])).where(host.isNotNull()).distinct()
    sites = hosts.mapInPandas(bind_sites(languages, grouped_by), "host string, domain string, site string")
    keys = ["host", "domain"] if has_domain else ["host"]
    sites = sites.select(*keys, "site").withColumnRenamed("host", host_column)
    keys = [host_column, "domain"] if has_domain else [host_column]
    return frame.join(sites, keys, "left").withColumn("site", F.coalesce("site", host))


def bind_sites(languages: tuple[str, str], grouped_by: str):
    """`sites_of_hosts` with its settings fixed, for mapInPandas (Spark reads no type hints off it)."""
    def sites(batches):
        return sites_of_hosts(batches, languages=tuple(languages), grouped_by=grouped_by)

    return sites
