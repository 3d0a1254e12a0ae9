"""udfs.html_walk (udfs.fetch.page_walk compiled by `make walk`): the same Page state as page_walk run as plain Python,
on real CommonCrawl pages and sample-archive pages, the same keys as paragraph_keys on every Unicode character, the
same paragraphs as page_paragraphs (hashes: blake2b's); and the fallback to the Python module."""
from __future__ import annotations

import importlib
import os
import sys

import pytest

from native import build_html_walk
from parascout.udfs.common import language_id
from parascout.udfs.fetch import collector, html_text, page_walk
from testkit.warc import http_responses
from tests.support.html_pages import TEMPLATED_PAGE, real_pages

FRENCH = "Fran\u00e7ais"
#: newline-separated texts of 1-, 2-, 3- and 4-byte UTF-8 characters, across BLAKE2b's 128-byte blocks
PROBE_LINES = "\n".join(character * size for character in ("a", "\u00e9", "\u4e2d", "\U0001f600")
                         for size in (1, 31, 32, 33, 42, 43, 64, 65, 129))
needs_compiled = pytest.mark.skipif(html_text.COMPILED is None,
                                    reason=f"compiled walk not in use: {html_text.WALK_ENGINE}")


def walk_states(pages: list[tuple[str, str]], max_text_chars: int) -> list[tuple[tuple, tuple]]:
    """(Python walk's Page state, compiled walk's) of each page."""
    states = []
    for url, html in pages:
        python_page, compiled_page = html_text.Page(url), html_text.COMPILED.Page(url)
        html_text.walk_page(html_text.parse_tops(html), python_page, max_text_chars)
        html_text.COMPILED.walk_page(html_text.parse_tops(html), compiled_page, max_text_chars)
        states.append((html_text.page_state(python_page), html_text.page_state(compiled_page)))
    return states


@needs_compiled
@pytest.mark.parametrize("max_text_chars", [html_text.DEFAULT.max_text_chars, 1_500])
def test_compiled_walk_agrees_on_real_commoncrawl_pages(shared_data, max_text_chars):
    pages = real_pages(shared_data)
    assert len(pages) >= 15
    states = walk_states(pages, max_text_chars)
    differing = [url for (url, _), (python, compiled) in zip(pages, states) if python != compiled]
    assert not differing
    if max_text_chars < html_text.DEFAULT.max_text_chars:  # the cap was reached on some page, so it was compared too
        assert any(python[page_walk.PAGE_FIELDS.index("text_truncated")] for python, _ in states)


@needs_compiled
@pytest.mark.parametrize("html", [
    "", "<p><b>never closed <div><<<>>>", "<" * 10_000, "<div>" * 5_000 + "deep" + "</div>" * 10,
    "<span><a href='/x'>" * 300 + "nested links" + "</a></span>" * 300,
    "<p>" + "word " * 2_000 + "</p><p>x\x1c\x1fy \x85z\u00a0\u2003w\r\n</p><pre> \t </pre><p>a\x1c\x1fb\x0b c</p>",
    # every whitespace character, CLD2-unsafe ones, text runs written by Text with and without an open anchor
    "".join(f"<p>{c}a{c}<b>{c}b</b><a href='/{i}'>{c}c{c}</a>\x01\x9f\ufffe\U0001f600{c}<i>{c}</i>d"
            for i, c in enumerate(chr(code) for code in range(0x3001) if chr(code).isspace())),
    ("<table class='nav'><tr><td ID='Menu'>a</td><td class='x' class='menu'>b</td></tr></table>"
    "<a href='/y' xml:lang='fr' hreflang='de' lang='it' title='T'>link</a><a>no href</a>"),
    ("<html><head><title>a</title><title>b</title></head><body><svg><a href='/svg'><text>s</text></a></svg>"
    "<math><mi>x</mi></math><a href='/img'><img alt='Deutsch' src='de.png'></a></body></html>"),

    # attributes read from Lexbor's structs (static names) or through LexborNode.attributes (data-src, name, xml:)
    ("<html lang='is' dir='ltr'><head><base href='/sub/' target='_top'><meta name='description' content='d'>"
     "<link rel='alternate' hreflang='de' href='/de/' page='2'><link rel='Alternate' lang='fr' href='fr/'></head>"
     "<body><a href='x'><img data-src='/lazy/de.png' alt='Deutsch'></a><img src='/a.png' data-src='/b.png'>"
     "<img src='/c.png' srcset='c2.png 2x' loading='lazy'><img xml:lang='x' src='/d.png'><img alt='no src'>"
     "<map><area href='/area' alt='a'></map><iframe src='/frame' loading='lazy'></iframe><img src=''></body></html>"),
    # hrefs the compiled narrowing reads character by character (case, spaces around, non-ASCII, protocol-relative),
    # twice each (the link memo's second answer)
    "".join(f"<a href='{href}'>{href}</a>" for href in (
        "HTTPS://Example.org/A", " http://example.org/b ", "\u00a0/c\u3000", "/\u0130", "//other.org/d", "Http:/e",
        "https:/\u212a", "\u212aTTP://x", "h", "/", " ", "?q", "#top", "hTtP://EXAMPLE.org:80/f")) * 2,
    # runs of a block joined with and without whitespace at their edges (a block's text is built from the collapsed
    # runs: 'foobar', 'bar baz', no double or edge spaces), in a title and an anchor too
    ("<p>foo<b>bar</b> baz<i> qux </i>\u00a0<b>\u3000end\u2003</b></p><p><b>a</b>\n<i>b</i><span> </span>c<br> d</p>"
     "<li> <a href='/l'> x </a>y<img src='i.png'>z\x1c</li><title> t <b>u</b></title><p>\x85k\x85\u00a0</p>"),
    # one whitespace character other than ' ' between words (ASCII and not): 'a b' in chunks, as str.split makes it
    "<p>a\nb</p><p>c\td e\u00a0f\u3000g</p><b>x\ny\u00e9</b><i>\u00e9\u2003\u00e9</i>",
    # past the link budget (2,000 links), with <link>/<iframe> links (admitted by the Python Page.link) in between,
    # repeated anchor texts (the cue memo) and empty or present hreflang / lang / title
    "".join(f"<a href='/p{i}'>{('Deutsch', 'English', 'x', '')[i % 4]}</a><link rel='alternate' hreflang='fr' "
            f"href='/fr{i}'><iframe src='/f{i}'></iframe><a href='/q{i}' hreflang='' title='{FRENCH * (i % 2)}'>"
            "de</a>" for i in range(1_100)),
])
def test_compiled_walk_agrees_on_broken_deep_and_odd_pages(html):
    for python, compiled in walk_states([("https://example.org/a/b.html", html)], 3_000):
        assert python == compiled


@needs_compiled
def test_compiled_walk_agrees_on_sample_archive_pages(tmp_path):
    from parascout.udfs.sample_archive import generate

    generate(str(tmp_path / "archive"), hosts=2, seed=7, pages_per_host=40, progress=False, verbose=False)
    pages = http_responses(sorted((tmp_path / "archive").rglob("*.warc.gz")))
    assert len(pages) >= 40
    differing = [url for (url, _), (python, compiled) in zip(pages, walk_states(pages, html_text.DEFAULT.max_text_chars))
                 if python != compiled]
    assert not differing
    assert paragraphs_differing(pages) == []


def paragraph_cases(pages: list[tuple[str, str]]) -> list[tuple]:
    """page_paragraphs' arguments for each page as html_features calls it, and with the other language rule (one
    language for the page, or one per block) and a dense-script page language, so every rule runs."""
    cases = []
    for url, html in pages:
        page = html_text.Page(url)
        html_text.walk_page(html_text.parse_tops(html), page, html_text.DEFAULT.max_text_chars)
        title = html_text.WHITESPACE.sub(" ", "".join(page.title_parts)).strip() or None
        lang, _, _, single = language_id.cld2_detect(page.text_input[0])
        cases += [(page.blocks, title, lang, single), (page.blocks, title, lang, not single),
                  (page.blocks, None, "zho", False)]
    return cases


def paragraphs_differing(pages: list[tuple[str, str]]) -> list[int]:
    """Indexes of the paragraph_cases where the compiled page_paragraphs differs from the Python one."""
    cases = paragraph_cases(pages)
    return [index for index, case in enumerate(cases)
            if html_text.COMPILED.page_paragraphs(*case) != html_text.page_paragraphs(*case)]


@needs_compiled
def test_compiled_page_paragraphs_agree_on_real_commoncrawl_pages(shared_data):
    pages = real_pages(shared_data)
    cases = paragraph_cases(pages)
    assert sum(len(case[0]) for case in cases) > 1_000
    paragraphs = [paragraph for case in cases for paragraph in html_text.page_paragraphs(*case)]
    assert {paragraph["type"] for paragraph in paragraphs} == set(html_text.PARAGRAPH_TYPES)
    assert {paragraph["boilerplate"] for paragraph in paragraphs} == {True, False}
    assert paragraphs_differing(pages) == []


@needs_compiled
@pytest.mark.parametrize("blocks", [
    [], [("x", "text", 0, False)], [("Menu", "heading", 4, False), ("teaser " * 20, "text", 0, False)],
    [("\u00a9 2024 all rights reserved", "text", 0, False), ("cookie " * 80, "text", 0, False),
     ("A \udcff lone surrogate and \u00df", "list_item", 3, True), ("\u4e2d\u6587" * 30, "text", 200, False)],
])
def test_compiled_page_paragraphs_agree_on_edge_cases(blocks):
    for title, lang, single in [(None, None, False), ("Menu", "eng", True), (" menu  ", "jpn", False)]:
        assert html_text.COMPILED.page_paragraphs(blocks, title, lang, single) == \
            html_text.page_paragraphs(blocks, title, lang, single)


@needs_compiled
def test_compiled_page_paragraphs_fail_like_the_python_ones_on_an_empty_block():
    with pytest.raises(ZeroDivisionError):
        html_text.page_paragraphs([("", "text", 0, False)], None, None)
    with pytest.raises(ZeroDivisionError):
        html_text.COMPILED.page_paragraphs([("", "text", 0, False)], None, None)


@needs_compiled
def test_compiled_whitespace_collapse_is_str_split_and_join():
    every = "".join(chr(code) for code in range(0x110000) if not 0xD800 <= code < 0xE000)
    spaces = [character for character in every if character.isspace()]
    texts = [every, "", " ", "a\nb", "\u00e9\u00a0\u00e9", "\U0001f600\u3000x ", " \udcff  y"]
    texts += [f"{left}{space}{right}" for space in spaces for left, right in (("a", "b"), ("\u00e9", "\u4e2d"), ("", "x"))]
    texts += ["".join(spaces) + "z" + "".join(spaces)]
    for text in texts:
        assert html_text.COMPILED.collapse_whitespace(text) == " ".join(text.split())


def test_no_non_ascii_character_lower_cases_to_an_http_prefix_character():
    """The compiled walk reads an href's "http://" / "https://" prefix with ASCII case folding only: right as long as no
    other character's lower() starts with one of the prefix's characters."""
    every = (chr(code) for code in range(128, 0x110000) if not 0xD800 <= code < 0xE000)
    assert [character for character in every if character.lower()[:1] in set("https:/")] == []


@needs_compiled
def test_compiled_casefold_is_str_casefold():
    every = "".join(chr(code) for code in range(0x110000))
    for text in [every, every[::-1], "", "ASCII Only", "Stra\u00dfe \u0130 \u03a3\u03c2 \ufb01 \u00b5", "\udcff x", PROBE_LINES]:
        assert html_text.COMPILED.casefold(text) == text.casefold()


def text_runs(runs: list[bytes]) -> tuple:
    """html_walk.text_runs in Python: the text nodes decoded as the walk decodes them, the block's text as walk_page
    and Page.add_block make it (an empty text node separates as whitespace does), the page's CLD2 input
    (page_cld2_input) of their whitespace-collapsed runs."""
    texts = [run.decode("utf-8", "replace") for run in runs]
    chunks = [" ".join(text.split()) for text in texts]
    return " ".join("".join(text or " " for text in texts).split()), language_id.page_cld2_input([c for c in chunks if c]), list(map(len, chunks))


@needs_compiled
def test_compiled_text_runs_are_the_python_ones_on_every_character_and_ill_formed_utf8():
    every = [chr(code) for code in range(0x110000) if not 0xD800 <= code < 0xE000]
    spaces = [c for c in every if c.isspace()]
    texts = ["".join(every[start:start + 60]) for start in range(0, len(every), 59)]
    texts += [f"{space}a{space}{space}b{space}" for space in spaces] + [f"a {space}b c {space}" for space in spaces]
    texts += [*spaces, "", "x", "a b", "a b ", " a b", "a b\x01c d\u00e9 f", "\x01\x7f\x85\x9f\ufffe\uffff"]
    runs = [text.encode("utf-8") for text in texts]
    runs += [b"\xc0\x80", b"\xc1\xbf", b"a\xe0\x80\x80b", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf5\x80", b"\xff",
             b"\x80 a", b"a\xc3", b"\xe4\xb8", b"\xf0\x9f\x98", b"\xf0\x9f\x98 \x80", b" \xe2\x80\xa8\xe2\x80", b"\xef\xbf\xbe",
             b"\xd0\xb0\xd0", b"ab\xed\xa0\x80cd", b"\xe4\xb8\xad\xf0\x9f\x98\x80\xef\xbf\xbf\xe4\xb8\xad\xe3\x80\x80\xc2\xa1"]
    assert html_walk_module().text_runs(runs) == text_runs(runs)
    for run in runs:  # each alone, and after a run ending in text and one ending in whitespace
        for before in ([], [b"w"], [b"w "]):
            assert html_walk_module().text_runs([*before, run, b"z"]) == text_runs([*before, run, b"z"]), run


def html_walk_module():
    return html_text.COMPILED


@needs_compiled
def test_compiled_cld2_input_is_the_python_one_on_every_character():
    every = "".join(chr(code) for code in range(0x110000))
    texts = [every, every[::-1], "", " ", "\t\n\r ", "\x1c", "\x0b a", "\ud800", " \udcff y", "a\x00b", "caf\u00e9\x85",
             "\u3000\u00a0", "\u4e2d\ufffe", "\U0001f600\uffff", "plain ASCII", "ASCII\x7f"]
    texts += [every[start:start + 40] for start in range(0, 0x110000, 997)]
    texts += [every[start:start + 3] for start in range(0, 0x3100, 5)]
    for text in texts:
        assert html_text.COMPILED.cld2_input(text) == language_id.cld2_input(text)


@needs_compiled
def test_compiled_key_hashes_are_blake2b_of_the_keys():
    from hashlib import blake2b

    every = "".join(chr(code) for code in range(0x110000) if not 0xD800 <= code < 0xE000)
    texts = ["", "a", "\u00e9", "\udcff", "a\udcffb", "\U0001f600", "a_b c\n\n-x-\n", every, every[::-1], PROBE_LINES]
    texts += ["a" * size for size in (15, 16, 17, 127, 128, 129, 255, 256, 257, 1_000, 100_000)]
    texts += ["".join(chr(code) for code in range(start, start + 200)) for start in (32, 0x3a0, 0xd7c0, 0x1f5f0)]
    for text in texts + texts:  # the second time from the memo of keys met
        assert html_text.COMPILED.paragraph_key_hashes(text) == [
            blake2b(key.encode("utf-8", "ignore"), digest_size=8).hexdigest() for key in html_text.paragraph_keys(text)]


@needs_compiled
def test_compiled_paragraph_keys_agree_on_every_character_and_on_real_pages(shared_data):
    every = "".join(chr(code) for code in range(0x110000) if not 0xD800 <= code < 0xE000)
    texts = [every, every[::-1].replace("\r", "\n"), "\n _a_ \n\n-\n", ""]
    for _, html in real_pages(shared_data):
        page = html_text.Page(None)
        html_text.walk_page(html_text.parse_tops(html), page, html_text.DEFAULT.max_text_chars)
        texts.append("\n".join(block[0] for block in page.blocks).casefold())
    for text in texts:
        assert html_text.COMPILED.paragraph_keys(text) == html_text.paragraph_keys(text)


@needs_compiled
def test_html_features_are_the_same_with_either_walk(monkeypatch):
    pages = [(TEMPLATED_PAGE, "https://example.org/en/report.html"), ("<p>x<p>", None), ("", None)]
    compiled = [html_text.html_features(html, url) for html, url in pages]
    monkeypatch.setattr(html_text, "WALK", html_text.walk_page)
    monkeypatch.setattr(html_text, "PAGE_PARAGRAPHS", html_text.page_paragraphs)
    assert [html_text.html_features(html, url) for html, url in pages] == compiled


@needs_compiled
def test_a_compiled_walk_for_another_selectolax_or_that_disagrees_is_not_used(monkeypatch):
    from parascout.udfs import html_walk

    monkeypatch.setattr(html_walk, "SELECTOLAX_VERSION", "0.0.1")
    compiled, why = html_text.compiled_extension()
    assert compiled is None and "built for selectolax 0.0.1" in why
    monkeypatch.undo()

    walk_page = html_walk.walk_page

    def drops_titles(tops, page, max_text_chars):
        walk_page(tops, page, max_text_chars)
        page.title_parts.clear()

    monkeypatch.setattr(html_walk, "walk_page", drops_titles)
    compiled, why = html_text.compiled_extension()
    assert compiled is None and "disagrees with the Python walk" in why
    monkeypatch.undo()

    monkeypatch.setattr(html_walk, "paragraph_keys", lambda folded: folded.split("\n"))
    compiled, why = html_text.compiled_extension()
    assert compiled is None and "paragraph keys disagree" in why
    monkeypatch.undo()

    page_paragraphs = html_walk.page_paragraphs

    def no_boilerplate(*arguments):
        return [{**paragraph, "boilerplate": False} for paragraph in page_paragraphs(*arguments)]

    monkeypatch.setattr(html_walk, "page_paragraphs", no_boilerplate)
    compiled, why = html_text.compiled_extension()
    assert compiled is None and "paragraphs disagree" in why
    monkeypatch.undo()

    monkeypatch.setattr(html_walk, "cld2_input", lambda text: text.encode("utf-8", "ignore"))
    compiled, why = html_text.compiled_extension()
    assert compiled is None and "CLD2 input disagrees" in why


def test_a_built_extension_is_in_use():
    """A built udfs.html_walk that the import-time probe rejects fails here instead of skipping the tests above."""
    try:
        importlib.import_module("parascout.udfs.html_walk")
    except ImportError as error:
        pytest.skip(f"udfs/html_walk is not built ({error})")
    if os.environ.get("PARASCOUT_HTML_WALK", "").lower() == "python":
        pytest.skip("PARASCOUT_HTML_WALK=python")
    assert html_text.COMPILED is not None, html_text.WALK_ENGINE


def test_without_the_extension_the_python_walk_is_used_and_says_why(monkeypatch):
    monkeypatch.delenv("PARASCOUT_HTML_WALK", raising=False)
    monkeypatch.setitem(sys.modules, "parascout.udfs.html_walk", None)  # import fails, as when it is not built
    compiled, why = html_text.compiled_extension()
    assert compiled is None and "make walk" in why
    monkeypatch.setenv("PARASCOUT_HTML_WALK", "python")
    assert html_text.compiled_extension() == (None, "PARASCOUT_HTML_WALK=python")


def test_the_build_never_fails_make_install_and_says_why(monkeypatch, capsys):
    def missing(work):
        raise build_html_walk.BuildSkipped("no C compiler")

    monkeypatch.setattr(build_html_walk, "build", missing)
    assert build_html_walk.main([]) == 0
    assert "not built: no C compiler" in capsys.readouterr().out
    assert build_html_walk.main(["--strict"]) == 1


def test_the_walk_pauses_the_cyclic_collector_and_gives_it_back_as_it_was():
    """A page's walk and paragraph step run with no cyclic collection (they make no cycles), and the collector is
    running again after them only if it ran before, whichever threads walk at once."""
    import gc
    import threading

    page = "<html><body>" + "".join(f'<p><a href="/p{i}">link {i}</a> text {i}</p>' for i in range(3000)) + "</body>"
    tops, walked = html_text.parse_tops(page), html_text.PAGE("http://a.example/")
    thresholds = gc.get_threshold()
    gc.set_threshold(1)  # a collection at every new container while the collector runs: thousands in this walk
    try:
        collections = gc.get_stats()[0]["collections"]
        html_text.WALK(tops, walked, html_text.DEFAULT.max_text_chars)
        html_text.PAGE_PARAGRAPHS(walked.blocks, None, "eng", False)
        assert gc.get_stats()[0]["collections"] - collections < 10 and gc.isenabled()
    finally:
        gc.set_threshold(*thresholds)
    gc.disable()
    try:
        html_text.html_features(page, "http://a.example/")
        assert not gc.isenabled()
    finally:
        gc.enable()
    threads = [threading.Thread(target=lambda: [html_text.html_features(page, "http://a.example/") for _ in range(5)])
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert gc.isenabled() and collector.PAUSED[0] == 0
