"""The replay simulator's frontier loop, its bookkeeping (budget, wasted fetches, pairs) and the yield metrics."""
import math

import numpy as np
import pandas as pd
import pytest

from parascout.udfs.replay import build_graph, build_truth, make_policy, metrics, simulate
from parascout.udfs.replay.graph import url_key
from parascout.udfs.replay.simulator import checkpoints_for
from tests.support.replay import HOST, NO_PAIRS, pairs, site, urls


def test_bfs_fetches_in_discovery_order():
    graph = build_graph(site({"/": ["/a", "/b"], "/a": ["/c", "/b"], "/b": ["/d"], "/c": ["/e"], "/d": [], "/e": []}))
    result = simulate(graph, "bfs", NO_PAIRS)
    assert result.fetched_urls() == urls("/", "/a", "/b", "/c", "/d", "/e")
    assert result.stopped == "budget" and result.fetched == 6


def test_budget_is_a_share_of_the_archived_documents():
    graph = build_graph(site({"/": ["/a", "/b", "/c"], "/a": [], "/b": [], "/c": []}))
    assert simulate(graph, "bfs", NO_PAIRS, budget=0.5).fetched == 2
    assert simulate(graph, "bfs", NO_PAIRS, budget=0.25).fetched_urls() == urls("/")
    with pytest.raises(ValueError, match="budget"):
        simulate(graph, "bfs", NO_PAIRS, budget=0)


def test_a_crawl_stops_when_the_frontier_is_exhausted():
    graph = build_graph(site({"/": ["/a"], "/a": [], "/island": []}))
    result = simulate(graph, "bfs", NO_PAIRS, budget=2.0)
    assert result.fetched == 2 and result.stopped == "frontier_exhausted" and result.budget_fetches == 6


def test_missing_pages_are_wasted_fetches_unless_told_otherwise():
    docs = site({"/": ["/gone", "/error", "/a"], "/a": ["/b"], "/b": [], "/error": ["/never"]},
                status={"/error": "http_404"})
    graph = build_graph(docs)
    assert graph.n_docs == 3 and graph.n_nodes == 6  # '/', '/a', '/b' archived; '/error' a 404; '/gone', '/never' absent
    counted = simulate(graph, "bfs", NO_PAIRS)
    assert counted.fetched_urls() == urls("/", "/gone", "/error")  # missing pages eat the budget of 3 fetches
    assert counted.wasted_fetches == 2 and counted.summary()["wasted_fetches"] == 2
    longer = simulate(graph, "bfs", NO_PAIRS, budget=2.0)
    assert longer.fetched_urls() == urls("/", "/gone", "/error", "/a", "/never", "/b") and longer.wasted_fetches == 3
    free = simulate(graph, "bfs", NO_PAIRS, count_missing_as_fetch=False)
    assert free.fetched_urls() == urls("/", "/a", "/b") and free.wasted_fetches == 0
    assert free.fetched == 3 and free.stopped == "budget"


def test_a_redirect_costs_a_fetch_and_leads_to_its_target():
    docs = site({"/": ["/old"], "/old": ["/new"], "/new": []}, status={"/old": "http_redirect"})
    result = simulate(build_graph(docs), "bfs", NO_PAIRS, budget=2.0)
    assert result.fetched_urls() == urls("/", "/old", "/new") and result.wasted_fetches == 1


def test_pairs_count_when_both_sides_are_fetched():
    graph = build_graph(site({"/": ["/a", "/x", "/b"], "/a": [], "/x": [], "/b": [], "/c": []}))
    truth = pairs(("/a", "/b"), ("/b", "/a"), ("/a", "/c"), ("/a", "/missing"))
    index = build_truth(graph, truth)
    assert (index.n_pairs, index.n_parallel_docs, index.n_unusable_pairs) == (2, 3, 1)  # b-a is a-b again
    result = simulate(graph, "bfs", index)
    assert result.fetched_urls() == urls("/", "/a", "/x", "/b")
    assert result.pair_events == [4] and result.doc_events == [4, 4]  # /c is unreachable from the home page
    assert result.summary()["recall"] == pytest.approx(2 / 3)


def test_seeds_come_first_and_unknown_seeds_are_wasted():
    graph = build_graph(site({"/": ["/a"], "/a": [], "/deep/b": ["/a"]}))
    result = simulate(graph, "bfs", NO_PAIRS, seeds=urls("/deep/b", "/not-archived"), budget=2.0)
    assert result.fetched_urls()[:3] == urls("/deep/b", "/not-archived", "/a")
    assert result.wasted_fetches == 1


def test_home_is_the_root_else_the_shortest_url():
    assert build_graph(site({"/about": ["/"], "/": []})).urls[0:2] == urls("/", "/about")
    graph = build_graph(site({"/en/index.html": [], "/en/a-longer-page.html": []}))
    assert graph.urls[graph.home()] == f"https://{HOST}/en/index.html"


def test_urls_are_one_page_across_schemes_and_other_hosts_are_out_of_scope():
    docs = site({"/": [], "/a": []})
    docs.at[0, "outlinks"] = ["http://www.example.is/a", "https://elsewhere.org/x", "https://www.example.is/a"]
    graph = build_graph(docs)
    assert graph.links[graph.home()] == [graph.index[url_key("https://www.example.is/a")]]
    assert graph.n_offhost_links == 1 and graph.n_nodes == 2


def test_same_host_flags_from_the_docs_table_are_used_when_present():
    docs = site({"/": [], "/a": []})
    docs["outlinks_same_host"] = [[True, False], []]
    docs.at[0, "outlinks"] = ["https://www.example.is/a", "https://www.example.is/b"]
    graph = build_graph(docs)
    assert graph.n_offhost_links == 1 and graph.n_nodes == 2


def test_duplicate_rows_keep_the_ok_one():
    docs = site({"/": ["/a"], "/a": []})
    broken = docs.iloc[[1]].assign(status="warc_fetch_failed", outlinks=[None])
    graph = build_graph(pd.concat([broken, docs], ignore_index=True))
    assert graph.n_docs == 2 and graph.n_duplicate_rows == 1


def test_curve_is_sampled_every_percent_of_the_budget_and_at_the_end():
    pages = {"/": [f"/p{i}" for i in range(299)], **{f"/p{i}": [] for i in range(299)}}
    result = simulate(build_graph(site(pages)), "bfs", pairs(("/p1", "/p2")), budget=0.5)
    curve = result.curve()
    assert curve.iloc[0].tolist() == [0, 0, 0, 0]
    assert curve["fetched"].iloc[-1] == result.fetched == 150 and len(curve) == 101
    assert curve["docs_found"].iloc[-1] == 2 and curve["bytes_fetched"].iloc[-1] == 150 * 1000
    assert checkpoints_for(150)[:3] == [2, 3, 5]


# ---- metrics ---------------------------------------------------------------------------------
def test_area_under_curve_is_mean_recall_over_the_budget():
    assert metrics.area_under_curve([1, 1], 2, 4) == 1.0
    assert metrics.area_under_curve([4], 1, 4) == 0.25
    assert metrics.area_under_curve([2, 3], 4, 4) == pytest.approx((3 + 2) / 16)
    assert metrics.area_under_curve([], 3, 10) == 0.0
    assert math.isnan(metrics.area_under_curve([], 0, 10))


def test_fetches_to_a_share_of_the_parallel_documents():
    events = [2, 5, 7, 9]
    assert metrics.fetches_to_share(events, 4, 0.5) == 5
    assert metrics.fetches_to_share(events, 4, 0.8) == 9  # 80% of 4 documents needs all 4
    assert metrics.fetches_to_share(events, 5, 0.8) == 9
    assert metrics.fetches_to_share(events, 5, 0.9) is None
    assert metrics.fetches_to_share([], 0, 0.5) is None


def test_deciles_and_grid_recall():
    frame = metrics.deciles([1, 2, 15, 20], 5, 20)
    assert frame["fetched"].tolist() == [2, 4, 6, 8, 10, 12, 14, 16, 18, 20]
    assert frame["docs_found_in_decile"].tolist() == [2, 0, 0, 0, 0, 0, 0, 1, 0, 1]
    assert frame["share_of_parallel_docs"].sum() == pytest.approx(4 / 5)
    grid = metrics.grid_recall([1, 2, 15, 20], 5, 20, points=5)
    assert grid == pytest.approx([0, 0.4, 0.4, 0.6, 0.8])


def test_summary_row_of_a_crawl():
    graph = build_graph(site({"/": ["/a", "/b"], "/a": [], "/b": [], "/c": []}))
    row = simulate(graph, "bfs", pairs(("/a", "/b"))).summary()
    assert row["auc"] == pytest.approx(2 * (4 - 3 + 1) / (4 * 2))
    assert row["fetches_to_80"] == 3 and row["share_fetches_to_80"] == pytest.approx(0.75)
    assert (row["pairs_found"], row["docs_found"], row["recall"], row["n_parallel_docs"]) == (1, 2, 1.0, 2)


def test_spearman_and_speedup_versus_a_baseline():
    assert metrics.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert math.isnan(metrics.spearman([1, 2], [1, 2]))
    summary = pd.DataFrame({"site": ["a", "a", "b", "b"], "policy": ["smart", "bfs"] * 2,
                            "fetches_to_80": [10, 40, None, 50]})
    speed = metrics.speedup_versus(summary).set_index("site")
    assert speed.loc["a", "ratio"] == 0.25 and np.isnan(speed.loc["b", "ratio"])


def test_make_policy_by_name():
    assert make_policy("bfs").fifo and make_policy("random", random_seed=3).seed == 3
    with pytest.raises(ValueError, match="needs a lang_scorer"):
        make_policy("smart", langs=("eng", "isl"))
    with pytest.raises(ValueError, match="unknown policy"):
        make_policy("dfs")


def test_shortlist_sites_are_compared_with_the_replays_of_their_hosts():
    from parascout.jobs.replay_crawl import shortlist_site_of

    shortlist = pd.DataFrame({"site": ["example.fr", "other.com", "b.org", "never-replayed.net"],
                              "predicted_pairs": [30.0, 20.0, 10.0, 5.0], "predicted_ratio": [0.5, 0.4, 0.2, 0.1]})
    rows = [("www.example.fr", 40, 30), ("en.example.fr", 10, 2), ("www.other.com", 12, 8), ("b.org", 3, 1)]
    summary = pd.DataFrame([{"site": site, "policy": "smart", "status": "ok", "n_docs": 100, "n_pairs": pairs,
                             "pairs_found": pairs, "docs_found": docs, "fetched": 100} for site, docs, pairs in rows])
    merged, stats = metrics.prediction_agreement(shortlist, summary, "smart",
                                                 site_of=shortlist_site_of(shortlist["site"], ("eng", "fra")))
    assert stats["hosts_compared"] == 3 and stats["shortlist_hosts_not_replayed"] == 1
    assert merged.set_index("site").loc["example.fr", "pairs_found"] == 32  # its two hosts summed
    assert stats["spearman_pairs"] == pytest.approx(1.0)
    _, raw = metrics.prediction_agreement(shortlist, summary, "smart")
    assert raw["hosts_compared"] == 1  # by the replayed names alone only b.org matches


def test_a_site_graph_follows_links_between_its_hosts_even_when_flagged_off_host():
    docs = pd.DataFrame([
        {"url": "https://www.delta.is/", "host": "www.delta.is", "outlinks": ["https://en.delta.is/a", "https://other.is/"],
         "outlinks_same_host": [False, False]},
        {"url": "https://en.delta.is/a", "host": "en.delta.is", "outlinks": ["https://is.delta.is:443/a"],
         "outlinks_same_host": [False]},
        {"url": "https://is.delta.is/a", "host": "is.delta.is", "outlinks": ["http://en.delta.is/a"],
         "outlinks_same_host": [False]},
    ]).assign(status="ok", cld2_lang="eng", warc_length=10)
    docs.loc[2, "url"] = "https://is.delta.is:443/a"
    graph = build_graph(docs, "delta.is")
    assert graph.scope == {"delta.is", "www.delta.is", "en.delta.is", "is.delta.is"}
    assert graph.n_offhost_links == 1 and graph.urls[graph.home()] == "https://www.delta.is/"
    result = simulate(graph, "bfs", pd.DataFrame({"src_url": ["https://en.delta.is/a"],
                                                  "trg_url": ["https://is.delta.is:443/a"]}))
    assert result.fetched == 3 and result.pairs_found == 1
    alone = build_graph(docs.iloc[[1]])  # one host: its flags decide, other hosts are out of scope
    assert alone.n_offhost_links == 1 and alone.links == [[]]


def test_a_site_whose_hosts_do_not_link_each_other_is_seeded_on_every_host():
    """English on www., French on fra., no language switcher: a crawl of the site's hosts starts each from its
    root, so the replay reaches both languages (seeded at www. alone it found none of the pairs)."""
    docs = pd.DataFrame([
        {"url": "https://www.x.org/", "host": "www.x.org", "outlinks": ["https://www.x.org/a.html"], "cld2_lang": "eng"},
        {"url": "https://www.x.org/a.html", "host": "www.x.org", "outlinks": [], "cld2_lang": "eng"},
        {"url": "https://fra.x.org/a.html", "host": "fra.x.org", "outlinks": [], "cld2_lang": "fra"},
        {"url": "https://fra.x.org/", "host": "fra.x.org", "outlinks": ["https://fra.x.org/a.html"], "cld2_lang": "fra"},
    ]).assign(status="ok", warc_length=10)
    graph = build_graph(docs, "x.org")
    assert [graph.urls[node] for node in graph.homes()] == ["https://www.x.org/", "https://fra.x.org/"]
    truth = pd.DataFrame({"src_url": ["https://www.x.org/", "https://www.x.org/a.html"],
                          "trg_url": ["https://fra.x.org/", "https://fra.x.org/a.html"]})
    result = simulate(graph, "oracle", truth)
    assert result.pairs_found == 2 and result.fetched == 4
    assert build_graph(docs.iloc[:2]).homes() == [build_graph(docs.iloc[:2]).home()]  # one host: one seed


@pytest.mark.parametrize("budget", [1.5, 2.0])
@pytest.mark.parametrize("n_articles", [10, 12])  # 21 pages: smart+site rescores at fetch 21
def test_a_rescoring_policy_runs_past_the_archived_documents(budget, n_articles):
    """Budgets above 1: once every page is fetched, a rescore drops the queue's stale entries and the crawl stops
    there (it used to pop from the emptied heap: IndexError)."""
    pages = {"/": [f"/a{i}" for i in range(n_articles)] + [f"/a{i}?l=2" for i in range(n_articles)]}
    for i in range(n_articles):
        pages[f"/a{i}"] = ["/", f"/a{i}?l=2", f"/a{(i + 1) % n_articles}"]
        pages[f"/a{i}?l=2"] = ["/", f"/a{i}", f"/a{(i + 1) % n_articles}?l=2"]
    docs = site(pages, lang={path: "isl" for path in pages if "?" in path})
    graph = build_graph(docs)

    def lang_scorer(batch):
        return pd.DataFrame({"eng": np.full(len(batch), 0.5), "isl": np.full(len(batch), 0.5)})

    def pair_scorer(src_urls, trg_urls):
        return np.array([0.9 if s.split("?")[0] == t.split("?")[0] else 0.1 for s, t in zip(src_urls, trg_urls)])

    policy = make_policy("smart+site", langs=("eng", "isl"), lang_scorer=lang_scorer, pair_scorer=pair_scorer)
    result = simulate(graph, policy, pairs(*[(f"/a{i}", f"/a{i}?l=2") for i in range(n_articles)]), budget=budget)
    assert result.fetched == graph.n_docs == 2 * n_articles + 1 and result.stopped == "frontier_exhausted"
    assert result.budget_fetches == round(budget * graph.n_docs) and result.pairs_found == n_articles


def test_fetched_priorities_are_the_priorities_pages_were_queued_with():
    from parascout.udfs.replay.simulator import priority_order, priority_values

    values = np.array([0.95, -0.25, 0.0, 1e-12, -3.5, 7.0])
    assert priority_values(priority_order(values)).tolist() == values.tolist()
    graph = build_graph(site({"/": ["/a", "/b"], "/a": [], "/b": ["/a"]}))
    table = {"/a": 0.2, "/b": 0.9}
    policy = make_policy("random")
    policy.priority = lambda g, sources, targets: np.array([table.get(url_key(g.urls[t])[len(HOST) + 2:], 0.0)
                                                            for t in targets])
    result = simulate(graph, policy, NO_PAIRS)
    assert result.fetched_urls() == urls("/", "/b", "/a") and result.seeds == [0]
    assert np.isnan(result.fetched_priorities()[0]) and result.fetched_priorities()[1:].tolist() == [0.9, 0.2]
    assert np.isnan(simulate(graph, "bfs", NO_PAIRS).fetched_priorities()).all()  # FIFO: no priorities


def test_replay_order_fetches_a_list_in_its_order():
    from parascout.udfs.replay.simulator import replay_order

    graph = build_graph(site({"/": ["/a", "/b"], "/a": [], "/b": []}))
    truth = pairs(("/a", "/b"))
    crawl = replay_order(graph, urls("/b", "/missing", "/b", "/a", "/"), truth)
    assert crawl.fetched_urls() == urls("/b", "/missing", "/a", "/")  # a URL listed twice is fetched once
    assert crawl.wasted_fetches == 1 and crawl.doc_events == [3, 3] and crawl.stopped == "list_exhausted"
    assert replay_order(graph, urls("/b", "/a", "/"), truth, budget=1).fetched == 1
