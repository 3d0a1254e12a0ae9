"""WARCs of an own crawl (wget- and Heritrix-style warcinfo records) for index-warcs tests."""
from __future__ import annotations

import io
from pathlib import Path

from warcio.warcwriter import WARCWriter

from testkit.warc import ENGLISH, html_page, record_bytes, write_warc

#: the warcinfo fields wget 1.21 writes (no crawl name) and those Heritrix 3 writes (isPartOf: the job's name)
WGET_WARCINFO = {"software": "Wget/1.21.3 (linux-gnu)", "format": "WARC File Format 1.0",
                 "conformsTo": "http://bibnum.bnf.fr/WARC/WARC_ISO_28500_version1_latestdraft.pdf",
                 "robots": "classic", "wget-arguments": "\"--recursive\" \"--warc-file=mycrawl\" \"http://a.example/\""}
HERITRIX_WARCINFO = {"software": "Heritrix/3.4.0-20220727 http://crawler.archive.org", "operator": "Web team",
                     "isPartOf": "weekly-news", "description": "news sites, weekly", "robots": "obey",
                     "format": "WARC File Format 1.1"}


def warcinfo_bytes(filename: str, fields: dict[str, str]) -> bytes:
    """One gzip member holding a warcinfo record with `fields`, written by warcio."""
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True)
    writer.write_record(writer.create_warcinfo_record(filename, fields))
    return out.getvalue()


def write_own_warc(path: Path, warcinfo: dict[str, str] | None, pages: int = 2) -> list[str]:
    """A WARC as a crawler of one's own writes it: a warcinfo record (none when `warcinfo` is None), then `pages`
    HTML responses; their URLs."""
    urls = [f"http://{path.name.split('.')[0]}.example/page-{i}.html" for i in range(pages)]
    records = [("", warcinfo_bytes(path.name, warcinfo))] if warcinfo is not None else []
    records += [(url, record_bytes(url, html_page(f"Page {i}", [ENGLISH] * 2))) for i, url in enumerate(urls)]
    write_warc(path, records)
    return urls
