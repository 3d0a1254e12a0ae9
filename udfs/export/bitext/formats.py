"""The files a corpus builder's tools read: Bitextor document / sentence TSV and TMX 1.4b.

- documents, `<A>-<B>.documents.gz`: `src_url \\t trg_url \\t src_doc \\t trg_doc`, the texts base64 (Bitextor's
  document output, granularity documents);
- sentences, `<A>-<B>.sent.gz`: `src_url \\t trg_url \\t src_text \\t trg_text \\t aligner_score` (Bitextor's
  sentence output, what bifixer and bicleaner read); tabs and line breaks inside a URL or text become spaces;
- TMX 1.4b: one <tu> per unique sentence pair, with props count, score and the first url pair.
The TSVs open with a line naming their columns, as Bitextor 8.2+ writes them and `bifixer --header` reads them;
format "bitextor-8.1" leaves it out (columns by position, Bitextor 8.1 and `bifixer` without --header).
Readers are here too, so tests (and users) can read back exactly what was written, in either format.
"""
from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from xml.sax.saxutils import escape, quoteattr

#: the TSV conventions: Bitextor 8.2+ (a header line, the default) and Bitextor 8.1 (none)
TSV_FORMATS = ("bitextor", "bitextor-8.1")
#: the columns, named as Bitextor 8.3 names them (its Snakefile's documents header; docs/OUTPUT.md's sent columns)
DOCUMENT_COLUMNS = ("src_url", "trg_url", "src_doc", "trg_doc")
SENTENCE_COLUMNS = ("src_url", "trg_url", "src_text", "trg_text", "aligner_score")
#: the file names after the pair label (`eng-fra.sent.gz`), Bitextor's `{lang1}-{lang2}.sent.gz`
DOCUMENTS_SUFFIX = ".documents.gz"
SENTENCES_SUFFIX = ".sent.gz"
#: the names the TSVs had before Bitextor 8.2's, header-less, which the real-sites archives' scorer (score.py) reads:
#: export-bitext writes these copies too on a local root
EARLIER_NAMES = {DOCUMENTS_SUFFIX: ".documents.tsv.gz", SENTENCES_SUFFIX: ".sent.tsv.gz"}

#: tabs and every line break a reader may split on: \\n and \\r (csv, pandas, Bitextor's tools), and the others
#: of Python's str.splitlines and Unicode (vertical tab, form feed, file/group/record separators, NEL, U+2028/9)
_FIELD_SPACE = re.compile("[\t\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+")
#: what XML 1.0 forbids in a document (C0 controls but tab and line breaks, lone surrogates, U+FFFE, U+FFFF)
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def tsv_field(text: str | None) -> str:
    """Text as one field of a TSV line: its tabs and line breaks (_FIELD_SPACE) as one space."""
    return _FIELD_SPACE.sub(" ", text or "")


def tsv_header(columns: tuple[str, ...], tsv_format: str) -> str:
    """A TSV file's first line: its column names in format "bitextor", nothing in "bitextor-8.1"."""
    if tsv_format not in TSV_FORMATS:
        raise ValueError(f"unknown TSV format {tsv_format!r}: one of {', '.join(TSV_FORMATS)}")
    return "\t".join(columns) + "\n" if tsv_format == "bitextor" else ""


def _fields(lines: Iterable[str], columns: tuple[str, ...]) -> Iterator[list[str]]:
    """Each data line's fields. A first line naming a column first is the header: it must name exactly `columns`
    (a URL is never "src_url"), and is skipped; without one the fields are read by position."""
    for number, line in enumerate(lines):
        fields = line.rstrip("\n").split("\t")
        if number == 0 and fields[0] == columns[0]:
            if tuple(fields) != columns:
                raise ValueError(f"header {fields} is not {list(columns)}")
            continue
        yield fields


def _base64(text: str | None) -> str:
    return base64.b64encode((text or "").encode("utf-8")).decode("ascii")


def document_line(src_url: str, trg_url: str, src_text: str, trg_text: str) -> str:
    return f"{tsv_field(src_url)}\t{tsv_field(trg_url)}\t{_base64(src_text)}\t{_base64(trg_text)}\n"


def read_document_lines(lines: Iterable[str]) -> Iterator[tuple[str, str, str, str]]:
    """A documents file's rows, texts decoded (either format)."""
    for src_url, trg_url, src, trg in _fields(lines, DOCUMENT_COLUMNS):
        yield src_url, trg_url, base64.b64decode(src).decode("utf-8"), base64.b64decode(trg).decode("utf-8")


def sentence_line(src_url: str, trg_url: str, src_text: str, trg_text: str, score: float) -> str:
    return f"{tsv_field(src_url)}\t{tsv_field(trg_url)}\t{tsv_field(src_text)}\t{tsv_field(trg_text)}\t{score:.4f}\n"


def read_sentence_lines(lines: Iterable[str]) -> Iterator[tuple[str, str, str, str, float]]:
    """A sentences file's rows (either format)."""
    for src_url, trg_url, src, trg, score in _fields(lines, SENTENCE_COLUMNS):
        yield src_url, trg_url, src, trg, float(score)


def _xml_text(text: str) -> str:
    return escape(_XML_INVALID.sub("", text or ""))


def tmx_header(src_code: str, tool_version: str, created_at: datetime | None = None) -> str:
    """The opening of a TMX 1.4b file (`src_code`: the source language tag, e.g. 'en'; `created_at`: the data's
    time, so the same data gives the same file, default now)."""
    created = (created_at or datetime.now(timezone.utc)).astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE tmx SYSTEM "tmx14.dtd">\n<tmx version="1.4">\n'
            f'  <header creationtool="parascout" creationtoolversion={quoteattr(tool_version)} segtype="sentence" '
            f'o-tmf="parascout" adminlang="en" srclang={quoteattr(src_code)} datatype="plaintext" '
            f'creationdate="{created}"/>\n  <body>\n')


def tmx_unit(number: int, src_code: str, trg_code: str, src_text: str, trg_text: str, count: int, score: float,
             src_url: str, trg_url: str) -> str:
    props = "".join(f'      <prop type={quoteattr(kind)}>{_xml_text(value)}</prop>\n' for kind, value in
                    (("count", str(count)), ("score", f"{score:.4f}"), ("src-url", src_url), ("trg-url", trg_url)))
    return (f'    <tu tuid="{number}" srclang={quoteattr(src_code)}>\n{props}'
            f'      <tuv xml:lang={quoteattr(src_code)}><seg>{_xml_text(src_text)}</seg></tuv>\n'
            f'      <tuv xml:lang={quoteattr(trg_code)}><seg>{_xml_text(trg_text)}</seg></tuv>\n    </tu>\n')


TMX_FOOTER = "  </body>\n</tmx>\n"
