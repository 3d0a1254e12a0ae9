"""Per-site text passes over paragraph hashes: boilerplate by repetition, and near-duplicate pages.

A site's template repeats: a paragraph whose hash is on at least `min_share` of the
site's pages (and on `min_pages` pages or more) is boilerplate wherever it appears.
Near-duplicates follow ILSP-FC's de-duplicator: a page is the list of hashes of its
main (non-boilerplate) paragraphs; two pages sharing at least `min_overlap` of the
smaller list are near-duplicates, and each group of them keeps one page (the one with
the most main text; then the smallest URL), the others pointing to it in `duplicate_of`.
`site_text_pass` is the pandas body of a groupBy(site).applyInPandas; the rest is plain Python.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd

#: Spark DDL of what site_text_pass returns per page
SITE_PASS_SCHEMA = "url string, repeated_hashes array<string>, duplicate_of string"


@dataclass(frozen=True)
class SiteTextSettings:
    """Thresholds of the per-site passes (fetch-docs options)."""

    min_share: float = 0.3  # a hash on this share of a site's pages is boilerplate...
    min_pages: int = 3  # ...when it is on at least this many pages
    min_overlap: float = 0.8  # ILSP-FC: near-duplicates share >= 80% of the smaller page's paragraphs
    max_pages_per_hash: int = 1000  # a hash on more pages is not used to find duplicate pairs (template text)


def repeated_hashes(pages: list[list[str]], settings: SiteTextSettings) -> set[str]:
    """The hashes found on at least min_share of the pages and min_pages of them (each page counted once)."""
    counts = Counter(h for hashes in pages for h in set(hashes))
    needed = max(settings.min_pages, settings.min_share * len(pages))
    return {h for h, pages_with in counts.items() if pages_with >= needed}


def near_duplicate_groups(urls: list[str], main_hashes: list[list[str]], main_chars: list[int],
                          settings: SiteTextSettings) -> dict[str, str]:
    """{url: the url kept for its group} for every page that is a near-duplicate of a kept one."""
    sets = [set(hashes) for hashes in main_hashes]
    pages_of: dict[str, list[int]] = {}
    for index, hashes in enumerate(sets):
        for h in hashes:
            pages_of.setdefault(h, []).append(index)
    shared: Counter = Counter()
    for members in pages_of.values():
        if 1 < len(members) <= settings.max_pages_per_hash:
            for position, first in enumerate(members):
                for second in members[position + 1:]:
                    shared[first, second] += 1
    parent = list(range(len(urls)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for (first, second), count in shared.items():
        if count >= settings.min_overlap * min(len(sets[first]), len(sets[second])):
            parent[root(first)] = root(second)
    groups: dict[int, list[int]] = {}
    for index in range(len(urls)):
        groups.setdefault(root(index), []).append(index)
    duplicates = {}
    for members in groups.values():
        if len(members) > 1:
            kept = min(members, key=lambda i: (-main_chars[i], urls[i]))
            duplicates.update({urls[i]: urls[kept] for i in members if i != kept})
    return duplicates


def site_text_pass(pages: pd.DataFrame, settings: SiteTextSettings) -> pd.DataFrame:
    """applyInPandas body for one site: columns url, hashes, boilerplate (arrays per paragraph), chars.

    Returns SITE_PASS_SCHEMA rows: the page's hashes that repeat across the site, and duplicate_of."""
    urls = pages["url"].tolist()
    hashes = [list(h) if h is not None else [] for h in pages["hashes"]]
    flags = [list(f) if f is not None else [] for f in pages["boilerplate"]]
    chars = [list(c) if c is not None else [] for c in pages["chars"]]
    repeated = repeated_hashes(hashes, settings)
    main_hashes, main_chars = [], []
    for page_hashes, page_flags, page_chars in zip(hashes, flags, chars):
        kept = [(h, n) for h, flag, n in zip(page_hashes, page_flags, page_chars) if not flag and h not in repeated]
        main_hashes.append([h for h, _ in kept])
        main_chars.append(sum(n for _, n in kept))
    duplicates = near_duplicate_groups(urls, main_hashes, main_chars, settings)
    return pd.DataFrame({"url": urls, "repeated_hashes": [sorted(repeated.intersection(h)) for h in hashes],
                         "duplicate_of": [duplicates.get(url) for url in urls]})
