"""AlignmentConfig: the costs, priors and thresholds export-bitext splits, aligns and filters sentences with
(udfs.export.bitext.sentences, .align, .filters), with today's values.

Set from export-bitext's `--conf` section (`export-bitext: {alignment: {max_length_ratio: 2.5}}`) and recorded in its
report. The sentence cap of a page stays the `--max-sentences` option.
"""
from __future__ import annotations

from dataclasses import dataclass

from parascout.udfs.common.code_text import CodeConfig
from parascout.udfs.common.stage_config import StageConfig, knob


@dataclass(frozen=True)
class AlignmentConfig(StageConfig):
    """export-bitext's knobs: sentence splitting, the aligner's length, lexicon and structure costs, the merging of
    unaligned sentences after the DP, and the sentence-pair filters."""

    max_sentence_chars: int = knob(
        2_000, "a sentence is cut to this many characters: a page's one unpunctuated block stays bounded", low=1)
    length_variance: float = knob(
        6.8, "Gale & Church's variance s2 of the length difference per character (lengths only, no lexicon)", above=0)
    lexicon_length_variance: float = knob(
        50.0, "with a lexicon: the same variance, flatter: real translations' lengths vary more and the words tell more",
        above=0)
    lexicon_weight: float = knob(
        12.0, "with a lexicon: weight of a bead's lexical dissimilarity against its length and prior costs", low=0)
    min_translation_prob: float = knob(
        0.05, "a lexicon entry below this probability links no words (rare entries are mostly noise)", low=0, high=1)
    idf_power: float = knob(
        1.0, "a word weighs log(1 + sentences / sentences holding it) to this power: a word in every sentence tells "
             "little", low=0)
    ratio_tolerance: float = knob(
        0.15, "with a lexicon: align again with the paired sentences' length ratio when its log is this far from the "
              "documents' (an untranslated run skews the documents')", low=0)
    max_document_ratio: float = knob(
        8.0, "the documents' target / source length ratio is clipped to [1/this, this]: a near-empty side says "
             "nothing about sentence lengths", low=1)
    lexicon_null_prior: float = knob(
        0.2, "with a lexicon: P(1-0) = P(0-1); web pages hold untranslated notes and furniture", above=0, high=1)
    lexicon_merge_prior: float = knob(
        0.15, "with a lexicon: P(2-1) = P(1-2); the words tell a merged bead from a 1-1 beside an unaligned sentence",
        above=0, high=1)
    lexicon_two_two_prior: float = knob(
        0.0005, "with a lexicon: P(2-2); the words tell it from two 1-1 beads, so it is rare", above=0, high=1)
    null_length_cost: float = knob(
        0.0, "with a lexicon: a 1-0 / 0-1 bead's length term (its words already cost it)", low=0)
    null_similarity_share: float = knob(
        0.7, "with a lexicon: a 1-0 / 0-1 bead costs as a pair with this share of the document's typical similarity "
             "(median best 1-1): a pair needs about as many words in common as the document's true pairs", low=0)
    absorb_share: float = knob(
        0.98, "with a lexicon: an unaligned sentence joins a neighbouring pair of its paragraph when the merged bead "
              "keeps at least this share of the pair's similarity (above 1: never)", low=0)
    detach_min_share: float = knob(
        0.15, "with a lexicon: a first or last sentence of a bead's side may leave it only when it holds at least "
              "this share of its side's words ...", low=0, high=1)
    detach_unique_share: float = knob(
        0.05, "... and the links only it adds are under this times that share (an untranslated verse glued to its "
              "translated neighbour) ...", low=0)
    detach_min_length: float = knob(
        0.5, "... and it has at least this times the words of the page's median sentence (a short tag line stays)",
        low=0)
    crossing_cost: float = knob(
        6.0, "paragraph structure: cost of each paragraph boundary inside one side of a bead", low=0)
    boundary_cost: float = knob(
        2.0, "paragraph structure: cost of a bead opening a paragraph on one side only (boundaries as soft anchors)",
        low=0)
    type_mismatch_cost: float = knob(
        8.0, "paragraph structure: cost of a title or heading paired with a sentence, or a list item with body text",
        low=0)
    max_length_ratio: float = knob(
        3.0, "filter length_ratio: a sentence pair whose lengths, in the documents' own ratio, differ by more than "
             "this factor is not exported", low=1)
    min_cld2_chars: int = knob(
        40, "filter wrong_language: CLD2 judges only sentences of at least this many characters (shorter: noise)",
        low=0)

    code: CodeConfig = knob(
        CodeConfig(), "what tells code from prose: filter code drops a sentence pair either side of which is code "
                      "(CodeConfig)")


DEFAULT = AlignmentConfig()
