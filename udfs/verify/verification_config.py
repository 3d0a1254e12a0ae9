"""VerificationConfig: the thresholds and shares verify-pairs decides with (udfs.verify.pages, verification and decision), with today's values.

Set from verify-pairs' `--conf` section (`verify-pairs: {verification: {min_lang_share: 0.6}}`) and recorded in
its report; learned state (ContentModel) is not here.
"""
from __future__ import annotations

from dataclasses import dataclass

from parascout.udfs.common.code_text import CodeConfig
from parascout.udfs.common.stage_config import StageConfig, knob
from parascout.udfs.lexicon.lexicon import WordMatching


@dataclass(frozen=True)
class VerificationConfig(StageConfig):
    """verify-pairs' knobs: boilerplate images, self labels, spliced negatives, the model's acceptance, residual
    pairs, the language check and near-copies."""

    boilerplate_image_share: float = knob(
        0.10, "an image on more than this share of a host's fetched pages is boilerplate (logos, icons), a link "
              "navigation (link_agreement leaves it out)", low=0, high=1)
    min_boilerplate_docs: int = knob(
        3, "... and on at least this many pages: an image shared by a pair alone never counts as boilerplate", low=1)
    null_quantile: float = knob(
        0.99, "a confident pair (switcher link, handle) is a self-labelled positive above this quantile of random "
              "pairs' tsim_idf; a language pair's own-text floor is this quantile of its random pairs' own_tsim_idf",
              low=0, high=1)
    min_null_pairs: int = knob(
        5, "a language pair with fewer random same-site pairs (with text) than this has no null of its own", low=1)
    min_self_labels: int = knob(
        5, "fewer self labels of either class than this: decide by the null quantile of tsim_idf alone (and no model "
           "of a language pair's own)", low=1)
    #: such a lexicon was bootstrapped from a language pair whose only confident pairs were other sites' links to one
    #: home page: its translations score no higher than random pairs (udfs.verify.decision.lexicon_free_pairs)
    min_lexicon_coverage: float = knob(
        0.2, "a language pair whose confident and mutual-best candidates have a median best_side_coverage_idf below "
             "this (and min_lexicon_separation fails) is judged without its lexicon: it knows too few of its pages' "
             "words", low=0, high=1)
    min_lexicon_separation: float = knob(
        1.2, "... and whose mutual-best candidates' median own_tsim_idf is below this times its random pairs' null",
        above=0)
    splice_keep_share: float = knob(
        0.5, "a spliced negative keeps this share of its target page's paragraphs (the rest from another page)",
        low=0, high=1)
    spliced_share: float = knob(
        0.4, "this share of a host's confident pairs (per language pair) also gets a spliced copy, a self-labelled "
             "negative", low=0, high=1)
    self_label_l2: float = knob(
        5.0, "L2 penalty of the self-labelled logistic models (a language pair may have only a few dozen labels)",
        above=0)
    self_label_accept_p: float = knob(
        0.45, "a self-labelled model accepts a pair from this p (0.5 for labelled pairs): end-truncated partial "
              "translations and section pages sit just below 0.5", low=0, high=1)
    #: a lexicon bootstrapped from the archive knows the words of the pairs it learned from far better than those it
    #: never saw, so its model rejects a host's few unseen translations (udfs.verify.decision.residual_pairs)
    residual_floor_share: float = knob(
        0.6, "residual_pairs: a rejected mutual-best pair on pages left without a partner is parallel when its "
             "own_tsim_idf is above this share of its language pair's own-text floor", low=0)
    min_residual_length_r: float = knob(
        0.9, "... its paragraph lengths correlate at least this much (not measured is no agreement)", low=-1, high=1)
    min_residual_image_jaccard: float = knob(
        0.5, "... and, both pages with images, they share at least this Jaccard of them", low=0, high=1)
    min_counterpart_links: int = knob(
        3, "a URL-exact pair with no text to judge whose source page has fewer links than this (besides the site's "
           "navigation) to pages with URL-exact partners is the template in two languages (a section's menu) and "
           "passes on its languages and structure", low=0)
    min_link_agreement: float = knob(
        0.9, "... with more, it passes when at least this share of those links go to pages whose partners the other "
             "page links (a table of contents in two languages); a listing of other items in each language does not",
             low=0, high=1)
    min_text_words: int = knob(
        10, "a side with fewer words of main text than this gives no text to judge (a title alone proves nothing)",
        low=0)
    #: a page half translated is a translation: its untranslated sentences drop out at export
    min_lang_share: float = knob(
        0.5, "a side is in its pair language when more than this share of its prose is (the whole page's, its "
             "navigation and table of contents too; code left out); a page mostly in the other pair language is an "
             "untranslated copy", low=0, high=1)
    min_prose_words: int = knob(
        3, "a paragraph of fewer words is a name, a label or a number, not prose: no untranslated text, and CLD2 "
           "cannot tell its language", low=1)
    #: CLD2 calls short French lines English ("5. Filtres de distorsion", reliable, 95%)
    min_detect_chars: int = knob(
        150, "CLD2's language of a text shorter than this is no evidence, even when CLD2 calls it reliable", low=0)
    min_shared_word_share: float = knob(
        0.5, "a paragraph with at least this share of its words in one paragraph of the other page, in the same "
             "order, is that page's text left untranslated, unless CLD2 finds it in its page's language",
        low=0, high=1)
    #: a copy whose date line alone differs is not a texts.duplicate_of
    near_copy_share: float = knob(
        0.6, "a page sharing at least this share of its main paragraphs (by hash, of the smaller page's) with a "
             "same-language page of its host is a near-copy of it", low=0, high=1)
    #: (a notice the extractor kept); comparing every page holding it would be quadratic
    max_copy_hash_pages: int = knob(
        50, "a main paragraph on more pages of one language than this is the site's, not a page's: it says nothing "
            "about copies", low=1)

    # tsim (udfs.verify.tsim): how two pages' words are linked
    tsim_max_words: int = knob(
        500, "tsim reads a page's first this many words of main text (a page's start says what it is; bounds the "
             "linking's cost)", low=1)
    cognate_weight: float = knob(
        0.9, "a cognate (both words of matching.cognate_min_chars letters or more, similar spelling) links at this weight "
             "times its similarity; a lexicon entry at its probability", low=0)
    cognate_prefix: int = knob(
        4, "words are compared as cognates only within groups sharing their first this many letters (folded)", low=0)
    rare_max_share: float = knob(
        0.05, "a word on at most this share of a host's pages (capped by rare_max_docs, at least 2 pages) is rare: "
              "a name or number two pages of a pair share", low=0, high=1)
    rare_max_docs: int = knob(3, "... and on at most this many pages", low=1)
    diagonal_band: float = knob(
        0.1, "a link lies on the diagonal when its words' relative positions (position / words) differ by at most "
             "this (translations keep their order)", low=0, high=1)

    matching: WordMatching = knob(
        WordMatching(), "how words the lexicon lacks still link in tsim: cognates and shared stems (WordMatching)")
    code: CodeConfig = knob(
        CodeConfig(), "what tells code from prose: code is left out of a page's language shares and of the own-text "
                      "and untranslated tests (CodeConfig)")


DEFAULT = VerificationConfig()
