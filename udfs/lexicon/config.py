"""LexiconConfig: the knobs train-lexicon learns a lexicon with (udfs.lexicon.training, lexicon_readers and
the job's archive rounds), with today's values.

Set from train-lexicon's `--conf` section (`train-lexicon: {training: {min_prob: 0.02}}`) and recorded in its report.
"""
from __future__ import annotations

from dataclasses import dataclass

from parascout.udfs.common.stage_config import StageConfig, knob


@dataclass(frozen=True)
class LexiconConfig(StageConfig):
    """train-lexicon's knobs: IBM model 1's pruning, which paragraphs of a page pair teach it, hub pages, the
    second round's proposals and the size of the cross-fit the driver runs."""

    min_prob: float = knob(
        0.01, "entries below this symmetric probability sqrt(p(t|s) p(s|t)) are dropped when a lexicon is written",
        low=0, high=1)
    max_translations: int = knob(10, "most translations kept per source word (the most probable)", low=1)
    max_sentence_words: int = knob(
        200, "longer texts are cut to this many words before EM (a text pair's links grow with the product of its "
             "lengths)", low=1)
    paragraph_length_ratio: float = knob(
        0.3, "paragraphs of a page pair teach the lexicon as a pair when the smaller share of its page's text is at "
             "least this times the larger", low=0, high=1)
    max_page_pairs: int = knob(
        2, "a page in more of the second round's training pairs (verify-pairs' accepted pairs) than this is a hub "
           "other sites link to: its pairs teach the words of unrelated pages, so they are left out", low=0)
    max_confident_page_pairs: int = knob(
        5, "... and in more of the first round's confident pairs than this (a translation's switcher also pairs it "
           "with the other language's home and section pages)", low=0)
    min_paragraph_length_r: float = knob(
        0.9, "the second round proposes a rejected mutual-best pair whose paragraph lengths correlate at least this "
             "much (too few paragraphs to correlate: as many on both sides), learned only when cross-fitted",
             low=-1, high=1)
    max_cross_fit_pairs: int = knob(
        20_000, "the cross-fit (a lexicon per fold, on the driver) is skipped, and the report says so, above this "
                "many judged pairs", low=0)
    max_cross_fit_pages: int = knob(200_000, "... or this many pages on their hosts in the two languages", low=0)
    max_cross_fit_rivals: int = knob(1_000_000, "... or this many page pairs to score", low=0)


DEFAULT = LexiconConfig()
