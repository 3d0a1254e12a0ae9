"""A site's archived link graph for the replay: URLs interned to ids, adjacency, and the truth pairs on it.

A `SiteGraph` interns a site's URLs to integer ids once (archived documents first, so
"is an archived document" is `id < n_docs`), with adjacency as lists of ints (and as CSR
arrays). URLs are identified without their scheme (`url_key`), so http://h/x and https://h/x
are one page. Where `docs` has `outlink_cues` (the language each link's context names:
udfs.fetch.language_cues), `link_cues` holds it per link, aligned with `links`. `TruthIndex` holds, per page, its true partners (the parallel documents a crawl
can complete). The simulator and the policies both read these; neither imports the other's
internals.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain

import numpy as np
import pandas as pd

from parascout.udfs.common.urls import url_host


def url_key(url: str) -> str:
    """The identity of a URL in the replay: the URL without its scheme ('//host/path?query')."""
    cut = url.find("://")
    return url[cut + 1:] if cut >= 0 else url


@dataclass
class SiteGraph:
    """A site's link graph (one host, or every host of the site): URLs interned to ids, archived documents first."""

    site: str
    urls: list[str]
    index: dict[str, int]
    links: list[list[int]]
    langs: list[str | None]
    sizes: list[int]
    n_docs: int
    n_offhost_links: int = 0
    n_duplicate_rows: int = 0
    scope: frozenset[str] = frozenset()  # the hosts crawled (besides `site`): more than one for a site of several hosts
    link_cues: list[list[str | None]] | None = None  # per link (aligned with `links`): the language its context names
    _csr: tuple[np.ndarray, np.ndarray] | None = field(default=None, repr=False, compare=False)

    @property
    def n_nodes(self) -> int:
        return len(self.urls)

    @property
    def n_links(self) -> int:
        return sum(len(targets) for targets in self.links)

    def node(self, url: str, add: bool = False) -> int | None:
        """The id of a URL; with add=True an unknown URL becomes a page missing from the archive."""
        key = url_key(url)
        found = self.index.get(key)
        if found is None and add:
            found = self.index[key] = len(self.urls)
            self.urls.append(url)
            self.links.append([])
            if self.link_cues is not None:
                self.link_cues.append([])
            self.langs.append(None)
            self.sizes.append(0)
        return found

    def home(self) -> int:
        """The site's home page as the paper seeds a crawl: the root URL of the site's name (a host, or a site's
        registered domain), its www host, then its shortest-named host with an archived root, else its shortest
        archived URL."""
        roots = [self.site, f"www.{self.site}", *sorted(self.scope, key=lambda host: (len(host), host))]
        for host in roots:
            root = self.index.get(f"//{host}/")
            if root is not None and root < self.n_docs:
                return root
        if self.n_docs:
            return min(range(self.n_docs), key=lambda node: (len(self.urls[node]), self.urls[node]))
        return self.node(f"https://{self.site}/", add=True)

    def homes(self) -> list[int]:
        """A crawl's seeds: the home page, then the home of each other host of a site (its archived root, else its
        shortest archived URL). A crawler given a site's hosts starts each from its root, and a site whose hosts
        do not link each other (English on www.x.org, French on fra.x.org, no switcher) is only whole that way."""
        first = self.home()
        if len(self.scope) < 2:
            return [first]
        best: dict[str, tuple[tuple[int, int, str], int]] = {}
        for node in range(self.n_docs):
            key = url_key(self.urls[node])
            host, _, path = key[2:].partition("/")
            rank = (0 if path == "" else 1, len(key), key)
            if host not in best or rank < best[host][0]:
                best[host] = (rank, node)
        others = [node for _, (_, node) in sorted(best.items()) if node != first]
        return [first, *others]

    def csr(self) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, targets): the links of page u are targets[offsets[u]:offsets[u + 1]] (cached)."""
        if self._csr is None or len(self._csr[0]) != self.n_nodes + 1:
            counts = np.fromiter((len(targets) for targets in self.links), dtype=np.int64, count=self.n_nodes)
            offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
            targets = np.fromiter(chain.from_iterable(self.links), dtype=np.int64, count=int(offsets[-1]))
            self._csr = (offsets, targets)
        return self._csr

    def cue_array(self) -> np.ndarray:
        """The cue language of every link in CSR order (object array: ISO 639-3 or None); all None without cues."""
        offsets, _ = self.csr()
        if self.link_cues is None:
            return np.full(int(offsets[-1]), None, dtype=object)
        return np.array([cue for cues in self.link_cues for cue in cues] or [], dtype=object).reshape(-1)


def build_graph(docs: pd.DataFrame, site: str | None = None) -> SiteGraph:
    """Intern one host's or site's `docs` rows (url, status, cld2_lang, outlinks[, host, outlinks_same_host,
    outlink_cues, warc_length]); `site` names the graph (default: the docs' host). A link is inside the crawl scope when it
    points to `site` or to a host of the docs rows."""
    if site is None:
        site = str(docs["host"].iloc[0]) if "host" in docs and len(docs) else _host_of(docs)
    scope = frozenset(h for h in docs["host"].dropna().unique()) if "host" in docs else frozenset()
    scope |= {site}
    rows = docs.assign(_not_ok=docs["status"].ne("ok"), _key=docs["url"].map(url_key))
    rows = rows.sort_values(["_not_ok", "_key"], kind="stable")
    unique = rows.drop_duplicates("_key", keep="first")
    urls, keys = unique["url"].tolist(), unique["_key"].tolist()
    index = {key: node for node, key in enumerate(keys)}
    n_docs = int((~unique["_not_ok"]).sum())
    langs = [lang if isinstance(lang, str) else None for lang in unique.get("cld2_lang", [None] * len(unique))]
    sizes = _int_list(unique["warc_length"]) if "warc_length" in unique else [0] * len(unique)
    same_host_flags = unique["outlinks_same_host"].tolist() if "outlinks_same_host" in unique else None
    cue_lists = unique["outlink_cues"].tolist() if "outlink_cues" in unique else None
    link_cues: list[list[str | None]] | None = [] if cue_lists is not None else None
    prefixes = (f"//{site}/", f"//{site}:")
    several_hosts = len(scope) > 1  # a link flagged off-host may point to another host of the site
    links: list[list[int]] = []
    offhost = 0
    for row, outlinks in enumerate(unique["outlinks"].tolist()):
        if outlinks is None or len(outlinks) == 0:
            links.append([])
            if link_cues is not None:
                link_cues.append([])
            continue
        flags = same_host_flags[row] if same_host_flags is not None else None
        cues = _cues_of(cue_lists[row], len(outlinks)) if cue_lists is not None else None
        targets: dict[int, str | None] = {}  # a page linked twice keeps the first cue any of its links gives
        for position, link in enumerate(outlinks):
            key = url_key(link)
            same = flags[position] if flags is not None and flags[position] is not None else key.startswith(prefixes)
            if not same and several_hosts:
                same = _key_host(key) in scope
            if not same:
                offhost += 1
                continue
            target = index.get(key)
            if target is None:
                target = index[key] = len(urls)
                urls.append(link)
                langs.append(None)
                sizes.append(0)
            if target != row and targets.get(target) is None:
                targets[target] = cues[position] if cues is not None else None
        links.append(list(targets))
        if link_cues is not None:
            link_cues.append(list(targets.values()))
    links.extend([] for _ in range(len(urls) - len(links)))
    if link_cues is not None:
        link_cues.extend([] for _ in range(len(urls) - len(link_cues)))
    return SiteGraph(site=site, urls=urls, index=index, links=links, langs=langs, sizes=sizes, n_docs=n_docs,
                     n_offhost_links=offhost, n_duplicate_rows=len(rows) - len(unique), scope=scope,
                     link_cues=link_cues)


def _cues_of(cues, n_links: int) -> list[str | None] | None:
    """A row's outlink_cues as a list aligned with its outlinks; None when missing or misaligned (no cues then)."""
    if cues is None or len(cues) != n_links:
        return None
    return [cue if isinstance(cue, str) and cue else None for cue in cues]


def _key_host(key: str) -> str:
    """'//host:8080/path' -> 'host' (lower-cased, as urls.url_host gives it)."""
    return url_host("http:" + key) or ""


def _host_of(docs: pd.DataFrame) -> str:
    return url_host(str(docs["url"].iloc[0])) or "" if len(docs) else ""


def _int_list(values: pd.Series) -> list[int]:
    return [0 if pd.isna(v) else int(v) for v in values.tolist()]


@dataclass
class TruthIndex:
    """Truth pairs resolved to graph ids: partners of every archived parallel document."""

    partners: list[tuple[int, ...]]
    n_pairs: int
    n_parallel_docs: int
    n_input_pairs: int
    n_unusable_pairs: int


def build_truth(graph: SiteGraph, pairs: pd.DataFrame | Iterable[tuple[str, str]]) -> TruthIndex:
    """Resolve (src_url, trg_url) pairs; a pair is usable when both sides are archived documents."""
    if isinstance(pairs, pd.DataFrame):
        pairs = zip(pairs["src_url"].tolist(), pairs["trg_url"].tolist())
    partners: list[list[int]] = [[] for _ in range(graph.n_docs)]
    seen: set[tuple[int, int]] = set()
    n_input = unusable = 0
    for src_url, trg_url in pairs:
        n_input += 1
        src, trg = graph.index.get(url_key(src_url)), graph.index.get(url_key(trg_url))
        if src is None or trg is None or src >= graph.n_docs or trg >= graph.n_docs or src == trg:
            unusable += 1
            continue
        pair = (min(src, trg), max(src, trg))
        if pair in seen:
            continue
        seen.add(pair)
        partners[src].append(trg)
        partners[trg].append(src)
    n_parallel = sum(1 for found in partners if found)
    return TruthIndex(partners=[tuple(found) for found in partners], n_pairs=len(seen),
                      n_parallel_docs=n_parallel, n_input_pairs=n_input, n_unusable_pairs=unusable)
