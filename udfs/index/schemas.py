"""The tables the index stage (scan-cdx, discover-sites) writes: their columns, Spark SQL types and meanings,
registered in udfs.common.tables (the registry every writer checks against and docs/tables.md is generated from)."""
from __future__ import annotations

from parascout.udfs.common.tables import Table, columns_from, declare

declare(
    "index",
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
)
