"""Synthetic multilingual sites and URL-marker scorers, for tests, benchmarks and notebooks.

`multilingual_site` builds a `docs` frame and truth pairs for a news-like site: home ->
categories -> articles in language A; each article links to comment pages and tag pages
(neither has a translation), and, in its footer, a language switcher to its translation in
language B when one exists. The B section is only reachable through those switchers, deep
in the graph, which is where a breadth-first crawl loses time and a smart one does not.
The scorers are deterministic functions of the URL (alternative scorers, not models).
"""
from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pandas as pd

from parascout.udfs.replay.page_policies import lss_handles


def multilingual_site(n_articles: int = 200, translated_share: float = 0.6, comments_per_article: int = 4,
                      n_tags: int = 40, tags_per_article: int = 3, n_categories: int = 8,
                      missing_share: float = 0.05, host: str = "www.example.is", langs: tuple[str, str] = ("eng", "isl"),
                      codes: tuple[str, str] = ("en", "is"), seed: int = 0, second_host: str | None = None,
                      ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(docs, truth) of one synthetic bilingual site; docs has the columns build_graph reads. With `second_host`
    the B language lives on a host of its own (www.x.org in A, fra.x.org in B) under paths without a language
    code."""
    rng = random.Random(seed)
    base = f"https://{host}"
    first, second = codes
    second_base = f"https://{second_host}" if second_host else f"{base}/{second}"
    pages: dict[str, dict] = {}

    def page(url: str, lang: str | None, links: list[str], status: str = "ok") -> None:
        pages[url] = {"url": url, "host": url.split("/")[2], "status": status, "cld2_lang": lang, "cld2_reliable": lang is not None,
                      "outlinks": links, "warc_length": 2_000 + rng.randrange(30_000), "http_status": 200}

    categories = [f"{base}/{first}/category/{c}/" for c in range(n_categories)]
    tags = [f"{base}/{first}/tag/{t}/" for t in range(n_tags)]
    articles: list[list[str]] = [[] for _ in categories]
    translated_categories: list[list[str]] = [[] for _ in categories]
    truth = []
    for i in range(n_articles):
        c = i % n_categories
        article = f"{categories[c]}article-{i}.html"
        comments = [f"{base}/{first}/comments/{i}/{k}.html" for k in range(comments_per_article)]
        links = [categories[c], *rng.sample(tags, min(tags_per_article, n_tags)), *comments]
        if rng.random() < missing_share:
            links.append(f"{base}/{first}/old/{i}.html")
        for comment in comments:
            page(comment, langs[0], [article])
        if rng.random() < translated_share:
            translation = f"{second_base}/category/{c}/article-{i}.html"
            links.append(translation)
            page(translation, langs[1], [article, f"{second_base}/category/{c}/"])
            translated_categories[c].append(translation)
            truth.append((host, article, translation, langs[0], langs[1]))
        page(article, langs[0], links)
        articles[c].append(article)
    for c, category in enumerate(categories):
        page(category, langs[0], [f"{base}/", *articles[c]])
        if translated_categories[c]:
            page(f"{second_base}/category/{c}/", langs[1], translated_categories[c])
    for tag in tags:
        page(tag, langs[0], rng.sample([a for group in articles for a in group], min(5, n_articles)))
    page(f"{base}/", langs[0], [*categories, f"{base}/de/", f"{base}/{first}/gone.html"])
    page(f"{base}/de/", "deu", [f"{base}/de/seite-{k}.html" for k in range(5)])
    for k in range(5):
        page(f"{base}/de/seite-{k}.html", "deu", [f"{base}/de/"])
    page(f"{base}/{first}/gone.html", None, [], status="http_404")
    docs = pd.DataFrame(list(pages.values()))
    truth_frame = pd.DataFrame(truth, columns=["host", "src_url", "trg_url", "src_lang", "trg_lang"])
    return docs, truth_frame


def random_site(n_pages: int = 100_000, out_degree: int = 12, parallel_share: float = 0.2,
                host: str = "www.example.is", langs: tuple[str, str] = ("eng", "isl"),
                seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(docs, truth) of a large random bilingual site: A pages under /en/, B pages under /is/, local links."""
    rng = np.random.default_rng(seed)
    in_second = rng.random(n_pages) < 0.3
    urls = [f"https://{host}/{'is' if b else 'en'}/p{i}.html" for i, b in enumerate(in_second)]
    urls[0] = f"https://{host}/"
    offsets = rng.integers(-200, 2_000, size=(n_pages, out_degree))
    targets = np.clip(np.arange(n_pages)[:, None] + offsets, 0, n_pages - 1)
    outlinks = [[urls[t] for t in row] for row in targets]
    lang_names = np.where(in_second, langs[1], langs[0])
    docs = pd.DataFrame({"url": urls, "host": host, "status": "ok", "cld2_lang": lang_names,
                         "outlinks": outlinks, "warc_length": rng.integers(1_000, 50_000, n_pages)})
    first_ids = np.flatnonzero(~in_second)
    second_ids = np.flatnonzero(in_second)
    n_pairs = int(min(len(first_ids), len(second_ids)) * parallel_share)
    src, trg = rng.choice(first_ids, n_pairs, replace=False), rng.choice(second_ids, n_pairs, replace=False)
    for s, t in zip(src, trg):  # translations link to each other, as a language switcher would
        outlinks[s].append(urls[t])
        outlinks[t].append(urls[s])
    truth = pd.DataFrame({"host": host, "src_url": [urls[s] for s in src], "trg_url": [urls[t] for t in trg],
                          "src_lang": langs[0], "trg_lang": langs[1]})
    return docs, truth


def marker_lang_scorer(markers: dict[str, str], hit: float = 0.9, miss: float = 0.05) -> Callable:
    """P(url in lang) = `hit` when the URL contains the language's marker (e.g. '/is/'), else `miss`."""
    def score(urls: list[str]) -> pd.DataFrame:
        return pd.DataFrame({lang: [hit if marker in url else miss for url in urls] for lang, marker in markers.items()})
    return score


def handle_pair_scorer(langs: tuple[str, str], hit: float = 0.9, miss: float = 0.1) -> Callable:
    """P(u, v parallel) = `hit` when u and v share a STRAND handle (differ only by language codes), else `miss`."""
    def score(src_urls: list[str], trg_urls: list[str]) -> np.ndarray:
        src_handles, _ = lss_handles(src_urls, langs)
        trg_handles, _ = lss_handles(trg_urls, langs)
        return np.where(np.asarray(src_handles, dtype=object) == np.asarray(trg_handles, dtype=object), hit, miss)
    return score
