"""WARC files as CommonCrawl writes them: one gzip member per record, CRLF headers in CC's order.

`WarcFile.write` appends one record and returns where it went (offset, length of the
gzip member) plus what a WAT records about it (header length, gzip metadata).
"""
from __future__ import annotations

import base64
import hashlib
import os
import random
import struct
import uuid
import zlib
from dataclasses import dataclass
from datetime import datetime

#: gzip header as CommonCrawl's members carry it: no name, mtime 0, OS = Unix
GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
USER_AGENT = "CCBot/2.0 (https://commoncrawl.org/faq/)"
REQUEST_HEADERS = ("Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
                   "Accept-Language: en-US,en;q=0.5\r\nAccept-Encoding: br,gzip\r\n")


@dataclass
class WrittenRecord:
    """Where a record landed and what a WAT says about it."""

    offset: int
    length: int
    record_id: str
    headers: list
    header_length: int
    block: bytes
    block_digest: str
    inflated_crc: int
    inflated_length: int


def sha1_base32(data: bytes) -> str:
    """SHA-1 in base32, as WARC digests and the CDX `digest` field write it."""
    return base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def gzip_member(data: bytes) -> tuple[bytes, int]:
    """One gzip member (level 6) and the CRC-32 of its content."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS, 4)  # memLevel 4: faster on small records
    deflated = compressor.compress(data) + compressor.flush()
    crc = zlib.crc32(data)
    return GZIP_HEADER + deflated + struct.pack("<II", crc, len(data) & 0xFFFFFFFF), crc


def warc_date(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def http_date(moment: datetime) -> str:
    return moment.strftime("%a, %d %b %Y %H:%M:%S GMT")


class RecordIds:
    """Deterministic `<urn:uuid:...>` record ids."""

    def __init__(self, seed: str):
        self.rng = random.Random(seed)

    def next(self) -> str:
        return f"<urn:uuid:{uuid.UUID(int=self.rng.getrandbits(128), version=4)}>"


class WarcFile:
    """An open .warc.gz (or .warc.wat.gz) file written one gzip member per record."""

    def __init__(self, path: str):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.path = path
        self.name = os.path.basename(path)
        self.handle = open(path, "wb")  # noqa: SIM115 - held across records, closed by close()
        self.offset = 0

    def write(self, headers: list[tuple[str, str]], block: bytes) -> WrittenRecord:
        """Append a record; `headers` hold a Content-Length placeholder that is filled in here."""
        lines = ["WARC/1.0"] + [f"{key}: {len(block) if key == 'Content-Length' else value}" for key, value in headers]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")
        record = head + block + b"\r\n\r\n"
        member, crc = gzip_member(record)
        self.handle.write(member)
        written = WrittenRecord(self.offset, len(member), dict(headers).get("WARC-Record-ID", ""),
                                [(k, str(len(block)) if k == "Content-Length" else v) for k, v in headers],
                                len(head), block, dict(headers).get("WARC-Block-Digest", ""), crc, len(record))
        self.offset += len(member)
        return written

    def close(self) -> None:
        self.handle.close()


def warcinfo_headers(ids: RecordIds, moment: datetime, filename: str, block: bytes) -> list:
    return [("WARC-Type", "warcinfo"), ("WARC-Date", warc_date(moment)), ("WARC-Record-ID", ids.next()),
            ("Content-Length", ""), ("Content-Type", "application/warc-fields"), ("WARC-Filename", filename),
            ("WARC-Block-Digest", "sha1:" + sha1_base32(block))]


def warcinfo_block(crawl: str, seed: int) -> bytes:
    fields = [
        ("isPartOf", crawl), ("publisher", "parascout (synthetic sample archive)"),
        ("description", f"Synthetic multilingual sample made by parascout make-sample-archive, seed {seed}"),
        ("operator", "parascout make-sample-archive"), ("hostname", "ip-10-0-0-1"),
        ("software", "parascout make-sample-archive (imitating Apache Nutch 1.19 as modified by Common Crawl)"),
        ("robots", "checked via crawler-commons 1.5-SNAPSHOT (https://github.com/crawler-commons/crawler-commons)"),
        ("format", "WARC File Format 1.1"),
        ("conformsTo", "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"),
    ]
    return "".join(f"{key}: {value}\r\n" for key, value in fields).encode("utf-8")


def request_block(url_path: str, host: str) -> bytes:
    return (f"GET {url_path} HTTP/1.1\r\nUser-Agent: {USER_AGENT}\r\n{REQUEST_HEADERS}"
            f"Host: {host}\r\nConnection: Keep-Alive\r\n\r\n").encode()


def capture_headers(kind: str, ids: RecordIds, moment: datetime, warcinfo_id: str, url: str, ip: str | None,
                    block: bytes, payload: bytes | None, concurrent_to: str | None = None,
                    identified_type: str | None = None) -> list:
    """Headers of a request, response or metadata record in CommonCrawl's order."""
    content_type = {"request": "application/http; msgtype=request", "response": "application/http; msgtype=response",
                    "metadata": "application/warc-fields"}[kind]
    headers = [("WARC-Type", kind), ("WARC-Date", warc_date(moment)), ("WARC-Record-ID", ids.next()),
               ("Content-Length", ""), ("Content-Type", content_type), ("WARC-Warcinfo-ID", warcinfo_id)]
    if concurrent_to:
        headers.append(("WARC-Concurrent-To", concurrent_to))
    if ip and kind != "metadata":
        headers.append(("WARC-IP-Address", ip))
    headers.append(("WARC-Target-URI", url))
    block_digest = "sha1:" + sha1_base32(block)
    headers.append(("WARC-Payload-Digest", "sha1:" + sha1_base32(payload) if payload is not None else block_digest))
    headers.append(("WARC-Block-Digest", block_digest))
    if identified_type:
        headers.append(("WARC-Identified-Payload-Type", identified_type))
    return headers
