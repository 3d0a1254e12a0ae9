"""The crawl plan's formats: what export-crawl-plan writes for wget, Heritrix and Bitextor, as pure functions.

A plan is per site: seed URLs (its entry pages), the ranked URLs of the replay's planned policy, the hosts a
crawl of the site stays on, and the yield the replay measured ("80% of the site's parallel pages after ~N
fetches"). docs/crawl-plan.md says how to feed each file to each crawler.
"""
from __future__ import annotations

import math
import re

#: the replay_summary columns a plan reports as the site's expected yield
YIELD_COLUMNS = ("policy", "n_docs", "n_parallel_docs", "budget_fetches", "fetched", "docs_found", "recall", "auc",
                 "fetches_to_50", "fetches_to_80", "fetches_to_90", "share_fetches_to_80")
FRONTIER_TSV_COLUMNS = ("rank", "url", "priority", "predicted_lang", "p_lang", "partner_url", "seed", "archived")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def site_folder(site: str) -> str:
    """A site's folder name under crawl-plan/sites/ (a host name; anything else replaced by '_')."""
    return _UNSAFE.sub("_", site).strip("._") or "_"


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
    """A Bitextor config fragment: the plan's hosts file (hostsFile) and the language pair (lang1, lang2)."""
    return (f"# parascout crawl plan: merge into a Bitextor config (docs/crawl-plan.md)\n"
            f"hostsFile: {hosts_file}\nlang1: {langs[0]}\nlang2: {langs[1]}\ncrawler: wget\ncrawlTimeLimit: 1h\n")


def _present(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def _field(value) -> str:
    if not _present(value):
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value).replace("\t", " ").replace("\n", " ")
