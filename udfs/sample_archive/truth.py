"""Ground truth kept apart from the archive: truth/pairs.parquet, truth/pages.parquet, truth/hosts.parquet.

A true pair is one logical page (home, section index or article) captured in two of
its host's languages; a page in k languages gives every one of its k·(k-1)/2 pairs.
pages.parquet gives the intended language of every HTML page URL (duplicates excluded).
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

import pyarrow as pa
import pyarrow.parquet as pq

from parascout.udfs.sample_archive.conventions import code_strip_recoverable
from parascout.udfs.sample_archive.sites import Site
from parascout.udfs.urls import registered_domain

TRUTH_PAGE_KINDS = ("home", "section", "article")
PAIRS_SCHEMA = pa.schema([
    ("host", pa.string()), ("src_url", pa.string()), ("trg_url", pa.string()), ("src_lang", pa.string()),
    ("trg_lang", pa.string()), ("convention", pa.string()), ("page_kind", pa.string()),
    ("switcher_linked", pa.bool_()), ("code_strip_recoverable", pa.bool_()),
])
PAGES_SCHEMA = pa.schema([
    ("host", pa.string()), ("url", pa.string()), ("lang", pa.string()), ("page_key", pa.string()),
    ("page_kind", pa.string()), ("convention", pa.string()), ("n_languages", pa.int16()),
])
HOSTS_SCHEMA = pa.schema([
    ("host", pa.string()), ("domain", pa.string()), ("languages", pa.list_(pa.string())),
    ("primary_language", pa.string()), ("conventions", pa.list_(pa.string())), ("n_pages", pa.int64()),
    ("n_urls", pa.int64()), ("n_pairs", pa.int64()), ("multilingual", pa.bool_()), ("switcher", pa.string()),
    ("hreflang", pa.bool_()),
])


@dataclass
class SiteTruth:
    """One host's true pairs (columns), its hosts.parquet row and its convention counts."""

    pairs: dict
    pages: dict
    host: dict
    conventions: Counter = field(default_factory=Counter)
    recoverable: Counter = field(default_factory=Counter)


def site_truth(site: Site) -> SiteTruth:
    """Every true pair of a host, with its convention and whether code stripping recovers it."""
    pairs = {name: [] for name in PAIRS_SCHEMA.names}
    pages = {name: [] for name in PAGES_SCHEMA.names}
    truth = SiteTruth(pairs, pages, {})
    for page in site.pages.values():
        label = site.convention_of(page).label
        for lang in page.languages:
            for name, value in zip(PAGES_SCHEMA.names, (site.host, site.urls[(page.key, lang)], lang, page.key,
                                                        page.kind, label, len(page.languages))):
                pages[name].append(value)
        if page.kind not in TRUTH_PAGE_KINDS or len(page.languages) < 2:
            continue
        for src_lang, trg_lang in combinations(page.languages, 2):
            src, trg = site.urls[(page.key, src_lang)], site.urls[(page.key, trg_lang)]
            recoverable = code_strip_recoverable(src, trg)
            linked = site.has_switcher(page, src_lang) or site.has_switcher(page, trg_lang)
            for name, value in zip(PAIRS_SCHEMA.names,
                                   (site.host, src, trg, src_lang, trg_lang, label, page.kind, linked, recoverable)):
                pairs[name].append(value)
            truth.conventions[label] += 1
            truth.recoverable[label] += recoverable
    truth.host = {
        "host": site.host, "domain": registered_domain(site.host), "languages": list(site.languages),
        "primary_language": site.languages[0],
        "conventions": sorted({site.convention_of(page).label for page in site.pages.values()}),
        "n_pages": sum(len(page.languages) for page in site.pages.values()), "n_urls": len(site.captures),
        "n_pairs": len(pairs["src_url"]), "multilingual": len(site.languages) > 1,
        "switcher": site.switcher_mode, "hreflang": site.hreflang}
    return truth


class TruthWriter:
    """Streams truth/pairs.parquet and truth/pages.parquet; writes truth/hosts.parquet on close."""

    def __init__(self, folder: str):
        os.makedirs(folder, exist_ok=True)
        self.folder = folder
        self.pairs = pq.ParquetWriter(os.path.join(folder, "pairs.parquet"), PAIRS_SCHEMA)
        self.pages = pq.ParquetWriter(os.path.join(folder, "pages.parquet"), PAGES_SCHEMA)
        self.hosts: list[dict] = []
        self.conventions: Counter = Counter()
        self.recoverable: Counter = Counter()
        self.n_pairs = 0

    def add(self, truth: SiteTruth) -> None:
        n_pairs = len(truth.pairs["src_url"])
        if n_pairs:
            self.pairs.write_table(pa.table(truth.pairs, schema=PAIRS_SCHEMA))
        self.pages.write_table(pa.table(truth.pages, schema=PAGES_SCHEMA))
        self.n_pairs += n_pairs
        self.hosts.append(truth.host)
        self.conventions.update(truth.conventions)
        self.recoverable.update(truth.recoverable)

    def close(self) -> None:
        self.pairs.close()
        self.pages.close()
        pq.write_table(pa.Table.from_pylist(self.hosts, schema=HOSTS_SCHEMA), os.path.join(self.folder, "hosts.parquet"))

    def convention_mix(self) -> dict:
        """{label: {pairs, share, recoverable_share}} and the overall code-strip-recoverable share."""
        total = max(1, self.n_pairs)
        mix = {label: {"pairs": n, "share": round(n / total, 4),
                       "recoverable_share": round(self.recoverable[label] / n, 4)}
               for label, n in sorted(self.conventions.items(), key=lambda item: (-item[1], item[0]))}
        return {"conventions": mix, "code_strip_recoverable_share": round(sum(self.recoverable.values()) / total, 4)}
