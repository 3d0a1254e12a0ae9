"""udfs.fetch.documents: one WARC record -> docs features; broken records become statuses, never exceptions."""
from __future__ import annotations

import io
import zlib
from html.parser import HTMLParser

import pytest
from warcio.warcwriter import WARCWriter

from parascout.udfs.common.urls import normalise_link
from parascout.udfs.fetch import documents
from parascout.udfs.fetch.config import ExtractionConfig
from parascout.udfs.fetch.documents import decode_html, html_features, parse_record
from parascout.udfs.index.wat import read_wat
from testkit.warc import ENGLISH, GERMAN, gzip_members, html_page, record_bytes, wat_record_bytes


def test_parses_a_page_into_features():
    page = html_page("Annual report", [ENGLISH, ENGLISH], images=("/img/Coast%20Map.PNG?v=2", "logo.png"),
                     links=("/de/bericht.html#top", "https://Other.example.org:443/x", "mailto:a@b.c", "#top"))
    doc = parse_record(record_bytes("http://www.example.com/en/report.html", page),
                       "http://www.example.com/en/report.html")
    assert doc["status"] == "ok" and doc["http_status"] == 200 and doc["content_type"] == "text/html"
    assert doc["cld2_lang"] == "eng" and doc["cld2_reliable"] and doc["cld2_percent"] > 90
    assert doc["charset"] == "utf-8" and doc["charset_source"] == "header"
    assert doc["title"] == "Annual report" and doc["html_lang"] == "en"
    assert doc["outlinks"] == ["http://www.example.com/de/bericht.html", "https://other.example.org/x"]
    assert doc["outlinks_same_host"] == [True, False]
    assert doc["images"] == ["coast map.png", "logo.png"]
    assert doc["paragraphs"] == 4  # h1, two <p>, the block of anchors after them
    assert doc["text_chars"] == len(" ".join(["Annual report", ENGLISH.strip(), ENGLISH.strip()] + ["link"] * 4))
    assert doc["structure"][:4] == ["[START:html]", "[START:head]", "[START:meta]", "[START:title]"]
    assert "[START:script]" in doc["structure"] and f"[Chunk:{len(ENGLISH.strip())}]" in doc["structure"]
    assert not any("ignored" in token for token in doc["structure"])


def test_broken_records_become_reasons():
    good = record_bytes("http://example.com/", html_page("t", [ENGLISH]))
    assert parse_record(good[: len(good) // 2])["status"] == "cut_short"
    assert parse_record(b"this is not gzip at all")["status"] == "wrong_offset"
    assert parse_record(b"\x1f\x8b\x08\x00garbage-after-the-magic")["status"] == "bad_gzip"
    assert parse_record(record_bytes("http://example.com/a.pdf", b"%PDF-1.4", "application/pdf"))["status"] \
        == "not_html"
    assert parse_record(record_bytes("http://example.com/r", b"", status="301 Moved Permanently",
                                     headers=(("Location", "/new"),)))["outlinks"] == ["http://example.com/new"]
    assert parse_record(record_bytes("http://example.com/404", b"gone", status="404 Not Found"))["status"] \
        == "http_error"
    assert parse_record(record_bytes("http://example.com/", b"x", record_type="resource"))["status"] \
        == "resource_record"
    assert parse_record(zlib.compress(b"x"))["status"] == "wrong_offset"


@pytest.mark.parametrize(("header", "payload", "expected_codec", "source"), [
    ("text/html; charset=windows-1251", "<p>Привет мир</p>".encode("cp1251"), "cp1251", "header"),
    ("text/html", b'<meta charset="gb2312"><p>' + "中文网页".encode("gb2312") + b"</p>", "gb18030", "meta"),
    ("text/html", "<p>Grüße aus Köln</p>".encode(), "utf-8", "detected"),
    ("text/html; charset=utf-8", "<p>Grüße aus Köln</p>".encode("latin-1"), "cp1252", "meta"),
])
def test_charset_from_header_then_meta_then_detection(header, payload, expected_codec, source):
    if source == "meta" and "utf-8" in header:  # declared utf-8 but not decodable: the meta is next in line
        payload = b'<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">' + payload
    text, codec, found = decode_html(payload, header)
    assert (codec, found) == (expected_codec, source)
    assert any(word in text for word in ("Привет", "中文", "Grüße"))


def test_links_are_resolved_and_normalised():
    assert normalise_link("http://a.com/x/y.html", "../z.html#frag") == "http://a.com/z.html"
    assert normalise_link("http://a.com/", "HTTP://A.COM:80") == "http://a.com/"
    assert normalise_link("http://a.com/", "javascript:void(0)") is None
    assert normalise_link("http://a.com/", "ftp://a.com/file") is None
    features = html_features('<base href="http://b.org/dir/"><a href="page">p</a><img src="i/Pic.JPG">',
                             "http://a.com/")
    assert features["outlinks"] == ["http://b.org/dir/page"] and features["outlinks_same_host"] == [False]
    assert features["images"] == ["pic.jpg"]


def test_german_and_english_pages_get_their_languages():
    assert html_features(html_page("Bericht", [GERMAN, GERMAN]), None)["cld2_lang"] == "deu"
    short = html_features("<p>ok</p>", None)
    assert short["cld2_reliable"] is False and short["text_chars"] == 2


def test_real_commoncrawl_records_parse(shared_data):
    data = (shared_data / "cc-sample" / "CC-MAIN-2020-34-excerpt.warc.gz").read_bytes()
    docs = [parse_record(data[offset:offset + length]) for offset, length in gzip_members(data)]
    responses = [doc for doc in docs if not doc["status"].endswith("_record")]
    assert len(responses) == 16 and all(doc["status"] == "ok" for doc in responses)
    languages = {doc["cld2_lang"] for doc in responses}
    assert {"zho", "rus", "deu", "nld"} <= languages
    russian = next(doc for doc in responses if doc["charset"] == "cp1251")
    assert russian["title"].startswith("О компании") and russian["cld2_lang"] == "rus"


def anchors_of(html: str) -> list[dict]:
    """WAT-style link entries for the <a href>/<img src> of a page, as CommonCrawl's extractor lists them."""
    found = []

    class Collector(HTMLParser):
        def handle_starttag(self, tag, attrs):
            values = dict(attrs)
            if tag == "a" and values.get("href") is not None:
                found.append({"path": "A@/href", "url": values["href"]})
            elif tag == "img" and values.get("src"):
                found.append({"path": "IMG@/src", "url": values["src"]})

    Collector().feed(html)
    return found


def test_wat_links_match_the_warc_parse(shared_data):
    warc = (shared_data / "cc-sample" / "CC-MAIN-2024-22-whirlwind.warc.gz").read_bytes()
    offset, length = gzip_members(warc)[2]
    from_warc = parse_record(warc[offset:offset + length])
    url = "https://an.wikipedia.org/wiki/Escopete"
    html = zlib.decompress(warc[offset:offset + length], 31).split(b"\r\n\r\n", 2)[2].decode("utf-8")
    wat = wat_record_bytes(url, anchors_of(html), title="Escopete")
    (doc,) = read_wat(io.BytesIO(wat))
    assert doc["status"] == "ok" and doc["source"] == "wat" and doc["title"] == "Escopete"
    assert set(doc["outlinks"]) <= set(from_warc["outlinks"]) and len(doc["outlinks"]) >= len(from_warc["outlinks"]) - 5
    assert "https://an.wikipedia.org/wiki/Portalada" in doc["outlinks"]
    assert set(doc["images"]) == set(from_warc["images"])
    assert (doc["warc_filename"], doc["warc_offset"], doc["warc_length"]) == ("CC-MAIN-x.warc.gz", 1234, 518)


def test_real_wat_excerpt_holds_only_request_metadata(shared_data):
    with open(shared_data / "cc-sample" / "CC-MAIN-2024-22-whirlwind.warc.wat.gz", "rb") as stream:
        docs = list(read_wat(stream))
    assert [(d["url"], d["status"], d["error"]) for d in docs] == [
        ("https://an.wikipedia.org/wiki/Escopete", "not_response", "request")]
    assert docs[0]["warc_filename"] == "CC-MAIN-20240517233122-20240518023122-00000.warc.gz"


def test_wat_records_with_relative_links_base_and_bad_json():
    links = [{"path": "A@/href", "url": "../b.html"}, {"path": "A@/href", "url": "mailto:x@y"},
             {"path": "LINK@/href", "url": "/style.css"}, {"path": "IMG@/src", "url": "/i/Logo.PNG"}]
    wat = wat_record_bytes("http://a.com/x/y.html", links, base="http://c.com/d/e/")
    (doc,) = read_wat(io.BytesIO(wat))
    assert doc["outlinks"] == ["http://c.com/d/b.html"] and doc["outlinks_same_host"] == [False]
    assert doc["images"] == ["logo.png"]
    redirect = next(read_wat(io.BytesIO(wat_record_bytes("http://a.com/", [], status="301"))))
    assert redirect["status"] == "http_redirect"
    out = io.BytesIO()
    writer = WARCWriter(out, gzip=True)
    writer.write_record(writer.create_warc_record("http://a.com/", "metadata", payload=io.BytesIO(b"{not json"),
                                                  warc_content_type="application/json"))
    assert next(read_wat(io.BytesIO(out.getvalue())))["status"] == "bad_wat_json"


def attribute_heavy_page(attributes: int) -> str:
    return html_page("Heavy", [ENGLISH]).replace(
        "<body>", "<body><div " + " ".join(f'data-a{n}="x"' for n in range(attributes)) + ">x</div>", 1)


def deeply_nested_page(depth: int) -> str:
    return html_page("Deep", [ENGLISH]).replace("<body>", "<body>" + "<div>" * depth + "x" + "</div>" * depth, 1)


@pytest.mark.parametrize("page, reason", [
    (attribute_heavy_page(20_000), "has over 1000 attributes"),
    (deeply_nested_page(20_000), "nest deeper than 2000"),
])
def test_markup_past_the_parser_bounds_is_counted_not_parsed(page, reason):
    from parascout.udfs.fetch.markup_guard import markup_problem

    assert reason in markup_problem(page)
    doc = parse_record(record_bytes("http://a.example/heavy", page), "http://a.example/heavy", record_seconds=None)
    assert doc["status"] == "html_too_complex" and reason in doc["error"]
    assert "html_too_complex" in documents.BAD_REASONS


def test_markup_within_the_bounds_parses_and_the_bounds_are_parameters():
    from parascout.udfs.fetch.markup_guard import markup_problem

    for page in (attribute_heavy_page(900), deeply_nested_page(1_500), html_page("Plain", [ENGLISH] * 50)):
        assert markup_problem(page) is None
        assert parse_record(record_bytes("http://a.example/p", page), "http://a.example/p")["status"] == "ok"
    tight = parse_record(record_bytes("http://a.example/p", deeply_nested_page(50)), "http://a.example/p",
                         config=ExtractionConfig(max_nesting_depth=20))
    assert tight["status"] == "html_too_complex"
