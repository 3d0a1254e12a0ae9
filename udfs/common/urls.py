"""URL normalisation shared by every job: host, registered domain, a page's links and image names, SURT key.

The registered domain uses tldextract's bundled Public Suffix List snapshot; it
never fetches the list.
"""
from __future__ import annotations

import functools
import re
from posixpath import basename
from urllib.parse import quote_from_bytes, unquote, unquote_to_bytes, urljoin, urlsplit, urlunsplit

import tldextract

MAX_URL_CHARS = 8192
#: C0 controls and DEL: never part of a URL as crawled (NUL, CR/LF, ESC...); a URL holding one is bad input
CONTROL_CHARACTERS = "".join(map(chr, range(0x20))) + "\x7f"
#: a character class of CONTROL_CHARACTERS in escapes that Python's re and Java's regex (Spark's rlike) both read
CONTROL_CHARACTER_CLASS = "[" + "".join(f"\\x{ord(c):02x}" for c in CONTROL_CHARACTERS) + "]"
_CONTROL = re.compile(CONTROL_CHARACTER_CLASS)


@functools.lru_cache(maxsize=1)
def _extractor() -> tldextract.TLDExtract:
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True)


#: separator of the public suffix rules in `public_suffix_spec` (RegisteredDomain.java)
SPEC_RULE_SEPARATOR = "\n"


@functools.lru_cache(maxsize=1)
def public_suffix_spec() -> bytes:
    """The bundled PSL's public rules as the Java UDF reads them: UTF-8, one rule a line, each non-ASCII rule
    also in its IDNA A-label form (tldextract decodes a host's xn-- labels; the JVM matches encoded rules)."""
    import idna

    rules = set(_extractor().tlds)
    for rule in list(rules):
        if not rule.isascii():
            try:
                rules.add(".".join(label if label.isascii() else idna.encode(label).decode("ascii")
                                   for label in rule.split(".")))
            except idna.IDNAError:
                pass  # a rule IDNA 2008 cannot encode matches no xn-- label in tldextract either
    return SPEC_RULE_SEPARATOR.join(sorted(rules)).encode("utf-8")


def has_control_characters(text: str) -> bool:
    """Does the text hold a C0 control character or DEL (CONTROL_CHARACTERS)?"""
    return _CONTROL.search(text) is not None


#: scheme://netloc as urlsplit reads it, when the netloc has no userinfo, IPv6 brackets, zone or escape (url_host's
#: direct case; an ASCII netloc there is also one urlsplit's NFKC check never rejects)
PLAIN_NETLOC = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://([^/?#@\[\]%]*)(?=[/?#]|\Z)")


def url_host(url: str) -> str | None:
    """Lower-cased host name without port or userinfo; None when the URL has none. Read directly in the common case
    (an ASCII netloc with nothing but a host and a port, and no tab or line break for urlsplit to remove), else by
    urlsplit: a page's own URL misses urlsplit's cache (~3 us a page)."""
    stripped = url.strip()
    plain = PLAIN_NETLOC.match(stripped)
    if plain is not None and plain[1].isascii() and "\t" not in stripped and "\n" not in stripped \
            and "\r" not in stripped:
        host = plain[1].partition(":")[0].lower()
        return host.rstrip(".") if host else None
    try:
        host = urlsplit(stripped).hostname
    except ValueError:
        return None
    return host.rstrip(".") if host else None


@functools.lru_cache(maxsize=65536)
def registered_domain(host: str) -> str | None:
    """The registered domain of a host (example.co.uk for www.example.co.uk), from the bundled PSL."""
    if not host:
        return None
    extracted = _extractor()(host)
    if not extracted.suffix:
        return extracted.domain or None
    return f"{extracted.domain}.{extracted.suffix}" if extracted.domain else None


# ---- a page's links and image names, resolved against the page's URL (fetch-docs: WARC pages and WAT records) --
#: hrefs that lead to no page
SKIPPED_LINK_SCHEMES = ("javascript:", "mailto:", "tel:", "data:", "about:", "#")


def normalise_link(base: str | None, href: str | None) -> str | None:
    """Resolve href against base; http(s) only, lower-case scheme/host, no default port or fragment."""
    resolved = resolve_link(base or "", href.strip()) if href else None
    return resolved[0] if resolved else None


def resolve_link(base: str, href: str) -> tuple[str, str] | None:
    """(normalised URL, host) of a stripped href on a page at base."""
    return _resolve_link(link_base(base, href), href)


def link_base(base: str, href: str) -> str:
    """The part of base a stripped href uses: _resolve_link's cache key keeps only that, so a site's absolute and
    root-relative links hit the cache on every page of the site."""
    return base_part(base, link_scope(href))


#: which part of a page's base URL a stripped href or image src uses: all of it, its origin, or none
WHOLE_BASE, BASE_ORIGIN, NO_BASE = 0, 1, 2


def link_scope(href: str) -> int:
    """Which part of the base a stripped href uses (link_base): a function of the href alone, so a walk can remember
    it for the hrefs a site repeats on every page."""
    if href.startswith("/") and not href.startswith("//"):
        return BASE_ORIGIN
    if href[:8].lower().startswith(("http://", "https://")):
        return NO_BASE
    return WHOLE_BASE


def base_part(base: str, scope: int) -> str:
    """The part of base a scope names (link_scope, image_scope): its origin is base up to the path, or all of base
    when it has no path."""
    if scope == BASE_ORIGIN:
        start = base.find("://")
        end = base.find("/", start + 3) if start > 0 else -1
        return base[:end] if end > 0 else base
    return "" if scope == NO_BASE else base


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
    src = src.strip()
    return _image_file_name(image_base(base, src), src)


def image_base(base: str | None, src: str) -> str:
    """The part of base a stripped image src uses (_image_file_name's cache key): none for an absolute one."""
    return base_part(base or "", image_scope(src))


def image_scope(src: str) -> int:
    """Which part of the base a stripped image src uses (image_base): none, or all of it (only the file name is kept,
    so a root-relative src needs no origin)."""
    return NO_BASE if src.startswith("/") or src[:8].lower().startswith(("http://", "https://")) else WHOLE_BASE


@functools.lru_cache(maxsize=65536)
def _image_file_name(base: str, src: str) -> str | None:
    try:
        path = urlsplit(urljoin(base, src)).path
    except ValueError:
        return None
    name = unquote(basename(path)).strip().lower()
    return name or None


# ---- SURT keys: the Internet Archive canonicaliser CommonCrawl's `urlkey` comes from ----------------------
# (archive-commons' WaybackURLKeyMaker: GoogleURLCanonicalizer, then IAURLCanonicalizer, then the SURT form).
# Percent-escapes are decoded repeatedly and re-encoded once; host lower-cased, IDNA-encoded, dotted-quad or
# integer IPs normalised, a leading www/www2... dropped; path dot-segments resolved, lower-cased, session ids
# and a trailing slash removed; query lower-cased, session ids removed, then sorted as (name, value) pairs;
# fragment, userinfo and default ports dropped. tests/common/test_urls.py holds it to the `surt` package exactly.
_URL_SPACES = re.compile(rb"[\n\r\t]")
_HAS_SCHEME = re.compile(rb"^[a-zA-Z][a-zA-Z0-9+\-.]*:")
_REPEATED_HTTP = re.compile(rb"^(https?://)+")
_URL_PARTS = re.compile(rb"^(([a-zA-Z][a-zA-Z0-9+.-]*):)?((//([^/?#]*))?([^?#]*)(\?([^#]*))?)?(#(.*))?$")
_WWW = re.compile(rb"www\d*\.")
_DECIMAL_IP = re.compile(rb"^([1-9][0-9]*)(\.[0-9]+)?(\.[0-9]+)?(\.[0-9]+)?$")
_OCTAL_IP = re.compile(rb"^(0[0-7]*)(\.[0-7]+)?(\.[0-7]+)?(\.[0-7]+)?$")
_ESCAPE_SAFE = b"!\"$&'()*+,-./:;<=>?@[\\]^_`{|}~"
_NOTHING_TO_ESCAPE = re.compile(rb"[A-Za-z0-9!\"$&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]*\Z")
_PATH_SESSION_IDS = (re.compile(rb"^(.*/)(\((?:[a-z]\([0-9a-z]{24}\))+\)/)([^?]+\.aspx.*)$", re.IGNORECASE),
                     re.compile(rb"^(.*/)(\([0-9a-z]{24}\)/)([^?]+\.aspx.*)$", re.IGNORECASE))
_QUERY_SESSION_IDS = tuple(re.compile(rb"^(.*)(?:" + name + rb")(?:&(.*))?$", re.IGNORECASE) for name in (
    rb"jsessionid=[0-9a-zA-Z]{32}", rb"phpsessid=[0-9a-zA-Z]{32}", rb"sid=[0-9a-zA-Z]{32}",
    rb"ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24}", rb"cfid=[^&]+&cftoken=[^&]+"))
_DEFAULT_PORTS = {b"http": 80, b"https": 443}


def _unescape(text: bytes) -> bytes:
    """Percent-decode until nothing changes (%2541 -> %41 -> A)."""
    while b"%" in text and (decoded := unquote_to_bytes(text)) != text:
        text = decoded
    return text


def _escape(text: bytes) -> bytes:
    """Percent-encode everything but ASCII letters, digits and the punctuation a URL keeps (not % and #)."""
    if not text or _NOTHING_TO_ESCAPE.match(text):
        return text
    return quote_from_bytes(text, safe=_ESCAPE_SAFE).encode("ascii")


def _ip_address(host: bytes) -> bytes | None:
    """An integer, dotted or octal IPv4 host in dotted-quad form (inet_aton's reading), else None."""
    import socket
    import struct

    if host.isdigit():
        return socket.inet_ntoa(struct.pack(">L", int(host) & 0xFFFFFFFF)).encode("ascii")
    if _DECIMAL_IP.match(host) or _OCTAL_IP.match(host):
        try:
            return socket.inet_ntoa(socket.inet_aton(host.decode("ascii"))).encode("ascii")
        except (OSError, UnicodeDecodeError):
            return None
    return None


def _canonical_host(host: bytes) -> bytes:
    """Decoded, IDNA-encoded, dots collapsed, IP-normalised or escaped and lower-cased, www* dropped."""
    host = _unescape(host)
    if not host.isascii():
        try:
            host = host.decode("utf-8", "ignore").encode("idna")
        except ValueError:
            pass
    host = host.replace(b"..", b".").strip(b".")
    host = (_ip_address(host) or _escape(host.lower())).lower()
    www = _WWW.match(host)
    return host[www.end():] if www else host


def _canonical_path(path: bytes | None, has_host: bool) -> bytes | None:
    path = _unescape(path) if path is not None else None
    if has_host:
        path = _resolve_dot_segments(path)
    path = _escape(path)
    if not path:
        return path
    path = path.lower()
    for pattern in _PATH_SESSION_IDS:
        if match := pattern.match(path):
            path = match[1] + match[3]
    return path[:-1] if path.endswith(b"/") and len(path) > 1 else path


def _resolve_dot_segments(path: bytes | None) -> bytes:
    """'/a/./b/../c' -> '/a/c'; empty segments dropped except a trailing one; '..' above the root kept."""
    if not path:
        return b"/"
    kept: list[bytes] = []
    for segment in path.split(b"/")[1:]:
        if segment == b".":
            continue
        if segment == b".." and kept:
            kept.pop()
        else:
            kept.append(segment)
    if not kept:
        return b"/"
    return b"/" + b"".join(segment + b"/" for segment in kept[:-1] if segment) + kept[-1]


def _canonical_query(query: bytes | None) -> bytes | None:
    if not query:
        return None
    query = _escape(_unescape(query))
    for pattern in _QUERY_SESSION_IDS:
        if match := pattern.match(query):
            query = match[1] + match[2] if match[2] else match[1]
    query = query.lower()
    if len(query) > 1:
        pairs = sorted(tuple(argument.split(b"=", 1)) for argument in query.split(b"&"))
        query = b"&".join(b"=".join(pair) for pair in pairs)
    return query or None


def _authority(netloc: bytes) -> tuple[bytes | None, int | None]:
    """(lower-cased host or None, port or None) of 'user@host:port' / '[v6]:port'; ValueError on a bad port."""
    hostinfo = netloc.rpartition(b"@")[2]
    if b"[" in hostinfo:
        host, _, after = hostinfo.partition(b"[")[2].partition(b"]")
        port = after.partition(b":")[2]
    else:
        host, _, port = hostinfo.partition(b":")
    number = None
    if port:
        if not (port.isdigit() and port.isascii()) or not 0 <= int(port) <= 65535:
            raise ValueError(f"bad port {port!r}")
        number = int(port) or None
    if not host:
        return None, number
    name, percent, zone = host.partition(b"%")
    return name.lower() + percent + zone, number


def _surt_bytes(url: bytes) -> bytes:
    url = _URL_SPACES.sub(b"", url.strip())
    if url and not _HAS_SCHEME.match(url):
        url = b"http://" + url
    url = _REPEATED_HTTP.sub(lambda match: match[1], url)
    parts = _URL_PARTS.match(url)
    scheme, netloc, path, query = (parts[2] or b"", parts[5] or b"", parts[6] or None, parts[8] or None)
    if not scheme:
        raise ValueError("no scheme")
    host, port = _authority(netloc.rstrip(b":") if netloc.endswith(b":") else netloc)
    if scheme.startswith(b"http") and host is None and path is not None:  # http:////www.example.com
        host, _, rest = path.lstrip(b"/").partition(b"/")
        path = b"/" + rest
    if host:
        host = _canonical_host(host)
    path = _canonical_path(path, bool(host))
    query = _canonical_query(query)
    if port == _DEFAULT_PORTS.get(scheme.lower(), 0):
        port = None
    key = b",".join(reversed(host.split(b"."))) + (b":%d" % port if port is not None else b"") + b")" \
        if host else scheme + b":"
    return key + (path or (b"/" if query is not None else b"")) + (b"?" + query if query is not None else b"")


@functools.lru_cache(maxsize=65536)
def surt(url: str) -> str | None:
    """SURT key exactly as CommonCrawl's `urlkey` (the Internet Archive canonicaliser): 'is,example)/path?a=1&b=2';
    None for a URL it cannot read (a bad port, no scheme, bytes that are not UTF-8)."""
    if not url:
        return "-"
    if url.startswith("filedesc"):
        return url
    try:
        return _surt_bytes(url.encode("utf-8")).decode("utf-8")
    except (ValueError, UnicodeError):
        return None


def host_surt(host: str) -> str:
    """The host part of a SURT key: www.example.is -> is,example (canonicalised as in `surt`)."""
    canonical = _canonical_host(host.strip().lower().encode("utf-8")) if host.strip() else b""
    return ",".join(reversed(canonical.decode("utf-8").split("."))) if canonical else ""


#: URL tokens: runs of letters and digits (udfs.rank.blocking's similarity, language markers' names)
TOKEN_SPLIT = re.compile(r"[\W_]+", re.UNICODE)
LETTER_DIGIT_BOUNDARY = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])", re.UNICODE)


def tokenize_text(text: str) -> list[str]:
    """Lower-cased word and number tokens; letters and digits glued together are split (m99f -> m 99 f)."""
    return [token for token in TOKEN_SPLIT.split(LETTER_DIGIT_BOUNDARY.sub(" ", text.lower())) if token]


def url_host_column(url):
    """Spark: url_host of a URL column ('' when it has none), by string search: regexes cost more per line."""
    from pyspark.sql import functions as F

    scheme_end = F.locate("://", url)
    authority = F.substring_index(F.substring_index(F.substring_index(
        F.substr(url, scheme_end + 3), "/", 1), "?", 1), "#", 1)
    host = F.substring_index(F.substring_index(authority, "@", -1), ":", 1)
    return F.when(scheme_end > 1, F.rtrim(F.lower(host), F.lit("."))).otherwise(F.lit(""))
