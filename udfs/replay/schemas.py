"""The tables the replay stage (replay-crawl) writes: their columns, Spark SQL types and meanings, registered in
udfs.common.tables (the registry every writer checks against and docs/tables.md is generated from)."""
from __future__ import annotations

from parascout.udfs.common.tables import REPLAY_KEYS, Table, columns_from, declare

declare(
    "replay",
    Table("replay_summary", "replay-crawl", "Per site and policy: how fast the replayed crawl found the pairs.",
          columns_from(
        *REPLAY_KEYS,
        ("status*", "string", "ok, or why the site was not replayed"),
        ("host", "string", "the site's hosts, comma-separated (one for most sites): where a reader keys replays by host"),
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
)
