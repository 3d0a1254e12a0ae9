"""One archived WARC record -> the document features parascout keeps (the `docs` table).

`parse_record(data, url)` takes the bytes of one record exactly as a byte-range GET
returns them (a gzip member, or an uncompressed record), decodes it with
udfs.warc_record (bounded, every record type a status) within a time limit, and
returns a dict of the `docs` columns: status ('ok' or the reason it is not usable), HTTP status and type,
the charset used and where it came from, CLD2's language with its reliability and
share, text length, paragraph count, outlinks resolved against the base URL and
normalised (with a same-host flag), image file names, and the STRAND linearisation
of the markup ("[START:p]", "[END:p]", "[Chunk:123]"). It never raises on bad bytes.
"""
from __future__ import annotations

import codecs
import functools
import re
from html.parser import HTMLParser
from posixpath import basename
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

import pycld2

from parascout.udfs.langs import cld2_to_iso639_3
from parascout.udfs.urls import url_host
from parascout.udfs.warc_record import (
    MAX_IMAGES,
    MAX_OUTLINK_CHARS,
    RECORD_SECONDS,
    DecodedRecord,
    LinkBudget,
    RecordTimeout,
    TimeLimit,
    bound_links,
    decode_record,
)

#: Spark DDL of the `docs` table (the fetch-docs job's output schema)
DOCS_SCHEMA = (
    "url string, host string, status string, error string, source string, "
    "cld2_lang string, cld2_reliable boolean, cld2_percent int, html_lang string, "
    "text_chars int, paragraphs int, outlinks array<string>, outlinks_same_host array<boolean>, "
    "images array<string>, structure array<string>, title string, "
    "http_status int, content_type string, charset string, charset_source string, warc_truncated string, "
    "warc_filename string, warc_offset bigint, warc_length bigint, fetch_attempts int, range_records int, "
    "refers_to_url string, refers_to_date string, outlinks_cut int, images_cut int"
)
DOC_COLUMNS = [part.strip().split(" ", 1)[0] for part in DOCS_SCHEMA.split(", ")]

HTML_TYPES = ("text/html", "application/xhtml+xml")
MAX_STRUCTURE_TOKENS = 10_000
MAX_TITLE_CHARS = 500
MAX_IMAGE_NAME_CHARS = 256

SKIPPED_CONTENT_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "title"})
VOID_TAGS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                       "param", "source", "track", "wbr"})
BLOCK_TAGS = frozenset({"p", "div", "li", "ul", "ol", "dl", "dd", "dt", "h1", "h2", "h3", "h4", "h5", "h6",
                        "td", "th", "tr", "table", "section", "article", "header", "footer", "nav", "aside",
                        "blockquote", "pre", "br", "form", "main", "figure", "figcaption", "body", "caption"})
LINK_ATTRIBUTES = {"a": "href", "area": "href", "frame": "src", "iframe": "src"}
SKIPPED_LINK_SCHEMES = ("javascript:", "mailto:", "tel:", "data:", "about:", "#")
WHATWG_CHARSETS = {"iso-8859-1": "cp1252", "latin-1": "cp1252", "latin1": "cp1252", "ascii": "cp1252",
                   "us-ascii": "cp1252", "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030",
                   "iso-8859-9": "cp1254", "tis-620": "cp874", "ks_c_5601-1987": "cp949", "euc-kr": "cp949",
                   "shift_jis": "cp932", "x-sjis": "cp932", "big5": "big5hkscs"}

META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_:.\-]+)""", re.IGNORECASE)
HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([a-zA-Z0-9_:.\-]+)""", re.IGNORECASE)
CLD2_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
WHITESPACE = re.compile(r"\s+")


def empty_doc(status: str, error: str | None = None) -> dict:
    """A `docs` row (without url/location columns) for a record that could not be used."""
    return {"status": status, "error": error, "source": "warc", "cld2_lang": None, "cld2_reliable": None,
            "cld2_percent": None, "html_lang": None, "text_chars": None, "paragraphs": None, "outlinks": None,
            "outlinks_same_host": None, "images": None, "structure": None, "title": None, "http_status": None,
            "content_type": None, "charset": None, "charset_source": None, "warc_truncated": None,
            "refers_to_url": None, "refers_to_date": None, "outlinks_cut": None, "images_cut": None}


def parse_record(data: bytes, url: str | None = None, record_seconds: float | None = RECORD_SECONDS) -> dict:
    """Features of one WARC response record; status 'ok' or the reason it cannot be used (`timeout` included)."""
    try:
        with TimeLimit(record_seconds):
            return _record_features(data, url)
    except RecordTimeout:
        return empty_doc("timeout", f"parsing the record took longer than {record_seconds} s")


def _wants_body(record: DecodedRecord) -> bool:
    """Decode the HTTP body only of 2xx pages that are (or may be) HTML."""
    return 200 <= (record.http_status or 0) < 300 and record.content_type in (*HTML_TYPES, None)


def _record_features(data: bytes, url: str | None) -> dict:
    record = decode_record(data, wants_body=_wants_body)
    doc = {**empty_doc(record.status, record.error), "warc_truncated": record.warc_truncated,
           "http_status": record.http_status, "content_type": record.content_type,
           "refers_to_url": record.refers_to_uri, "refers_to_date": record.refers_to_date}
    if record.status != "ok":
        return doc
    url = url or record.target_uri
    status = record.http_status
    if 300 <= status < 400:
        location = record.http_headers.get("location")
        target = normalise_link(url, location) if location else None
        return {**doc, "status": "http_redirect", "outlinks": [target] if target else [],
                "outlinks_same_host": [url_host(target) == url_host(url)] if target else []}
    if status >= 400 or status < 200:
        return {**doc, "status": "http_error"}
    payload = record.body
    if payload is None or (doc["content_type"] is None and not _looks_like_html(payload)):
        return {**doc, "status": "not_html"}
    text, doc["charset"], doc["charset_source"] = decode_html(payload, record.http_headers.get("content-type", ""))
    try:
        return {**doc, **html_features(text, url)}
    except Exception as error:  # noqa: BLE001 - a bad page becomes a status, never a crash
        return {**doc, "status": "parse_error", "error": f"{type(error).__name__}: {error}"[:200]}


def _looks_like_html(payload: bytes) -> bool:
    head = payload[:1024].lower()
    return b"<html" in head or b"<!doctype html" in head


def _codec(name: str | None) -> str | None:
    """A Python codec for a declared charset (browser aliases applied), None when unknown."""
    if not name:
        return None
    name = WHATWG_CHARSETS.get(name.strip().lower(), name.strip().lower())
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def decode_html(payload: bytes, content_type_header: str = "") -> tuple[str, str, str]:
    """Decode an HTML payload with the HTTP-declared, then meta-declared, then detected charset."""
    declared = HEADER_CHARSET.search(content_type_header or "")
    meta = META_CHARSET.search(payload[:4096])
    candidates = (("header", declared.group(1) if declared else None),
                  ("meta", meta.group(1).decode("ascii", "ignore") if meta else None))
    for source, name in candidates:
        codec = _codec(name)
        if codec:
            try:
                return payload.decode(codec), codec, source
            except UnicodeDecodeError:
                continue  # declared wrongly: try the next source, detection last
    return _detect_and_decode(payload)


def _detect_and_decode(payload: bytes) -> tuple[str, str, str]:
    try:
        return payload.decode("utf-8"), "utf-8", "detected"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(payload[:65536]).best()
    codec = _codec(best.encoding) if best else None
    if codec:
        return payload.decode(codec, errors="replace"), codec, "detected"
    return payload.decode("cp1252", errors="replace"), "cp1252", "fallback"


def normalise_link(base: str | None, href: str | None) -> str | None:
    """Resolve href against base; http(s) only, lower-case scheme/host, no default port or fragment."""
    resolved = _resolve_link(base or "", href.strip()) if href else None
    return resolved[0] if resolved else None


@functools.lru_cache(maxsize=65536)
def _resolve_link(base: str, href: str) -> tuple[str, str] | None:
    """(normalised URL, host) of href on a page at base; cached, since navigation links repeat across a site."""
    if not href or href.lower().startswith(SKIPPED_LINK_SCHEMES):
        return None
    try:
        parts = urlsplit(urljoin(base, href))
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
    except ValueError:
        return None
    if scheme not in ("http", "https") or not host:
        return None
    host = host.rstrip(".")
    netloc = host
    if port and not (scheme == "http" and port == 80 or scheme == "https" and port == 443):
        netloc += f":{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, "")), host


def image_file_name(base: str | None, src: str | None) -> str | None:
    """The lower-cased file name of an image URL ('logo.png'), None for data: URIs and empty paths."""
    if not src or src.strip().lower().startswith("data:"):
        return None
    try:
        path = urlsplit(urljoin(base or "", src.strip())).path
    except ValueError:
        return None
    name = unquote(basename(path)).strip().lower()
    return name or None


def cld2_language(text: str) -> tuple[str | None, bool, int]:
    """CLD2 on plain text: (ISO 639-3 or None, reliable, percent of the text in that language)."""
    clean = CLD2_UNSAFE.sub(" ", text)
    if not clean.strip():
        return None, False, 0
    try:
        reliable, _, details = pycld2.detect(clean.encode("utf-8", "ignore"), isPlainText=True)
    except pycld2.error:
        return None, False, 0
    _, code, percent, _ = details[0]
    return cld2_to_iso639_3(code), bool(reliable), int(percent)


class StrandParser(HTMLParser):
    """One pass over the HTML: STRAND tokens, visible text, block paragraphs, links, images, title."""

    def __init__(self, base_url: str | None):
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.structure: list[str] = []
        self.structure_truncated = False
        self.chunks: list[str] = []
        self.paragraphs = 0
        self.links: list[tuple[str, str]] = []  # (url, host)
        self.link_budget = LinkBudget()
        self.images: list[str] = []
        self.title_parts: list[str] = []
        self.html_lang: str | None = None
        self._skip_depth = 0
        self._in_title = False
        self._block_has_text = False

    def _token(self, token: str) -> None:
        if len(self.structure) < MAX_STRUCTURE_TOKENS:
            self.structure.append(token)
        else:
            self.structure_truncated = True

    def _end_block(self) -> None:
        if self._block_has_text:
            self.paragraphs += 1
        self._block_has_text = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._token(f"[START:{tag}]")
        if tag in BLOCK_TAGS:
            self._end_block()
        attributes = dict(attrs)
        if tag == "base" and attributes.get("href") and self.base_url is not None \
                and len(attributes["href"]) <= MAX_OUTLINK_CHARS:
            self.base_url = urljoin(self.base_url, attributes["href"].strip())
        elif tag == "html" and attributes.get("lang"):
            self.html_lang = attributes["lang"].strip()[:20]
        elif tag in LINK_ATTRIBUTES or (tag == "link" and "alternate" in (attributes.get("rel") or "").lower()):
            href = attributes.get(LINK_ATTRIBUTES.get(tag, "href"))
            resolved = _resolve_link(self.base_url or "", href.strip()) if href else None
            if resolved and self.link_budget.admit(resolved[0]):
                self.links.append(resolved)
        elif tag == "img":
            name = image_file_name(self.base_url, attributes.get("src") or attributes.get("data-src"))
            if name and len(self.images) < MAX_IMAGES:
                self.images.append(name)
        if tag == "title":
            self._in_title = True
        if tag in SKIPPED_CONTENT_TAGS:
            self._skip_depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag in SKIPPED_CONTENT_TAGS:
            self.handle_endtag(tag, emit=False)

    def handle_endtag(self, tag: str, emit: bool = True) -> None:
        if tag in VOID_TAGS:
            return
        if emit:
            self._token(f"[END:{tag}]")
        if tag in BLOCK_TAGS:
            self._end_block()
        if tag in SKIPPED_CONTENT_TAGS and self._skip_depth:
            self._skip_depth -= 1
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
        if self._skip_depth:
            return
        text = WHITESPACE.sub(" ", data).strip()
        if text:
            self._token(f"[Chunk:{len(text)}]")
            self.chunks.append(text)
            self._block_has_text = True


def html_features(html: str, url: str | None) -> dict:
    """Text, language, links, images, paragraphs and STRAND tokens of a decoded HTML page."""
    parser = StrandParser(url)
    parser.feed(html)
    parser.close()
    parser._end_block()
    text = " ".join(parser.chunks)
    lang, reliable, percent = cld2_language(text)
    host = url_host(url) if url else None
    links = dict(parser.links)  # first occurrence order, one host per URL
    outlinks, outlinks_cut = list(links), parser.link_budget.cut
    images, images_cut = bound_links(dict.fromkeys(parser.images), LinkBudget(MAX_IMAGES, MAX_IMAGE_NAME_CHARS))
    title = WHITESPACE.sub(" ", "".join(parser.title_parts)).strip()[:MAX_TITLE_CHARS] or None
    return {
        "status": "ok", "cld2_lang": lang, "cld2_reliable": reliable, "cld2_percent": percent,
        "html_lang": parser.html_lang, "text_chars": len(text), "paragraphs": parser.paragraphs,
        "outlinks": outlinks, "outlinks_same_host": [links[link] == host for link in outlinks],
        "images": images, "structure": parser.structure, "title": title,
        "outlinks_cut": outlinks_cut, "images_cut": images_cut,
        "error": "structure_truncated" if parser.structure_truncated else None,
    }
