"""The crawl plan's formats: what export-crawl-plan writes for wget, Heritrix and Bitextor, as pure functions.

A plan is per site (all hosts of a registered domain: www.x.org and fra.x.org are one site): seed URLs (its
entry points: every host's root, each language's home, the replay's seeds), the ranked URLs of the replay's
planned policy, the hosts a crawl of the site stays on, and the yield the replay measured ("80% of the site's
parallel pages after ~N fetches"). docs/crawl-plan.md says how to feed each file to each crawler.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

import yaml

from parascout.udfs.common.report_document import BIDI_CONTROLS
from parascout.udfs.export.bitext.formats import tsv_field

#: the replay_summary columns a plan reports as the site's expected yield
YIELD_COLUMNS = ("policy", "n_docs", "n_parallel_docs", "budget_fetches", "fetched", "docs_found", "recall", "auc",
                 "fetches_to_50", "fetches_to_80", "fetches_to_90", "share_fetches_to_80")
FRONTIER_TSV_COLUMNS = ("rank", "url", "priority", "predicted_lang", "p_lang", "partner_url", "seed", "archived")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
#: what no line of a crawler's URL list may hold: whitespace and control characters (a newline or a tab ends or
#: splits the line: a request to a URL nobody chose) and bidirectional overrides (a URL that reads as another)
_UNLISTABLE = re.compile(f"[\\s\x00-\x1f\x7f-\x9f{BIDI_CONTROLS}]")


def site_folder(site: str) -> str:
    """A site's folder name under crawl-plan/sites/ (a host name; anything else replaced by '_')."""
    return _UNSAFE.sub("_", site).strip("._") or "_"


def listable_url(url) -> bool:
    """Whether a URL can go on a crawler's URL list (wget --input-file, Heritrix seeds.txt: one URL per line) as
    itself: an absolute http(s) URL with a host, without whitespace, control characters or bidi overrides. Page
    links reach the plan through the replay's frontier, so anything may arrive here."""
    if not isinstance(url, str) or not url or _UNLISTABLE.search(url):
        return False
    try:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


def entry_points(frontier: Iterable[dict], languages: Iterable[str]) -> list[str]:
    """A site's seeds for a crawler, from its frontier rows (url, seed, archived, cld2_lang) in rank order: the
    replay's seeds, every host's root, and each language's home (its archived page with the shortest path).

    A seed inside a language section (https://x.be/en/) puts the other language outside the crawl's scope where
    scope follows the seeds (wget --no-parent, Heritrix's seed SURT prefixes); the host roots and one entry per
    language keep every host and language in scope whatever the crawler does with them."""
    rows = list(frontier)
    seeds = [row["url"] for row in rows if row.get("seed")]
    schemes: dict[str, str] = {}
    homes: dict[str, tuple[tuple[int, int, str], str]] = {}
    wanted = set(languages)
    for row in rows:
        parts = urlsplit(row["url"])
        if parts.scheme not in ("http", "https") or not parts.hostname:
            continue
        schemes.setdefault(parts.netloc.lower().rsplit("@", 1)[-1], parts.scheme)
        lang = row.get("cld2_lang")
        if row.get("archived") and lang in wanted:
            depth = (parts.path.rstrip("/").count("/"), len(parts.path) + len(parts.query), row["url"])
            if lang not in homes or depth < homes[lang][0]:
                homes[lang] = (depth, row["url"])
    roots = [f"{scheme}://{netloc}/" for netloc, scheme in schemes.items()]
    return list(dict.fromkeys([*seeds, *roots, *(homes[lang][1] for lang in sorted(homes))]))


def expected_yield(summary: dict) -> str:
    """The replay's yield of the planned policy in one sentence a crawl operator budgets with."""
    fetches, share = summary.get("fetches_to_80"), summary.get("share_fetches_to_80")
    if _present(fetches):
        of_site = f" ({share:.0%} of its archived pages)" if _present(share) else ""
        return (f"80% of the site's parallel pages after ~{int(fetches)} fetches{of_site} "
                f"with {summary['policy']}")
    recall = summary.get("recall")
    found = f"{recall:.0%}" if _present(recall) else "none"
    return (f"80% not reached: {found} of the site's parallel pages after {int(summary.get('fetched') or 0)} "
            f"fetches with {summary['policy']}")


def frontier_line(row: dict) -> str:
    """One tab-separated line of a site's frontier.tsv (empty fields for nulls)."""
    return "\t".join(_field(row.get(column)) for column in FRONTIER_TSV_COLUMNS) + "\n"


def bitextor_config(hosts_file: str, langs: tuple[str, str]) -> str:
    """A whole Bitextor 8.3 config, one its validator accepts: crawl the plan's hosts with wget, align documents
    and sentences with the aligners that need neither a dictionary nor an MT system (NDA and vecalign use
    multilingual sentence embeddings). `hosts_file` is read relative to the folder bitextor runs in."""
    lang1, lang2 = langs
    pair = f"{lang1}-{lang2}"
    sections = (
        ("Where Bitextor writes: placeholders, edit them (dataDir gets every host's WARCs: a disk with room)",
         {"permanentDir": f"~/bitextor/{pair}/permanent", "dataDir": f"~/bitextor/{pair}/data",
          "transientDir": f"~/bitextor/{pair}/transient"}),
        ("The plan's hosts, relative to the folder bitextor runs in (this one); wget, each host for crawlTimeLimit",
         {"hostsFile": hosts_file, "crawler": "wget", "crawlTimeLimit": "1h"}),
        ((f"{pair} documents and sentences aligned by multilingual sentence embeddings (no dictionary, no MT):\n"
          f"Neural Document Aligner and vecalign; writes {pair}.sent.gz and {pair}.documents.gz in permanentDir"),
         {"lang1": lang1, "lang2": lang2, "documentAligner": "NDA", "sentenceAligner": "vecalign",
          "granularity": ["sentences", "documents"]}),
    )
    # values through PyYAML, so a language code such as `no` stays a string
    lines = ["# parascout crawl plan: a Bitextor 8.3 config (docs/crawl-plan.md). From this folder:",
             "#   bitextor -C bitextor.yaml -j 8        (-c KEY=VALUE ... overrides settings)"]
    for comment, settings in sections:
        lines += ["", *(f"# {line}" for line in comment.splitlines()),
                  yaml.safe_dump(settings, sort_keys=False, default_flow_style=False).rstrip()]
    return "\n".join(lines) + "\n"


def _present(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _field(value) -> str:
    if not _present(value):
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:.6g}"
    return tsv_field(str(value))
