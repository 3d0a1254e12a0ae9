"""The table registry: every table a job writes, its columns, Spark SQL types and meanings.

Writers check a DataFrame against it before writing (check_columns, schema_problems), UDFs take their output schemas
from it (ddl, columns), and docs/tables.md is generated from it (docs/generate.py). Where a table's rows live on disk,
its versions and manifest, is udfs.common.table_layout.
"""
from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    """One column of a table: Spark SQL type, one line of meaning; `required` columns are the tables' contract."""

    name: str
    type: str
    meaning: str
    required: bool = False


@dataclass(frozen=True)
class Table:
    name: str
    job: str
    meaning: str
    columns: tuple[Column, ...]

    def column_names(self) -> set[str]:
        return {column.name for column in self.columns}

    def required_names(self) -> set[str]:
        return {column.name for column in self.columns if column.required}


class TableColumnsError(ValueError):
    """A DataFrame written as a registered table lacks a required column or holds one the registry does not know."""


#: set to 1 (the tests do) to refuse unregistered columns; otherwise they are logged and written
STRICT_ENVIRONMENT = "PARASCOUT_STRICT_TABLES"


def columns_from(*rows: tuple) -> tuple[Column, ...]:
    """Columns from (name, type, meaning) rows; a name ending in '*' is required (the star is dropped)."""
    return tuple(Column(name.rstrip("*"), type_, meaning, name.endswith("*")) for name, type_, meaning in rows)


#: the site a pair belongs to, in the tables rank-pairs and the jobs after it write (its `host` is the source page's)
SITE_KEY = ("site*", "string", ("the site the pair was found in: its hosts as rank-pairs --group-by groups them "
                                "(www.x.org and en.x.org are x.org by default)"))
PAIR_KEYS = (
    ("host*", "string", "host of the source page"),
    ("src_url*", "string", "URL of the page in the first language of --langs"),
    ("trg_url*", "string", "URL of the page in the second language"),
    ("src_lang*", "string", "language of src_url, ISO 639-3"),
    ("trg_lang*", "string", "language of trg_url, ISO 639-3"),
)
LINK_EVIDENCE = (
    ("link_src_to_trg", "boolean", "the source page links to the target page (docs.outlinks)"),
    ("link_trg_to_src", "boolean", "the target page links to the source page"),
    ("cue_links", "int", "links between the two (0-2 directions) whose context names the target's language"),
    ("cue_exclusive", "boolean", "no other page cue-links to the target: one page's translation, not a site-wide link"),
    ("shared_alternates", "int", "rare cue-marked third pages both pages link to"),
)
SCORED = (
    SITE_KEY,
    *PAIR_KEYS,
    ("group_key", "string", "the bounded group (site, path prefix or handle hash) the pair was proposed in"),
    ("source*", "string", "what proposed the pair: handle, similar, link, cue, image, structure, neighbours, exhaustive (joined by ,)"),
    ("handle", "string", "the shared STRAND handle, when a handle proposed the pair"),
    ("p_src_lang*", "double", "P(src_url is in src_lang) by the url2lang model (1 when the index says so)"),
    ("p_trg_lang*", "double", "P(trg_url is in trg_lang)"),
    *LINK_EVIDENCE,
    ("p_parallel_fast", "double", "P(parallel) by the fast n-gram pair model"),
    ("p_parallel*", "double", "P(parallel) by the pair model (the rescoring model where one ran)"),
    ("score_url", "double", "p_src_lang x p_trg_lang x p_parallel"),
    ("link_log_odds", "double", "weighted sum of the link evidence, added to the URL score's logit"),
    ("score*", "double", "sigmoid(logit(score_url) + link_log_odds)"),
    ("scored_by", "string", "the model that gave p_parallel"),
    ("rank*", "int", "rank of the pair among the source URL's candidates, by score"),
)
REPLAY_KEYS = (("site*", "string", ("the replayed site: every host of a registered domain (replay-crawl --group-by; "
                                    "with --group-by host, each host is its own site)")),
               ("policy*", "string", "crawl policy (bfs, smart, smart+site, oracle ...)"))

TABLES: dict[str, Table] = {table.name: table for table in (
    Table("urls", "scan-cdx", "One row per URL: its latest capture in the index, normalised.", columns_from(
        ("url*", "string", "the captured URL"),
        ("surt*", "string", "SURT key, as CommonCrawl's CDX urlkey"),
        ("host*", "string", "host name, lower-cased"),
        ("domain*", "string", "registered domain (Public Suffix List)"),
        ("lang*", "string", ("the page's language (ISO 639-3): the one its URL declares where the site uses URL "
                            "language markers, else the primary language of the CDX `languages` field; null if none")),
        ("lang_source", "string", "where `lang` comes from: url (a URL language marker) or cdx (CLD2)"),
        ("cdx_lang", "string", "primary language of the CDX `languages` field (CLD2 on the whole page)"),
        ("langs*", "array<string>", "every language of the `languages` field"),
        ("status*", "int", "HTTP status of the capture"),
        ("mime*", "string", "MIME type (mime-detected preferred)"),
        ("digest*", "string", "payload digest"),
        ("fetch_time*", "timestamp", "capture time"),
        ("warc_filename*", "string", "WARC file holding the record, relative to the WARC prefix"),
        ("warc_offset*", "bigint", "byte offset of the record in its WARC file"),
        ("warc_length*", "bigint", "byte length of the gzipped record"),
        ("crawl*", "string", ("crawl name, the first that exists: the one the WARC filename names (CommonCrawl's "
                              "crawl-data/CC-MAIN-2024-33/...), the one the CDX file's path names (a folder named "
                              "like a CommonCrawl crawl: cc-index/collections/CC-MAIN-2024-33/indexes/), the CDX "
                              "line's `crawl` key (index-warcs: the WARC's warcinfo isPartOf, else the WARC's name "
                              "without .warc.gz); the columnar index's `crawl` partition; null when none names one")),
        ("record_type", "string", ("revisit (CDX mime warc/revisit: a WARC revisit record, its payload is an earlier "
                                   "capture's; kept with --keep-revisits), redirect (a response with a 3xx status; "
                                   "kept with --keep-redirects) or response (any other response: 2xx, 4xx, 5xx)")),
        ("redirect", "string", "redirect target, for redirects"),
        ("charset", "string", "charset the index recorded"),
        ("truncated", "string", "why the crawler truncated the payload, if it did"),
    )),
    Table("hosts", "scan-cdx", "One row per host of `urls`, with its languages.", columns_from(
        ("host*", "string", "host name"),
        ("domain*", "string", "registered domain"),
        ("n_urls*", "bigint", "URLs of the host in `urls`"),
        ("lang_counts*", "map<string,bigint>", "URLs per language (ISO 639-3)"),
        ("is_candidate*", "boolean", "the host has URLs in both languages of --langs"),
    )),
    Table("candidates", "bucket-handles", "URL pairs sharing a STRAND handle, one language on each side.", columns_from(
        *PAIR_KEYS,
        ("source*", "string", "what proposed the pair (handle)"),
        ("handle*", "string", "the URL with its language-specific substrings removed"),
    )),
    Table("learned_lss", "bucket-handles", "Host-specific language substrings learned with --learn-lss.", columns_from(
        ("host*", "string", "host the substring was learned on"),
        ("token*", "string", "path or query token"),
        ("lang*", "string", "the language whose URLs hold it"),
        ("support", "bigint", "URLs of that language holding it"),
        ("frac_lang", "double", "share of that language's URLs holding it"),
        ("frac_other", "double", "share of the other language's URLs holding it"),
    )),
    Table("discovered_sites", "discover-sites", "Sites likely to hold the language pair, ranked, before any model.",
          columns_from(
        ("site*", "string", "site (hosts grouped as rank-pairs groups them)"),
        ("src_lang*", "string", "first language of --langs"),
        ("trg_lang*", "string", "second language of --langs"),
        ("n_hosts", "bigint", "hosts of the site"),
        ("n_urls", "bigint", "URLs of the site"),
        ("urls_src", "bigint", "URLs the index puts in src_lang"),
        ("urls_trg", "bigint", "URLs the index puts in trg_lang"),
        ("marked_src", "bigint", "URLs whose markers (/en/, fr., ?lang=fr ...) name src_lang"),
        ("marked_trg", "bigint", "URLs whose markers name trg_lang"),
        ("pages_fetched", "bigint", "pages of the site in `docs`"),
        ("switcher_pages_src", "bigint", "src_lang pages with a link whose context names trg_lang"),
        ("switcher_pages_trg", "bigint", "trg_lang pages with a link whose context names src_lang"),
        ("home_switcher", "boolean", "a home page has such a link"),
        ("evidence", "int", "kinds of evidence showing both languages (index, markers, switchers)"),
        ("balance", "double", "smaller side / larger side"),
        ("score*", "double", "evidence + balance"),
        ("rank*", "int", "rank by score"),
        ("grouped_by", "string", "how hosts were grouped into sites (--group-by)"),
    )),
    Table("docs", "fetch-docs", "One row per fetched URL: status, language, links, images, structure.", columns_from(
        ("url*", "string", "the URL"),
        ("host*", "string", "its host"),
        ("status*", "string", "ok, or the reason the record was not usable (bad or filtered)"),
        ("error", "string", "detail of a failure"),
        ("source", "string", "warc or wat"),
        ("cld2_lang*", "string", "CLD2's language of the page (ISO 639-3)"),
        ("cld2_reliable*", "boolean", "CLD2 calls its answer reliable"),
        ("cld2_percent", "int", "share of the text in cld2_lang"),
        ("html_lang", "string", "the page's <html lang>"),
        ("text_chars*", "int", "characters of visible text"),
        ("paragraphs", "int", "text blocks on the page"),
        ("outlinks*", "array<string>", "links, resolved and normalised"),
        ("outlinks_same_host", "array<boolean>", "per link: same host as the page"),
        ("images*", "array<string>", "image file names"),
        ("structure*", "array<string>", "STRAND linearisation: [START:tag], [END:tag], [Chunk:length]"),
        ("title", "string", "the page's <title>"),
        ("http_status", "int", "HTTP status in the record"),
        ("content_type", "string", "HTTP Content-Type"),
        ("charset", "string", "charset used to decode the page"),
        ("charset_source", "string", "where the charset came from (header, meta, detection)"),
        ("warc_truncated", "string", "WARC-Truncated header, if any"),
        ("warc_filename", "string", "WARC file read"),
        ("warc_offset", "bigint", "record offset"),
        ("warc_length", "bigint", "record length"),
        ("fetch_attempts", "int", "GETs spent on the record (its range's share and its own re-reads)"),
        ("range_records", "int", "records sharing the record's coalesced range GET"),
        ("refers_to_url", "string", "for a resolved revisit: the original capture's URL"),
        ("refers_to_date", "string", "for a resolved revisit: the original capture's date"),
        ("outlinks_cut", "int", "links left out by the per-page caps"),
        ("images_cut", "int", "image names left out by the per-page caps"),
        ("outlink_cues", "array<string>", "per link: the language its context names (anchor, hreflang, flag), or null"),
    )),
    Table("texts", "fetch-docs", "One row per fetched HTML page: its paragraphs and main text.", columns_from(
        ("url*", "string", "the URL"),
        ("host*", "string", "its host"),
        ("lang", "string", "CLD2's language of the page"),
        ("title", "string", "the page's <title>"),
        ("paragraphs*", "array<struct<text:string,type:string,lang:string,boilerplate:boolean,hash:string>>",
         "text blocks: text, type (title, heading, list_item, text), CLD2 language, boilerplate flag, hash"),
        ("main_text*", "string", "the non-boilerplate paragraphs joined by newlines"),
        ("text_truncated", "boolean", "main text cut at --max-text-chars"),
        ("duplicate_of*", "string", "the page this one near-duplicates (kept page of its group), else null"),
        ("status*", "string", "ok, no_text or boilerplate_only"),
        ("description", "string", "meta description (og:description when absent)"),
        ("keywords", "array<string>", "meta keywords"),
        ("metadata_truncated", "boolean", "description or keywords were cut"),
        ("relevance", "double", "with --domain-terms: ILSP-FC relevance of the page to the domain"),
        ("distinct_terms", "int", "with --domain-terms: distinct domain terms on the page"),
        ("subtopic", "string", "with --domain-terms: the best-scoring subtopic"),
        ("in_domain", "boolean", "with --domain-terms: relevance and distinct terms above their thresholds"),
    )),
    Table("scored_pairs", "rank-pairs", "Every candidate pair of a site, scored by the URL models and link evidence.",
          columns_from(*SCORED)),
    Table("alignment", "rank-pairs", "The 1-1 alignment per site of the scored pairs above the model's cut-off.",
          columns_from(*SCORED)),
    Table("rank_hosts", "rank-pairs", "Per site: URLs per language and how they were grouped, capped or split.",
          columns_from(
        ("site*", "string", "site (hosts as --group-by groups them)"),
        ("n_urls_src", "bigint", "URLs in the first language"),
        ("n_urls_trg", "bigint", "URLs in the second language"),
        ("n_groups", "bigint", "groups the host's URLs were split into"),
        ("n_urls_capped", "bigint", "URLs left out by --max-group-urls"),
        ("n_groups_chunked", "bigint", "groups split by path prefix or handle hash"),
        ("src_lang", "string", "first language"),
        ("trg_lang", "string", "second language"),
        ("grouped_by", "string", "site, host or domain (--group-by)"),
    )),
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
        ("src_lang_share", "double", "share of the source main text CLD2 puts in src_lang"),
        ("trg_lang_share", "double", "share of the target main text CLD2 puts in trg_lang"),
        ("src_words", "int", "words of the source main text"),
        ("trg_words", "int", "words of the target main text"),
        ("structure_ok", "boolean", "STRAND's rule: dp < --max-dp and p < --max-p"),
        ("link_agreement", "double", ("share of the source page's links to pages with a URL-exact partner whose "
                                      "partner the target page links")),
        ("p_parallel_content*", "double", "the content model's P(parallel)"),
        ("url_exact", "boolean", "the URLs differ only in their language markers (a STRAND handle proposed the pair)"),
        ("url_log_odds", "double", ("log-odds a URL-exact pair adds to the content's, earned by its host's URL-exact "
                                    "pairs that are the same document by their text")),
        ("p_parallel", "double", "P(parallel) from content and URL together: the decision's and the 1-1 step's score"),
        ("parallel*", "boolean", "the pair is a translation and survived the 1-1 alignment"),
        ("method*", "string", "what decided (self-labelled model, labels, structural rule, residual mutual best)"),
        ("evidence", "string", ("what carried the verdict: content, url+content, url+structure (no text to judge), "
                                "links+content, links+structure (a neighbour pair whose links agree), language, "
                                "structure or document")),
        ("reason*", "string", ("why a pair is not parallel (content_rejected, lang_mismatch, untranslated, "
                                      "not_one_to_one ...)")),
    )),
    Table("bitext_documents", "export-bitext", "One row per exported document pair, with both texts.", columns_from(
        SITE_KEY,
        *PAIR_KEYS,
        ("p_parallel_content", "double", "verify-pairs' P(parallel)"),
        ("status*", "string", "ok (at least one sentence pair kept) or why not"),
        ("src_text*", "string", "source main text"),
        ("trg_text*", "string", "target main text"),
        ("src_paragraphs", "array<string>", "source main paragraphs"),
        ("trg_paragraphs", "array<string>", "target main paragraphs"),
        ("src_sentences", "int", "source sentences"),
        ("trg_sentences", "int", "target sentences"),
        ("sentence_pairs*", "int", "sentence pairs kept"),
        ("src_words", "bigint", "words in the kept source sentences"),
        ("trg_words", "bigint", "words in the kept target sentences"),
    )),
    Table("bitext_sentences", "export-bitext", "Every sentence bead of the exported document pairs.", columns_from(
        SITE_KEY,
        *PAIR_KEYS,
        ("bead*", "int", "position of the bead in its document pair"),
        ("bead_type*", "string", "sentences on each side: 1-1, 2-1, 1-0 ..."),
        ("src_text*", "string", "source sentence(s)"),
        ("trg_text*", "string", "target sentence(s)"),
        ("score*", "double", "alignment score of the bead"),
        ("reason*", "string", "null when exported, else the filter that dropped it"),
        ("src_words", "int", "source words"),
        ("trg_words", "int", "target words"),
    )),
    Table("bitext_sites", "export-bitext", "Per site: what was exported.", columns_from(
        ("site*", "string", "site"),
        ("documents*", "bigint", "document pairs exported"),
        ("sentence_pairs*", "bigint", "sentence pairs exported"),
        ("src_words*", "bigint", "source words exported"),
        ("trg_words*", "bigint", "target words exported"),
        ("src_lang", "string", "first language"),
        ("trg_lang", "string", "second language"),
    )),
    Table("shortlist", "shortlist", "Sites ranked by the translations they are predicted to hold.", columns_from(
        ("site*", "string", "site (hosts as rank-pairs --group-by groups them)"),
        ("src_lang*", "string", "first language"),
        ("trg_lang*", "string", "second language"),
        ("n_urls_src", "bigint", "URLs in the first language"),
        ("n_urls_trg", "bigint", "URLs in the second language"),
        ("predicted_pairs*", "bigint", "aligned pairs with score >= --min-score"),
        ("expected_pairs*", "double", "sum of the aligned pairs' scores"),
        ("predicted_ratio", "double", "predicted pairs / the smaller side's URLs"),
        ("rank*", "int", "rank of the site"),
        ("bitext_documents", "bigint", "document pairs export-bitext exported (0 when it did not run)"),
        ("bitext_sentence_pairs", "bigint", "sentence pairs exported"),
        ("bitext_words_src", "bigint", "source words exported"),
        ("bitext_words_trg", "bigint", "target words exported"),
    )),
    Table("replay_summary", "replay-crawl", "Per site and policy: how fast the replayed crawl found the pairs.",
          columns_from(
        *REPLAY_KEYS,
        ("status*", "string", "ok, or why the site was not replayed"),
        ("n_rows", "bigint", "docs rows of the site"),
        ("n_docs", "bigint", "usable documents"),
        ("n_nodes", "bigint", "pages in the link graph (fetched or linked)"),
        ("n_links", "bigint", "links between pages of the site (its hosts)"),
        ("n_offhost_links", "bigint", "links to hosts outside the site (out of scope)"),
        ("n_truth_pairs", "bigint", "truth pairs of the site"),
        ("n_unusable_truth_pairs", "bigint", "truth pairs with a page not in the graph"),
        ("n_pairs", "bigint", "usable truth pairs"),
        ("n_parallel_docs", "bigint", "documents in a usable truth pair"),
        ("budget_fetches", "bigint", "fetches allowed (--budget x pages)"),
        ("fetched", "bigint", "fetches made"),
        ("wasted_fetches", "bigint", "fetches of pages absent from the archive"),
        ("bytes_fetched", "bigint", "bytes fetched"),
        ("pairs_found", "bigint", "truth pairs with both pages fetched"),
        ("docs_found", "bigint", "parallel documents fetched"),
        ("recall", "double", "docs_found / n_parallel_docs"),
        ("pair_recall", "double", "pairs_found / n_pairs"),
        ("auc*", "double", "area under the yield curve"),
        ("fetches_to_50", "bigint", "fetches to reach 50% of the parallel documents"),
        ("fetches_to_80*", "bigint", "fetches to reach 80%"),
        ("fetches_to_90", "bigint", "fetches to reach 90%"),
        ("share_fetches_to_50", "double", "fetches_to_50 / pages"),
        ("share_fetches_to_80", "double", "fetches_to_80 / pages"),
        ("share_fetches_to_90", "double", "fetches_to_90 / pages"),
        ("stopped", "string", "why the replay stopped (budget, frontier empty ...)"),
        ("seconds", "double", "CPU time of the replay"),
        ("planned", "boolean", ("the policy a crawl of the site should follow: fewest fetches to 80%, then "
                                "highest AUC (oracle never); replay_frontier keeps its fetch order")),
    )),
    Table("replay_curves", "replay-crawl", "The yield curve of each site and policy, one row per point.", columns_from(
        *REPLAY_KEYS,
        ("fetched*", "bigint", "fetches so far"),
        ("pairs_found*", "bigint", "truth pairs found so far"),
        ("docs_found*", "bigint", "parallel documents found so far"),
        ("bytes_fetched", "bigint", "bytes fetched so far"),
    )),
    Table("replay_deciles", "replay-crawl", "Parallel documents found per decile of the crawl.", columns_from(
        *REPLAY_KEYS,
        ("decile*", "int", "decile of the crawl (1-10)"),
        ("fetched", "bigint", "fetches at the decile's end"),
        ("docs_found", "bigint", "parallel documents found by then"),
        ("docs_in_decile", "bigint", "parallel documents found in the decile"),
        ("share_of_parallel_docs", "double", "docs_in_decile / all parallel documents"),
    )),
    Table("replay_frontier", "replay-crawl", "Per site, the fetch order of its planned policy (replay_summary.planned): "
          "the ranked URLs export-crawl-plan hands a crawler.", columns_from(
        *REPLAY_KEYS,
        ("rank*", "int", "position in the replayed crawl (1: fetched first)"),
        ("url*", "string", "the URL fetched"),
        ("priority", "double", "the priority it was queued with (null for seeds and breadth-first policies)"),
        ("seed", "boolean", "a seed of the crawl (the site's entry page, or a --seeds URL)"),
        ("archived", "boolean", "the archive has the page (false: a wasted fetch in the replay)"),
        ("cld2_lang", "string", "the page's language in the archive (CLD2), known once fetched"),
        ("predicted_lang", "string", "the language the policy predicted before fetching (URL model or URL marker)"),
        ("p_lang", "double", "the probability of predicted_lang (URL-model policies)"),
        ("partner_url", "string", "the page the policy predicted as its translation, where it predicts one"),
    )),
    Table("crawl_plan", "export-crawl-plan", "Per shortlisted site planned for a crawl: its policy, expected yield "
          "and files under <root>/crawl-plan/ (docs/crawl-plan.md).", columns_from(
        ("site*", "string", "the shortlist's site"),
        ("shortlist_rank*", "int", "its rank in the shortlist"),
        ("src_lang", "string", "first language of the pair"),
        ("trg_lang", "string", "second language of the pair"),
        ("predicted_pairs", "bigint", "the shortlist's predicted pairs"),
        ("replay_site", "string", "the replay's name of the site (replay_frontier.site)"),
        ("policy*", "string", "the replayed policy planned: fewest fetches to 80%, then highest AUC"),
        ("n_docs", "bigint", "archived documents of the site"),
        ("n_parallel_docs", "bigint", "documents in a truth pair"),
        ("budget_fetches", "bigint", "fetches the replay allowed"),
        ("fetched", "bigint", "fetches the replay made"),
        ("docs_found", "bigint", "parallel documents the replay found"),
        ("recall", "double", "docs_found / n_parallel_docs"),
        ("auc", "double", "area under the replay's yield curve"),
        ("fetches_to_50", "bigint", "fetches to 50% of the parallel documents"),
        ("fetches_to_80*", "bigint", "fetches to 80% (null: not reached)"),
        ("fetches_to_90", "bigint", "fetches to 90%"),
        ("share_fetches_to_80", "double", "fetches_to_80 / archived documents"),
        ("expected_yield*", "string", "'80% of the site's parallel pages after ~N fetches' (or what was reached)"),
        ("folder*", "string", "the site's files, relative to --root"),
        ("n_seeds", "bigint", "seed URLs (seeds.txt)"),
        ("n_urls", "bigint", "ranked URLs (ranked_urls.txt)"),
        ("n_hosts", "bigint", "hosts the crawl stays on (hosts.txt)"),
    )),
)}


#: tables written per language pair (jobs.language_pairs.LanguagePairs.for_each_pair): partitioned by lang_pair
PER_PAIR_TABLES = ("candidates", "learned_lss", "scored_pairs", "alignment", "rank_hosts", "verified_pairs",
                   "bitext_documents", "bitext_sentences", "bitext_sites", "shortlist", "replay_summary",
                   "replay_curves", "replay_deciles", "replay_frontier")
LANG_PAIR = Column("lang_pair", "string", "the language pair of --langs the row belongs to, src-trg in ISO 639-3 "
                   "(eng-fra); the table is partitioned by it")
for _name in PER_PAIR_TABLES:
    TABLES[_name] = Table(TABLES[_name].name, TABLES[_name].job, TABLES[_name].meaning,
                          (*TABLES[_name].columns, LANG_PAIR))

#: the tables of parascout's own jobs (what docs/tables.md lists), before any register()
BUILT_IN_TABLES = tuple(TABLES)


def register(table: Table) -> None:
    """Add a table to the registry (a job outside this package, or a test's job, declares its tables here)."""
    TABLES[table.name] = table


def fields(table: str, without: tuple[str, ...] = ()) -> tuple[Column, ...]:
    """The registered columns of `table` in the registry's order, less `without`; a name in `without` the table
    does not have is refused, so a copy that leaves a column out cannot outlive the column."""
    registered = TABLES[table]
    unknown = sorted(set(without) - registered.column_names())
    if unknown:
        raise TableColumnsError(f"{table}: cannot leave out {', '.join(unknown)}: not in the table registry")
    return tuple(column for column in registered.columns if column.name not in without)


def columns(table: str, without: tuple[str, ...] = ()) -> list[str]:
    """The column names of `table` in the registry's order, less `without` (a writer's select list)."""
    return [column.name for column in fields(table, without)]


def ddl(table: str, without: tuple[str, ...] = (), struct: bool = False) -> str:
    """Spark DDL of `table`'s columns, less `without`: 'url string, host string, ...' (a UDF's output schema), or
    with `struct` 'struct<url:string, host:string, ...>' (the table's rows nested in another's)."""
    if struct:
        return f"struct<{', '.join(f'{column.name}:{column.type}' for column in fields(table, without))}>"
    return ", ".join(f"{column.name} {column.type}" for column in fields(table, without))


def schema_problems(table: str, schema) -> list[str]:
    """How a written Spark schema (a StructType) differs from the registry: a column it does not know, another
    type, or another order than the registry's (a registered column that is not required may be absent)."""
    registered = {column.name: column for column in TABLES[table].columns}
    problems = [f"{table}.{field.name}: not in the table registry" for field in schema.fields
                if field.name not in registered]
    problems += [f"{table}.{field.name}: written as {field.dataType.simpleString()}, registered as "
                 f"{registered[field.name].type}" for field in schema.fields
                 if field.name in registered and field.dataType.simpleString() != registered[field.name].type]
    written = [field.name for field in schema.fields if field.name in registered]
    if written != [name for name in registered if name in written]:
        problems.append(f"{table}: columns written in the order {written}, not the registry's")
    return problems


def check_columns(table: str, columns: list[str], strict: bool | None = None) -> list[str]:
    """Problems of writing `columns` as `table`: registered required columns missing (always raised) and columns the
    registry does not know (raised when strict, the tests' setting; otherwise returned for the job to log)."""
    if table not in TABLES:
        problems = [f"{table}: not a registered table (add it to parascout.udfs.common.tables.TABLES)"]
    else:
        registered = TABLES[table]
        missing = sorted(registered.required_names() - set(columns))
        if missing:
            raise TableColumnsError(f"{table}: required columns missing: {', '.join(missing)}")
        unknown = [name for name in columns if name not in registered.column_names()]
        problems = [f"{table}: column {name!r} is not in the table registry (parascout.udfs.common.tables.TABLES)"
                    for name in unknown]
    strict = os.environ.get(STRICT_ENVIRONMENT) == "1" if strict is None else strict
    if problems and strict:
        raise TableColumnsError("; ".join(problems))
    return problems
