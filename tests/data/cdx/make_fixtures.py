"""How tests/data/cdx was made (run once; the files are kept in the repository as they are).

python tests/data/cdx/make_fixtures.py  — rewrites captures.cdx, broken.cdx and truncated.cdx.gz.
"""
import base64
import gzip
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from parascout.udfs.common.urls import surt
from parascout.udfs.index.cdx import format_cdx_line

SEG = "crawl-data/{crawl}/segments/1722640{seg}.33/warc/CC-MAIN-{ts}-{ts}-{n:05d}.warc.gz"
def cap(url, ts, status="200", mime="text/html", lang="isl", crawl="CC-MAIN-2024-33", n=1, **extra):
    fields = {"url": url, "mime": mime, "mime-detected": extra.pop("detected", mime), "status": status,
              "digest": base64.b32encode(hashlib.sha1(f"{url} {ts}".encode("utf-8", "surrogateescape")).digest()).decode(), "length": str(1000 + n * 7),
              "offset": str(1000 * n), "filename": SEG.format(crawl=crawl, seg=389000 + n, ts=ts[:8] + "082005", n=n),
              "charset": "UTF-8", "languages": lang}
    fields.update(extra)
    return format_cdx_line(surt(url), ts, {k: v for k, v in fields.items() if v is not None})

lines = [
    # www.example.is: Icelandic and English pages (a bilingual host)
    cap("https://www.example.is/", "20240805101010", lang="isl,eng", n=1),
    cap("https://www.example.is/en/", "20240805101111", lang="eng", n=2),
    cap("https://www.example.is/is/um-okkur", "20240805101212", lang="isl", n=3),
    cap("https://www.example.is/en/about-us", "20240805101313", lang="eng", n=4),
    cap("https://www.example.is/is/frettir?id=7&lang=is", "20240805101414", lang="isl", n=5),
    cap("https://www.example.is/en/news?id=7&lang=en", "20240805101515", lang="eng,isl", n=6),
    # the same page captured twice (http, earlier): only the latest capture is kept
    cap("http://www.example.is/en/about-us", "20240803090909", lang="eng", n=7),
    # a redirect and a revisit of that host
    cap("http://example.is/", "20240805100000", status="301", lang=None, n=8, redirect="https://www.example.is/"),
    cap("https://www.example.is/is/", "20240806100000", mime="warc/revisit", status="200", lang=None, n=9,
        detected=None),
    # not wanted: a 404 page, a PDF, a capture from another crawl
    cap("https://www.example.is/is/gamalt", "20240805102020", status="404", n=10),
    cap("https://www.example.is/skjol/arsskyrsla.pdf", "20240805102121", mime="application/pdf",
        lang=None, n=11),
    cap("https://www.example.is/is/eldra", "20240720080808", crawl="CC-MAIN-2024-30", n=12),
    # blog.example.is: Icelandic only
    cap("https://blog.example.is/2024/08/faersla", "20240805110000", lang="isl", n=13),
    cap("https://blog.example.is/2024/07/onnur-faersla", "20240805110101", lang="isl", n=14),
    # www.visitmalta.mt: Maltese and English, XHTML detected
    cap("https://www.visitmalta.mt/mt/dwar", "20240805120000", lang="mlt", n=15,
        mime="text/html", detected="application/xhtml+xml"),
    cap("https://www.visitmalta.mt/en/about", "20240805120101", lang="eng", n=16),
    # news.example.co.uk: English only, registered domain under a two-label suffix
    cap("https://news.example.co.uk/world/story-1", "20240805130000", lang="eng", n=17),
    cap("https://news.example.co.uk/world/story-2", "20240805130101", lang="eng", charset=None, n=18),
]
lines.sort()
with open(HERE / "captures.cdx", "w", encoding="utf-8") as out:
    out.write("\n".join(lines) + "\n")

good = [cap("https://www.example.is/is/gott", "20240805140000", n=20),
        cap("https://www.example.is/en/good", "20240805140101", lang="eng", n=21)]
long_url = "https://www.example.is/" + "a" * 8200
broken = [
    good[0].encode(),
    b"is,example)/no-json 20240805140202",                                                     # malformed_line
    b"is,example)/bad-time 2024-08-05 " + json.dumps({"url": "https://example.is/bad-time"}).encode(),  # malformed_line
    b'is,example)/cut 20240805140303 {"url": "https://example.is/cut", "mime": "te',         # bad_json
    cap("https://www.example.is/no-url", "20240805140404", n=22).replace('"url": "https://www.example.is/no-url", ', "").encode(),  # missing_url
    cap(long_url, "20240805140505", n=23).encode(),                                             # url_too_long
    cap("mailto:someone@example.is", "20240805140606", n=24).encode(),                         # bad_url
    cap("https://www.example.is/no-status", "20240805140707", n=25).replace('"status": "200", ', "").encode(),  # missing_status
    cap("https://www.example.is/no-file", "20240805140808", n=26, filename=None).encode(),    # missing_location
    cap("https://www.example.is/latin1-\udcff", "20240805140909", n=27).encode("utf-8", "surrogateescape"),  # non_utf8
    good[1].encode(),
]
with open(HERE / "broken.cdx", "wb") as out:
    out.write(b"\n".join(broken) + b"\n")

# two gzip members, the second cut short: 3 lines decode, the broken member counts once
member_one = gzip.compress(("\n".join(lines[:3]) + "\n").encode(), mtime=0)
member_two = gzip.compress(("\n".join(lines[3:6]) + "\n").encode(), mtime=0)
with open(HERE / "truncated.cdx.gz", "wb") as out:
    out.write(member_one + member_two[: len(member_two) // 2])
print(len(lines), len(broken))
