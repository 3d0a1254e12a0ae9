"""HTML pages the text extraction and the compiled walk are both checked on: a templated page, real ones."""
from __future__ import annotations

import zlib

from testkit.warc import ENGLISH, GERMAN, gzip_members

TEMPLATED_PAGE = (
    '<!DOCTYPE html><html lang="en"><head><title>Coastal report | Example Agency</title></head><body>'
    '<header><a href="/"><img src="/logo.png"></a><nav><ul><li><a href="/en/">Home</a></li>'
    '<li><a href="/en/news/">News</a></li><li><a href="/de/">Deutsch</a></li></ul></nav></header>'
    '<div class="cookie-banner">We use cookies to improve your experience. Accept all cookies?</div>'
    "<main><h1>Coastal report</h1><p>" + ENGLISH + "</p><p>" + ENGLISH[:60] + "</p>"
    "<ul><li>Fishing quotas were shared between the northern and the southern regions.</li></ul>"
    "<table><tr><td>" + ENGLISH + "</td></tr></table>"
    "<p>First line of an address block<br>" + GERMAN + "</p>"
    '<div><a href="/a">Related one</a> <a href="/b">Related two</a> <a href="/c">Related three</a></div>'
    "</main><footer><p>© 2024 Example Agency. All rights reserved.</p></footer></body></html>")


def real_pages(shared_data) -> list[tuple[str, str]]:
    """(url, decoded HTML) of every response in the real CommonCrawl excerpts."""
    from parascout.udfs.fetch.documents import decode_html

    pages = []
    for name in ("CC-MAIN-2020-34-excerpt.warc.gz", "CC-MAIN-2024-22-whirlwind.warc.gz"):
        data = (shared_data / "cc-sample" / name).read_bytes()
        for offset, length in gzip_members(data):
            raw = zlib.decompress(data[offset:offset + length], 31)
            if b"WARC-Type: response" not in raw[:600]:
                continue
            url = raw.split(b"WARC-Target-URI: ", 1)[1].split(b"\r\n", 1)[0].decode()
            pages.append((url, decode_html(raw.split(b"\r\n\r\n", 2)[2])[0]))
    return pages
