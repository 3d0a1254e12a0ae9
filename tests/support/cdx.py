"""CDX inputs of scan-cdx tests: the bundled sample index, a crawl's site lines, a columnar index, a long-line gzip."""
from __future__ import annotations

import json
import random
import zlib
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from parascout.udfs.common.urls import surt
from parascout.udfs.index.cdx import format_cdx_line


def long_line_gzip(line_bytes: int) -> bytes:
    """A small gzip whose middle line expands to line_bytes (a CDX 'bomb'), between two good lines."""
    good = b'is,example)/a 20240805101010 {"url": "https://example.is/a"}\n'
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [compressor.compress(good), compressor.compress(b"is,example)/long 20240805101010 ")]
    block = b"x" * (1 << 20)
    for _ in range(line_bytes >> 20):
        parts.append(compressor.compress(block))
    parts += [compressor.compress(b"\n" + good), compressor.flush()]
    return b"".join(parts)


DATA = Path(__file__).parent.parent / "data"
CDX = DATA / "cdx"
CRAWL = "CC-MAIN-2024-33"


def urls_of(spark, root) -> pd.DataFrame:
    return spark.read.parquet(str(root / "urls")).toPandas().set_index("url")


def site_lines(sites: int = 40, pages: int = 30) -> list[str]:
    """Sorted CDX lines of `sites` hosts (www.siteNN.is) with `pages` English or Icelandic pages each."""
    rng = random.Random(3)
    lines = []
    for index in range(sites):
        for page in range(pages):
            url = f"https://www.site{index:02d}.is/{rng.choice(['en', 'is'])}/page-{page}"
            lines.append(format_cdx_line(surt(url), f"202408051010{page % 60:02d}", {
                "url": url, "mime": "text/html", "status": "200", "length": "900", "offset": str(page * 900),
                "filename": f"crawl-data/{CRAWL}/segments/1/warc/a.warc.gz",
                "languages": "eng" if "/en/" in url else "isl"}))
    return sorted(lines)


def write_columnar_index(cdx_path: Path, table_root: Path) -> dict:
    """The CDX lines of a file as a cc-index-table: crawl=/subset= partitions (3xx/4xx in crawldiagnostics)."""
    rows = []
    for line in cdx_path.read_text().splitlines():
        key, timestamp, payload = line.split(" ", 2)
        fields = json.loads(payload)
        crawl = fields["filename"].split("/")[1]
        status = int(fields["status"])
        rows.append({
            "url_surtkey": key, "url": fields["url"], "url_host_name": urlsplit(fields["url"]).hostname,
            "url_host_registered_domain": "example.is",
            "fetch_time": datetime.strptime(timestamp, "%Y%m%d%H%M%S").replace(tzinfo=UTC),
            "fetch_status": status, "content_digest": fields["digest"], "content_mime_type": fields["mime"],
            "content_mime_detected": fields.get("mime-detected"), "content_charset": fields.get("charset"),
            "content_languages": fields.get("languages"), "warc_filename": fields["filename"],
            "warc_record_offset": int(fields["offset"]), "warc_record_length": int(fields["length"]),
            "warc_segment": "1722640389001.33", "crawl": crawl,
            "subset": "warc" if status < 300 else "crawldiagnostics"})
    frame = pd.DataFrame(rows)
    schema = pa.schema([("fetch_status", pa.int16()), ("warc_record_offset", pa.int32()),
                        ("warc_record_length", pa.int32()), ("fetch_time", pa.timestamp("us", tz="UTC"))])
    for (crawl, subset), part in frame.groupby(["crawl", "subset"]):
        folder = table_root / f"crawl={crawl}" / f"subset={subset}"
        folder.mkdir(parents=True)
        table = pa.Table.from_pandas(part.drop(columns=["crawl", "subset"]), preserve_index=False)
        for field in schema:
            table = table.set_column(table.schema.get_field_index(field.name), field.name,
                                     table.column(field.name).cast(field.type))
        pq.write_table(table, folder / "part-00000.parquet")
    return frame.groupby(["crawl", "subset"]).size().to_dict()
