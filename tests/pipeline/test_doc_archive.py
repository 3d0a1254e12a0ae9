"""testkit.doc_archive: an archive built from Debian documentation packages' HTML, read back by the readers the
pipeline uses (warcio at the CDX offsets), with the truth's classes by the real-sites archives' block rule."""
from __future__ import annotations

import gzip
import json

from warcio.archiveiterator import ArchiveIterator

from testkit.doc_archive import build, text_blocks, untranslated_shares

ENGLISH = ["The package manager installs software from the archive and keeps it up to date.",
           "Each source is described by one line in the sources list, with its distribution and components.",
           "Security updates are published separately and should always be enabled on a server."]
FRENCH = ["Le gestionnaire de paquets installe les logiciels depuis l'archive et les tient à jour.",
          "Chaque source est décrite par une ligne de la liste des sources, avec sa distribution et ses composants.",
          "Les mises à jour de sécurité sont publiées à part et doivent toujours être activées sur un serveur."]


def page(title: str, paragraphs: list[str], lang: str) -> str:
    body = "".join(f"<p>{text}</p>" for text in paragraphs)
    return (f'<html lang="{lang}"><head><title>{title}</title></head><body><h1>{title}</h1>{body}'
            f"<pre>apt-get install --no-install-recommends the-package-we-want</pre></body></html>")


def handbook(root, code: str, name: str, html: str) -> None:
    folder = root / "usr/share/doc/debian-handbook/html" / code
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(html, encoding="utf-8")


def test_blocks_leave_code_and_short_lines_out():
    blocks = text_blocks(page("Apt", ENGLISH, "en").encode())
    assert blocks == ENGLISH  # the title and the heading are under 3 words; the <pre> command is code


def test_an_english_copy_is_untranslated_and_a_half_copy_partial():
    english = page("Apt", ENGLISH, "en").encode()
    assert untranslated_shares(english, page("Apt", FRENCH, "fr").encode())["untranslated_share"] == 0
    assert untranslated_shares(english, page("Apt", ENGLISH, "fr").encode())["untranslated_share"] == 1
    half = untranslated_shares(english, page("Apt", FRENCH[:2] + ENGLISH[2:], "fr").encode())
    assert 0.2 < half["untranslated_share"] <= 0.5


def test_the_archive_holds_every_page_at_its_url_and_the_truth_classes_its_pairs(tmp_path):
    packages, out = tmp_path / "pkg", tmp_path / "archive"
    for name in ("index.html", "apt.html"):
        handbook(packages, "en-US", name, page("Apt", ENGLISH, "en"))
        handbook(packages, "fr-FR", name, page("Apt", FRENCH, "fr"))
    handbook(packages, "de-DE", "apt.html", page("Apt", ENGLISH, "de"))  # left in English
    stats = build(packages, out, leave_out=0.0, seed=1)
    assert stats["pages"] == 5 and stats["pairs"]["fr"] == {"debian-handbook.info": {"translated": 2}}
    assert stats["pairs"]["de"] == {"debian-handbook.info": {"untranslated": 1}}
    truth = (out / "truth" / "pairs_en-de.tsv").read_text().splitlines()
    assert truth[1].split("\t")[:4] == ["debian-handbook.info", "https://debian-handbook.info/browse/en-US/stable/apt.html",
                                        "https://debian-handbook.info/browse/de-DE/stable/apt.html", "untranslated"]
    with gzip.open(out / "indexes" / "cdx-00000.gz", "rt") as index:
        lines = index.read().splitlines()
    assert lines == sorted(lines) and len(lines) == 5
    for line in lines:
        fields = json.loads(line.split(" ", 2)[2])
        with open(out / fields["filename"], "rb") as warc:
            warc.seek(int(fields["offset"]))
            record = next(iter(ArchiveIterator(warc)))
            assert record.rec_headers.get_header("WARC-Target-URI") == fields["url"]
            assert b"<title>Apt</title>" in record.content_stream().read()
        assert fields["languages"].split(",")[0] == ("fra" if "/fr-FR/" in fields["url"] else "eng")


def test_a_line_break_of_the_source_is_no_block_edge():
    wrapped = "<html><body><p>The package manager installs\nsoftware from the archive.</p></body></html>"
    assert text_blocks(wrapped.encode()) == ["The package manager installs software from the archive."]
