"""Main-text quality and speed of parascout's extractor against trafilatura and resiliparse, in the same run.

Quality: on the hand-labelled pages of tests/data/main_text, word-level precision, recall and F1 of each
extractor's main text against the label (bags of words, multiset overlap; CJK characters count one word each),
per page and pooled. parascout's main text is what fetch-docs stores before its per-site pass: the text of the
page's paragraphs not marked boilerplate, one a line (udfs.fetch.html_text.html_features -> page_paragraphs).
Speed: pages per CPU-second (time.process_time) of each extractor over the fixtures and over ~300 real-sites
pages (../shared/data/real-sites, read at their CDX offsets), and parascout / trafilatura measured here.

    .venv/bin/python benchmarks/bench_main_text.py [--real-pages 300] [--repeat 3] [--markdown docs/main-text.md]

trafilatura and resiliparse are dev-only (requirements-dev.txt); a missing one is reported and skipped.
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from parascout.udfs.fetch.html_text import WALK_ENGINE
from testkit.main_text import fixtures, parascout_main_text, quality

REAL_SITES = ROOT.parent / "shared" / "data" / "real-sites"


def extractors() -> dict:
    """name -> function(html) -> main text, for the extractors installed."""
    found = {"parascout": parascout_main_text}
    try:
        import trafilatura

        found["trafilatura"] = lambda html: trafilatura.extract(html) or ""
    except ImportError:
        print("trafilatura not installed (requirements-dev.txt): skipped")
    try:
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree

        found["resiliparse"] = lambda html: extract_plain_text(HTMLTree.parse(html), main_content=True)
        found["resiliparse + CLD2"] = with_language(found["resiliparse"])
    except ImportError:
        print("resiliparse not installed (requirements-dev.txt): skipped")
    return found


def with_language(extract):
    """An extractor followed by CLD2's language of its text: a speed figure only, what an extractor that identifies
    no language costs doing the least of the language identification parascout's HTML stage does (the page's
    language; parascout also reads the languages of a page's blocks where it holds two)."""
    from parascout.udfs.common.language_id import cld2_language

    def extract_with_language(html: str) -> str:
        text = extract(html)
        cld2_language(text)
        return text

    return extract_with_language


def real_site_pages(limit: int) -> list[str]:
    """Decoded HTML of `limit` real-sites pages spread over the CDX (every n-th 200 text/html capture)."""
    from warcio.archiveiterator import ArchiveIterator

    from parascout.udfs.fetch.documents import decode_html

    index = REAL_SITES / "indexes" / "cdx-00000.gz"
    if not index.exists():
        return []
    with gzip.open(index, "rt", encoding="utf-8") as lines:
        records = [json.loads(line.split(" ", 2)[2]) for line in lines]
    records = [r for r in records if r.get("status") == "200" and r.get("mime") == "text/html"]
    step = max(1, len(records) // limit)
    pages = []
    for record in records[::step][:limit]:
        with open(REAL_SITES / record["filename"], "rb") as stream:
            stream.seek(int(record["offset"]))
            pages.append(decode_html(next(iter(ArchiveIterator(stream))).content_stream().read())[0])
    return pages


def pages_per_cpu_second(extractors: dict, pages: list[str], repeat: int) -> dict:
    """name -> best of `repeat` passes, pages / CPU-seconds; the extractors take turns pass by pass, so that a change
    in the machine's load falls on all of them alike."""
    best = dict.fromkeys(extractors, float("inf"))
    for _ in range(repeat):
        for name, extract in extractors.items():
            start = time.process_time()
            for html in pages:
                extract(html)
            best[name] = min(best[name], time.process_time() - start)
    return {name: len(pages) / spent if spent > 0 else float("inf") for name, spent in best.items()}


def report(results: dict, speed: dict, real_count: int, fixture_count: int) -> str:
    """The figures as a Markdown table."""
    header = ("| extractor | F1 (mean of pages) | P | R | F1 (pooled) | pages/CPU-s fixtures | "
              f"pages/CPU-s real-sites ({real_count}) |")
    lines = [header, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, result in results.items():
        p, r, f = result["macro"]
        fixture_speed, real_speed = speed[name]
        lines.append(f"| {name} | {f:.3f} | {p:.3f} | {r:.3f} | {result['micro'][2]:.3f} | {fixture_speed:,.0f} | "
                     + (f"{real_speed:,.0f} |" if real_speed else "– |"))
    for peer in ("trafilatura", "resiliparse", "resiliparse + CLD2"):
        if peer in speed:
            ratios = [speed["parascout"][i] / speed[peer][i] for i in range(2) if speed[peer][i]]
            lines.append("")
            lines.append(f"parascout / {peer} pages per CPU-second, same run: "
                         + ", ".join(f"{ratio:.2f}x" for ratio in ratios) + " (fixtures, real-sites)")
    lines.append("")
    lines.append(f"{fixture_count} fixtures; parascout walk: {WALK_ENGINE}")
    return "\n".join(lines)


def per_page_table(results: dict) -> str:
    names = list(results)
    lines = ["| page | " + " | ".join(f"{name} F1" for name in names) + " |", "| --- |" + " ---: |" * len(names)]
    for page in next(iter(results.values()))["per_page"]:
        lines.append(f"| {page} | " + " | ".join(f"{results[n]['per_page'][page][2]:.3f}" for n in names) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real-pages", type=int, default=300, help="real-sites pages timed (0: none)")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes of each extractor, taking turns; the best counts")
    parser.add_argument("--markdown", type=Path, help="also write the tables to this Markdown file")
    args = parser.parse_args(argv)
    labelled = fixtures()
    real = real_site_pages(args.real_pages) if args.real_pages else []
    found = extractors()
    results = {name: quality(extract, labelled) for name, extract in found.items()}
    on_fixtures = pages_per_cpu_second(found, [html for _, html, _ in labelled], args.repeat)
    on_real = pages_per_cpu_second(found, real, args.repeat) if real else dict.fromkeys(found, 0.0)
    speed = {name: (on_fixtures[name], on_real[name]) for name in found}
    table, pages = report(results, speed, len(real), len(labelled)), per_page_table(results)
    print(table + "\n\n" + pages)
    if args.markdown:
        command = "    .venv/bin/python benchmarks/bench_main_text.py " + " ".join(argv or sys.argv[1:])
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text("# Main text: parascout against trafilatura and resiliparse\n\n"
                                 "Word-level precision, recall and F1 of each extractor's main text against the "
                                 "hand-labelled pages of tests/data/main_text (their README says what is main text), "
                                 "and pages per CPU-second, measured in one run (the extractors taking turns). "
                                 "parascout's figure includes CLD2's language of each page and, where a page holds "
                                 "two languages, of its main-text blocks; resiliparse identifies no language, and "
                                 "`resiliparse + CLD2` is resiliparse followed by CLD2 on its main text, the least "
                                 "of that work:\n\n" + command + "\n\n" + table
                                 + "\n\nPer page:\n\n" + pages + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
