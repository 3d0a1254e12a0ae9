"""verify-pairs' language check on real pages: pairs of the real-sites archives (real GIMP, Debian and KiCad manual
pages; real LilyPond and Scilab reference pages whose examples are code in <pre>, in one <span> per token, or lists of
identifiers; read from their WARC files), translated, partly translated and left untranslated."""
import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from parascout.udfs.fetch.documents import DOC_COLUMNS, parse_record
from parascout.udfs.lexicon.lexicon import Lexicon
from parascout.udfs.verify.structure import ThresholdRule
from parascout.udfs.verify.verification import verify_host

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
ARCHIVE = SHARED / "real-sites"
ARCHIVE_2 = SHARED / "real-sites-2"
pytestmark = pytest.mark.skipif(not ARCHIVE.exists(), reason="the real-sites archive (../shared/data/real-sites) "
                                                              "is absent")
#: (English page, French page, class in the archive's truth)
PAIRS = [
    # CLD2 calls the whole French page English (its English footer outweighs its short French lines)
    ("https://docs.gimp.org/2.10/en/filters-distort.html", "https://docs.gimp.org/2.10/fr/filters-distort.html",
     "translated"),
    ("https://www.debian.org/releases/stable/amd64/ch02s01.en.html",
     "https://www.debian.org/releases/stable/amd64/ch02s01.fr.html", "translated"),
    # a third of the French page's prose is English
    ("https://docs.gimp.org/2.10/en/common-script-fu-errors.html",
     "https://docs.gimp.org/2.10/fr/common-script-fu-errors.html", "partial"),
    ("https://docs.gimp.org/2.10/en/customize-splashscreen.html",
     "https://docs.gimp.org/2.10/fr/customize-splashscreen.html", "partial"),
    # French pages whose text is mostly the English original
    ("https://docs.gimp.org/2.10/en/apcs02s02.html", "https://docs.gimp.org/2.10/fr/apcs02s02.html", "untranslated"),
    ("https://docs.gimp.org/2.10/en/apcs02s05.html", "https://docs.gimp.org/2.10/fr/apcs02s05.html", "untranslated"),
]


#: real-sites-2: (English page, partner page, class, partner language), code-heavy reference pages
SCILAB, LILYPOND = "https://help.scilab.org/docs/6.1.1", "https://lilypond.org/doc/v2.24/Documentation"
CODE_PAIRS = [
    # fully translated, examples in <pre class="scilabcode"> with a <span> per token (English identifiers, output)
    (f"{SCILAB}/en_US/clean.html", f"{SCILAB}/fr_FR/clean.html", "translated", "fra"),
    (f"{SCILAB}/en_US/typename.html", f"{SCILAB}/fr_FR/typename.html", "translated", "fra"),
    # a LilyPond template: a paragraph of prose, then the whole score as LilyPond input in <pre>
    (f"{LILYPOND}/learning/psalms.html", f"{LILYPOND}/learning/psalms.fr.html", "translated", "fra"),
    # a third of the French prose left in English (untranslated_share 0.35)
    (f"{SCILAB}/en_US/asec.html", f"{SCILAB}/fr_FR/asec.html", "partial", "fra"),
    # the English page inside the French help's navigation
    (f"{SCILAB}/en_US/base2dec.html", f"{SCILAB}/fr_FR/base2dec.html", "untranslated", "fra"),
    # a list of Scheme symbols, one per line ('chantquarterbar), under a translated title
    (f"{LILYPOND}/notation/list-of-breath-marks.html", f"{LILYPOND}/notation/list-of-breath-marks.fr.html",
     "translated", "fra"),
]


#: real-sites-2: a page's language as a reader sees the whole page. Every LilyPond page carries its manual's table of
#: contents (thousands of characters, which the main-text extractor calls boilerplate): on generated reference pages
#: it is the translation and the page's own list is English; a licence page translates its note and not the licence.
TEMPLATE_PAIRS = [
    (f"{LILYPOND}/notation/conditionals.html", f"{LILYPOND}/notation/conditionals.fr.html", "translated", "fra"),
    (f"{LILYPOND}/notation/text-markup-commands.html", f"{LILYPOND}/notation/text-markup-commands.fr.html",
     "translated", "fra"),
    (f"{LILYPOND}/notation/font.html", f"{LILYPOND}/notation/font.fr.html", "partial", "fra"),
    (f"{LILYPOND}/web/gpl.html", f"{LILYPOND}/web/gpl.fr.html", "untranslated", "fra"),
    (f"{LILYPOND}/web/fdl.html", f"{LILYPOND}/web/fdl.fr.html", "untranslated", "fra"),
]


def index_entries(urls: set[str], archive: Path = ARCHIVE) -> dict[str, dict]:
    entries = {}
    with gzip.open(archive / "indexes" / "cdx-00000.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            fields = json.loads(line.split(" ", 2)[2])
            if fields["url"] in urls and fields["status"] == "200":
                entries[fields["url"]] = fields
    return entries


def page_row(url: str, entry: dict, archive: Path = ARCHIVE) -> dict:
    with open(archive / entry["filename"], "rb") as warc:
        warc.seek(int(entry["offset"]))
        doc = parse_record(gzip.decompress(warc.read(int(entry["length"]))), url)
    paragraphs = doc.pop("page_paragraphs")
    main = [p for p in paragraphs if not p["boilerplate"]]
    return {**{column: None for column in DOC_COLUMNS}, **doc, "url": url, "host": url.split("/")[2],
            "text_paragraphs": paragraphs, "main_text": "\n".join(p["text"] for p in main), "duplicate_of": None}


def judge(archive: Path, pairs: list[tuple]) -> pd.DataFrame:
    """verify_host's candidate rows of (English page, partner page, class[, partner language]) pairs of an archive,
    by partner URL."""
    urls = {url for pair in pairs for url in pair[:2]}
    entries = index_entries(urls, archive)
    assert set(entries) == urls, "the archive lacks a page this test reads"
    rows = []
    for host in sorted({url.split("/")[2] for url in urls}):
        pages = pd.DataFrame([page_row(url, entries[url], archive) for url in sorted(urls) if url.split("/")[2] == host])
        on_host = [(pair[0], pair[1], pair[3] if len(pair) > 3 else "fra") for pair in pairs
                   if pair[0].split("/")[2] == host]
        for lang in sorted({lang for *_, lang in on_host}):
            frame = pd.DataFrame([{"host": host, "src_url": en, "trg_url": partner, "src_lang": "eng",
                                   "trg_lang": lang, "source": "handle"} for en, partner, pair_lang in on_host
                                  if pair_lang == lang])
            rows.append(verify_host(frame, pages, ThresholdRule().to_dict(), [Lexicon("eng", lang, {})]))
    result = pd.concat(rows, ignore_index=True)
    return result[result["role"] == "candidate"].set_index("trg_url")


@pytest.fixture(scope="module")
def judged() -> pd.DataFrame:
    return judge(ARCHIVE, PAIRS)


@pytest.mark.parametrize("src_url,trg_url,kind", PAIRS)
def test_real_pairs_are_in_their_languages_unless_left_untranslated(judged, src_url, trg_url, kind):
    assert_language_verdict(judged.loc[trg_url], kind)


def assert_language_verdict(row: pd.Series, kind: str, translated_share: float = 0.5) -> None:
    """An untranslated pair is rejected as such; a translated one passes with more than `translated_share` of its
    partner's prose in its language, a partial one with more than half and its English leftovers seen."""
    if kind == "untranslated":
        assert row["reason"] == "untranslated" and not row["lang_ok"]
        return
    assert row["lang_ok"], (row["src_lang_share"], row["trg_lang_share"])
    assert row["trg_lang_share"] > (translated_share if kind == "translated" else 0.5)
    if kind == "partial":
        assert row["trg_lang_share"] < 0.95  # its English leftovers are seen, and do not sink it


def judge_archive_2(pairs: list[tuple]) -> pd.DataFrame:
    if not ARCHIVE_2.exists():
        pytest.skip("the real-sites-2 archive (../shared/data/real-sites-2) is absent")
    return judge(ARCHIVE_2, pairs)


@pytest.fixture(scope="module")
def judged_code_pages() -> pd.DataFrame:
    return judge_archive_2(CODE_PAIRS)


@pytest.mark.parametrize("src_url,trg_url,kind,lang", CODE_PAIRS)
def test_code_in_any_markup_does_not_make_a_translation_untranslated(judged_code_pages, src_url, trg_url, kind, lang):
    row = judged_code_pages.loc[trg_url]
    assert_language_verdict(row, kind, translated_share=0.8)
    if kind != "untranslated":
        assert row["src_lang_share"] > 0.8  # the English page's code is not another language


@pytest.fixture(scope="module")
def judged_template_pages() -> pd.DataFrame:
    return judge_archive_2(TEMPLATE_PAIRS)


@pytest.mark.parametrize("src_url,trg_url,kind,lang", TEMPLATE_PAIRS)
def test_a_page_is_judged_by_all_its_prose_not_by_what_the_extractor_calls_main(judged_template_pages, src_url,
                                                                               trg_url, kind, lang):
    assert_language_verdict(judged_template_pages.loc[trg_url], kind)


#: real-sites-2: Scilab's section pages are named by a hash per language (no partner by URL); each lists its
#: function pages, which pair by URL (en_US/abs.html = fr_FR/abs.html). rank-pairs pairs them as neighbours.
SECTION_PAIRS = [
    (f"{SCILAB}/en_US/section_160fa80c1664d0f633ec5a4ad6975be7.html",
     f"{SCILAB}/fr_FR/section_9f5a259ddc3c537b4b464df212c07180.html", "translated"),
    (f"{SCILAB}/en_US/section_c1be09e30f84df9e317bcfd2ec4e6990.html",
     f"{SCILAB}/fr_FR/section_94b6381dbe29c519b7635ce73cd66818.html", "translated"),
    (f"{SCILAB}/en_US/section_92d4a113335616d17230759ae919fcb2.html",
     f"{SCILAB}/fr_FR/section_de2b8fa521ef8132aeabd574428ab9a4.html", "partial"),
    (f"{SCILAB}/en_US/section_3aafd536f8ccc91f7bd42797f44a6f94.html",
     f"{SCILAB}/fr_FR/section_e5e1e2529da7dacd3261a1eee0c56c41.html", "untranslated"),
]


@pytest.fixture(scope="module")
def judged_sections() -> pd.DataFrame:
    if not ARCHIVE_2.exists():
        pytest.skip("the real-sites-2 archive (../shared/data/real-sites-2) is absent")
    urls = {url for pair in SECTION_PAIRS for url in pair[:2]}
    entries = index_entries(urls, ARCHIVE_2)
    pages = pd.DataFrame([page_row(url, entries[url], ARCHIVE_2) for url in sorted(urls)])
    # the function pages the English sections list, paired by URL as bucket-handles pairs them
    listed = {link for url in urls if "/en_US/" in url for link in pages.set_index("url").loc[url, "outlinks"]
              if link.startswith(f"{SCILAB}/en_US/") and "/section_" not in link and link not in urls}
    pairs = pd.DataFrame([{"host": "help.scilab.org", "src_url": en, "trg_url": fr, "src_lang": "eng",
                           "trg_lang": "fra", "source": "neighbours"} for en, fr, _ in SECTION_PAIRS]
                         + [{"host": "help.scilab.org", "src_url": link, "trg_url": link.replace("/en_US/", "/fr_FR/"),
                             "src_lang": "eng", "trg_lang": "fra", "source": "handle"} for link in sorted(listed)])
    result = verify_host(pairs, pages, ThresholdRule().to_dict(), [Lexicon("eng", "fra", {})])
    return result[(result["role"] == "candidate") & (result["source"] == "neighbours")].set_index("trg_url")


@pytest.mark.parametrize("src_url,trg_url,kind", SECTION_PAIRS)
def test_section_pages_paired_by_their_links_are_judged_by_their_links_and_languages(judged_sections, src_url,
                                                                                     trg_url, kind):
    row = judged_sections.loc[trg_url]
    assert row["link_agreement"] == 1.0  # every function it lists is listed by the other, translated
    assert_language_verdict(row, kind)
