"""AlignmentConfig: the costs, priors and thresholds export-bitext splits, aligns and filters sentences with
(udfs.export.bitext.sentences, .align, .filters), with today's values.

Set from export-bitext's `--conf` section (`export-bitext: {alignment: {max_length_ratio: 2.5}}`) and recorded in its
report. The sentence cap of a page stays the `--max-sentences` option.
"""
from __future__ import annotations

from dataclasses import dataclass

from parascout.udfs.common.code_text import CodeConfig
from parascout.udfs.common.stage_config import knob


@dataclass(frozen=True)
class AlignmentConfig:
    """export-bitext's knobs: sentence splitting, the aligner's length, lexicon and structure costs, the merging of
    unaligned sentences after the DP, and the sentence-pair filters."""

    max_sentence_chars: int = knob(
        2_000, "a sentence is cut to this many characters: a page's one unpunctuated block stays bounded")
    length_variance: float = knob(
        6.8, "Gale & Church's variance s2 of the length difference per character (lengths only, no lexicon)")
    lexicon_length_variance: float = knob(
        50.0, "with a lexicon: the same variance, flatter: real translations' lengths vary more and the words tell more")
    lexicon_weight: float = knob(
        12.0, "with a lexicon: weight of a bead's lexical dissimilarity against its length and prior costs")
    min_translation_prob: float = knob(
        0.05, "a lexicon entry below this probability links no words (rare entries are mostly noise)")
    idf_power: float = knob(
        1.0, "a word weighs log(1 + sentences / sentences holding it) to this power: a word in every sentence tells "
             "little")
    ratio_tolerance: float = knob(
        0.15, "with a lexicon: align again with the paired sentences' length ratio when its log is this far from the "
              "documents' (an untranslated run skews the documents')")
    max_document_ratio: float = knob(
        8.0, "the documents' target / source length ratio is clipped to [1/this, this]: a near-empty side says "
             "nothing about sentence lengths")
    lexicon_null_prior: float = knob(
        0.2, "with a lexicon: P(1-0) = P(0-1); web pages hold untranslated notes and furniture")
    lexicon_merge_prior: float = knob(
        0.15, "with a lexicon: P(2-1) = P(1-2); the words tell a merged bead from a 1-1 beside an unaligned sentence")
    lexicon_two_two_prior: float = knob(
        0.0005, "with a lexicon: P(2-2); the words tell it from two 1-1 beads, so it is rare")
    null_length_cost: float = knob(
        0.0, "with a lexicon: a 1-0 / 0-1 bead's length term (its words already cost it)")
    null_similarity_share: float = knob(
        0.7, "with a lexicon: a 1-0 / 0-1 bead costs as a pair with this share of the document's typical similarity "
             "(median best 1-1): a pair needs about as many words in common as the document's true pairs")
    absorb_share: float = knob(
        0.98, "with a lexicon: an unaligned sentence joins a neighbouring pair of its paragraph when the merged bead "
              "keeps at least this share of the pair's similarity")
    detach_min_share: float = knob(
        0.15, "with a lexicon: a first or last sentence of a bead's side may leave it only when it holds at least "
              "this share of its side's words ...")
    detach_unique_share: float = knob(
        0.05, "... and the links only it adds are under this times that share (an untranslated verse glued to its "
              "translated neighbour) ...")
    detach_min_length: float = knob(
        0.5, "... and it has at least this times the words of the page's median sentence (a short tag line stays)")
    crossing_cost: float = knob(
        6.0, "paragraph structure: cost of each paragraph boundary inside one side of a bead")
    boundary_cost: float = knob(
        2.0, "paragraph structure: cost of a bead opening a paragraph on one side only (boundaries as soft anchors)")
    type_mismatch_cost: float = knob(
        8.0, "paragraph structure: cost of a title or heading paired with a sentence, or a list item with body text")
    max_length_ratio: float = knob(
        3.0, "filter length_ratio: a sentence pair whose lengths, in the documents' own ratio, differ by more than "
             "this factor is not exported")
    min_cld2_chars: int = knob(
        40, "filter wrong_language: CLD2 judges only sentences of at least this many characters (shorter: noise)")

    code: CodeConfig = knob(
        CodeConfig(), "what tells code from prose: filter code drops a sentence pair either side of which is code "
                      "(CodeConfig)")


DEFAULT = AlignmentConfig()
