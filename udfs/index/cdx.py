"""CommonCrawl CDX lines and ZipNum collections (cdx-NNNNN.gz + cluster.idx): writing and reading bytes.

A CDX line is `SURT TIMESTAMP {json}`; all JSON values are strings. A ZipNum
collection is a set of `cdx-NNNNN.gz` files made of independent gzip members of
up to 3,000 lines each, plus `cluster.idx` with one line per member:
`SURT TIMESTAMP<TAB>cdx-NNNNN.gz<TAB>offset<TAB>length<TAB>seq`.

Reading: whole local files can go through Spark's own text reader (`jvm_readable`);
everything else runs inside Spark tasks: a task gets byte ranges (a whole file or a
run of ZipNum blocks), gunzips them and returns raw lines as Arrow batches. The JVM
parses the lines either way (udfs/index/cdx_records.py). A broken gzip member is one bad
record (`truncated_gzip`, `bad_gzip`), never a crash and never a silent loss.
"""
from __future__ import annotations

import bisect
import contextlib
import gzip
import itertools
import json
import os
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from parascout.udfs.common import range_reads, storage
from parascout.udfs.common.range_reads import ByteRange, RangeFile, RangeReader, ReadError, ReadSettings
from parascout.udfs.common.urls import host_surt

ZIPNUM_BLOCK_LINES = 3000
CDX_FIELD_ORDER = ("url", "mime", "mime-detected", "status", "digest", "length", "offset",
                   "filename", "charset", "languages", "redirect", "truncated")
#: files a folder given as a CDX source may hold (others, like cluster.idx or notes, are skipped)
CDX_FILE_SUFFIXES = (".gz", ".cdx", ".cdxj", ".txt")
GZIP_MAGIC = b"\x1f\x8b"
GZIP_WBITS = 31
READ_CHUNK_BYTES = 1 << 20
#: adjacent selected ZipNum blocks are fetched together, up to this many bytes per request
MAX_RANGE_BYTES = 64 << 20
#: a read problem becomes one record whose `read_status` says what broke
READ_PROBLEMS = ("truncated_gzip", "bad_gzip", "unreadable", "line_too_long")
#: CDX lines longer than this are counted line_too_long and skipped unread (real lines stay under ~10 kB)
MAX_LINE_BYTES = 1 << 20
#: per scan-cdx drop reason, the option or input to check when it dropped every record
DROP_HINTS = {
    "crawl_not_selected": "--crawl names no crawl the index holds",
    "host_not_allowed": "--hosts / --domains / --tlds match no host in the index",
    "status": "no capture has a --status the scan keeps (default 200)",
    "mime": "no capture has a --mime the scan keeps (default HTML; 'any' keeps all)",
    "redirect": "every capture is a redirect (--keep-redirects keeps them)",
    "revisit": "every capture is a revisit (--keep-revisits keeps them)",
    "host_not_bilingual": "no host has URLs in both --langs languages (the CDX `languages` field): another pair, "
                          "or no --langs",
    "malformed_line": "the input is not CDX (SURT TIMESTAMP {json} lines): check --cdx",
    "bad_json": "the input is not CDX (SURT TIMESTAMP {json} lines): check --cdx",
}
LINE_SCHEMA = pa.schema([("value", pa.binary()), ("read_status", pa.string())])
LINE_SCHEMA_DDL = "value binary, read_status string"


# ---- writing ----------------------------------------------------------------------------
def format_cdx_line(surt_key: str, timestamp: str, fields: dict) -> str:
    """One CDX line as CommonCrawl writes it (string values, CommonCrawl's key order)."""
    ordered = {k: str(fields[k]) for k in CDX_FIELD_ORDER if fields.get(k) not in (None, "")}
    ordered.update({k: str(v) for k, v in fields.items() if k not in ordered and v not in (None, "")})
    return f"{surt_key} {timestamp} {json.dumps(ordered, ensure_ascii=False)}"


def write_zipnum(lines: Iterable[str], out_dir: str, block_lines: int = ZIPNUM_BLOCK_LINES,
                 lines_per_file: int = 3_000_000) -> dict:
    """Write sorted CDX lines as a ZipNum collection; returns {files, blocks, lines}."""
    os.makedirs(out_dir, exist_ok=True)
    cluster_entries: list[str] = []
    stream = (line.rstrip("\n") for line in lines)
    files = total = 0
    while (first := next(stream, None)) is not None:
        name = f"cdx-{files:05d}.gz"
        with open(os.path.join(out_dir, name), "wb") as handle:
            blocks = write_zipnum_blocks(itertools.chain([first], itertools.islice(stream, lines_per_file - 1)),
                                         handle, block_lines)
        cluster_entries += cluster_lines(blocks, name, len(cluster_entries))
        total += sum(count for *_, count in blocks)
        files += 1
    with open(os.path.join(out_dir, "cluster.idx"), "w", encoding="utf-8") as index:
        index.write("".join(entry + "\n" for entry in cluster_entries))
    return {"files": files, "blocks": len(cluster_entries), "lines": total}


def write_zipnum_blocks(lines: Iterable[str], handle, block_lines: int = ZIPNUM_BLOCK_LINES
                        ) -> list[tuple[str, int, int, int]]:
    """Sorted CDX lines into an open binary file as independent gzip members of `block_lines` lines;
    (first `SURT TIMESTAMP`, offset, length, lines) per member, what cluster.idx lists."""
    stream = (line.rstrip("\n") for line in lines)
    blocks, offset = [], 0
    while block := list(itertools.islice(stream, block_lines)):
        member = gzip.compress(("\n".join(block) + "\n").encode("utf-8"), compresslevel=6, mtime=0)
        handle.write(member)
        blocks.append((" ".join(block[0].split(" ", 2)[:2]), offset, len(member), len(block)))
        offset += len(member)
    return blocks


def cluster_lines(blocks: Iterable[tuple[str, int, int, int]], name: str, first_seq: int = 0) -> list[str]:
    """cluster.idx lines of one cdx-NNNNN.gz's blocks, numbered from first_seq."""
    return [f"{key}\t{name}\t{offset}\t{length}\t{seq}"
            for seq, (key, offset, length, _) in enumerate(blocks, first_seq)]


# ---- ZipNum: which blocks can hold a host, domain or TLD --------------------------------
@dataclass
class ZipNumSelection:
    ranges: list[ByteRange]
    blocks_total: int
    blocks_selected: int
    bytes_selected: int


def surt_prefixes(hosts: Iterable[str] = (), domains: Iterable[str] = (), tlds: Iterable[str] = ()) -> list[str]:
    """SURT key prefixes covering the wanted hosts, domains and TLDs; nested prefixes collapsed."""
    prefixes = set()
    for host in hosts:
        key = host_surt(host.strip().rstrip("."))
        prefixes.update((key + ")", key + ":"))  # 'is,example)/...' and 'is,example:8080)/...'
    prefixes.update(host_surt(d.strip().rstrip(".")) for d in domains)  # also 'is,example,www)'
    prefixes.update(t.strip().strip(".").lower() + "," for t in tlds)
    collapsed: list[str] = []
    for prefix in sorted(p for p in prefixes if p):
        if not (collapsed and prefix.startswith(collapsed[-1])):
            collapsed.append(prefix)
    return collapsed


def _block_may_match(first_key: str, next_key: str | None, prefixes: list[str]) -> bool:
    """Can a block whose keys lie in [first_key, next_key] hold a key starting with one of prefixes?"""
    index = bisect.bisect_right(prefixes, first_key) - 1
    if index >= 0 and first_key.startswith(prefixes[index]):
        return True
    following = prefixes[index + 1] if index + 1 < len(prefixes) else None
    return following is not None and (next_key is None or following <= next_key)


def select_zipnum_ranges(cluster_lines: Iterable[str], base_dir: str, prefixes: list[str] | None,
                         max_range_bytes: int = MAX_RANGE_BYTES) -> ZipNumSelection:
    """Byte ranges of the ZipNum blocks that can match `prefixes` (all blocks when None), adjacent ones merged."""
    ranges: list[ByteRange] = []
    total = selected = selected_bytes = 0
    def take(name: str, offset: int, length: int, block: int) -> None:
        nonlocal selected, selected_bytes
        selected += 1
        selected_bytes += length
        path = storage.join(base_dir, name)
        last = ranges[-1] if ranges else None
        if last and last.path == path and last.end == offset and last.length + length <= max_range_bytes:
            last.length += length
            last.members.append(block)
            return
        ranges.append(ByteRange(path, offset, length, [block]))

    previous = None
    for line in cluster_lines:
        if not line.strip():
            continue
        key, name, offset, length = line.rstrip("\n").split("\t")[:4]
        entry = (key.split(" ", 1)[0], name, int(offset), int(length), total)
        total += 1
        if previous and (prefixes is None or _block_may_match(previous[0], entry[0], prefixes)):
            take(*previous[1:])
        previous = entry
    if previous and (prefixes is None or _block_may_match(previous[0], None, prefixes)):
        take(*previous[1:])
    return ZipNumSelection(ranges, total, selected, selected_bytes)


def iter_text_lines(path: str, chunk_bytes: int = READ_CHUNK_BYTES, endpoint: str | None = None) -> Iterator[str]:
    """Lines of a (possibly remote) UTF-8 text file such as cluster.idx, streamed."""
    tail = b""
    with contextlib.closing(range_reads.open_binary(path, endpoint)) as handle:
        while chunk := handle.read(chunk_bytes):
            *lines, tail = (tail + chunk).split(b"\n")
            yield from (line.decode("utf-8") for line in lines)
    if tail:
        yield tail.decode("utf-8")


def cdx_byte_ranges(path: str, prefixes: list[str] | None, endpoint: str | None = None
                    ) -> tuple[list[ByteRange], ZipNumSelection | None]:
    """What to read under a CDX path: the ZipNum blocks that can match `prefixes` (all when None; local
    collections then as whole files) with the selection made, else every CDX file (by CDX_FILE_SUFFIXES;
    a file given by name is always read)."""
    cluster_idx = storage.join(path, "cluster.idx")
    if storage.exists(cluster_idx, endpoint):
        selection = select_zipnum_ranges(iter_text_lines(cluster_idx, endpoint=endpoint), path, prefixes)
        if prefixes is None and storage.is_local(path):  # all of it: whole files, which Spark reads fastest
            files = dict.fromkeys(r.path for r in selection.ranges)
            return [ByteRange(f) for f in files], selection
        return selection.ranges, selection
    files = [f for f in storage.list_files(path, endpoint=endpoint) if f == path or (
        f.endswith(CDX_FILE_SUFFIXES) and not os.path.basename(f).startswith((".", "_")))]
    return [ByteRange(f) for f in files], None


def columnar_files(path: str, crawls: Iterable[str] = (), endpoint: str | None = None) -> list[tuple[str, str | None]]:
    """(file, crawl) of the Parquet files of a columnar index table in subset=warc and the wanted crawls."""
    wanted = set(crawls)
    found = []
    for name in storage.list_files(path, ".parquet", endpoint):
        parts = name.split("/")
        crawl = next((p.removeprefix("crawl=") for p in parts if p.startswith("crawl=")), None)
        subset = next((p.removeprefix("subset=") for p in parts if p.startswith("subset=")), "warc")
        if subset == "warc" and (not wanted or crawl in wanted):
            found.append((name, crawl))
    return found


# ---- bytes -> lines (runs inside Spark tasks) --------------------------------------------
def gunzip_members(chunks: Iterable[bytes], max_output: int = READ_CHUNK_BYTES) -> Iterator[tuple[bytes, str | None]]:
    """Decompressed bytes of concatenated gzip members, at most `max_output` bytes a piece (a small member
    that expands to gigabytes is never held whole); a last (b"", reason) when the stream breaks."""
    decoder = zlib.decompressobj(GZIP_WBITS)
    inside_member = False
    for chunk in itertools.chain(chunks, [b""]):  # the last, empty chunk drains what zlib still holds
        while True:
            inside_member = inside_member or bool(chunk)
            try:
                data = decoder.decompress(chunk, max_output)
            except zlib.error:
                yield b"", "bad_gzip"
                return
            if data:
                yield data, None
            if decoder.eof:
                chunk = decoder.unused_data
                decoder = zlib.decompressobj(GZIP_WBITS)
                inside_member = False
                if not chunk:
                    break
            elif decoder.unconsumed_tail or len(data) == max_output:
                chunk = decoder.unconsumed_tail
            else:
                break
    if inside_member:
        yield b"", "truncated_gzip"


def lines_batch(data: bytes, max_line_bytes: int = MAX_LINE_BYTES) -> pa.RecordBatch:
    """An Arrow batch of the newline-terminated lines in `data` (newlines removed, bytes not copied per line);
    a line longer than max_line_bytes becomes an empty value with read_status line_too_long."""
    buffer = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(buffer == 10)
    count = len(newlines)
    starts = np.zeros(count + 1, dtype=np.int64)
    starts[1:] = newlines + 1
    if count and (np.diff(starts) - 1).max() > max_line_bytes:
        lines = [data[begin:end - 1] for begin, end in zip(starts[:-1].tolist(), starts[1:].tolist())]
        too_long = [len(line) > max_line_bytes for line in lines]
        return pa.RecordBatch.from_arrays([
            pa.array([b"" if long else line for line, long in zip(lines, too_long)], pa.binary()),
            pa.array(["line_too_long" if long else None for long in too_long], pa.string())], schema=LINE_SCHEMA)
    keep = np.ones(len(buffer), dtype=bool)
    keep[newlines] = False
    offsets = (starts - np.arange(count + 1)).astype(np.int32)
    values = pa.Array.from_buffers(pa.binary(), count, [None, pa.py_buffer(offsets), pa.py_buffer(buffer[keep])])
    return pa.RecordBatch.from_arrays([values, pa.nulls(count, pa.string())], schema=LINE_SCHEMA)


def problem_batch(reason: str) -> pa.RecordBatch:
    """One record standing for a broken member, an unreadable file or a line over the length limit."""
    return pa.RecordBatch.from_arrays([pa.array([b""], pa.binary()), pa.array([reason])], schema=LINE_SCHEMA)


def cdx_line_batches(chunks: Iterable[bytes], max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[pa.RecordBatch]:
    """Arrow batches of lines from plain or gzip bytes; a broken gzip stream ends with one problem record; a
    line longer than max_line_bytes is one line_too_long record, skipped without being held in memory."""
    chunks = iter(chunks)
    first = next(chunks, b"")
    if not first:
        return
    stream = itertools.chain([first], chunks)
    pieces = gunzip_members(stream) if first[:2] == GZIP_MAGIC else ((chunk, None) for chunk in stream)
    tail, skipping = b"", False
    for data, problem in pieces:
        if problem:  # the partial last line belongs to the broken member
            yield problem_batch(problem)
            return
        if skipping:  # inside a line already counted line_too_long: drop bytes up to its end
            end = data.find(b"\n")
            if end < 0:
                continue
            data, skipping = data[end + 1:], False
        data = tail + data if tail else data
        cut = data.rfind(b"\n") + 1
        tail = data[cut:]
        if cut:
            yield lines_batch(data[:cut] if cut < len(data) else data, max_line_bytes)
        if len(tail) > max_line_bytes:
            yield problem_batch("line_too_long")
            tail, skipping = b"", True
    if tail:
        yield lines_batch(tail + b"\n", max_line_bytes)


def jvm_readable(byte_range: ByteRange) -> bool:
    """Can Spark's own text reader read this whole local file (gzip exactly when the name ends in .gz)?"""
    if byte_range.length >= 0 or not storage.is_local(byte_range.path):
        return False
    try:
        with storage.open_regular_file(byte_range.path) as handle:
            is_gzip = handle.read(2) == GZIP_MAGIC
    except (OSError, storage.BadLocation):
        return False
    return is_gzip == byte_range.path.endswith(".gz")


def jvm_file_lines(spark, paths: list[str], max_line_bytes: int = MAX_LINE_BYTES):
    """Whole local files' (value, read_status) lines read on the JVM by the jar's parascout.CdxFileReader
    (one task per file; the twin of `cdx_line_batches`: line_too_long, truncated_gzip, bad_gzip, unreadable
    rows): the lines cdx_records.jvm_file_records parses as it reads them, which scan-cdx uses; None when the jar
    is not on the classpath."""
    from py4j.java_gateway import JavaClass
    from pyspark.sql import DataFrame

    reader = spark._jvm.parascout.CdxFileReader
    if not isinstance(reader, JavaClass):
        return None
    lines = DataFrame(reader.read(spark._jsparkSession, list(paths), int(max_line_bytes)), spark)
    return lines.select(lines.value.cast("string").alias("value"), "read_status")


def byte_reader(s3_endpoint: str | None = None) -> RangeReader:
    """The range reader for CDX blocks and columnar-index bytes (storage's: verified, retried); one per task."""
    return RangeReader(ReadSettings(endpoint=s3_endpoint, pool_size=1))


def range_chunks(byte_range: ByteRange, reader: RangeReader | None = None,
                 chunk_bytes: int = READ_CHUNK_BYTES) -> Iterator[bytes]:
    """The bytes of a range: one ranged GET (a file that ends early gives fewer bytes), or a whole file
    streamed in chunks. Raises OSError or ReadError when the bytes cannot be read."""
    reader = reader or byte_reader()
    if byte_range.length >= 0:
        yield reader.read(byte_range.path, byte_range.offset, byte_range.length)[0]
        return
    yield from reader.stream(byte_range.path, chunk_bytes if storage.is_local(byte_range.path)
                             else range_reads.STREAM_CHUNK_BYTES)


def range_reader(s3_endpoint: str | None = None, max_line_bytes: int = MAX_LINE_BYTES
                 ) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A mapInArrow function: (path, offset, length) rows in, (value, read_status) line batches out."""

    def read(tasks: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        reader = byte_reader(s3_endpoint)
        for batch in tasks:
            for task in batch.to_pylist():
                byte_range = ByteRange(task["path"], task["offset"], task["length"])
                try:
                    yield from cdx_line_batches(range_chunks(byte_range, reader), max_line_bytes)
                except (OSError, ReadError):  # missing file, or a remote read that failed after its retries
                    yield problem_batch("unreadable")

    return read


# ---- columnar index Parquet on object stores (read in Python tasks) -------------------------
def parquet_reader(schema: pa.Schema, s3_endpoint: str | None = None
                   ) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """A mapInArrow function: (path, crawl) rows in, batches of those Parquet files cast to `schema` out.

    Columns a file lacks come back null; `crawl` (a partition value) is taken from the task.
    """
    import pyarrow.parquet as pq

    def read(tasks: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        reader = byte_reader(s3_endpoint)
        for batch in tasks:
            for task in batch.to_pylist():
                size = storage.object_size(task["path"], s3_endpoint)
                parquet = pq.ParquetFile(pa.PythonFile(RangeFile(task["path"], size, reader), mode="r"))
                present = [f.name for f in schema if f.name in parquet.schema_arrow.names]
                for part in parquet.iter_batches(columns=present, batch_size=65536):
                    size = part.num_rows
                    arrays = [part.column(f.name).cast(f.type) if f.name in present
                              else pa.array([task["crawl"]] * size, f.type) if f.name == "crawl"
                              else pa.nulls(size, f.type) for f in schema]
                    yield pa.RecordBatch.from_arrays(arrays, schema=schema)

    return read
