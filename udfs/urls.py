"""URL normalisation shared by every job: host, registered domain, SURT key.

The registered domain uses tldextract's bundled Public Suffix List snapshot; it
never fetches the list.
"""
from __future__ import annotations

import functools
import re
from urllib.parse import urlsplit

import tldextract

MAX_URL_CHARS = 8192
#: C0 controls and DEL: never part of a URL as crawled (NUL, CR/LF, ESC...); a URL holding one is bad input
CONTROL_CHARACTERS = "".join(map(chr, range(0x20))) + "\x7f"
_CONTROL = re.compile("[\x00-\x1f\x7f]")


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


def url_host(url: str) -> str | None:
    """Lower-cased host name without port or userinfo; None when the URL has none."""
    try:
        host = urlsplit(url.strip()).hostname
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


def host_surt(host: str) -> str:
    """Reversed, comma-joined host as in a SURT key: www.example.is -> is,example (www dropped)."""
    labels = host.lower().split(".")
    if labels and labels[0] == "www":
        labels = labels[1:]
    return ",".join(reversed(labels))


def surt(url: str) -> str | None:
    """SURT key as CommonCrawl writes it: 'is,example)/path?query' (scheme, www and port 80/443 dropped)."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
        port = parts.port
    except ValueError:
        return None
    if not host:
        return None
    key = host_surt(host.rstrip("."))
    if port and port not in (80, 443):
        key += f":{port}"
    path = parts.path or "/"
    query = "&".join(sorted(parts.query.split("&"))) if parts.query else ""
    return f"{key}){path.lower()}" + (f"?{query.lower()}" if query else "")
