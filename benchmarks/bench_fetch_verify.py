"""Throughput of fetch-docs and verify-pairs building blocks, each against a baseline from the same run.

0. HTML stage: parse + features + main text per CPU-second with udfs.fetch.html_text (Lexbor) against the
   html.parser path it replaced (kept below, only as this baseline), on the real CommonCrawl excerpt pages and
   on sample-archive pages; where the new path's time goes; main-text quality against the real-text sample
   archive's truth (body_text) when make-sample-archive --text-corpus is available, on held-out seeds (--seeds),
   beside trafilatura and justext (quality and pages per CPU-second on the same pages) when they are installed.
1. parse + features: records/s on one core for udfs.fetch.documents.parse_record over a generated WARC of
   HTML pages, against warcio alone (iterate + read payload) as the baseline.
2. GETs per 1,000 records with and without coalescing (a sparse 30% selection, like a pairs selection),
   counted by a local range reader and timed against a moto S3 server on 127.0.0.1.
3. verification: pairs/s of udfs.verify.verification.verify_frame (bit-parallel LCS alignment), against
   difflib.SequenceMatcher as the baseline aligner, with how far SequenceMatcher's dp is from the minimal one.

    .venv/bin/python benchmarks/bench_fetch_verify.py [--pages 3000] [--pairs 400] [--html-only] [--seeds 7,1234]
        [--against OLD_html_text.py] [--ceiling]

--against FILE times another version of udfs/fetch/html_text.py (e.g. `git show HEAD~1:udfs/fetch/html_text.py > /tmp/old.py`)
on the same pages in the same run: a before/after of a change to the walk. --ceiling times only the C parts of the
HTML stage (Lexbor's parse, page CLD2, both; and Lexbor's own text() as a compiled walk's stand-in) beside the full
pipeline, on the real pages and the first seed's sample archive: how fast the stage could be with no Python walk.
Where the optional compiled walk (`make walk`, udfs.html_walk) is in use, the HTML stage is also timed with the
Python walk, paragraph keys and paragraph step (the reference) in the same run, and the two walks alone on pre-parsed trees.
"""
from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from difflib import SequenceMatcher
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin

import pandas as pd
from warcio.archiveiterator import ArchiveIterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parascout.udfs.common.language_id import cld2_language
from parascout.udfs.common.urls import _resolve_link, image_file_name, url_host
from parascout.udfs.fetch.documents import empty_doc, parse_record
from parascout.udfs.fetch.html_text import (
    BLOCK_TAGS,
    LINK_ATTRIBUTES,
    MAX_IMAGE_NAME_CHARS,
    MAX_STRUCTURE_TOKENS,
    MAX_TITLE_CHARS,
    SKIPPED_CONTENT_TAGS,
    VOID_TAGS,
    WHITESPACE,
)
from parascout.udfs.fetch.warc_fetch import FetchSettings, RangeReader, fetch_documents, plan_ranges
from parascout.udfs.fetch.warc_record import MAX_IMAGES, MAX_OUTLINK_CHARS, LinkBudget, bound_links
from parascout.udfs.verify.structure import ThresholdRule, TreeRule, feature_matrix, strand_features
from parascout.udfs.verify.verification import verify_frame
from tests.test_documents import ENGLISH, GERMAN, record_bytes


class StrandParser(HTMLParser):
    """The html.parser path fetch-docs used before udfs.fetch.html_text (kept only as this benchmark's baseline
    and the agreement test's reference): one pass over the tokens, as the page's source lists them."""

    def __init__(self, base_url: str | None):
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.structure: list[str] = []
        self.structure_truncated = False
        self.chunks: list[str] = []
        self.paragraphs = 0
        self.links: list[tuple[str, str]] = []  # (url, host)
        self.link_budget = LinkBudget()
        self.images: list[str] = []
        self.title_parts: list[str] = []
        self.html_lang: str | None = None
        self._skip_depth = 0
        self._in_title = False
        self._block_has_text = False

    def _token(self, token: str) -> None:
        if len(self.structure) < MAX_STRUCTURE_TOKENS:
            self.structure.append(token)
        else:
            self.structure_truncated = True

    def _end_block(self) -> None:
        if self._block_has_text:
            self.paragraphs += 1
        self._block_has_text = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._token(f"[START:{tag}]")
        if tag in BLOCK_TAGS:
            self._end_block()
        attributes = dict(attrs)
        if tag == "base" and attributes.get("href") and self.base_url is not None \
                and len(attributes["href"]) <= MAX_OUTLINK_CHARS:
            self.base_url = urljoin(self.base_url, attributes["href"].strip())
        elif tag == "html" and attributes.get("lang"):
            self.html_lang = attributes["lang"].strip()[:20]
        elif tag in LINK_ATTRIBUTES or (tag == "link" and "alternate" in (attributes.get("rel") or "").lower()):
            href = attributes.get(LINK_ATTRIBUTES.get(tag, "href"))
            resolved = _resolve_link(self.base_url or "", href.strip()) if href else None
            if resolved and self.link_budget.admit(resolved[0]):
                self.links.append(resolved)
        elif tag == "img":
            name = image_file_name(self.base_url, attributes.get("src") or attributes.get("data-src"))
            if name and len(self.images) < MAX_IMAGES:
                self.images.append(name)
        if tag == "title":
            self._in_title = True
        if tag in SKIPPED_CONTENT_TAGS:
            self._skip_depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag in SKIPPED_CONTENT_TAGS:
            self.handle_endtag(tag, emit=False)

    def handle_endtag(self, tag: str, emit: bool = True) -> None:
        if tag in VOID_TAGS:
            return
        if emit:
            self._token(f"[END:{tag}]")
        if tag in BLOCK_TAGS:
            self._end_block()
        if tag in SKIPPED_CONTENT_TAGS and self._skip_depth:
            self._skip_depth -= 1
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
        if self._skip_depth:
            return
        text = WHITESPACE.sub(" ", data).strip()
        if text:
            self._token(f"[Chunk:{len(text)}]")
            self.chunks.append(text)
            self._block_has_text = True


def html_parser_features(html: str, url: str | None) -> dict:
    """The docs features as the html.parser path computed them (baseline)."""
    parser = StrandParser(url)
    parser.feed(html)
    parser.close()
    parser._end_block()
    text = " ".join(parser.chunks)
    lang, reliable, percent = cld2_language(text)
    host = url_host(url) if url else None
    links = dict(parser.links)  # first occurrence order, one host per URL
    outlinks, outlinks_cut = list(links), parser.link_budget.cut
    images, images_cut = bound_links(dict.fromkeys(parser.images), LinkBudget(MAX_IMAGES, MAX_IMAGE_NAME_CHARS))
    title = WHITESPACE.sub(" ", "".join(parser.title_parts)).strip()[:MAX_TITLE_CHARS] or None
    return {
        "status": "ok", "cld2_lang": lang, "cld2_reliable": reliable, "cld2_percent": percent,
        "html_lang": parser.html_lang, "text_chars": len(text), "paragraphs": parser.paragraphs,
        "outlinks": outlinks, "outlinks_same_host": [links[link] == host for link in outlinks],
        "images": images, "structure": parser.structure, "title": title,
        "outlinks_cut": outlinks_cut, "images_cut": images_cut,
        "error": "structure_truncated" if parser.structure_truncated else None,
    }



def site_page(rng: random.Random, i: int, pages: int, lengths: list[int] | None = None, english: bool = True) -> str:
    """A templated page like a real site's: navigation, sidebar, article paragraphs, images, footer."""
    text = ENGLISH if english else GERMAN
    lengths = lengths or [rng.randint(40, 400) for _ in range(rng.randint(5, 40))]
    nav = "".join(f'<li class="nav"><a href="/section-{k}/">Section {k}</a></li>' for k in range(40))
    side = "".join(f'<div class="teaser"><a href="/page-{rng.randint(0, pages)}.html"><img src="/thumbs/t{k}.jpg">'
                   f"<span>{text[:rng.randint(20, 60)]}</span></a></div>" for k in range(rng.randint(5, 15)))
    article = "".join(f"<p>{(text * 4)[:length]}</p>" + (f'<img src="/media/fig-{i}-{k}.png">' if k % 5 == 0 else "")
                      for k, length in enumerate(lengths))
    return (f'<!DOCTYPE html><html lang="{"en" if english else "de"}"><head><meta charset="utf-8">'
            f"<title>Page {i}</title><link rel=\"stylesheet\" href=\"/s.css\"><script>var x = {i};</script></head>"
            f'<body><header><img src="/logo.png"><nav><ul>{nav}</ul></nav></header><div class="main">'
            f'<article><h1>Page {i}</h1>{article}</article><aside>{side}</aside></div>'
            f"<footer><p>Contact</p><p>Imprint</p></footer></body></html>")


def shared_data_path() -> Path:
    return Path(os.environ.get("PARASCOUT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def http_responses(warc_paths: list[Path]) -> list[tuple[str, str]]:
    """(url, decoded HTML) of the 200 text/html responses of WARC files (warcio: outside the timed code)."""
    from parascout.udfs.fetch.documents import decode_html

    pages = []
    for path in warc_paths:
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type != "response" or record.http_headers is None:
                    continue
                content_type = record.http_headers.get_header("Content-Type") or ""
                if record.http_headers.get_statuscode() != "200" or "html" not in content_type:
                    continue
                payload = record.content_stream().read()
                pages.append((record.rec_headers.get_header("WARC-Target-URI"),
                              decode_html(payload, content_type)[0]))
    return pages


def time_pages(function, pages: list[tuple[str, str]], repeat: int) -> float:
    """Pages per CPU-second of function(html, url) over the pages, `repeat` times (best of the rounds)."""
    best = float("inf")
    for _ in range(repeat):
        cpu = time.process_time()
        for url, html in pages:
            function(html, url)
        best = min(best, time.process_time() - cpu)
    return len(pages) / best


def time_breakdown(pages: list[tuple[str, str]]) -> dict:
    """Share of the new path's CPU per step: Lexbor's parse, the tree walk, page CLD2, paragraphs."""
    from selectolax.lexbor import LexborDocumentOptions, LexborHTMLParser

    from parascout.udfs.common.language_id import cld2_detect
    from parascout.udfs.fetch import html_text

    spent = dict.fromkeys(("lexbor_parse", "tree_walk", "page_cld2", "paragraphs"), 0.0)
    for url, html in pages:
        cpu = time.process_time()
        first = LexborHTMLParser(html, options=LexborDocumentOptions.WO_EVENTS).root
        spent["lexbor_parse"] += time.process_time() - cpu
        cpu = time.process_time()
        page = html_text.Page(url)
        html_text.WALK([first], page, html_text.MAX_TEXT_CHARS)
        spent["tree_walk"] += time.process_time() - cpu
        cpu = time.process_time()
        lang, _, _, single = cld2_detect(page.text_input[0])
        spent["page_cld2"] += time.process_time() - cpu
        cpu = time.process_time()
        html_text.PAGE_PARAGRAPHS(page.blocks, None, lang, single)
        spent["paragraphs"] += time.process_time() - cpu
    total = sum(spent.values())
    return {"breakdown_walk": html_text.WALK_ENGINE, "breakdown_us_per_page": 1e6 * total / len(pages),
            **{f"share_{step}": seconds / total for step, seconds in spent.items()}}


def python_walk_features(html: str, url: str | None) -> dict:
    """html_features with the Python walk, paragraph keys, paragraph step and CLD2 inputs (the reference) in place of
    the compiled ones: the same-run baseline."""
    from parascout.udfs.common.language_id import cld2_input
    from parascout.udfs.fetch import html_text

    names = ("WALK", "PARAGRAPH_KEYS", "PAGE_PARAGRAPHS", "CLD2_INPUT")
    compiled = [getattr(html_text, name) for name in names]
    for name, reference in zip(names, (html_text.walk_page, html_text.paragraph_keys, html_text.page_paragraphs,
                                       cld2_input)):
        setattr(html_text, name, reference)
    try:
        return html_text.html_features(html, url)
    finally:
        for name, function in zip(names, compiled):
            setattr(html_text, name, function)


def walk_rates(pages: list[tuple[str, str]], repeat: int) -> dict:
    """Pages per CPU-second of the tree walk alone (trees parsed outside the timing), Python vs compiled."""
    from parascout.udfs.fetch import html_text

    trees = [(url, html_text.parse_tops(html)) for url, html in pages]
    walks = {"python": html_text.walk_page, "compiled": html_text.COMPILED and html_text.COMPILED.walk_page}
    rates = dict.fromkeys((name for name, walk in walks.items() if walk is not None), 0.0)
    for _ in range(repeat):  # interleaved rounds, the best counts
        for name in rates:
            cpu = time.process_time()
            for url, tops in trees:
                walks[name](tops, html_text.Page(url), html_text.MAX_TEXT_CHARS)
            rates[name] = max(rates[name], len(trees) / (time.process_time() - cpu))
    result = {f"walk_only_{name}_us_per_page": 1e6 / rate for name, rate in rates.items()}
    if "compiled" in rates:
        result["walk_only_compiled_vs_python"] = rates["compiled"] / rates["python"]
    return result


def load_html_text(path: str | None):
    """Another version of udfs/fetch/html_text.py (--against), imported under its own name; None without a path."""
    if not path:
        return None
    spec = importlib.util.spec_from_file_location("html_text_against", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bench_html(pages: list[tuple[str, str]], label: str, repeat: int = 3, against=None) -> dict:
    """Pages per CPU-second, html.parser path vs html_text (and --against's version), on the same decoded pages."""
    if not pages:
        return {"skipped": f"no {label} pages"}
    from parascout.udfs.fetch.html_text import html_features

    for url, html in pages:  # warm both paths' caches (links repeat across a site, as in a real task)
        html_features(html, url)
        if against is not None:
            against.html_features(html, url)
    old = time_pages(html_parser_features, pages, repeat)
    new = time_pages(html_features, pages, repeat)
    result = {"pages": len(pages), "mean_html_kb": sum(len(h) for _, h in pages) / len(pages) / 1024,
              "html_parser_features_per_cpu_s": old, "lexbor_features_main_text_per_cpu_s": new,
              "speedup": new / old, **compiled_against_python_walk(pages, repeat)}
    if against is not None:  # interleaved rounds, so load changes hit both versions alike
        rounds = [(time_pages(against.html_features, pages, 1), time_pages(html_features, pages, 1))
                  for _ in range(repeat if len(pages) >= 100 else 4 * repeat)]
        before, after = max(r[0] for r in rounds), max(r[1] for r in rounds)
        result.update({"against_per_cpu_s": before, "current_per_cpu_s": after, "current_vs_against": after / before})
    return {**result, **time_breakdown(pages)}


def compiled_against_python_walk(pages: list[tuple[str, str]], repeat: int) -> dict:
    """The whole HTML stage with the compiled walk and with the Python walk (interleaved rounds, same pages)."""
    from parascout.udfs.fetch import html_text

    if html_text.COMPILED is None:
        return {"walk": html_text.WALK_ENGINE}
    rounds = [(time_pages(python_walk_features, pages, 1), time_pages(html_text.html_features, pages, 1))
              for _ in range(max(repeat, 3))]
    python, compiled = max(r[0] for r in rounds), max(r[1] for r in rounds)
    return {"walk": html_text.WALK_ENGINE, "python_walk_per_cpu_s": python, "compiled_walk_per_cpu_s": compiled,
            "compiled_vs_python_walk": compiled / python, **walk_rates(pages, max(repeat, 3))}


def page_texts(pages: list[tuple[str, str]]) -> dict[str, str]:
    """The text CLD2 reads for each page (the walk's whitespace-normalised text runs, the characters CLD2 cannot take
    as spaces), computed untimed."""
    from selectolax.lexbor import LexborDocumentOptions, LexborHTMLParser

    from parascout.udfs.fetch import html_text

    texts = {}
    for url, html in pages:
        page = html_text.Page(url)
        html_text.walk_page([LexborHTMLParser(html, options=LexborDocumentOptions.WO_EVENTS).root], page,
                            html_text.MAX_TEXT_CHARS)
        texts[url] = (page.text_input[0] or b"").decode("utf-8")
    return texts


def bench_ceiling(pages: list[tuple[str, str]], label: str, repeat: int = 3) -> dict:
    """Pages per CPU-second of the HTML stage's C parts alone (Lexbor's parse, page CLD2 on the page text, both;
    parse + Lexbor's own text() + CLD2: a compiled walk's floor), beside the full pipeline in the same run."""
    if not pages:
        return {"skipped": f"no {label} pages"}
    import pycld2
    from selectolax.lexbor import LexborDocumentOptions, LexborHTMLParser

    from parascout.udfs.common import language_id
    from parascout.udfs.fetch.html_text import CLD2_INPUT, html_features

    def page_language(text):  # CLD2 on a page's text as html_text runs it (its CLD2 input engine included)
        return language_id.cld2_detect(CLD2_INPUT(text))

    options = LexborDocumentOptions.WO_EVENTS
    texts = page_texts(pages)
    encoded = {url: text.encode("utf-8") for url, text in texts.items()}

    def parse(html, url):
        LexborHTMLParser(html, options=options)

    def page_cld2(html, url):
        page_language(texts[url])

    def cld2_detect(html, url):
        pycld2.detect(encoded[url], isPlainText=True)

    def parse_and_cld2(html, url):
        LexborHTMLParser(html, options=options)
        page_language(texts[url])

    def parse_text_cld2(html, url):
        tree = LexborHTMLParser(html, options=options)
        body = tree.body
        page_language(body.text(separator=" ", strip=True) if body is not None else "")

    steps = {"lexbor_parse": parse, "page_cld2": page_cld2, "cld2_detect_only": cld2_detect,
             "parse_plus_page_cld2": parse_and_cld2, "parse_lexbor_text_cld2": parse_text_cld2,
             "full_pipeline": html_features, "full_pipeline_python_walk": python_walk_features}
    for url, html in pages:
        html_features(html, url)  # warm the link caches, as in bench_html
    rates = {name: 0.0 for name in steps}
    for _ in range(repeat):  # interleaved rounds: load changes hit every step alike; the best round counts
        for name, step in steps.items():
            rates[name] = max(rates[name], time_pages(step, pages, 1))
    result = {"pages": len(pages), "mean_html_kb": sum(len(h) for _, h in pages) / len(pages) / 1024,
              **{f"{name}_per_cpu_s": rate for name, rate in rates.items()}}
    result["full_pipeline_share_of_parse_plus_cld2"] = rates["full_pipeline"] / rates["parse_plus_page_cld2"]
    result["full_pipeline_compiled_vs_python_walk"] = rates["full_pipeline"] / rates["full_pipeline_python_walk"]
    from parascout.udfs.fetch.html_text import WALK_ENGINE

    return {"walk": WALK_ENGINE, **result, **walk_rates(pages, repeat), **time_breakdown(pages)}


def real_commoncrawl_pages() -> list[tuple[str, str]]:
    folder = shared_data_path() / "cc-sample"
    return http_responses(sorted(folder.glob("*.warc.gz"))) if folder.exists() else []


def sample_archive_pages(folder: Path, hosts: int, text_corpus: Path | None,
                         seed: int = 11) -> tuple[list, Path | None]:
    """Generate a sample archive (real texts when the corpus and --text-corpus support exist); its pages."""
    from parascout.udfs.sample_archive.archive import generate

    options = {"hosts": hosts, "seed": seed, "progress": False, "verbose": False}
    try:
        generate(str(folder), text_corpus=str(text_corpus) if text_corpus else None, **options)
    except TypeError:  # an archive generator without --text-corpus
        generate(str(folder), **options)
        text_corpus = None
    return http_responses(sorted(folder.rglob("*.warc.gz"))), (folder / "truth" / "pages.parquet"
                                                               if text_corpus else None)


def words(text: str) -> Counter:
    return Counter(text.casefold().split())


def main_text_quality(pages: list[tuple[str, str]], truth_path: Path | None) -> dict:
    """Against truth body_text: share of body paragraphs kept, share of the other (boilerplate) words removed."""
    if truth_path is None or not truth_path.exists():
        return {"skipped": "no real-text sample archive (make-sample-archive --text-corpus) to compare with"}
    from parascout.udfs.common.urls import url_host
    from parascout.udfs.fetch.html_text import html_features
    from parascout.udfs.fetch.near_duplicates import SiteTextSettings, site_text_pass

    truth = pd.read_parquet(truth_path)
    if "body_text" not in truth.columns:
        return {"skipped": "truth/pages.parquet has no body_text"}
    body_of = {row.url: row.body_text for row in truth.itertuples() if isinstance(row.body_text, str)
               and row.body_text.strip()}
    docs = {url: html_features(html, url)["page_paragraphs"] for url, html in pages if url in body_of}
    frame = pd.DataFrame({"url": list(docs), "host": [url_host(u) for u in docs],
                          "hashes": [[p["hash"] for p in ps] for ps in docs.values()],
                          "boilerplate": [[p["boilerplate"] for p in ps] for ps in docs.values()],
                          "chars": [[len(p["text"]) for p in ps] for ps in docs.values()]})
    repeated, found = {}, {}
    for _, site in frame.groupby("host"):
        for row in site_text_pass(site, SiteTextSettings()).itertuples():
            repeated[row.url] = set(row.repeated_hashes)
            if row.duplicate_of:
                found[row.url] = row.duplicate_of
    result = {"pages_with_body_text": len(docs), **near_duplicate_agreement(truth, found, set(docs))}
    for label, use_site in (("page_rules", False), ("page_and_site_rules", True)):
        kept_body = total_body = kept_other = total_other = 0
        for url, paragraphs in docs.items():
            body = [" ".join(line.split()) for line in body_of[url].split("\n") if line.strip()]
            main = [p["text"] for p in paragraphs
                    if not p["boilerplate"] and not (use_site and p["hash"] in repeated.get(url, ()))]
            kept = set(main)
            kept_body += sum(line in kept for line in body)
            total_body += len(body)
            body_words = words(" ".join(body))
            other = words(" ".join(p["text"] for p in paragraphs)) - body_words
            kept_other += sum((words(" ".join(main)) - body_words).values())
            total_other += sum(other.values())
        result[f"{label}_body_paragraphs_kept"] = kept_body / max(total_body, 1)
        result[f"{label}_boilerplate_words_removed"] = 1 - kept_other / max(total_other, 1)
    return result


def near_duplicate_agreement(truth: pd.DataFrame, found: dict[str, str], pages: set[str]) -> dict:
    """Truth's near-duplicate pairs (duplicate_of) found by the site pass (either page kept), and extra ones."""
    if "duplicate_of" not in truth.columns:
        return {}
    expected = {(row.url, row.duplicate_of) for row in truth.itertuples()
                if isinstance(row.duplicate_of, str) and row.url in pages and row.duplicate_of in pages}
    kept_of = {url: found.get(url, url) for url in pages}
    matched = sum(kept_of[a] == kept_of[b] for a, b in expected)
    in_truth = {url for pair in expected for url in pair}
    extra = sum(1 for url in found if url not in in_truth)
    return {"truth_near_duplicates": len(expected), "truth_near_duplicates_found": matched,
            "near_duplicates_flagged": len(found), "flagged_outside_truth": extra}


def kept_table(pages: list[tuple[str, str]]) -> dict:
    """Per real page: paragraphs kept / all, characters kept / all, and the first kept paragraph."""
    from parascout.udfs.fetch.html_text import html_features

    table = {}
    for url, html in pages:
        paragraphs = html_features(html, url)["page_paragraphs"]
        kept = [p["text"] for p in paragraphs if not p["boilerplate"]]
        table[url[:60]] = (f"{len(kept)}/{len(paragraphs)} paragraphs, "
                           f"{sum(map(len, kept))}/{sum(len(p['text']) for p in paragraphs)} chars; "
                           f"first kept: {(kept[0] if kept else '-')[:60]!r}")
    return table


def justext_stoplist(lang: str | None) -> frozenset[str]:
    """justext's stop words for an ISO 639-3 language; empty (its language-independent mode) when it has none."""
    import justext

    from parascout.udfs.common.langs import load_languages

    language = load_languages().get(lang or "")
    return justext.get_stoplist(language.name) if language and language.name in justext.get_stoplists() \
        else frozenset()


def parascout_main_text(html: str, url: str, lang: str | None) -> str:
    """The page rules' main text (the site pass needs the site's other pages)."""
    from parascout.udfs.fetch.html_text import html_features

    return "\n".join(p["text"] for p in html_features(html, url)["page_paragraphs"] if not p["boilerplate"])


def trafilatura_main_text(html: str, url: str, lang: str | None) -> str:
    import trafilatura

    return trafilatura.extract(html, url=url, include_comments=False, include_tables=True) or ""


def justext_main_text(html: str, url: str, lang: str | None) -> str:
    import justext

    stoplist = justext_stoplist(lang)
    options = {} if stoplist else {"stopwords_low": 0, "stopwords_high": 0}
    return "\n".join(p.text for p in justext.justext(html, stoplist, **options) if not p.is_boilerplate)


EXTRACTORS = {"parascout": parascout_main_text, "trafilatura": trafilatura_main_text, "justext": justext_main_text}


def extractor_comparison(pages: list[tuple[str, str]], truth_path: Path | None = None) -> dict:
    """parascout's main text against trafilatura and justext on the same pages, all CPU-timed in this run; with a
    truth, the same two tests for all three: body lines found in the extracted text (whitespace-normalised
    substring) and words outside the body removed (of the words of all the page's text blocks)."""
    try:
        import justext  # noqa: F401
        import trafilatura  # noqa: F401
    except ImportError:
        return {"skipped": "trafilatura/justext not installed (comparison only: pip install trafilatura justext)"}
    from parascout.udfs.fetch.html_text import html_features

    lang_of = {url: html_features(html, url)["cld2_lang"] for url, html in pages}
    body_of: dict[str, str] = {}
    if truth_path is not None:
        truth = pd.read_parquet(truth_path)
        body_of = {row.url: row.body_text for row in truth.itertuples() if isinstance(row.body_text, str)
                   and row.body_text.strip()}
        lang_of.update(zip(truth["url"], truth["lang"]))
        pages = [(url, html) for url, html in pages if url in body_of]
    result: dict = {"pages": len(pages)}
    for name, extract in EXTRACTORS.items():
        for url, html in pages[:20]:  # warm caches and lazy imports
            extract(html, url, lang_of.get(url))
        cpu = time.process_time()
        texts = {url: extract(html, url, lang_of.get(url)) for url, html in pages}
        result[f"{name}_pages_per_cpu_s"] = len(pages) / (time.process_time() - cpu)
        if body_of:
            result.update({f"{name}_{key}": value for key, value in extracted_quality(pages, texts, body_of).items()})
    for name in ("trafilatura", "justext"):
        result[f"parascout_speed_vs_{name}"] = result["parascout_pages_per_cpu_s"] / result[f"{name}_pages_per_cpu_s"]
    return result


def extracted_quality(pages: list[tuple[str, str]], texts: dict[str, str], body_of: dict[str, str]) -> dict:
    from parascout.udfs.fetch.html_text import html_features

    found = total = kept_other = total_other = 0
    for url, html in pages:
        body = [" ".join(line.split()) for line in body_of[url].split("\n") if line.strip()]
        extracted = " ".join(texts[url].split())
        found += sum(line in extracted for line in body)
        total += len(body)
        body_words = words(" ".join(body))
        page_words = words(" ".join(p["text"] for p in html_features(html, url)["page_paragraphs"]))
        total_other += sum((page_words - body_words).values())
        kept_other += sum((words(extracted) - body_words).values())
    return {"body_lines_found": found / max(total, 1), "other_words_removed": 1 - kept_other / max(total_other, 1)}


def bench_html_ceiling(hosts: int, seed: int) -> dict:
    """--ceiling: the C parts' rates beside the full pipeline on the real pages and one seed's sample archive."""
    results = {"ceiling_real_commoncrawl": bench_ceiling(real_commoncrawl_pages(), "real CommonCrawl", repeat=20)}
    corpus = shared_data_path() / "parallel-text" / "bible"
    with tempfile.TemporaryDirectory() as folder:
        pages, _ = sample_archive_pages(Path(folder), hosts, corpus if corpus.exists() else None, seed)
        results[f"ceiling_sample_archive_seed_{seed}"] = bench_ceiling(pages, "sample-archive")
    return results


def bench_html_speed(hosts: int, seed: int, against=None) -> dict:
    """--speed-only: bench_html on the real pages and one seed's sample archive."""
    results = {"html_real_commoncrawl": bench_html(real_commoncrawl_pages(), "real CommonCrawl", 5, against)}
    corpus = shared_data_path() / "parallel-text" / "bible"
    with tempfile.TemporaryDirectory() as folder:
        pages, _ = sample_archive_pages(Path(folder), hosts, corpus if corpus.exists() else None, seed)
        results[f"html_sample_archive_seed_{seed}"] = bench_html(pages, "sample-archive", 3, against)
    return results


def bench_html_engine(hosts: int, seeds: list[int], against=None) -> dict:
    """Speed on the real pages and the first seed's archive; main-text quality on every seed's archive (held-out
    seeds by default: the rules were tuned on seed 42); the comparison with trafilatura and justext."""
    real = real_commoncrawl_pages()
    results = {"html_real_commoncrawl": bench_html(real, "real CommonCrawl", repeat=5, against=against)}
    corpus = shared_data_path() / "parallel-text" / "bible"
    for index, seed in enumerate(seeds):
        with tempfile.TemporaryDirectory() as folder:
            pages, truth = sample_archive_pages(Path(folder), hosts, corpus if corpus.exists() else None, seed)
            if index == 0:
                results[f"html_sample_archive_seed_{seed}"] = bench_html(pages, "sample-archive", against=against)
            results[f"main_text_quality_sample_archive_seed_{seed}"] = main_text_quality(pages, truth)
            results[f"extractors_sample_archive_seed_{seed}"] = extractor_comparison(pages, truth)
    results["extractors_real_commoncrawl_speed"] = extractor_comparison(real)
    results["main_text_kept_real_commoncrawl"] = kept_table(real)
    return results


def generate_records(pages: int, seed: int = 1) -> list[tuple[str, bytes]]:
    """Templated HTML pages (English/German, 5-40 paragraphs, images, ~100 links) as gzip WARC records."""
    rng = random.Random(seed)
    records = []
    for i in range(pages):
        url = f"http://site{i % 50}.example.com/{'en' if i % 2 else 'de'}/page-{i}.html"
        records.append((url, record_bytes(url, site_page(rng, i, pages, english=i % 2 == 1))))
    return records


def bench_parse(records: list[tuple[str, bytes]]) -> dict:
    """Single-threaded, so records per CPU second = records per second per core (robust to a busy machine)."""
    started, cpu = time.perf_counter(), time.process_time()
    for _, data in records:
        for record in ArchiveIterator(io.BytesIO(data)):
            record.content_stream().read()
    baseline_cpu = time.process_time() - cpu
    started, cpu = time.perf_counter(), time.process_time()
    statuses = [parse_record(data, url)["status"] for url, data in records]
    wall, full_cpu = time.perf_counter() - started, time.process_time() - cpu
    assert statuses.count("ok") == len(records)
    return {"records": len(records), "mean_compressed_kb": sum(len(d) for _, d in records) / len(records) / 1024,
            "warcio_only_per_cpu_s": len(records) / baseline_cpu, "parse_features_per_cpu_s": len(records) / full_cpu,
            "parse_features_per_wall_s": len(records) / wall, "features_cost_vs_warcio": full_cpu / baseline_cpu}


def bench_coalescing_density(records_per_file: int = 40_000, seed: int = 4) -> dict:
    """GETs per 1,000 selected records and bytes over-read, by selection density, on a CommonCrawl-sized file."""
    rng = random.Random(seed)
    sizes = [max(500, int(rng.lognormvariate(9.4, 0.9))) for _ in range(records_per_file)]  # ~18 KiB mean
    offsets = [0]
    for size in sizes[:-1]:
        offsets.append(offsets[-1] + size)
    result = {"file_mb": sum(sizes) / 1e6}
    for density in (0.001, 0.01, 0.05, 0.3):
        chosen = sorted(rng.sample(range(records_per_file), k=int(records_per_file * density)))
        ranges = plan_ranges([offsets[i] for i in chosen], [sizes[i] for i in chosen])
        wanted = sum(sizes[i] for i in chosen)
        result[f"density_{density}_gets_per_1000"] = 1000 * len(ranges) / len(chosen)
        result[f"density_{density}_over_read"] = sum(r.length for r in ranges) / wanted
    return result


def bench_real_pages(repeat: int = 20) -> dict:
    """parse + features on the real CommonCrawl excerpt (16 responses), when ../shared/data is there."""
    path = Path(os.environ.get("PARASCOUT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    path = path / "cc-sample" / "CC-MAIN-2020-34-excerpt.warc.gz"
    if not path.exists():
        return {"skipped": f"{path} not found"}
    from tests.test_documents import gzip_members

    data = path.read_bytes()
    records = [data[o:o + n] for o, n in gzip_members(data)]
    cpu = time.process_time()
    for _ in range(repeat):
        docs = [parse_record(record) for record in records]
    seconds = time.process_time() - cpu
    sizes = [len(record) for record, doc in zip(records, docs) if doc["status"] == "ok"]
    return {"responses": len(sizes), "mean_compressed_kb": sum(sizes) / len(sizes) / 1024,
            "parse_features_per_cpu_s": len(sizes) * repeat / seconds,
            "note": "request/metadata records are parsed too (status not_response) but not counted"}


class CountingReader(RangeReader):
    def __init__(self, settings: FetchSettings):
        super().__init__(settings.read_settings())
        self.gets, self.bytes = 0, 0

    def read(self, path, start, length):
        data, made = super().read(path, start, length)
        self.gets += made
        self.bytes += len(data)
        return data, made


def write_files(folder: Path, records: list[tuple[str, bytes]], files: int = 10) -> list[dict]:
    rows = []
    per_file = len(records) // files + 1
    for index in range(files):
        offset, name = 0, f"segment-{index}.warc.gz"
        with open(folder / name, "wb") as handle:
            for url, data in records[index * per_file:(index + 1) * per_file]:
                handle.write(data)
                rows.append({"url": url, "warc_filename": name, "warc_offset": offset, "warc_length": len(data)})
                offset += len(data)
    return rows


def only_fetch(data: bytes, url: str | None) -> dict:
    """A parse step that does nothing, to time the reads alone."""
    return empty_doc("ok")


def run_fetch(rows: list[dict], settings: FetchSettings, reader: RangeReader | None = None,
              parse=only_fetch) -> tuple[float, int]:
    started = time.perf_counter()
    frame = pd.DataFrame(rows).sort_values(["warc_filename", "warc_offset"])
    docs = pd.concat(list(fetch_documents(iter([frame]), settings, reader, parse)))
    return time.perf_counter() - started, int((docs["status"] == "ok").sum())


def bench_coalescing(records: list[tuple[str, bytes]], folder: Path) -> dict:
    rows = write_files(folder, records)
    selected = random.Random(2).sample(rows, k=int(len(rows) * 0.3))
    result = {"selected_records": len(selected)}
    for label, coalesce in (("coalesced", True), ("per_record", False)):
        settings = FetchSettings(warc_prefix=str(folder), coalesce=coalesce)
        reader = CountingReader(settings)
        run_fetch(selected, settings, reader)
        result[f"gets_per_1000_{label}"] = 1000 * reader.gets / len(selected)
        result[f"bytes_read_{label}"] = reader.bytes
    result["get_ratio"] = result["gets_per_1000_per_record"] / result["gets_per_1000_coalesced"]
    result["over_read"] = result["bytes_read_coalesced"] / result["bytes_read_per_record"]
    result.update(bench_moto(selected, folder))
    return result


def bench_moto(selected: list[dict], folder: Path) -> dict:
    import boto3
    from moto.server import ThreadedMotoServer

    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        endpoint = "http://{}:{}".format(*server.get_host_and_port())
        s3 = boto3.client("s3", endpoint_url=endpoint)
        s3.create_bucket(Bucket="bench")
        for path in folder.glob("*.warc.gz"):
            s3.put_object(Bucket="bench", Key=path.name, Body=path.read_bytes())
        timings = {}
        for label, coalesce in (("coalesced", True), ("per_record", False)):
            settings = FetchSettings(warc_prefix="s3://bench/", s3_endpoint=endpoint, coalesce=coalesce)
            seconds, ok = run_fetch(selected, settings)
            timings[f"moto_records_per_s_{label}"] = ok / seconds  # reads only: parsing is timed in [parse]
        timings["moto_speedup"] = timings["moto_records_per_s_coalesced"] / timings["moto_records_per_s_per_record"]
        return timings
    finally:
        server.stop()


def sequence_matcher_dp(a: list[str], b: list[str]) -> float:
    keys = [["[Chunk]" if t.startswith("[Chunk:") else t for t in seq] for seq in (a, b)]
    aligned = sum(block.size for block in SequenceMatcher(None, *keys, autojunk=False).get_matching_blocks())
    return (len(a) + len(b) - 2 * aligned) / (len(a) + len(b))


def pair_row(i: int, src: dict, trg: dict) -> dict:
    row = {"host": "h", "src_url": f"s{i}", "trg_url": f"t{i}", "src_lang": "eng", "trg_lang": "deu"}
    for side, doc in (("src", src), ("trg", trg)):
        for column in ("status", "cld2_lang", "cld2_reliable", "text_chars", "paragraphs", "images", "structure"):
            row[f"{side}_{column}"] = doc[column]
    return row


def pages_of(frame: pd.DataFrame) -> pd.DataFrame:
    """The pages of joined pair rows (src_* / trg_* columns) as verify_frame takes them."""
    columns = ["status", "cld2_lang", "cld2_reliable", "text_chars", "paragraphs", "images", "structure"]
    sides = [frame[[f"{side}_url", *(f"{side}_{c}" for c in columns)]].set_axis(["url", *columns], axis=1)
             for side in ("src", "trg")]
    return pd.concat(sides, ignore_index=True).drop_duplicates("url")


def bench_verification(pairs: int, seed: int = 3) -> dict:
    """Half translation-like pairs (same template, article lengths x1.2), half unrelated pages of the same site."""
    rng = random.Random(seed)
    rows, truth = [], []
    for i in range(pairs):
        lengths = [rng.randint(40, 400) for _ in range(rng.randint(5, 40))]
        translated = i % 2 == 0
        other = ([int(x * 1.2) for x in lengths] if translated
                 else [rng.randint(40, 400) for _ in range(rng.randint(5, 40))])
        src = parse_record(record_bytes("http://h/en", site_page(random.Random(i), i, 100, lengths)), "http://h/en")
        trg_page = site_page(random.Random(i), i if translated else i + pairs, 100, other, english=False)
        trg = parse_record(record_bytes("http://h/de", trg_page), "http://h/de")
        rows.append(pair_row(i, src, trg))
        truth.append(translated)
    frame = pd.DataFrame(rows)
    cpu = time.process_time()
    verified = verify_frame(frame[["host", "src_url", "trg_url", "src_lang", "trg_lang"]], pages_of(frame),
                            ThresholdRule())
    ours = time.process_time() - cpu
    cpu = time.process_time()
    baseline_dp = [sequence_matcher_dp(r["src_structure"], r["trg_structure"]) for r in rows]
    baseline = time.process_time() - cpu
    excess = [b - m for b, m in zip(baseline_dp, verified["dp"])]
    accepted = verified["parallel"].tolist()
    half = pairs // 2
    tree = TreeRule.fit(feature_matrix(verified.iloc[:half]), truth[:half])
    learned = [tree.decide(row)[0] for row in verified.iloc[half:].to_dict("records")]
    return {"pairs": pairs, "mean_tokens": float(frame["src_structure"].map(len).mean()),
            "verify_pairs_per_cpu_s": pairs / ours, "sequence_matcher_pairs_per_cpu_s": pairs / baseline,
            "speedup_vs_sequence_matcher": baseline / ours,
            "sequence_matcher_dp_excess_mean": sum(excess) / len(excess),
            "sequence_matcher_never_below_minimal": min(excess) >= -1e-12,
            "accepted_translations": f"{sum(a for a, t in zip(accepted, truth) if t)}/{sum(truth)}",
            "accepted_unrelated_same_template": f"{sum(a for a, t in zip(accepted, truth) if not t)}/"
                                                f"{len(truth) - sum(truth)}",
            "learned_tree_heldout_accuracy": sum(a == t for a, t in zip(learned, truth[half:])) / len(learned),
            "learned_tree": json.dumps(tree.to_dict()["tree"])[:300]}


def bench_alignment_on_real_page(seed: int = 1) -> dict:
    """dp of the real Aragonese Wikipedia page against copies with random tag edits: minimal diff vs SequenceMatcher."""
    path = Path(os.environ.get("PARASCOUT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    path = path / "cc-sample" / "CC-MAIN-2024-22-whirlwind.warc.gz"
    if not path.exists():
        return {"skipped": f"{path} not found"}
    from tests.test_documents import gzip_members

    data = path.read_bytes()
    offset, length = gzip_members(data)[2]
    tokens = parse_record(data[offset:offset + length])["structure"]
    rng, result = random.Random(seed), {"tokens": len(tokens)}
    for rate in (0.05, 0.2):
        edited = []
        for token in tokens:
            roll = rng.random()
            if roll < rate / 3:
                continue  # deleted
            if roll < 2 * rate / 3:
                edited.append("[START:span]")  # inserted
            edited.append(token)
        cpu = time.process_time()
        minimal = strand_features(tokens, edited).dp
        ours = time.process_time() - cpu
        cpu = time.process_time()
        approximate = sequence_matcher_dp(tokens, edited)
        baseline = time.process_time() - cpu
        result[f"edits_{rate}_dp_minimal"] = minimal
        result[f"edits_{rate}_dp_sequence_matcher"] = approximate
        result[f"edits_{rate}_speedup"] = baseline / max(ours, 1e-9)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=3000)
    parser.add_argument("--pairs", type=int, default=400)
    parser.add_argument("--hosts", type=int, default=20, help="sample-archive hosts for the HTML stage")
    parser.add_argument("--html-only", action="store_true", help="only the HTML stage (section 0)")
    parser.add_argument("--seeds", default="7,1234",
                        help="sample-archive seeds for main-text quality (the rules were tuned on 42; the first "
                             "seed's archive is also timed)")
    parser.add_argument("--against", metavar="FILE",
                        help="another version of udfs/fetch/html_text.py, timed on the same pages in the same run")
    parser.add_argument("--speed-only", action="store_true",
                        help="HTML stage: speed on the real pages and the first seed's archive only (no quality, "
                             "no extractor comparison)")
    parser.add_argument("--ceiling", action="store_true",
                        help="only the C parts' rates beside the full pipeline (real pages, first seed's archive)")
    args = parser.parse_args(argv)
    seeds = [int(seed) for seed in args.seeds.split(",")]
    if args.ceiling:
        return print_results(bench_html_ceiling(args.hosts, seeds[0]))
    if args.speed_only:
        return print_results(bench_html_speed(args.hosts, seeds[0], load_html_text(args.against)))
    results = bench_html_engine(args.hosts, seeds, load_html_text(args.against))
    if args.html_only:
        return print_results(results)
    records = generate_records(args.pages)
    results.update({"parse": bench_parse(records), "parse_real_commoncrawl": bench_real_pages()})
    with tempfile.TemporaryDirectory() as folder:
        results["coalescing"] = bench_coalescing(records, Path(folder))
    results["coalescing_by_density"] = bench_coalescing_density()
    results["verification"] = bench_verification(args.pairs)
    results["alignment_real_page"] = bench_alignment_on_real_page()
    print_results(results)


def print_results(results: dict) -> None:
    for section, values in results.items():
        print(f"[{section}]")
        for key, value in values.items():
            print(f"  {key}: {value:.3f}" if isinstance(value, float) else f"  {key}: {value}")


if __name__ == "__main__":
    main()
