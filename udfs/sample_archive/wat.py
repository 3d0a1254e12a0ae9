"""WAT files: one JSON metadata record per WARC record, in CommonCrawl's (ia-web-commons) layout.

Container (where the record's gzip member lies) and Envelope → Payload-Metadata →
HTTP-Response-Metadata → HTML-Metadata → {Head: {Title, Metas, Link}, Links: [{path:
'A@/href', url, text}, {path: 'IMG@/src', url, alt}]}.
"""
from __future__ import annotations

import json
from datetime import datetime

from parascout.udfs.sample_archive.warc import RecordIds, WarcFile, WrittenRecord, sha1_base32, warc_date

EMPTY_SHA1 = "sha1:" + sha1_base32(b"")
WAT_INFO = ("Software-Info: parascout make-sample-archive (imitating ia-web-commons 1.1.10)\r\n"
            "Extracted-Date: {date}\r\nip: 10.0.0.2\r\nhostname: ip-10-0-0-2.ec2.internal\r\n"
            "format: WARC File Format 1.0\r\n"
            "conformsTo: http://bibnum.bnf.fr/WARC/WARC_ISO_28500_version1_latestdraft.pdf\r\n")


def _split_http(block: bytes) -> tuple[str, list[tuple[str, str]], int, bytes]:
    end = block.find(b"\r\n\r\n")
    head = block[:end].decode("utf-8", "replace").split("\r\n")
    headers = [tuple(part.strip() for part in line.split(":", 1)) for line in head[1:] if ":" in line]
    return head[0], headers, end + 2, block[end + 4:]


class WatFile:
    """The WAT of one WARC file, written alongside it."""

    def __init__(self, path: str, warc_name: str, ids: RecordIds, extracted: datetime):
        self.file = WarcFile(path)
        self.warc_name = warc_name
        self.ids = ids
        self.date = warc_date(extracted)
        info = WAT_INFO.format(date=extracted.strftime("%a, %d %b %Y %H:%M:%S GMT")).encode("utf-8")
        self.file.write([("WARC-Type", "warcinfo"), ("WARC-Date", self.date), ("WARC-Filename", self.file.name),
                         ("WARC-Record-ID", ids.next()), ("Content-Type", "application/warc-fields"),
                         ("Content-Length", ""), ("WARC-Block-Digest", "sha1:" + sha1_base32(info))], info)

    def add(self, record: WrittenRecord, target_uri: str, html_metadata: dict | None = None) -> None:
        """Write the WAT record of one WARC record (`html_metadata` for HTML responses)."""
        fields = dict(record.headers)
        payload = self._payload_metadata(fields.get("WARC-Type"), fields.get("Content-Type", ""), record,
                                         html_metadata)
        envelope = {"Payload-Metadata": payload, "Format": "WARC/1.0",
                    "WARC-Header-Length": str(record.header_length), "WARC-Header-Metadata": fields}
        document = {"Container": self._container(record), "Envelope": envelope}
        block = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        digest = "sha1:" + sha1_base32(block)
        self.file.write([("WARC-Type", "metadata"), ("WARC-Target-URI", target_uri), ("WARC-Date", self.date),
                         ("WARC-Record-ID", self.ids.next()), ("WARC-Refers-To", record.record_id),
                         ("Content-Type", "application/json"), ("Content-Length", ""),
                         ("WARC-Payload-Digest", digest), ("WARC-Block-Digest", digest)], block)

    def _container(self, record: WrittenRecord) -> dict:
        return {"Filename": self.warc_name, "Compressed": True, "Offset": str(record.offset),
                "Gzip-Metadata": {"Deflate-Length": str(record.length - 18), "Header-Length": "10",
                                  "Footer-Length": "8", "Inflated-CRC": str(record.inflated_crc),
                                  "Inflated-Length": str(record.inflated_length)}}

    @staticmethod
    def _payload_metadata(record_type: str, content_type: str, record: WrittenRecord,
                          html_metadata: dict | None) -> dict:
        block = record.block
        payload: dict = {"Actual-Content-Type": content_type}
        if record_type == "warcinfo":
            payload["WARC-Info-Metadata"] = _fields(block)
        elif record_type == "metadata":
            payload["Actual-Content-Type"] = "application/metadata-fields"
            payload["WARC-Metadata-Metadata"] = {"Metadata-Records": [{"Name": k, "Value": v}
                                                                      for k, v in _fields(block).items()]}
        elif record_type == "request":
            first, headers, headers_length, _ = _split_http(block)
            method, path, version = first.split(" ", 2)
            payload["HTTP-Request-Metadata"] = {
                "Request-Message": {"Method": method, "Path": path, "Version": version},
                "Headers-Length": str(headers_length), "Headers": dict(headers), "Entity-Length": "0",
                "Entity-Digest": EMPTY_SHA1, "Entity-Trailing-Slop-Length": "0"}
        else:
            first, headers, headers_length, body = _split_http(block)
            version, status, reason = (first.split(" ", 2) + [""])[:3]
            response = {"Response-Message": {"Status": status, "Version": version, "Reason": reason},
                        "Headers-Length": str(headers_length), "Headers": dict(headers),
                        "Entity-Length": str(len(body)), "Entity-Digest": "sha1:" + sha1_base32(body),
                        "Entity-Trailing-Slop-Length": "0"}
            if html_metadata is not None:
                response["HTML-Metadata"] = html_metadata
            payload["HTTP-Response-Metadata"] = response
        payload.update({"Actual-Content-Length": str(len(block)), "Trailing-Slop-Length": "4",
                        "Block-Digest": record.block_digest})
        return payload

    def close(self) -> None:
        self.file.close()


def html_metadata(title: str, metas: list, head_links: list, links: list) -> dict:
    """The HTML-Metadata object of a WAT response record."""
    return {"Head": {"Title": title, "Metas": metas, "Link": head_links}, "Links": links}


def _fields(block: bytes) -> dict:
    result = {}
    for line in block.decode("utf-8", "replace").split("\r\n"):
        if ": " in line:
            key, value = line.split(": ", 1)
            result[key] = value
    return result
