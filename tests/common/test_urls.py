"""udfs/common/urls.py: SURT keys held to the Internet Archive canonicaliser (the `surt` package, a TEST-ONLY oracle:
AGPL, never imported outside tests) on real WMT16 URLs, real pages' outlinks and generated odd URLs; hosts,
control characters."""
from __future__ import annotations

import itertools
import random
from urllib.parse import urljoin, urlsplit

import pytest

from parascout.udfs.common.urls import has_control_characters, host_surt, surt, url_host
from parascout.udfs.index.cdx import surt_prefixes

oracle = pytest.importorskip("surt", reason="the `surt` package (test-only oracle) is not installed")


def oracle_key(url: str) -> str | None:
    """The IA canonicaliser's key; None where it raises (parascout then returns None too)."""
    try:
        return oracle.surt(url)
    except Exception:  # noqa: BLE001 - bad ports, no scheme...: the oracle raises, parascout says None
        return None


def disagreements(urls) -> list[tuple[str, str | None, str | None]]:
    return [(url, surt(url), oracle_key(url)) for url in dict.fromkeys(urls) if surt(url) != oracle_key(url)]


def test_known_differences_from_the_old_key_are_gone():
    cases = {
        "https://www.example.is/is/": "is,example)/is",  # trailing slash dropped
        "http://example.com/a?B=2&a=1": "com,example)/a?a=1&b=2",  # lower-cased before the sort
        "http://example.com/?q=%41%2541": "com,example)/?q=aa",  # decoded repeatedly, re-encoded once
        "http://example.com/?a-b=1&a=2": "com,example)/?a=2&a-b=1",  # sorted as (name, value) pairs
        "http://www2.example.com/x": "com,example)/x",
        "http://example.com/a/./b/../c": "com,example)/a/c",
        "http://3232235521/": "1,0,168,192)/",
        "http://example.com:80/;jsessionid=x?jsessionid=0123456789abcdef0123456789abcdef&x=1": "com,example)/;jsessionid=x?x=1",
        "http://user:pw@example.com:8080/#frag": "com,example:8080)/",
        "": "-",
    }
    assert {url: surt(url) for url in cases} == cases
    assert {url: oracle_key(url) for url in cases} == cases


def test_surt_agrees_with_the_ia_canonicaliser_on_wmt16_urls(shared_data):
    urls = [url for line in (shared_data / "wmt16" / "train.pairs").read_text().splitlines()
            for url in line.split()]
    assert len(urls) > 3000
    assert disagreements(urls) == []


def outlinks(warc_path) -> list[str]:
    from selectolax.lexbor import LexborHTMLParser
    from warcio.archiveiterator import ArchiveIterator

    links = []
    with open(warc_path, "rb") as stream:
        for record in ArchiveIterator(stream):
            if record.rec_type != "response" or "html" not in (record.http_headers.get_header("Content-Type") or ""):
                continue
            base = record.rec_headers.get_header("WARC-Target-URI")
            html = record.content_stream().read().decode("utf-8", "replace")
            for node in LexborHTMLParser(html).css("a[href]"):
                href = node.attributes.get("href") or ""
                try:
                    links.append(urljoin(base, href.strip()))
                except ValueError:
                    links.append(href)
    return links


def test_surt_agrees_with_the_ia_canonicaliser_on_real_outlinks(shared_data):
    links = [link for path in sorted((shared_data / "cc-sample").glob("*.warc.gz")) for link in outlinks(path)]
    assert len(links) > 500
    assert disagreements(links) == []


PIECES = {
    "scheme": ["http://", "https://", "HTTP://", "http://https://", "", "ftp://", "http:///", "http:"],
    "user": ["", "", "user@", "u:p@", "a@b@"],
    "host": ["www.example.com", "WWW.Example.COM", "www2.example.co.uk", "example.is.", "a..b.example.com",
             "xn--e1afmkfd.xn--p1ai", "пример.рф", "bücher.de", "192.168.0.1", "3232235521", "0300.0250.0.1",
             "1.2.3", "[::1]", "[2001:DB8::1]", "ex%41mple.com", "ex%2541mple.com", "wwwx.example.com",
             "www.www.example.com", "-", "...", "example.com%0a", "exa mple.com", "localhost"],
    "port": ["", "", ":80", ":443", ":8080", ":", ":0", ":65536", ":8o"],
    "path": ["", "/", "/a/b/", "/A/B.html", "/a/./b/../c", "/../a", "//a//b//", "/%7Euser/", "/%2F%2f/",
             "/s%C3%ADda", "/síða/", "/a b", "/%25", "/%zz", "/a;b=c/", "/(abcdefghijklmnopqrstuvwx)/p.aspx",
             "/x/(a(abcdefghijklmnopqrstuvwx))/p.aspx", "/index.php", "/#/", "/a%23b", "/~a/Ä"],
    "query": ["", "?", "?a=1", "?B=2&a=1", "?a=1&a", "?a&a=1", "?a-b=1&a=2", "?=&&", "?q=%41%2541", "?q=a+b%20c",
              "?x=%26y%3D", "?Z=1&z=1&Y", "?sid=0123456789abcdef0123456789abcdef", "?a=1&sid=0123456789abcdef0123456789abcdef&b",
              "?jsessionid=0123456789ABCDEF0123456789ABCDEF", "?cfid=1&cftoken=2&k=v", "?q=ü", "?%E2%82%AC=1"],
    "fragment": ["", "#frag", "#a?b", "#"],
    "space": ["", "", " ", "\t", "\n"],
}


def odd_urls(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    urls = []
    for _ in range(count):
        part = {name: rng.choice(choices) for name, choices in PIECES.items()}
        urls.append(part["space"] + part["scheme"] + part["user"] + part["host"] + part["port"] + part["path"]
                    + part["query"] + part["fragment"] + rng.choice(["", " ", "\r\n"]))
    return urls


def test_surt_agrees_with_the_ia_canonicaliser_on_generated_odd_urls():
    urls = odd_urls(4000, seed=1)
    assert disagreements(urls) == []
    assert sum(surt(url) is None for url in urls) > 50  # bad ports: neither reads them


def test_host_surt_and_prefixes_match_the_keys_of_the_hosts_urls():
    for host in ("www.example.is", "WWW2.Example.IS.", "blog.example.is", "пример.рф", "3232235521"):
        key = surt(f"https://{host}/page")
        assert key.startswith(host_surt(host) + ")")
        assert any(key.startswith(prefix) for prefix in surt_prefixes(hosts=[host]))


def test_control_characters_and_hosts():
    for text in ("http://a.is/\x00", "http://a\r\n.is/", "http://a.is/\x1b[31m", "http://a.is/\x7f"):
        assert has_control_characters(text)
    assert not has_control_characters("https://a.is/síða?q=1 2")
    assert url_host("https://User@WWW.Example.IS.:8080/x") == "www.example.is"


def test_the_spark_host_column_agrees_with_url_host(spark, shared_data):
    """urls.url_host_column (Spark, used by scan-cdx and replay-crawl) gives urls.url_host's answer."""
    from pyspark.sql import functions as F

    from parascout.udfs.common.urls import url_host, url_host_column

    urls = [u for line in (shared_data / "wmt16" / "train.pairs").read_text().splitlines() for u in line.split()]
    odd = ["http://User:pw@WWW.Example.COM.:8080/a?b#c", "https://example.is?x=1", "http://example.is#top",
           "HTTP://EXAMPLE.IS/", "https://sub.example.co.uk./path/", "http://a.b@c.example.org/x@y",
           "http://example.com:80", "https://xn--caf-dma.example/", "http://example.com/path:with:colons"]
    frame = spark.createDataFrame([(u,) for u in urls + odd], "url string")
    got = dict(frame.select("url", url_host_column(F.col("url")).alias("host")).toPandas().itertuples(index=False))
    differ = {u: (got[u], url_host(u)) for u in urls + odd if (got[u] or None) != url_host(u)}
    assert not differ, list(differ.items())[:10]


def _url_host_by_urlsplit(url: str) -> str | None:
    """What url_host answers: urlsplit's hostname (its direct case must agree with it everywhere)."""
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host.rstrip(".") if host else None


def test_url_host_reads_hosts_as_urlsplit_does():
    urls = ["http://a.com", " HTTP://WWW.Example.COM:8080/x ", "https://user@host/x", "https://[::1]:80/", "http://h%25x/",
            "http://a.b./", "http://.../", "http://:80/", "http:///x", "mailto:x@y", "x", "", "//host/p", "http://ho\tst/",
            "http://host\n/x", "1http://a/", "http://a?b", "http://a#b", "http://A:b:c/", "\x01http://a/",
            "http://\u00c9XAMPLE.com/", "http://a]/", "h+t.t-p://a/", "http:/a/", "http://a\u3000/", "http://a /",
            # non-ASCII netlocs NFKC turns into a delimiter: urlsplit refuses them (no host)
            "http://a\uff03b/x", "http://ex\u2100ample.com/", "http://a\uff1a80/"]
    pieces = ["a", "Z", ":", "/", "//", "?", "#", "@", "[", "]", "%", ".", " ", "\t", "\n", "\x00", "\u00e9", "-",
              "\uff03", "\u2100"]
    urls += ["http://" + "".join(combination) for combination in itertools.product(pieces, repeat=3)]
    assert [url_host(url) for url in urls] == [_url_host_by_urlsplit(url) for url in urls]
    assert url_host("http://a\uff03b/x") is None and url_host(" HTTP://WWW.Example.COM.:8080/x") == "www.example.com"
