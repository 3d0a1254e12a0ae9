"""An archive of real multilingual documentation in CommonCrawl's formats, built from Debian's documentation packages,
for scoring the pipeline on sites no setting was chosen on (the real-sites archives' layout and truth);
benchmarks/build_doc_archive.py is its command line.

Sites: The Debian Administrator's Handbook (debian-handbook.info, `/browse/<ll-CC>/stable/<page>.html`, the
package's 127 pages per language) and the Debian Reference (www.debian.org, `.../debian-reference/<page>.<ll>.html`),
English with French, German and Spanish, and for the Handbook Italian, Brazilian Portuguese and Russian where asked.
Each page's real HTML at its public URL, one WARC response record each (the same bytes at every build), a CDX line
with CLD2's languages as CommonCrawl writes them; a quarter of each translation left out (seeded per site and
language), so that English pages lack partners.

The truth is the real-sites archives' rule, computed here from the HTML alone (not by parascout): of a translated
page's text blocks (block elements' text without pre, code, script and style; 20 characters and 3 words or more),
the character share that is identical to a block of the English page or that CLD2 reliably calls 90% English or
more (blocks of 150 characters or more) is its untranslated share: `translated` <= 0.2 < `partial` <= 0.5 <
`untranslated`. The archive's scorer is copied from ../shared/data/real-sites-2 where it is present.
"""
from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import lxml.html
import pycld2

from parascout.udfs.common.langs import cld2_to_iso639_3
from parascout.udfs.common.urls import surt
from parascout.udfs.index.cdx import format_cdx_line
from parascout.udfs.sample_archive.warc import sha1_base32
from testkit.warc import record_bytes

SHARED = Path(os.environ.get("PARASCOUT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
#: the languages paired with English by default (the real-sites archives'); the Handbook has it, pt and ru too
L2S = ("fr", "de", "es")
TIMESTAMP = "20240215103000"
WARC_DATE = "2024-02-15T10:30:00Z"
WARC_NAME = "warc/CC-MAIN-20240215100000-20240215130000-00000.warc.gz"
#: elements whose text is a block of its own (the truth's unit); pre, code, script and style are left out
BLOCK_TAGS = {"address", "article", "aside", "blockquote", "br", "caption", "dd", "div", "dl", "dt", "figcaption",
              "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav",
              "ol", "p", "section", "table", "tbody", "td", "tfoot", "th", "thead", "title", "tr", "ul"}
LEFT_OUT_TAGS = ("pre", "code", "script", "style", "noscript", "kbd", "samp", "tt")
TRANSLATED, PARTIAL = 0.2, 0.5
BLOCK_EDGE = "\u2029"  # the paragraph separator: no page text holds it


@dataclass(frozen=True)
class Site:
    name: str  # the Debian package's name (the truth's `source`)
    host: str
    codes: dict  # language -> the code the site's paths use
    source: str  # the page's file under the packages' root: {code}, {page}
    url: str  # its public URL: {code}, {page}

    def pages(self, root: Path) -> list[str]:
        """The site's English page names ({page} of source)."""
        english = root / self.source.format(code=self.codes["en"], page="PAGE").lstrip("/")
        pattern = english.name.replace("PAGE", "*")
        cut = len(pattern) - 1  # what follows {page} in the file name
        return sorted(path.name[:len(path.name) - cut] for path in english.parent.glob(pattern)
                      if path.is_file() and path.name.endswith(".html"))


SITES = (
    Site("debian-handbook", "debian-handbook.info", {"en": "en-US", "fr": "fr-FR", "de": "de-DE", "es": "es-ES",
                                                     "it": "it-IT", "pt": "pt-BR", "ru": "ru-RU"},
         "/usr/share/doc/debian-handbook/html/{code}/{page}", "https://debian-handbook.info/browse/{code}/stable/{page}"),
    Site("debian-reference", "www.debian.org", {"en": "en", "fr": "fr", "de": "de", "es": "es"},
         "/usr/share/debian-reference/{page}.{code}.html",
         "https://www.debian.org/doc/manuals/debian-reference/{page}.{code}.html"),
)


def text_blocks(html: bytes) -> list[str]:
    """The page's text blocks by the truth's rule: block elements' text, whitespace-collapsed, without pre, code,
    script and style; 20 characters and 3 words or more."""
    tree = lxml.html.fromstring(html)
    for element in list(tree.iter(*LEFT_OUT_TAGS)):
        element.drop_tree()  # its tail stays
    for element in tree.iter():  # a block's edges marked; the source's own line breaks are spaces
        if isinstance(element.tag, str) and element.tag.lower() in BLOCK_TAGS:
            element.text = BLOCK_EDGE + (element.text or "")
            element.tail = BLOCK_EDGE + (element.tail or "")
    lines = (" ".join(line.split()) for line in tree.text_content().split(BLOCK_EDGE))
    return [line for line in lines if len(line) >= 20 and len(line.split()) >= 3]


def reliably_english(text: str) -> bool:
    try:
        reliable, _, details = pycld2.detect(text.encode("utf-8", "ignore"), isPlainText=True)
    except pycld2.error:
        return False
    return reliable and details[0][1] == "en" and details[0][2] >= 90


def untranslated_shares(english: bytes, translated: bytes) -> dict:
    """The truth's measures of a translated page against its English original."""
    original = set(text_blocks(english))
    blocks = text_blocks(translated)
    total = sum(map(len, blocks))
    identical = sum(len(block) for block in blocks if block in original)
    cld2_english = sum(len(block) for block in blocks
                       if block not in original and len(block) >= 150 and reliably_english(block))
    share = (identical + cld2_english) / total if total else 1.0
    return {"untranslated_share": round(share, 3), "identical_share": round(identical / total, 3) if total else 1.0,
            "cld2_en_share": round(cld2_english / total, 3) if total else 0.0, "l2_prose_chars": total}


def truth_class(share: float) -> str:
    return "translated" if share <= TRANSLATED else "partial" if share <= PARTIAL else "untranslated"


def cdx_languages(html: bytes) -> str:
    """CLD2's languages of a page, as CommonCrawl's CDX writes them (ISO 639-3, most of the text first)."""
    try:
        _, _, details = pycld2.detect(html, isPlainText=False)
    except pycld2.error:
        return ""
    codes = [cld2_to_iso639_3(code) for _, code, percent, _ in details if code != "un" and percent > 0]
    return ",".join(code for code in codes if code)


def build(packages: Path, out: Path, leave_out: float, seed: int, languages: tuple[str, ...] = L2S) -> dict:
    """Write warc/, indexes/ and truth/ under `out` for English and `languages` (where a site has them); the archive's
    counts. Each site and language leaves out its own seeded draw of pages, whatever other languages are built."""
    (out / "warc").mkdir(parents=True, exist_ok=True)
    (out / "indexes").mkdir(exist_ok=True)
    (out / "truth").mkdir(exist_ok=True)
    pages, pairs, cdx_lines, stats = [], {l2: [] for l2 in languages}, [], {"pages_by_host_lang": {}}
    offset = 0
    with open(out / WARC_NAME, "wb") as warc:
        for site in SITES:
            names = site.pages(packages)
            if not names:
                print(f"{site.name}: no pages under {packages} (extract the package there)", file=sys.stderr)
                continue
            kept = {"en": set(names)}
            for l2 in languages:  # a quarter of each translation left out, the site's entry page kept
                rng = random.Random(f"{seed}/{site.name}/{l2}")
                kept[l2] = {name for name in names if name.startswith("index") or rng.random() >= leave_out}
            for lang, code in site.codes.items():
                if lang not in kept:
                    continue
                for name in names:
                    path = packages / site.source.format(code=code, page=name).lstrip("/")
                    if name not in kept[lang] or not path.exists():
                        continue
                    html = path.read_bytes()
                    url = site.url.format(code=code, page=name)
                    record = record_bytes(url, html, warc_headers={  # the same bytes at every build
                        "WARC-Date": WARC_DATE, "WARC-Record-ID": f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, url)}>"})
                    warc.write(record)
                    languages_found = cdx_languages(html)
                    cdx_lines.append(format_cdx_line(surt(url), TIMESTAMP, {
                        "url": url, "mime": "text/html", "mime-detected": "text/html", "status": "200",
                        "digest": sha1_base32(html), "length": len(record), "offset": offset, "filename": WARC_NAME,
                        "charset": "UTF-8", "languages": languages_found}))
                    offset += len(record)
                    pages.append({"url": url, "lang": lang, "host": site.host, "doc": f"{site.name}:{name}",
                                  "source": site.name, "path": site.source.format(code=code, page=name), "html": html,
                                  "cld2": languages_found})
                    counts = stats["pages_by_host_lang"].setdefault(site.host, {})
                    counts[lang] = counts.get(lang, 0) + 1
    by_doc = {(page["doc"], page["lang"]): page for page in pages}
    for page in pages:
        if page["lang"] != "en":
            continue
        for l2 in languages:
            other = by_doc.get((page["doc"], l2))
            if other is None:
                continue
            shares = untranslated_shares(page["html"], other["html"])
            pairs[l2].append({"host": page["host"], "en_url": page["url"], "fr_url": other["url"],
                              "class": truth_class(shares["untranslated_share"]), "lang2": l2,
                              "source": page["source"], "doc": page["doc"], **shares,
                              "en_path": page["path"], "l2_path": other["path"]})
    write_truth(out, pages, pairs)
    with gzip.GzipFile(out / "indexes" / "cdx-00000.gz", "wb", mtime=0) as index:
        index.write("".join(line + "\n" for line in sorted(cdx_lines)).encode("utf-8"))
    stats.update({"pages": len(pages), "captures": len(cdx_lines), "seed": seed, "left_out": leave_out,
                  "pairs": {l2: classes(rows) for l2, rows in pairs.items()}})
    (out / "truth" / "stats.json").write_text(json.dumps(stats, indent=1))
    scorer = SHARED / "real-sites-2" / "score.py"
    if scorer.exists():
        shutil.copy(scorer, out / "score.py")
    return stats


def classes(rows: list[dict]) -> dict:
    found: dict = {}
    for row in rows:
        found.setdefault(row["host"], {}).setdefault(row["class"], 0)
        found[row["host"]][row["class"]] += 1
    return found


def write_tsv(path: Path, rows: list[dict], columns: list[str]) -> None:
    lines = ["\t".join(columns)] + ["\t".join(str(row.get(column, "")) for column in columns) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_truth(out: Path, pages: list[dict], pairs: dict) -> None:
    columns = ["host", "en_url", "fr_url", "class", "lang2", "source", "doc", "untranslated_share", "identical_share",
               "cld2_en_share", "l2_prose_chars", "en_path", "l2_path"]
    for l2, rows in pairs.items():
        write_tsv(out / "truth" / f"pairs_en-{l2}.tsv", rows, columns)
    french = pairs.get("fr", [])  # pairs.tsv and pages.tsv's kinds are en-fr's, as in the real-sites archives
    write_tsv(out / "truth" / "pairs.tsv", french, columns)
    in_fr = {row["en_url"] for row in french} | {row["fr_url"] for row in french}
    page_rows = [{**page, "kind": "paired" if page["url"] in in_fr else "monolingual" if page["lang"] in ("en", "fr")
                  else "third-language", "role": "page", "recaptured": 0}
                 for page in pages]
    write_tsv(out / "truth" / "pages.tsv", page_rows, ["url", "lang", "kind", "host", "cld2", "role", "doc", "dup_of",
                                                       "switch_to", "source", "path", "recaptured"])
    write_tsv(out / "truth" / "structural_pairs.tsv", [], ["en_url", "fr_url", "kind"])
