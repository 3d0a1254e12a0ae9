"""SURT keys per CPU-second (udfs.common.urls.surt, the Internet Archive canonicaliser) on the real WMT16 URLs, with
urllib's urlsplit alone on the same URLs as the same-run baseline (the parse every key needs at least).

    .venv/bin/python benchmarks/bench_surt.py [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from urllib.parse import urlsplit

from parascout.udfs.common.urls import surt


def urls_per_cpu_second(function, urls: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        for url in urls:
            function(url)
        best = min(best, time.process_time() - started)
    return len(urls) / best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    shared = Path(os.environ.get("PARASCOUT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    pairs = shared / "wmt16" / "train.pairs"
    if not pairs.exists():
        print(f"skipped: {pairs} not found")
        return
    urls = list(dict.fromkeys(url for line in pairs.read_text().splitlines() for url in line.split()))
    baseline = urls_per_cpu_second(urlsplit, urls, args.repeat)
    keys = urls_per_cpu_second(surt.__wrapped__, urls, args.repeat)  # uncached: every key computed
    print(f"{len(urls)} WMT16 URLs: surt {keys:,.0f}/CPU-s, urlsplit {baseline:,.0f}/CPU-s, ratio {keys / baseline:.3f}")


if __name__ == "__main__":
    main()
