"""udfs.verify.structure: STRAND alignment (dp, n, r, p) and the threshold / learned decision rules."""
from __future__ import annotations

import random

import numpy as np
from scipy import stats

from parascout.udfs.verify.structure import (
    RULE_FEATURES,
    ThresholdRule,
    TreeRule,
    align_tokens,
    feature_matrix,
    pearson_significance,
    rule_from_dict,
    strand_features,
)


def page_tokens(lengths: list[int], tag: str = "p") -> list[str]:
    tokens = ["[START:html]", "[START:body]"]
    for length in lengths:
        tokens += [f"[START:{tag}]", f"[Chunk:{length}]", f"[END:{tag}]"]
    return tokens + ["[END:body]", "[END:html]"]


def test_alignment_is_a_minimal_diff():
    a, b = list("ABCABBA"), list("CBABAC")
    pairs = align_tokens(a, b)
    assert len(pairs) == 4  # the LCS of the classic Myers example
    assert all(a[i] == b[j] for i, j in pairs)
    assert [i for i, _ in pairs] == sorted(i for i, _ in pairs) and [j for _, j in pairs] == sorted(j for _, j in pairs)
    assert align_tokens([], list("abc")) == [] and len(align_tokens(list("abc"), list("abc"))) == 3


def test_translation_like_pages_pass_and_unrelated_fail():
    rng = random.Random(7)
    lengths = [rng.randint(20, 400) for _ in range(30)]
    translated = [int(x * 1.15) + rng.randint(-5, 5) for x in lengths]
    source, target = page_tokens(lengths), page_tokens(translated)
    target.insert(10, "[START:span]")  # one extra tag
    features = strand_features(source, target)
    assert features.dp == 1 / (len(source) + len(target))
    assert features.aligned_chunks == 30 and features.n == 30
    assert features.r > 0.99 and features.p < 1e-10
    assert ThresholdRule().decide(features) == (True, None)

    unrelated = page_tokens([rng.randint(20, 400) for _ in range(8)], tag="div") + ["[START:table]"] * 40
    rejected = strand_features(source, unrelated)
    assert rejected.dp > 0.5
    assert ThresholdRule().decide(rejected) == (False, "dp_too_high")


def test_same_structure_with_uncorrelated_lengths_fails_on_p():
    rng = random.Random(3)
    source = page_tokens([rng.randint(10, 500) for _ in range(12)])
    target = page_tokens([rng.randint(10, 500) for _ in range(12)])
    features = strand_features(source, target)
    assert features.dp == 0 and features.p > 0.05
    assert ThresholdRule().decide(features) == (False, "p_too_high")
    assert ThresholdRule(max_p=0.99).decide(features)[0] is (features.p < 0.99)


def test_significance_matches_scipy_and_degenerate_cases():
    x, y = [1, 2, 3, 4, 6, 8], [2, 1, 4, 3, 7, 9]
    r, p = pearson_significance(x, y)
    expected = stats.pearsonr(x, y)
    assert abs(r - expected[0]) < 1e-12 and abs(p - expected[1]) < 1e-9
    assert pearson_significance([1, 2], [1, 2]) == (None, 1.0)
    assert pearson_significance([5, 5, 5], [1, 2, 3]) == (None, 1.0)
    assert strand_features([], []).dp == 1.0
    few = strand_features(page_tokens([10, 20]), page_tokens([11, 22]))
    assert few.dp == 0 and ThresholdRule().decide(few) == (False, "too_few_chunks")


def test_learned_tree_separates_labelled_pairs_and_round_trips():
    rng = np.random.default_rng(0)
    positives = [{"dp": rng.uniform(0, 0.3), "p": rng.uniform(0, 0.01), "r": 0.9, "n": 10,
                  "image_jaccard": rng.uniform(0.2, 1), "length_ratio": 0.8, "paragraph_ratio": 0.9}
                 for _ in range(40)]
    negatives = [{"dp": rng.uniform(0.35, 0.9), "p": rng.uniform(0, 0.5), "r": 0.2, "n": 3,
                  "image_jaccard": None, "length_ratio": 0.4, "paragraph_ratio": 0.5} for _ in range(40)]
    rows = positives + negatives
    labels = [True] * 40 + [False] * 40
    rule = TreeRule.fit(feature_matrix(rows), labels, max_depth=2)
    predictions = [rule.decide(row)[0] for row in rows]
    assert predictions == labels
    assert rule.decide(negatives[0]) == (False, "rule_rejected")
    again = rule_from_dict(rule.to_dict())
    assert isinstance(again, TreeRule) and [again.decide(row)[0] for row in rows] == labels
    assert rule_from_dict(ThresholdRule(0.1, 0.01).to_dict()) == ThresholdRule(0.1, 0.01)
    assert feature_matrix([{"dp": None}]).tolist() == [list(RULE_FEATURES.values())]
