"""ExtractionConfig: the knobs fetch-docs reads a page with (udfs.fetch.documents, html_text and page_walk), with
today's values: the bounds a page's markup and text are held to, the jusText-style rules that tell a page's main
text from its boilerplate, and how short a link label that names a language must be.

Set from fetch-docs' `--conf` section (`fetch-docs: {extraction: {good_chars: 80}}`), the bounds also as options
(`--max-text-chars`), and recorded in the job's report. index-warcs, the demo and the benchmarks read pages with the
defaults.
"""
from __future__ import annotations

from dataclasses import dataclass

from parascout.udfs.common.stage_config import StageConfig, knob


@dataclass(frozen=True)
class ExtractionConfig(StageConfig):
    """fetch-docs' knobs for one page: its bounds, then the paragraph classes (justext's, per block: bad, short,
    near-good or good, then the context pass), then the language of blocks and of link labels."""

    max_text_chars: int = knob(
        200_000, "paragraphs kept per page stop at this many characters (text_truncated, counted)", option=True, low=1)
    max_tag_attributes: int = knob(
        1_000, "a page with a tag holding more attributes is not parsed (html_too_complex): Lexbor's parse time "
               "grows with their square (8,000: ~0.1 s, 32,000: 2-3 s) inside one C call no time limit interrupts",
        option=True, low=1)
    max_nesting_depth: int = knob(
        2_000, "a page whose elements nest deeper is not parsed (html_too_complex; the same square law)",
        option=True, low=1)
    short_chars: int = knob(
        25, "a block shorter than this is short: the good or bad text around it decides (justext's length_low; CJK "
            "and Thai blocks count each character as three)", low=1)
    good_chars: int = knob(
        70, "a block this long or longer, with little link text, is good: main text (justext's length_high)", low=1)
    max_link_density: float = knob(
        0.75, "a block with a larger share of its characters inside links is a link list: bad (short: bad unless it "
              "sits in a run of short blocks)", above=0, high=1)
    max_good_link_density: float = knob(
        0.5, "a good block has at most this share of link text (above justext's 0.2: encyclopaedia-style prose "
             "links many of its words)", above=0, high=1)
    max_notice_chars: int = knob(
        400, "a block holding a cookie/copyright notice phrase is bad below this length (weighted like short_chars)",
        low=0)
    min_short_run: int = knob(
        3, "this many short blocks in a row, good_chars long together and at most max_link_density link text, are a "
           "table's cells or a list's items (a menu's are mostly links): they read as one near-good block", low=1)
    min_lang_chars: int = knob(
        20, "blocks shorter than this get no language of their own (CLD2 cannot tell)", low=1)
    max_label_words: int = knob(
        5, "a language name in a link's anchor, title or alt text is a language cue only in a text of at most this "
           "many words (a switcher's label, not a headline that mentions German)", low=1)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.good_chars < self.short_chars:
            raise ValueError(f"ExtractionConfig.good_chars ({self.good_chars}) must be at least short_chars "
                             f"({self.short_chars})")
        if self.max_good_link_density > self.max_link_density:
            raise ValueError(f"ExtractionConfig.max_good_link_density ({self.max_good_link_density}) must be at most "
                             f"max_link_density ({self.max_link_density})")

DEFAULT = ExtractionConfig()
