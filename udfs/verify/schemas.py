"""The tables the verify stage (verify-pairs) writes: their columns, Spark SQL types and meanings, registered in
udfs.common.tables (the registry every writer checks against and docs/tables.md is generated from)."""
from __future__ import annotations

from parascout.udfs.common.tables import PAIR_KEYS, SITE_KEY, Table, columns_from, declare

declare(
    "verify",
    Table("verified_pairs", "verify-pairs", "Every input pair with its structure and content features and the decision.",
          columns_from(
        SITE_KEY,
        *PAIR_KEYS,
        ("source", "string", "what proposed the pair (from the input table)"),
        ("src_cld2_lang", "string", "CLD2's language of the source page"),
        ("trg_cld2_lang", "string", "CLD2's language of the target page"),
        ("dp*", "double", "STRAND difference percentage: share of unaligned structure tokens"),
        ("n*", "int", "aligned text chunks of unequal length"),
        ("r*", "double", "Pearson correlation of aligned chunk lengths"),
        ("p*", "double", "significance of r"),
        ("aligned_chunks", "int", "aligned text chunks"),
        ("image_jaccard*", "double", "Jaccard of the pages' image names (site-wide images ignored)"),
        ("shared_images", "int", "image names both pages show"),
        ("length_ratio*", "double", "text length ratio"),
        ("paragraph_ratio", "double", "paragraph count ratio"),
        ("lang_ok", "boolean", "both pages are in their languages"),
        ("tsim*", "double", "two-word links / all links of a competitive word linking under the lexicon"),
        ("tsim_idf", "double", "tsim with words weighted by their IDF on the host"),
        ("short_side_coverage", "double", "links / words of the shorter text"),
        ("diagonal_share", "double", "IDF-weighted share of links whose relative positions agree"),
        ("best_side_coverage_idf", "double", "IDF mass linked on the better-covered side"),
        ("own_tsim_idf", "double", "tsim_idf on the pages' own text (list items left out)"),
        ("own_coverage_idf", "double", "best_side_coverage_idf on the pages' own text"),
        ("number_overlap", "double", "Dice overlap of the numbers on the two pages"),
        ("rare_overlap", "double", "Dice overlap of identical rare tokens"),
        ("text_paragraph_ratio", "double", "main-paragraph count ratio"),
        ("paragraph_length_r", "double", "correlation of main-paragraph lengths"),
        ("src_lang_share", "double", ("share of the source page's prose (code left out) in no language but src_lang: "
                                      "not the target page's text copied, not prose CLD2 reliably puts in another "
                                      "language; null when it has no prose or the pair's language was not judged")),
        ("trg_lang_share", "double", "the same share of the target page's prose for trg_lang"),
        ("src_words", "int", "words of the source main text"),
        ("trg_words", "int", "words of the target main text"),
        ("structure_ok", "boolean", "STRAND's rule: dp < --max-dp and p < --max-p"),
        ("link_agreement", "double", ("share of the source page's links to pages with a URL-exact partner whose "
                                      "partner the target page links")),
        ("p_parallel_content*", "double", "the content model's P(parallel)"),
        ("url_exact", "boolean", "the URLs differ only in their language markers (a STRAND handle proposed the pair)"),
        ("url_log_odds", "double", ("log-odds a URL-exact pair adds to the content's, earned by its host's URL-exact "
                                    "pairs that are the same document by their text (a host with none to judge: "
                                    "the language pair's over the whole archive)")),
        ("p_parallel", "double", "P(parallel) from content and URL together: the decision's and the 1-1 step's score"),
        ("parallel*", "boolean", "the pair is a translation and survived the 1-1 alignment"),
        ("method*", "string", "what decided (self-labelled model, labels, structural rule, residual mutual best)"),
        ("evidence", "string", ("what carried the verdict: content, url+content, url+containment (one page's text "
                                "covered by its URL-exact partner's), url+structure (no text to judge), "
                                "links+content, links+structure (a neighbour pair whose links agree), language, "
                                "structure or document")),
        ("reason*", "string", ("why a pair is not parallel (content_rejected, lang_mismatch, untranslated, "
                                      "not_one_to_one ...)")),
    )),
)
