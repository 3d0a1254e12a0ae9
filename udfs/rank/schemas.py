"""The tables the rank stage (bucket-handles, rank-pairs) writes: their columns, Spark SQL types and meanings,
registered in udfs.common.tables (the registry every writer checks against and docs/tables.md is generated from)."""
from __future__ import annotations

from parascout.udfs.common.tables import PAIR_KEYS, SCORED, Table, columns_from, declare

declare(
    "rank",
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
)
