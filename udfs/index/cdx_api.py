"""The CommonCrawl CDX API through cdx_toolkit, for small interactive scans.

cdx_toolkit paces its requests per host (one second apart for index.commoncrawl.org;
tune with its CDXT_* environment variables) and backs off on 429/503, so a scan
never hammers the index server. Each capture becomes a CDX line, parsed like a
line read from a file. `cc_mirror` points it at another index server, e.g. a
replay of recorded responses on 127.0.0.1 in the tests.
"""
from __future__ import annotations

import itertools
import logging
import socket
from collections.abc import Iterator, Mapping
from urllib.parse import urlsplit

from parascout.udfs.common.urls import surt
from parascout.udfs.index.cdx import format_cdx_line

DEFAULT_MIRROR = "https://index.commoncrawl.org/"
log = logging.getLogger("parascout.cdx_api")


def capture_to_cdx_line(capture: Mapping) -> str:
    """A CDX API capture (urlkey, timestamp, url, ...) as a `SURT TIMESTAMP {json}` line."""
    fields = {key: value for key, value in capture.items() if key not in ("urlkey", "timestamp")}
    key = capture.get("urlkey") or surt(str(capture.get("url", ""))) or ""
    return format_cdx_line(key, str(capture.get("timestamp", "")), fields)


def fetch_cdx_lines(url_patterns: list[str], crawls: list[str], mirror: str = DEFAULT_MIRROR,
                    limit: int = 10_000, log_every: int = 1000) -> Iterator[str]:
    """CDX lines for URL patterns ('example.is/*', '*.example.is') in the given crawls, at most `limit`."""
    import cdx_toolkit
    import requests

    check_reachable(mirror)
    try:
        fetcher = cdx_toolkit.CDXFetcher(source="cc", crawl=list(crawls), cc_mirror=mirror)
        captures = itertools.chain.from_iterable(fetcher.iter(pattern) for pattern in url_patterns)
        for count, capture in enumerate(itertools.islice(captures, limit), 1):
            if count % log_every == 0:
                log.info("CDX API: %d captures fetched", count)
            yield capture_to_cdx_line(capture.data)
    except (requests.ConnectionError, requests.Timeout) as error:
        raise CdxApiUnreachable(f"cannot reach the CDX API at {mirror} (network or DNS): {error}") from error
    except ValueError as error:
        if "invalid hostname" not in str(error):  # cdx_toolkit's way of saying the name did not resolve
            raise
        raise CdxApiUnreachable(f"cannot reach the CDX API at {mirror} (network or DNS: the host name does not "
                                f"resolve); use --cdx or --index-parquet with a local or S3 copy") from error


def check_reachable(mirror: str, timeout: float = 10.0) -> None:
    """A TCP connection to the CDX API's host, before cdx_toolkit's own (long) retry loop: no network, an
    unresolvable name or a refused port is a clear error at once."""
    parts = urlsplit(mirror)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        socket.create_connection((parts.hostname or "", port), timeout=timeout).close()
    except OSError as error:
        raise CdxApiUnreachable(f"cannot reach the CDX API at {mirror} (network or DNS: {error}); "
                                f"use --cdx or --index-parquet with a local or S3 copy") from error


class CdxApiUnreachable(ValueError):
    """The CDX API server cannot be reached (no network, DNS, refused): a clear start-up error, not a trace."""
