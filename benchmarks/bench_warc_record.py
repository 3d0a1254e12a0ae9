"""Records per CPU-second of udfs.fetch.warc_record.decode_record against warcio in the same run.

Each record is given as a byte-range GET returns it (one gzip member). Baseline: what the record
part of udfs.fetch.documents did before, warcio's ArchiveIterator over the inflated member and, for a
response, `content_stream().read()` (chunked and Content-Encoding decoded, unbounded). Both decode
the HTTP body of every response; the bodies are compared (identical = same bytes).

    .venv/bin/python benchmarks/bench_warc_record.py [--sample-archive DIR] [--repeat 5] [--max-records 3000]

Real data: ../shared/data/cc-sample/*.warc.gz. Sample archive: the warc/ files of a make-sample-archive
output (e.g. `parascout make-sample-archive --out /tmp/sample --hosts 30 --seed 3`).

WAT files (the real excerpt's and the sample archive's wat/): docs rows per CPU-second of udfs.index.wat.read_wat
(FastWARC) against the same reader on warcio (kept below as the baseline); the rows are compared.
"""
from __future__ import annotations

import argparse
import io
import json
import sys
import time
import zlib
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from parascout.udfs.fetch.warc_record import decode_record, inflate_member
from parascout.udfs.index.wat import read_wat
from testkit.warc import warcio_read_wat

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "cc-sample"


def members(path: Path, limit: int) -> list[bytes]:
    """The gzip members of a WARC file (one record each), at most `limit`."""
    data, found, position = path.read_bytes(), [], 0
    while position < len(data) and len(found) < limit:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        inflater.decompress(data[position:])
        end = len(data) - len(inflater.unused_data)
        found.append(data[position:end])
        position = end
    return found


def warcio_body(member: bytes) -> bytes | None:
    """The baseline: inflate, warcio's record, the decoded payload of a response."""
    record = next(iter(ArchiveIterator(io.BytesIO(inflate_member(member)))))
    return record.content_stream().read() if record.rec_type == "response" else None


def fastwarc_body(member: bytes) -> bytes | None:
    return decode_record(member).body


def rate(function, records: list[bytes], repeat: int) -> tuple[float, list]:
    best, out = float("inf"), []
    for _ in range(repeat):
        started = time.process_time()
        out = [function(member) for member in records]
        best = min(best, time.process_time() - started)
    return len(records) / best, out


def measure(name: str, records: list[bytes], repeat: int, passes: int = 1) -> dict:
    """Rates over `passes` passes of the records (a small file is read many times for a stable timing)."""
    baseline, old = rate(warcio_body, records * passes, repeat)
    ours, new = rate(fastwarc_body, records * passes, repeat)
    old, new = old[: len(records)], new[: len(records)]
    responses = sum(body is not None for body in old)
    return {"source": name, "records": len(records), "passes": passes, "responses": responses,
            "identical_bodies": sum(a == b for a, b in zip(old, new) if a is not None),
            "warcio_records_per_cpu_s": round(baseline), "warc_record_records_per_cpu_s": round(ours),
            "ratio": round(ours / baseline, 2)}


def measure_wat(name: str, files: list[Path], repeat: int) -> dict:
    """docs rows per CPU-second of read_wat on FastWARC and on warcio over the same WAT files."""
    data = [path.read_bytes() for path in files]
    rates, rows = {}, {}
    for label, reader in (("warcio", warcio_read_wat), ("fastwarc", lambda stream: list(read_wat(stream)))):
        best = float("inf")
        for _ in range(repeat):
            started = time.process_time()
            rows[label] = [row for blob in data for row in reader(io.BytesIO(blob))]
            best = min(best, time.process_time() - started)
        rates[label] = len(rows[label]) / best
    return {"source": name, "wat_files": len(files), "rows": len(rows["fastwarc"]),
            "identical_rows": rows["fastwarc"] == rows["warcio"], "warcio_rows_per_cpu_s": round(rates["warcio"]),
            "fastwarc_rows_per_cpu_s": round(rates["fastwarc"]), "ratio": round(rates["fastwarc"] / rates["warcio"], 2)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample-archive", help="a make-sample-archive output directory")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--max-records", type=int, default=3000)
    args = parser.parse_args(argv)
    results = []
    if SHARED.is_dir():
        real = [m for path in sorted(SHARED.glob("*.warc.gz")) for m in members(path, args.max_records)]
        results.append(measure("commoncrawl excerpts", real, args.repeat, passes=max(1, 2000 // len(real))))
    if args.sample_archive:
        files = sorted(Path(args.sample_archive, "warc").glob("*.warc.gz"))
        sample = [m for path in files for m in members(path, args.max_records)][: args.max_records]
        results.append(measure("sample archive", sample, args.repeat))
        results.append(measure_wat("sample archive WAT", sorted(Path(args.sample_archive, "wat").glob("*.wat.gz")),
                                   args.repeat))
    if SHARED.is_dir():
        results.append(measure_wat("commoncrawl WAT excerpt", sorted(SHARED.glob("*.wat.gz")), args.repeat))
    for result in results:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
