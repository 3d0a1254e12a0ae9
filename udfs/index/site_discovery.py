"""Sites likely to hold a language pair, found without ranking any URL pair (ILSP-FC's site bootstrapping).

ILSP-FC looks for translation links on a site's home page. parascout has more cheap evidence per site:
the index's page languages (CDX `languages`: URLs in each language), the URL language markers the index's
URLs carry (a subdomain, directory, query value or file suffix that names one language: /en/, fr.example.org,
?lang=is, page.de.html), and, where pages were fetched, their language-switcher links (`docs.outlink_cues`:
a page in one language with a link whose anchor, flag or hreflang names the other). A site earns one point
per kind of evidence that shows BOTH languages, plus the balance of its two sides (smaller / larger, in [0, 1]),
and the sites are ranked by that score.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import parse_qsl, urlsplit

import pandas as pd

from parascout.udfs.common.langs import is_language_segment, language_markers

#: kinds of evidence a site may show for both languages (one point each in the score)
EVIDENCE_KINDS = ("index_languages", "url_markers", "switcher_links")
SITE_COLUMNS = ["site", "src_lang", "trg_lang", "n_hosts", "n_urls", "urls_src", "urls_trg", "marked_src",
                "marked_trg", "pages_fetched", "switcher_pages_src", "switcher_pages_trg", "home_switcher",
                "evidence", "balance", "score", "rank", "grouped_by"]
#: URLs of sites that show neither language, or only one, are not candidates
FILTERED_REASONS = frozenset({"one_language_site"})
BAD_REASONS = frozenset({"no_host"})
_SUFFIX = re.compile(r"[-_.]([a-z]{2,3}(?:[-_][a-z]{2,4})?)\.(?:html?|php|aspx?|jsp)$")
MARKER_SCHEMA = "site string, lang string, marker string"


def url_language_marker(url: str | None, src_markers: frozenset[str], trg_markers: frozenset[str],
                        src_lang: str, trg_lang: str) -> str | None:
    """The one language of the pair a URL's markers name (host label, path segment, query value, file suffix)."""
    if not url:
        return None
    try:
        parts = urlsplit(url.strip().lower())
    except ValueError:
        return None
    segments = [label for label in (parts.hostname or "").split(".")[:-2]]
    segments += [segment for segment in parts.path.split("/") if segment]
    segments += [value for _, value in parse_qsl(parts.query)]
    suffix = _SUFFIX.search(parts.path)
    if suffix:
        segments.append(suffix.group(1))
    names_src = any(is_language_segment(segment, src_markers) for segment in segments)
    names_trg = any(is_language_segment(segment, trg_markers) for segment in segments)
    if names_src == names_trg:
        return None
    return src_lang if names_src else trg_lang


def url_markers(batches: Iterator[pd.DataFrame], src_lang: str, trg_lang: str) -> Iterator[pd.DataFrame]:
    """mapInPandas over (site, url, lang): the pair language each URL's markers name (or None)."""
    src_markers, trg_markers = language_markers((src_lang,)), language_markers((trg_lang,))
    shared = src_markers & trg_markers  # a token naming both languages is no evidence
    src_markers, trg_markers = src_markers - shared, trg_markers - shared
    for batch in batches:
        marker = [url_language_marker(url, src_markers, trg_markers, src_lang, trg_lang) for url in batch["url"]]
        yield pd.DataFrame({"site": batch["site"], "lang": batch["lang"], "marker": marker})


def bind_url_markers(src_lang: str, trg_lang: str):
    """`url_markers` with the pair fixed, for mapInPandas (Spark reads no type hints off a partial)."""
    def markers(batches):
        return url_markers(batches, src_lang, trg_lang)
    return markers


def precision_recall_at(ranked_sites: list[str], relevant: set[str], ks: tuple[int, ...]) -> dict:
    """Precision and recall of the first k ranked sites for each k, and at r = the number of relevant sites."""
    metrics: dict = {"sites_ranked": len(ranked_sites), "sites_relevant": len(relevant)}
    for label, k in [*((str(k), k) for k in ks), ("r", len(relevant))]:
        top = ranked_sites[:k]
        hits = sum(site in relevant for site in top)
        metrics[f"precision_at_{label}"] = hits / len(top) if top else None
        metrics[f"recall_at_{label}"] = hits / len(relevant) if relevant else None
    return metrics
