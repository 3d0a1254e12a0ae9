"""Captures to WARC/WAT records and CDX lines (or, with --cdx-only, CDX lines alone).

One `SegmentWriter` holds the files of one group of hosts: `warc/`, `crawldiagnostics/`
(redirects, 404s) and `robotstxt/` WARC files as CommonCrawl splits them, and the WAT
of the `warc/` file. The CDX `languages` field comes from CLD2 run on the stored
payload, as CommonCrawl's content_languages does, never from the generator's intent.
"""
from __future__ import annotations

import json
import os
import random
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import pycld2

from parascout.udfs.common.langs import cld2_to_iso639_3, load_languages
from parascout.udfs.common.urls import surt
from parascout.udfs.index.cdx import format_cdx_line
from parascout.udfs.sample_archive.render import (
    binary_payload,
    first_sentence,
    lead_text,
    not_found_html,
    page_title,
    redirect_html,
    render_page,
    robots_txt,
    text_plan,
    translate_plan,
)
from parascout.udfs.sample_archive.sites import Capture, Site
from parascout.udfs.sample_archive.texts import phrases
from parascout.udfs.sample_archive.vocabulary import vocabulary
from parascout.udfs.sample_archive.warc import (
    RecordIds,
    WarcFile,
    capture_headers,
    http_date,
    request_block,
    sha1_base32,
    warcinfo_block,
    warcinfo_headers,
)
from parascout.udfs.sample_archive.wat import WatFile, html_metadata

SUBSETS = ("warc", "crawldiagnostics", "robotstxt")
REASONS = {200: "OK", 301: "Moved Permanently", 404: "Not Found"}


def cld2_languages(payload: bytes | str, plain_text: bool = False) -> tuple[str, str | None]:
    """CommonCrawl's `languages-cld2` JSON and the CDX `languages` value (up to 3 ISO 639-3 codes)."""
    try:
        reliable, text_bytes, details = pycld2.detect(payload, isPlainText=plain_text)
    except pycld2.error:
        return json.dumps({"reliable": False, "text-bytes": 0}, separators=(",", ":")), None
    entries, codes = [], []
    for name, code, percent, score in details:
        iso = cld2_to_iso639_3(code)
        if code == "un" or percent <= 0 or iso is None:
            continue
        entries.append({"code": code, "code-iso-639-3": iso, "text-covered": percent / 100, "score": float(score),
                        "name": name})
        if iso not in codes:
            codes.append(iso)
    result = {"reliable": bool(reliable), "text-bytes": int(text_bytes)}
    if entries:
        result["languages"] = entries
    return json.dumps(result, ensure_ascii=False, separators=(",", ":")), ",".join(codes) or None


def segment_name(crawl_start: datetime, index: int) -> str:
    """A CommonCrawl-style segment id ('<epoch millis>.<n>')."""
    return f"{int(crawl_start.timestamp() * 1000)}.{index % 100}"


def file_stem(start: datetime, end: datetime, index: int) -> str:
    return f"CC-MAIN-{start:%Y%m%d%H%M%S}-{end:%Y%m%d%H%M%S}-{index:05d}"


class SegmentWriter:
    """Writes the captures of one group of hosts; `write` returns the capture's CDX line."""

    def __init__(self, root: str, crawl: str, seed: int, index: int, start: datetime, end: datetime,
                 cdx_only: bool = False):
        self.root, self.crawl, self.seed, self.cdx_only = root, crawl, seed, cdx_only
        stem = file_stem(start, end, index)
        self.filenames = {subset: f"{subset}/{stem}.warc.gz" for subset in SUBSETS}
        self.ids = RecordIds(f"records:{seed}:{index}")
        self.rng = random.Random(f"fetch:{seed}:{index}")
        self.files: dict[str, WarcFile] = {}
        self.warcinfo_ids: dict[str, str] = {}
        self.offsets = {subset: 0 for subset in SUBSETS}
        self.start = start
        self.last_languages: str | None = None  # CDX languages of the last capture written
        self.wat = None
        if not cdx_only:
            self.wat = WatFile(os.path.join(root, "wat", f"{stem}.warc.wat.gz"), f"{stem}.warc.gz",
                               RecordIds(f"wat:{seed}:{index}"), end + timedelta(days=5))

    def _file(self, subset: str) -> WarcFile:
        if subset not in self.files:
            handle = WarcFile(os.path.join(self.root, self.filenames[subset]))
            block = warcinfo_block(self.crawl, self.seed)
            headers = warcinfo_headers(self.ids, self.start, os.path.basename(handle.name), block)
            written = handle.write(headers, block)
            self.warcinfo_ids[subset] = written.record_id
            self.files[subset] = handle
            if subset == "warc" and self.wat:
                self.wat.add(written, handle.name)
        return self.files[subset]

    def write(self, site: Site, capture: Capture) -> str:
        """Store one capture (request, response, metadata records) and return its CDX line."""
        if self.cdx_only:
            return self._estimated_line(site, capture)
        payload, content_type, extra_headers, rendered = self._payload(site, capture)
        http_head = self._http_head(site, capture, content_type, extra_headers, len(payload))
        block = http_head + payload
        parts = urlsplit(capture.url)
        handle = self._file(capture.subset)
        info = self.warcinfo_ids[capture.subset]
        mime = content_type.split(";")[0]
        request = request_block(parts.path + (f"?{parts.query}" if parts.query else ""), parts.netloc)
        written_request = handle.write(capture_headers("request", self.ids, capture.fetch_time, info, capture.url,
                                                       site.ip, request, b""), request)
        response_headers = capture_headers("response", self.ids, capture.fetch_time, info, capture.url, site.ip,
                                           block, payload, written_request.record_id, mime)
        written = handle.write(response_headers, block)
        metadata_records = [self._metadata(handle, capture, info, written.record_id, payload, rendered)]
        languages = metadata_records[0][1] if metadata_records[0] else None
        self.last_languages = languages
        if self.wat and capture.subset == "warc":
            html_meta = html_metadata(rendered.title, rendered.metas, rendered.head_links, rendered.links) \
                if rendered else None
            self.wat.add(written_request, capture.url)
            self.wat.add(written, capture.url, html_meta)
            if metadata_records[0]:
                self.wat.add(metadata_records[0][0], capture.url)
        fields = {"url": capture.url, "mime": mime, "mime-detected": mime, "status": str(capture.status),
                  "digest": sha1_base32(payload), "length": str(written.length), "offset": str(written.offset),
                  "filename": self.filenames[capture.subset], "charset": "UTF-8" if rendered else None,
                  "languages": languages, "redirect": capture.location}
        return format_cdx_line(surt(capture.url), capture.fetch_time.strftime("%Y%m%d%H%M%S"), fields)

    def _payload(self, site: Site, capture: Capture):
        if capture.kind in ("page", "duplicate"):
            rendered = render_page(site, site.pages[capture.page], capture.lang, capture.variant, capture.url)
            extra = []
            if site.template == 2:
                extra.append(("Content-Language", load_languages()[capture.lang].iso639_1 or capture.lang))
            return rendered.html.encode("utf-8"), "text/html; charset=UTF-8", extra, rendered
        if capture.kind == "robots":
            return robots_txt(urlsplit(capture.url).hostname), "text/plain", [], None
        if capture.kind == "redirect":
            return redirect_html(capture.location), "text/html; charset=iso-8859-1", [("Location", capture.location)], \
                None
        if capture.kind == "notfound":
            return not_found_html(), "text/html; charset=UTF-8", [], None
        kind = "pdf" if capture.mime == "application/pdf" else "png" if capture.mime == "image/png" else "jpeg"
        return binary_payload(kind, capture.url), capture.mime, [("Accept-Ranges", "bytes")], None

    def _http_head(self, site: Site, capture: Capture, content_type: str, extra: list, length: int) -> bytes:
        lines = [f"HTTP/1.1 {capture.status} {REASONS[capture.status]}", f"Date: {http_date(capture.fetch_time)}",
                 f"Server: {site.server}", f"Content-Type: {content_type}"]
        lines += [f"{key}: {value}" for key, value in extra]
        if capture.mime.startswith("text/"):
            lines += ["X-Crawler-Content-Encoding: gzip", "Vary: Accept-Encoding"]
        lines.append(f"Content-Length: {length}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")

    def _metadata(self, handle: WarcFile, capture: Capture, info: str, response_id: str, payload: bytes, rendered):
        """The metadata record (fetchTimeMs, charset, CLD2 result) and the CDX languages it implies."""
        if capture.subset == "robotstxt":
            return None
        fields = [("fetchTimeMs", str(self.rng.randint(40, 2500)))]
        languages = None
        if rendered:
            cld2_json, languages = cld2_languages(payload)
            fields += [("charset-detected", "UTF-8"), ("languages-cld2", cld2_json)]
        block = "".join(f"{key}: {value}\r\n" for key, value in fields).encode("utf-8")
        headers = capture_headers("metadata", self.ids, capture.fetch_time, info, capture.url, None, block, None,
                                  response_id)
        return handle.write(headers, block), languages

    def _estimated_line(self, site: Site, capture: Capture) -> str:
        """--cdx-only: a CDX line without payloads; CLD2 runs on the page's title and lead text."""
        languages, charset = None, None
        if capture.kind in ("page", "duplicate"):
            page = site.pages[capture.page]
            vocab = vocabulary(capture.lang)
            if page.text is not None:  # the page's boilerplate speaks its language too (the cookie notice)
                lead = f"{lead_text(site, page, capture.lang)} {phrases(capture.lang)['cookies']}"
            else:
                lead = first_sentence(page, capture.lang) if page.kind == "article" else " ".join(
                    vocab.sentence(sentence) for sentence in translate_plan(text_plan(page.seed, (1, 1)), page.seed,
                                                                             capture.lang)[0])
            text = f"{page_title(site, page, capture.lang)}. {lead}"
            languages, charset = cld2_languages(text.encode("utf-8"), plain_text=True)[1], "UTF-8"
            self.last_languages = languages
            digest_source, length = f"{site.spec.seed}|{capture.page}|{capture.lang}", 1500 + page.seed % 2500
        else:
            digest_source, length = capture.url, 400 + len(capture.url) * 3
        offset = self.offsets[capture.subset]
        self.offsets[capture.subset] += length
        mime = capture.mime
        fields = {"url": capture.url, "mime": mime, "mime-detected": mime, "status": str(capture.status),
                  "digest": sha1_base32(digest_source.encode("utf-8")), "length": str(length), "offset": str(offset),
                  "filename": self.filenames[capture.subset], "charset": charset, "languages": languages,
                  "redirect": capture.location}
        return format_cdx_line(surt(capture.url), capture.fetch_time.strftime("%Y%m%d%H%M%S"), fields)

    def close(self) -> list[str]:
        """Close the files; returns the WARC filenames (relative to the archive root) written."""
        for handle in self.files.values():
            handle.close()
        if self.wat:
            self.wat.close()
        return [self.filenames[subset] for subset in SUBSETS if subset in self.files]
