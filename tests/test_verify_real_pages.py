"""verify-pairs' language check on real pages: pairs of the real-sites archive (real GIMP, Debian and KiCad manual
pages, read from its WARC files), translated, partly translated and left untranslated."""
import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from parascout.udfs.common.lexicon import Lexicon
from parascout.udfs.fetch.documents import DOC_COLUMNS, parse_record
from parascout.udfs.verify.structure import ThresholdRule
from parascout.udfs.verify.verification import verify_host

ARCHIVE = Path(__file__).resolve().parents[2] / "shared" / "data" / "real-sites"
pytestmark = pytest.mark.skipif(not ARCHIVE.exists(), reason="the real-sites archive (../shared/data/real-sites) "
                                                              "is absent")
#: (English page, French page, class in the archive's truth, its untranslated share)
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


def index_entries(urls: set[str]) -> dict[str, dict]:
    entries = {}
    with gzip.open(ARCHIVE / "indexes" / "cdx-00000.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            fields = json.loads(line.split(" ", 2)[2])
            if fields["url"] in urls and fields["status"] == "200":
                entries[fields["url"]] = fields
    return entries


def page_row(url: str, entry: dict) -> dict:
    with open(ARCHIVE / entry["filename"], "rb") as warc:
        warc.seek(int(entry["offset"]))
        doc = parse_record(gzip.decompress(warc.read(int(entry["length"]))), url)
    paragraphs = doc.pop("page_paragraphs")
    main = [p for p in paragraphs if not p["boilerplate"]]
    return {**{column: None for column in DOC_COLUMNS}, **doc, "url": url, "host": url.split("/")[2],
            "text_paragraphs": paragraphs, "main_text": "\n".join(p["text"] for p in main), "duplicate_of": None}


@pytest.fixture(scope="module")
def judged() -> pd.DataFrame:
    urls = {url for pair in PAIRS for url in pair[:2]}
    entries = index_entries(urls)
    assert set(entries) == urls, "the archive lacks a page this test reads"
    rows = []
    for host in {url.split("/")[2] for url in urls}:
        pages = pd.DataFrame([page_row(url, entries[url]) for url in sorted(urls) if url.split("/")[2] == host])
        pairs = pd.DataFrame([{"host": host, "src_url": en, "trg_url": fr, "src_lang": "eng", "trg_lang": "fra",
                               "source": "handle"} for en, fr, _ in PAIRS if en.split("/")[2] == host])
        rows.append(verify_host(pairs, pages, ThresholdRule().to_dict(), [Lexicon("eng", "fra", {})]))
    result = pd.concat(rows, ignore_index=True)
    return result[result["role"] == "candidate"].set_index("trg_url")


@pytest.mark.parametrize("src_url,trg_url,kind", PAIRS)
def test_real_pairs_are_in_their_languages_unless_left_untranslated(judged, src_url, trg_url, kind):
    row = judged.loc[trg_url]
    if kind == "untranslated":
        assert row["reason"] == "untranslated" and not row["lang_ok"]
    else:
        assert row["lang_ok"], (row["src_lang_share"], row["trg_lang_share"])
        assert row["trg_lang_share"] > 0.5
        if kind == "partial":
            assert row["trg_lang_share"] < 0.95  # its English leftovers are seen, and do not sink it
