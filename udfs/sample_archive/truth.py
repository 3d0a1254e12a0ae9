"""Ground truth kept apart from the archive: truth/pairs.parquet, truth/pages.parquet, truth/hosts.parquet
and, with --text-corpus, truth/sentences.parquet.

A true pair is one logical page (home, section index or article) captured in two of
its host's languages; a page in k languages gives every one of its k·(k-1)/2 pairs
(with a corpus, less those whose body was left untranslated: boilerplate_only).
pages.parquet gives the intended language of every HTML page URL (duplicates excluded,
except with a corpus, where they are rows labelled near_duplicate), its hard-negative
kind and, with WARC payloads, its body text. sentences.parquet aligns the sentences
(corpus ids) of every true pair, bead by bead.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations

import pyarrow as pa
import pyarrow.parquet as pq

from parascout.udfs.common.urls import registered_domain
from parascout.udfs.sample_archive.conventions import code_strip_recoverable
from parascout.udfs.sample_archive.render import body_text
from parascout.udfs.sample_archive.sites import Site
from parascout.udfs.sample_archive.texts import BEAD_TYPES, NEGATIVE_KINDS, beads, partial_cut

TRUTH_PAGE_KINDS = ("home", "section", "article")
PAIRS_SCHEMA = pa.schema([
    ("host", pa.string()), ("src_url", pa.string()), ("trg_url", pa.string()), ("src_lang", pa.string()),
    ("trg_lang", pa.string()), ("convention", pa.string()), ("page_kind", pa.string()),
    ("switcher_linked", pa.bool_()), ("code_strip_recoverable", pa.bool_()),
])
PAGES_SCHEMA = pa.schema([
    ("host", pa.string()), ("url", pa.string()), ("lang", pa.string()), ("page_key", pa.string()),
    ("page_kind", pa.string()), ("convention", pa.string()), ("n_languages", pa.int16()),
    ("negative_kind", pa.string()), ("duplicate_of", pa.string()), ("body_text", pa.string()),
    ("negative_of", pa.string()), ("variant", pa.string()), ("translated_from", pa.string()),
    ("translated_share", pa.float32()), ("passage", pa.string()),
])
SENTENCES_SCHEMA = pa.schema([
    ("host", pa.string()), ("src_url", pa.string()), ("trg_url", pa.string()), ("src_lang", pa.string()),
    ("trg_lang", pa.string()), ("bead", pa.int32()), ("bead_type", pa.string()), ("src_ids", pa.list_(pa.string())),
    ("trg_ids", pa.list_(pa.string())), ("src_text", pa.string()), ("trg_text", pa.string()),
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
    sentences: dict = field(default_factory=dict)
    stats: Counter = field(default_factory=Counter)  # negatives, bead types, passages reused (--text-corpus)
    passages: Counter = field(default_factory=Counter)  # passage label -> logical pages holding it


def site_truth(site: Site, with_text: bool = True) -> SiteTruth:
    """Every true pair of a host, with its convention and whether code stripping recovers it.

    with_text (WARC payloads written): body_text and the sentence alignment of every true pair.
    """
    pairs = {name: [] for name in PAIRS_SCHEMA.names}
    pages = {name: [] for name in PAGES_SCHEMA.names}
    truth = SiteTruth(pairs, pages, {}, sentences={name: [] for name in SENTENCES_SCHEMA.names})
    duplicates = {}
    for capture in site.captures:
        if capture.kind == "duplicate" and site.corpus is not None:
            duplicates.setdefault((capture.page, capture.lang), []).append(capture)
    for page in site.pages.values():
        label = site.convention_of(page).label
        if page.text is not None:
            truth.passages[page.text.passage.label] += 1
        for lang in page.languages:
            url = site.urls[(page.key, lang)]
            body = body_text(site, page, lang) if with_text and site.corpus is not None else None
            _page_row(truth, site, page, lang, url, label, body)
            for capture in duplicates.get((page.key, lang), ()):
                _page_row(truth, site, page, lang, capture.url, label, body, capture)
        if page.kind not in TRUTH_PAGE_KINDS or len(page.languages) < 2:
            continue
        for src_lang, trg_lang in combinations(page.languages, 2):
            if page.text is not None and "boilerplate_only" in (page.text.kinds.get(src_lang),
                                                                 page.text.kinds.get(trg_lang)):
                continue
            src, trg = site.urls[(page.key, src_lang)], site.urls[(page.key, trg_lang)]
            recoverable = code_strip_recoverable(src, trg)
            linked = site.has_switcher(page, src_lang) or site.has_switcher(page, trg_lang)
            for name, value in zip(PAIRS_SCHEMA.names,
                                   (site.host, src, trg, src_lang, trg_lang, label, page.kind, linked, recoverable)):
                pairs[name].append(value)
            truth.conventions[label] += 1
            truth.recoverable[label] += recoverable
            if with_text and page.text is not None:
                _sentence_rows(truth, site, page, src_lang, trg_lang)
    truth.stats["passages_reused_within_host"] += site.passages_reused
    truth.host = {
        "host": site.host, "domain": registered_domain(site.host), "languages": list(site.languages),
        "primary_language": site.languages[0],
        "conventions": sorted({site.convention_of(page).label for page in site.pages.values()}),
        "n_pages": sum(len(page.languages) for page in site.pages.values()), "n_urls": len(site.captures),
        "n_pairs": len(pairs["src_url"]), "multilingual": len(site.languages) > 1,
        "switcher": site.switcher_mode, "hreflang": site.hreflang}
    return truth


def _page_row(truth: SiteTruth, site: Site, page, lang: str, url: str, label: str, body: str | None,
              duplicate=None) -> None:
    text = page.text
    kind = "near_duplicate" if duplicate else text.kinds.get(lang) if text else None
    negative_of = None
    if text and not duplicate and lang in text.negative_of:
        negative_of = site.urls.get(text.negative_of[lang])
    translated_from, share = None, None
    if text:
        translated_from = text.source_lang if lang == text.original else \
            None if text.kinds.get(lang) == "boilerplate_only" else text.original
        if text.kinds.get(lang) == "partial_translation":
            share = partial_cut(text) / len(text.ids)
    values = (site.host, url, lang, page.key, page.kind, label, len(page.languages), kind,
              site.urls[(page.key, lang)] if duplicate else None, body, negative_of,
              duplicate.variant if duplicate else None, translated_from, share, text.passage.label if text else None)
    for name, value in zip(PAGES_SCHEMA.names, values):
        truth.pages[name].append(value)
    if kind:
        truth.stats[f"negative:{kind}"] += 1


def _sentence_rows(truth: SiteTruth, site: Site, page, src_lang: str, trg_lang: str) -> None:
    src, trg = site.version(page, src_lang), site.version(page, trg_lang)
    src_url, trg_url = site.urls[(page.key, src_lang)], site.urls[(page.key, trg_lang)]
    for number, (left, right) in enumerate(beads(page.text, src, trg)):
        bead_type = f"{len(left)}-{len(right)}"
        values = (site.host, src_url, trg_url, src_lang, trg_lang, number, bead_type,
                  [k for unit in left for k in unit.ids], [k for unit in right for k in unit.ids],
                  " ".join(unit.text for unit in left), " ".join(unit.text for unit in right))
        for name, value in zip(SENTENCES_SCHEMA.names, values):
            truth.sentences[name].append(value)
        truth.stats[f"bead:{bead_type}"] += 1


class TruthWriter:
    """Streams truth/pairs.parquet and truth/pages.parquet; writes truth/hosts.parquet on close."""

    def __init__(self, folder: str, sentences: bool = False):
        os.makedirs(folder, exist_ok=True)
        self.folder = folder
        self.pairs = pq.ParquetWriter(os.path.join(folder, "pairs.parquet"), PAIRS_SCHEMA)
        self.pages = pq.ParquetWriter(os.path.join(folder, "pages.parquet"), PAGES_SCHEMA)
        self.sentences = pq.ParquetWriter(os.path.join(folder, "sentences.parquet"), SENTENCES_SCHEMA) \
            if sentences else None
        self.stats: Counter = Counter()
        self.passage_hosts: Counter = Counter()  # passage label -> hosts holding it
        self.passage_pages: Counter = Counter()
        self.hosts: list[dict] = []
        self.conventions: Counter = Counter()
        self.recoverable: Counter = Counter()
        self.n_pairs = 0

    def add(self, truth: SiteTruth) -> None:
        n_pairs = len(truth.pairs["src_url"])
        if n_pairs:
            self.pairs.write_table(pa.table(truth.pairs, schema=PAIRS_SCHEMA))
        self.pages.write_table(pa.table(truth.pages, schema=PAGES_SCHEMA))
        if self.sentences and truth.sentences["host"]:
            self.sentences.write_table(pa.table(truth.sentences, schema=SENTENCES_SCHEMA))
        self.stats.update(truth.stats)
        self.passage_hosts.update(truth.passages.keys())
        self.passage_pages.update(truth.passages)
        self.n_pairs += n_pairs
        self.hosts.append(truth.host)
        self.conventions.update(truth.conventions)
        self.recoverable.update(truth.recoverable)

    def close(self) -> None:
        self.pairs.close()
        self.pages.close()
        if self.sentences:
            self.sentences.close()
        pq.write_table(pa.Table.from_pylist(self.hosts, schema=HOSTS_SCHEMA), os.path.join(self.folder, "hosts.parquet"))

    def convention_mix(self) -> dict:
        """{label: {pairs, share, recoverable_share}} and the overall code-strip-recoverable share."""
        total = max(1, self.n_pairs)
        mix = {label: {"pairs": n, "share": round(n / total, 4),
                       "recoverable_share": round(self.recoverable[label] / n, 4)}
               for label, n in sorted(self.conventions.items(), key=lambda item: (-item[1], item[0]))}
        return {"conventions": mix, "code_strip_recoverable_share": round(sum(self.recoverable.values()) / total, 4)}

    def text_summary(self) -> dict:
        """--text-corpus: hard negatives and beads by kind, and how far passages were shared between hosts."""
        shared = sum(self.passage_pages[label] for label, hosts in self.passage_hosts.items() if hosts > 1)
        return {
            "negatives": {kind: self.stats[f"negative:{kind}"] for kind in NEGATIVE_KINDS},
            "beads": {kind: self.stats[f"bead:{kind}"] for kind in BEAD_TYPES},
            "passages_used": len(self.passage_hosts),
            "pages_with_a_passage_of_another_host": shared,
            "text_pages": sum(self.passage_pages.values()),
            "passages_reused_within_host": self.stats["passages_reused_within_host"],
        }
