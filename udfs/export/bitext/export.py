"""Per document pair: sentences split, aligned, filtered; the pandas batch function export-bitext maps.

Input rows: host, src_url, trg_url, src_lang, trg_lang, p_parallel_content and, for both sides, the
`texts` paragraphs (struct list) and main_text. Output: one row per document pair with its status
(`ok`, a bad-input reason or `no_sentence_pairs_kept`), its paragraph lists, word counts and the array
of its beads (`sentences`: bead, bead_type, src_text, trg_text, score, reason; reason null = kept).
"""
from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping

import pandas as pd

from parascout.udfs.common import tables
from parascout.udfs.export.bitext import sentences as splitting
from parascout.udfs.export.bitext.align import align_segments
from parascout.udfs.export.bitext.config import DEFAULT, AlignmentConfig
from parascout.udfs.export.bitext.filters import UNALIGNED, filter_reason
from parascout.udfs.lexicon.readers import main_paragraphs as lexicon_main_paragraphs

#: the document pair's keys, which each of its `bitext_sentences` rows repeats
DOCUMENT_KEYS = ("site", "host", "src_url", "trg_url", "src_lang", "trg_lang")
#: a bead: a `bitext_sentences` row less its document's keys and lang_pair (the job adds both)
SENTENCE_STRUCT = tables.ddl("bitext_sentences", without=(*DOCUMENT_KEYS, tables.LANG_PAIR.name), struct=True)
#: a `bitext_documents` row less lang_pair (the job adds it), with its beads to explode into `bitext_sentences`
DOCUMENT_SCHEMA = f"{tables.ddl('bitext_documents', without=(tables.LANG_PAIR.name,))}, sentences array<{SENTENCE_STRUCT}>"
DOCUMENT_COLUMNS = [*tables.columns("bitext_documents", without=(tables.LANG_PAIR.name,)), "sentences"]
NO_PAIRS_KEPT = "no_sentence_pairs_kept"
BAD_REASONS = frozenset({"missing_src_text", "missing_trg_text", "empty_src_text", "empty_trg_text",
                         "too_many_src_sentences", "too_many_trg_sentences"})
FILTERED_REASONS = frozenset({NO_PAIRS_KEPT})


def main_paragraphs(paragraphs, main_text) -> list[tuple[str, str]] | None:
    """A page's non-boilerplate paragraphs (lexicon_readers.main_paragraphs) as (text, type) (main_text's lines,
    type 'text', when the paragraph list is absent)."""
    if paragraphs is not None:
        return [(p["text"], p.get("type") or "text") for p in lexicon_main_paragraphs(paragraphs)]
    if main_text is None or (isinstance(main_text, float) and pd.isna(main_text)):
        return None
    return [(line, "text") for line in str(main_text).split("\n") if line.strip()]


@functools.lru_cache(maxsize=16)
def cached_lexicon(path: str, src_lang: str, trg_lang: str):
    """The lexicon of a directory, oriented src -> trg, loaded once per Python worker (None: other pair); a run's
    rows of several language pairs come mixed, so the cache holds one lexicon per pair."""
    from parascout.udfs.lexicon.lexicon import lexicon_for, load_lexicon

    return lexicon_for([load_lexicon(path)], src_lang, trg_lang)


def export_document(row: dict, lexicon=None, tokenize=None, max_sentences: int = splitting.MAX_SENTENCES,
                    config: AlignmentConfig = DEFAULT) -> dict:
    """One document pair's output row (see the module docstring; `config`: the splitter's, aligner's and filters'
    knobs); never raises on bad text."""
    out = {key: row.get(key) for key in ("site", "host", "src_url", "trg_url", "src_lang", "trg_lang",
                                         "p_parallel_content")}
    out.update(status="ok", src_sentences=0, trg_sentences=0, sentence_pairs=0, src_words=0, trg_words=0,
               sentences=[])
    split = {}
    for side in ("src", "trg"):
        paragraphs = main_paragraphs(row.get(f"{side}_paragraphs"), row.get(f"{side}_main_text"))
        out[f"{side}_paragraphs"] = [text for text, _ in paragraphs] if paragraphs is not None else None
        out[f"{side}_text"] = "\n".join(out[f"{side}_paragraphs"]) if paragraphs is not None else None
        if paragraphs is None:
            out["status"] = out["status"] if out["status"] != "ok" else f"missing_{side}_text"
            continue
        sentences, reason = splitting.split_sentences(paragraphs, max_sentences, config.max_sentence_chars)
        if reason and out["status"] == "ok":
            out["status"] = {splitting.EMPTY_TEXT: f"empty_{side}_text"}.get(reason, f"too_many_{side}_sentences")
        split[side] = sentences
        out[f"{side}_sentences"] = len(sentences)
    if out["status"] != "ok":
        return out
    beads = align_segments(split["src"], split["trg"], out["src_lang"], out["trg_lang"], lexicon, tokenize,
                           config=config)
    src, trg = [s.text for s in split["src"]], [t.text for t in split["trg"]]
    ratio = sum(map(len, trg)) / max(sum(map(len, src)), 1)
    count = tokenize or (lambda text, lang: text.split())
    for number, bead in enumerate(beads):
        src_text = " ".join(src[i] for i in bead.src)
        trg_text = " ".join(trg[j] for j in bead.trg)
        reason = (UNALIGNED if not bead.src or not bead.trg
                  else filter_reason(src_text, trg_text, out["src_lang"], out["trg_lang"], ratio, config))
        src_words, trg_words = len(count(src_text, out["src_lang"])), len(count(trg_text, out["trg_lang"]))
        out["sentences"].append({"bead": number, "bead_type": bead.kind, "src_text": src_text, "trg_text": trg_text,
                                 "score": round(bead.score, 4), "reason": reason, "src_words": src_words,
                                 "trg_words": trg_words})
        if reason is None:
            out["sentence_pairs"] += 1
            out["src_words"] += src_words
            out["trg_words"] += trg_words
    if out["sentence_pairs"] == 0:
        out["status"] = NO_PAIRS_KEPT
    return out


def export_batches(batches: Iterator[pd.DataFrame], lexicon_paths: Mapping[frozenset[str], str] | None = None,
                   max_sentences: int = splitting.MAX_SENTENCES, config: AlignmentConfig = DEFAULT
                   ) -> Iterator[pd.DataFrame]:
    """mapInPandas body: every row a document pair with both sides' texts joined in, aligned with the lexicon
    of its language pair in `lexicon_paths` ({frozenset((src_lang, trg_lang)): directory}; none: lengths only)."""
    from threadpoolctl import threadpool_limits

    from parascout.udfs.common.language_id import tokenize

    with threadpool_limits(limits=1):  # the aligner's matrices are tiny: BLAS threads would only spin
        for batch in batches:
            rows = []
            for row in batch.to_dict("records"):
                path = (lexicon_paths or {}).get(frozenset((row["src_lang"], row["trg_lang"])))
                lexicon = cached_lexicon(path, row["src_lang"], row["trg_lang"]) if path else None
                rows.append(export_document(row, lexicon, tokenize, max_sentences, config))
            yield pd.DataFrame(rows, columns=DOCUMENT_COLUMNS)
