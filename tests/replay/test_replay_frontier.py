"""The crawl plan's side of a replay: the planned policy and its frontier columns."""
import math

import numpy as np

from parascout.udfs.replay import build_graph, build_truth, make_policy, simulate
from parascout.udfs.replay.frontier import FRONTIER_FIELDS, frontier_columns, plan_policy
from parascout.udfs.replay.synthetic import handle_pair_scorer, marker_lang_scorer, multilingual_site

LANGS = ("eng", "isl")


def test_the_plan_takes_the_fewest_fetches_to_80_then_auc_and_never_oracle():
    rows = [{"policy": "oracle", "status": "ok", "fetches_to_80": 10, "auc": 0.9},
            {"policy": "bfs", "status": "ok", "fetches_to_80": 50, "auc": 0.5},
            {"policy": "strand", "status": "ok", "fetches_to_80": 30, "auc": 0.6},
            {"policy": "random", "status": "ok", "fetches_to_80": 30, "auc": 0.7},
            {"policy": "smart", "status": "failed: ValueError", "fetches_to_80": None, "auc": math.nan}]
    assert plan_policy(rows) == "random"
    assert plan_policy([{**rows[1], "fetches_to_80": None}, {**rows[2], "fetches_to_80": None, "auc": 0.1}]) == "bfs"
    assert plan_policy(rows[:1] + rows[4:]) is None


def test_smart_frontier_carries_url_model_languages_and_partners():
    docs, truth = multilingual_site(n_articles=20, host="www.f.is", seed=1)
    graph = build_graph(docs)
    policy = make_policy("smart", langs=LANGS, lang_scorer=marker_lang_scorer({"eng": "/en/", "isl": "/is/"}),
                         pair_scorer=handle_pair_scorer(LANGS))
    result = simulate(graph, policy, build_truth(graph, truth))
    columns = frontier_columns(result, policy)
    assert set(columns) == {f"frontier_{name}" for name in FRONTIER_FIELDS}
    assert columns["frontier_url"] == result.fetched_urls() and columns["frontier_seed"][0]
    assert columns["frontier_priority"][0] is None and all(p is not None for p in columns["frontier_priority"][1:])
    langs = dict(zip(columns["frontier_url"], columns["frontier_predicted_lang"]))
    assert all(lang == "isl" for url, lang in langs.items() if "/is/" in url)
    assert all(lang == "eng" for url, lang in langs.items() if "/en/" in url)
    partners = {u: p for u, p in zip(columns["frontier_url"], columns["frontier_partner_url"]) if p}
    twins = {(src, trg) for src, trg in zip(truth["src_url"], truth["trg_url"])}
    assert partners and sum((p, u) in twins or (u, p) in twins for u, p in partners.items()) > len(partners) / 2


def test_policies_without_predictions_leave_them_empty():
    docs, truth = multilingual_site(n_articles=10, host="www.g.is", seed=2)
    graph = build_graph(docs)
    policy = make_policy("bfs")
    columns = frontier_columns(simulate(graph, policy, build_truth(graph, truth)), policy)
    assert set(columns["frontier_predicted_lang"]) == {None} and set(columns["frontier_partner_url"]) == {None}
    assert columns["frontier_archived"] == (np.asarray(simulate(graph, policy, truth).order) < graph.n_docs).tolist()
