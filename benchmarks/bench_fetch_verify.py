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
import io
import json
import os
import random
import sys
import tempfile
import time
from difflib import SequenceMatcher
from pathlib import Path

import pandas as pd
from warcio.archiveiterator import ArchiveIterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.html_stage import bench_html_ceiling, bench_html_engine, bench_html_speed, load_html_text, site_page
from parascout.udfs.fetch.documents import empty_doc, parse_record
from parascout.udfs.fetch.warc_fetch import FetchSettings, RangeReader, fetch_documents, plan_ranges
from parascout.udfs.verify.structure import ThresholdRule, TreeRule, feature_matrix, strand_features
from parascout.udfs.verify.verification import verify_frame
from testkit.warc import record_bytes


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
    from testkit.warc import gzip_members

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
    from testkit.warc import gzip_members

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
