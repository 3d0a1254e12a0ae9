"""The files a corpus builder's tools read: Bitextor document / sentence TSV and TMX 1.4b.

- documents: `url1 \\t url2 \\t base64(text1) \\t base64(text2)` (Bitextor's document alignment output);
- sentences: `src_url \\t trg_url \\t src_text \\t trg_text \\t score` (Bitextor's sentence alignment
  output, what bifixer and bicleaner read); tabs and newlines inside a text become spaces;
- TMX 1.4b: one <tu> per unique sentence pair, with props count, score and the first url pair.
Readers are here too, so tests (and users) can read back exactly what was written.
"""
from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from xml.sax.saxutils import escape, quoteattr

_FIELD_SPACE = re.compile(r"[\t\r\n]+")
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def tsv_field(text: str | None) -> str:
    return _FIELD_SPACE.sub(" ", text or "")


def _base64(text: str | None) -> str:
    return base64.b64encode((text or "").encode("utf-8")).decode("ascii")


def document_line(src_url: str, trg_url: str, src_text: str, trg_text: str) -> str:
    return f"{tsv_field(src_url)}\t{tsv_field(trg_url)}\t{_base64(src_text)}\t{_base64(trg_text)}\n"


def read_document_lines(lines: Iterable[str]) -> Iterator[tuple[str, str, str, str]]:
    for line in lines:
        src_url, trg_url, src, trg = line.rstrip("\n").split("\t")
        yield src_url, trg_url, base64.b64decode(src).decode("utf-8"), base64.b64decode(trg).decode("utf-8")


def sentence_line(src_url: str, trg_url: str, src_text: str, trg_text: str, score: float) -> str:
    return f"{tsv_field(src_url)}\t{tsv_field(trg_url)}\t{tsv_field(src_text)}\t{tsv_field(trg_text)}\t{score:.4f}\n"


def read_sentence_lines(lines: Iterable[str]) -> Iterator[tuple[str, str, str, str, float]]:
    for line in lines:
        src_url, trg_url, src, trg, score = line.rstrip("\n").split("\t")
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
