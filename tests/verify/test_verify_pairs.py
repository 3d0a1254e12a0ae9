"""verify-pairs: STRAND + ILSP-FC signals on docs built from real parses, the self-labelled content model and its
thresholds per language pair; every pair accounted by reason."""
from __future__ import annotations

import dataclasses
import json
import math
import random

import numpy as np
import pandas as pd
import pytest

from parascout.jobs.verify_pairs import VerifyPairsJob
from parascout.udfs.common import storage
from parascout.udfs.lexicon.lexicon import Lexicon, write_lexicon
from parascout.udfs.verify.decision import (
    ContentModel,
    decide,
    language_pair_nulls,
    lexicon_free_pairs,
    one_to_one,
    residual_pairs,
    self_labels,
    with_held_out_scores,
)
from parascout.udfs.verify.structure import ThresholdRule
from parascout.udfs.verify.verification import (
    CONTENT_FEATURES,
    HELD_OUT_COLUMNS,
    LEXICON_FEATURES,
    MIN_LEXICON_COVERAGE,
    MIN_LEXICON_SEPARATION,
    MIN_NULL_PAIRS,
    MIN_SELF_LABELS,
    NO_PAIR_COVERED,
    RESIDUAL_FLOOR_SHARE,
    RESIDUAL_METHOD,
    SELF_LABEL_ACCEPT_P,
    SELF_LABEL_L2,
    SPLICED_SHARE,
    content_mutual_best,
    image_jaccard,
    language_ok,
    ratio,
    verify_frame,
    verify_host,
)
from tests.conftest import run_job
from tests.support.verify_sites import (
    HOST,
    LEXICON,
    build_site,
    content_site,
)


def test_pair_signals():
    assert image_jaccard(["a.png", "b.png"], ["b.png", "c.png"]) == (1 / 3, 1)
    assert image_jaccard([], None) == (None, 0)
    assert ratio(50, 100) == 0.5 and ratio(0, 0) is None and ratio(None, 3) is None
    assert language_ok("deu", "deu", True) and not language_ok("deu", "deu", False)
    assert not language_ok("deu", "eng", True) and language_ok(None, "eng", True)


def test_verify_frame_without_spark():
    docs, pairs, expected = build_site(random.Random(5))
    result = verify_frame(pd.DataFrame(pairs), pd.DataFrame(docs), ThresholdRule())
    outcomes = {(r.src_url, r.trg_url): "ok" if r.parallel else r.reason for r in result.itertuples()}
    assert outcomes == expected
    good = result[result["parallel"]].iloc[0]
    assert good["dp"] < 0.05 and good["r"] > 0.95 and 0.7 < good["length_ratio"] < 0.95
    assert good["image_jaccard"] == 1.0 and good["paragraph_ratio"] == 1.0  # logo.png counts here (no host DF)
    assert good["tsim"] is None or pd.isna(good["tsim"])  # no texts: no content features


@pytest.mark.slow
def test_verify_pairs_job_with_threshold_and_learned_rules(spark, tmp_path):
    docs, pairs, expected = build_site(random.Random(5), translations=4)
    storage.write_parquet_table(pd.DataFrame(docs), str(tmp_path / "docs"))
    storage.write_parquet_table(pd.DataFrame(pairs), str(tmp_path / "candidates"))
    report = run_job(VerifyPairsJob, spark, ["--root", str(tmp_path)])
    assert report["balanced"] and report["inputs"] == {"candidates": 9} and report["kept"] == 4
    assert report["filtered"] == {"p_too_high": 1, "dp_too_high": 1, "lang_mismatch": 1}
    assert report["bad"] == {"missing_trg_doc": 1, "failed_src_doc": 1}
    assert report["metrics"]["rule"] == {"method": "strand-threshold", "max_dp": 0.2, "max_p": 0.05}
    verified = {(r.src_url, r.trg_url): r.asDict() for r in spark.read.parquet(str(tmp_path / "verified_pairs"))
                .collect()}
    assert {key: "ok" if row["parallel"] else row["reason"] for key, row in verified.items()} == expected
    good = verified[(f"http://{HOST}/en/report-0", f"http://{HOST}/de/bericht-0")]
    # logo.png is on every page of the host: boilerplate, so only chart0.png is compared
    assert good["image_jaccard"] == 1.0 and good["shared_images"] == 1 and good["method"] == "strand-threshold"
    assert verified[(f"http://{HOST}/en/report-0", f"http://{HOST}/de/andere")]["image_jaccard"] == 0.0

    labels = [{"src_url": s, "trg_url": t, "label": outcome == "ok"} for (s, t), outcome in expected.items()]
    labels += [{"src_url": f"http://{HOST}/misc/{i}", "trg_url": f"http://{HOST}/misc/{i + 1}", "label": False}
               for i in range(5)]
    storage.write_parquet_table(pd.DataFrame(labels), str(tmp_path / "labelled"))
    learned = run_job(VerifyPairsJob, spark, ["--root", str(tmp_path), "--learn-from", str(tmp_path / "labelled"),
                                              "--force"])
    assert learned["balanced"] and learned["metrics"]["rule"]["method"] == "learned-logistic"
    assert learned["metrics"]["learned_from"]["pairs"] == 12 and learned["metrics"]["learned_from"]["positives"] == 4
    assert learned["metrics"]["learned_from"]["training_accuracy"] == 1.0
    assert learned["kept"] == 4 and learned["bad"] == report["bad"]


def test_held_out_scores_of_the_rows_self_labels_come_from():
    pages, pairs, _ = content_site(random.Random(3))
    # a bootstrapped lexicon: it learned from p0-p5 (fold 0, whose held-out lexicon knows no word) and p6-p11 (fold
    # 1, whose held-out lexicon is as good as it)
    fold_of = {f"http://{HOST}/{lang}/p{k}": int(k >= 6) for lang in ("en", "de") for k in range(12)}
    lexicon = dataclasses.replace(LEXICON, held_out=(Lexicon("eng", "deu", {}), LEXICON), fold_of=fold_of)
    features = verify_host(pairs, pages, ThresholdRule().to_dict(), [lexicon], random_count=40, seed=1)
    plain = verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON], random_count=40, seed=1)
    assert plain[list(HELD_OUT_COLUMNS)].isna().all().all()  # a lexicon without held-out lexicons: none
    pd.testing.assert_frame_equal(features.drop(columns=list(HELD_OUT_COLUMNS)),
                                  plain.drop(columns=list(HELD_OUT_COLUMNS)))  # its own scores unchanged
    by_pair = features[features.role == "candidate"].set_index(["src_url", "trg_url"])
    first, last = by_pair.loc[(f"http://{HOST}/en/p0", f"http://{HOST}/de/p0")], by_pair.loc[
        (f"http://{HOST}/en/p7", f"http://{HOST}/de/p7")]
    assert first.tsim == 1.0 and first.held_out_tsim < 0.2 and last.held_out_tsim == last.tsim == 1.0
    # scored: the random, spliced, confident (link / handle) and mutual-best rows with text; not a 'similar' loser
    eligible = (features.role.isin(["random", "spliced"]) | features.source.isin(["link", "handle"])
                | features.mutual_best.astype(bool)) & features.tsim.notna()
    assert features.held_out_tsim.notna().eq(eligible).all() and (~eligible).sum() >= 11
    labelled, _ = self_labels(features)
    fitted = with_held_out_scores(labelled)
    assert len(fitted) == 2 * len(labelled)  # each label row twice: as the lexicon and as a held-out one scores it
    twins = fitted.iloc[len(labelled):]
    assert (twins.tsim.to_numpy() == labelled.held_out_tsim.fillna(labelled.tsim).to_numpy()).all()
    # (an empty lexicon links nothing: diagonal_share undefined)
    assert (twins[list(LEXICON_FEATURES)].fillna(0).to_numpy() <= labelled[list(LEXICON_FEATURES)].to_numpy() + 1e-9).all()
    assert len(with_held_out_scores(self_labels(plain)[0])) == len(self_labels(plain)[0])  # no held-out: no twins


def test_content_decision_without_labels():
    pages, pairs, expected = content_site(random.Random(3))
    features = verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON], random_count=40, seed=1)
    candidates, randoms = features[features.role == "candidate"], features[features.role == "random"]
    spliced = features[features.role == "spliced"]
    assert len(candidates) == len(pairs) and 20 < len(randoms) <= 40
    assert not set(zip(randoms.src_url, randoms.trg_url)) & set(zip(pairs.src_url, pairs.trg_url))
    true = candidates[candidates.src_url.str[-2:] == candidates.trg_url.str[-2:]]
    assert (true.tsim == 1.0).all()  # every word of a true pair links under the lexicon
    assert candidates.tsim.max() == 1.0 and randoms.tsim.max() < 0.5 and candidates.structure_ok.all()
    # SPLICED_SHARE of the confident pairs (link / handle) once more, the German page half replaced by another's
    assert len(spliced) == round(SPLICED_SHARE * 12) == 5 and set(zip(spliced.src_url, spliced.trg_url)) <= set(zip(true.src_url, true.trg_url))
    assert spliced.tsim.between(0.2, 0.8).all() and spliced.structure_ok.all()
    labelled, stats = self_labels(features)
    assert stats["positives"] == 12 and stats["negatives"] == len(randoms) + len(spliced)
    assert stats["spliced_negatives"] == 5
    model = ContentModel.fit_per_language_pair(labelled, labelled["label"])
    assert model.method == "self-labelled-logistic" and model.weights is not None
    assert [key for key, _ in model.language_pairs] == ["eng-deu"]
    decided = one_to_one(decide(candidates, model))
    outcomes = {(r.src_url, r.trg_url): "ok" if r.parallel else r.reason for r in decided.itertuples()}
    assert outcomes == expected
    assert decided[decided.parallel].p_parallel_content.min() > 0.9
    rejected = decided[decided.reason == "content_rejected"]
    assert rejected.p_parallel_content.max() < 0.5
    restored = ContentModel.from_dict(json.loads(json.dumps(model.to_dict())))
    assert np.allclose(restored.predict(candidates), model.predict(candidates))


def test_each_language_pair_learns_on_its_own_scale():
    # eng-fra translations link 80% of their words, eng-ara ones 45% (a weaker lexicon): one model over both
    # puts its boundary between fra's classes and rejects every Arabic translation; per language pair it does not
    rng = np.random.default_rng(0)
    rows = []
    for trg_lang, true_tsim, false_tsim, count in (("fra", 0.8, 0.4, 60), ("ara", 0.45, 0.15, 12)):
        for label, level in ((True, true_tsim), (False, false_tsim)):
            values = level + rng.normal(0, 0.03, count)
            rows += [{"src_lang": "eng", "trg_lang": trg_lang, "tsim": v, "tsim_idf": v, "label": label}
                     for v in values]
    frame = pd.DataFrame(rows)
    arabic = frame[(frame.trg_lang == "ara") & frame.label]
    assert (ContentModel.fit(frame, frame.label, l2=SELF_LABEL_L2).predict(arabic) < 0.5).all()
    model = ContentModel.fit_per_language_pair(frame, frame.label)
    assert [key for key, _ in model.language_pairs] == ["eng-ara", "eng-fra"]
    assert ((model.predict(frame) >= 0.5) == frame.label).all()
    restored = ContentModel.from_dict(json.loads(json.dumps(model.to_dict())))
    assert np.allclose(restored.predict(frame), model.predict(frame))
    # a language pair without labels of its own gets the model of all pairs
    german = frame[frame.trg_lang == "fra"].assign(trg_lang="deu")
    assert np.allclose(model.predict(german), ContentModel.fit(frame, frame.label, l2=SELF_LABEL_L2).predict(german))
    few = frame[(frame.trg_lang == "fra") | (frame.index.isin(arabic.index[:3]))]
    assert [key for key, _ in ContentModel.fit_per_language_pair(few, few.label).language_pairs] == ["eng-fra"]


def test_too_few_self_labels_fall_back_to_the_null_threshold():
    frame = pd.DataFrame({"tsim": [0.9, 0.1], "tsim_idf": [0.8, 0.1], "reason": [None, None]})
    model = ContentModel.fit(frame, [True, False], null_threshold=0.5)
    assert model.method == "null-threshold" and list(model.predict(frame)) == [1.0, 0.0]


@pytest.mark.slow
def test_verify_pairs_job_with_texts_and_a_lexicon(spark, tmp_path):
    pages, pairs, expected = content_site(random.Random(3))
    doc_columns = [c for c in pages.columns if c not in ("text_paragraphs", "main_text", "duplicate_of")]
    storage.write_parquet_table(pages[doc_columns], str(tmp_path / "docs"))
    texts = pages[["url", "host", "cld2_lang", "text_paragraphs", "main_text", "duplicate_of"]].rename(
        columns={"cld2_lang": "lang", "text_paragraphs": "paragraphs"})
    storage.write_parquet_table(texts.assign(title="", text_truncated=False), str(tmp_path / "texts"))
    storage.write_parquet_table(pairs, str(tmp_path / "candidates"))
    write_lexicon(LEXICON, tmp_path / "lexicon")
    report = run_job(VerifyPairsJob, spark, ["--root", str(tmp_path), "--lexicon", str(tmp_path / "lexicon"),
                                             "--random-pairs", "40"])
    assert report["balanced"] and report["inputs"] == {"candidates": 25} and report["kept"] == 12
    assert report["filtered"] == {"content_rejected": 12, "not_one_to_one": 1}
    assert report["metrics"]["self_labels"]["positives"] == 12 and report["metrics"]["rule"]["method"] == \
        "self-labelled-logistic"
    verified = spark.read.parquet(str(tmp_path / "verified_pairs")).toPandas()
    assert {(r.src_url, r.trg_url): "ok" if r.parallel else r.reason for r in verified.itertuples()} == expected
    parallel = verified[verified.parallel]
    assert parallel.src_url.is_unique and parallel.trg_url.is_unique
    assert report["metrics"]["self_labels"]["held_out_label_rows"] == 0
    # the six URL-exact pairs (handles), all the same document: what a host with none of its own to judge would take
    assert report["metrics"]["archive_url_log_odds"] == {"eng-deu": pytest.approx(math.log(7))}
    # a bootstrapped lexicon's held-out lexicons (written and read back): the label rows are fitted twice, the same
    # pairs verified
    half = Lexicon("eng", "deu", dict(list(LEXICON.table.items())[::2]))
    fold_of = {f"http://{HOST}/{lang}/p{k}": k % 2 for lang in ("en", "de") for k in range(12)}
    write_lexicon(dataclasses.replace(LEXICON, held_out=(half, LEXICON), fold_of=fold_of), tmp_path / "held")
    report = run_job(VerifyPairsJob, spark, ["--root", str(tmp_path), "--lexicon", str(tmp_path / "held"),
                                             "--random-pairs", "40", "--force"])
    labels = report["metrics"]["self_labels"]
    assert report["balanced"] and labels["held_out_label_rows"] == labels["positives"] + labels["negatives"]
    verified = spark.read.parquet(str(tmp_path / "verified_pairs")).toPandas()
    assert {(r.src_url, r.trg_url): "ok" if r.parallel else r.reason for r in verified.itertuples()} == expected
    # several pairs: a folder of per-pair lexicons (train-lexicon's layout); a listed pair without candidates skipped
    write_lexicon(LEXICON, tmp_path / "lexicons" / "eng-deu")
    report = run_job(VerifyPairsJob, spark, ["--root", str(tmp_path), "--lexicon", str(tmp_path / "lexicons"),
                                             "--random-pairs", "40", "--langs", "en:de,fr", "--force"])
    assert report["balanced"] and report["kept"] == 12 and report["metrics"]["pairs_skipped"] == {
        "eng-fra": "no_candidates"}
    assert report["by_pair"]["eng-deu"]["kept"] == 12 and report["metrics"]["by_pair"]["eng-deu"]["parallel_pairs"] == 12
    assert [p.name for p in (tmp_path / "verified_pairs").glob("version=*/lang_pair=*")] == ["lang_pair=eng-deu"]


def test_a_self_labelled_model_accepts_from_its_own_p_a_labelled_one_from_half():
    frame = pd.DataFrame({"host": [HOST], "src_url": ["a"], "trg_url": ["b"], "tsim": [0.3], "reason": [None],
                          "parallel": [False]})
    p = (SELF_LABEL_ACCEPT_P + 0.5) / 2  # between the two thresholds
    features = len(CONTENT_FEATURES)
    model = ContentModel((0.0,) * features, math.log(p / (1 - p)), (0.0,) * features, (1.0,) * features)
    assert SELF_LABEL_ACCEPT_P < 0.5 and model.accept_p == SELF_LABEL_ACCEPT_P
    decided = decide(frame, model).iloc[0]
    assert decided.parallel and decided.reason is None and decided.p_parallel_content == pytest.approx(p)
    learned = decide(frame, dataclasses.replace(model, method="learned-logistic")).iloc[0]
    assert not learned.parallel and learned.reason == "content_rejected"


def test_pairs_that_only_the_text_makes_confident_are_self_labelled_positives():
    # a host whose translations no switcher link or handle proposed (every candidate 'similar'): before, its
    # language pair had no positive of its own; each page's best partner by its own text, when that partner's best
    # is the page and the text beats the random pairs' null, is one (the wrong same-template partners are not)
    pages, pairs, _ = content_site(random.Random(3))
    unconfident = pairs.assign(source="similar")
    features = verify_host(unconfident, pages, ThresholdRule().to_dict(), [LEXICON], random_count=40, seed=1)
    candidates = features[features.role == "candidate"]
    best = candidates[candidates.mutual_best.astype(bool)]
    assert set(zip(best.src_url, best.trg_url)) == {(f"http://{HOST}/en/p{k}", f"http://{HOST}/de/p{k}")
                                                    for k in range(12)}
    labelled, stats = self_labels(features)
    assert stats["confident_pairs"] == 0 and stats["positives"] == stats["mutual_best_positives"] == 12
    assert set(zip(labelled[labelled.label].src_url, labelled[labelled.label].trg_url)) == set(
        zip(best.src_url, best.trg_url))
    # where switcher links and handles taught the host's language pair, they alone label it
    linked = verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON], random_count=40, seed=1)
    assert self_labels(linked)[1]["mutual_best_positives"] == 0 and self_labels(linked)[1]["positives"] == 12
    # near-duplicates are one page: de/p0 and its copy tie for en/p0, the pair still counts, once
    copy = candidates[candidates.trg_url.str.endswith("p0-copy")].iloc[0]
    assert copy.trg_key == f"http://{HOST}/de/p0" and copy.own_tsim_idf == pytest.approx(1.0) and not copy.mutual_best
    # a page's best partner whose own best is another page is no positive
    rows = pd.DataFrame({"role": "candidate", "lang_ok": True, "tsim": 0.5, "src_lang": "eng", "trg_lang": "deu",
                         "src_url": ["a", "a", "b"], "trg_url": ["x", "y", "y"], "src_key": None, "trg_key": None,
                         "own_tsim_idf": [0.5, 0.6, 0.7]})
    assert content_mutual_best(rows).tolist() == [False, False, True]


def test_a_pair_below_its_language_pairs_null_is_not_parallel_whatever_its_p():
    # a model fitted on a few self labels of a language pair can score a pair high for its layout alone (a page on
    # another page's template, other text: paragraph lengths correlated, own_tsim_idf at the random pairs' level);
    # the pair must also beat its language pair's null: the 99th percentile of its random pairs' own_tsim_idf
    randoms = pd.DataFrame({"src_lang": "eng", "trg_lang": ["zho"] * 100 + ["ara"] * (MIN_NULL_PAIRS - 1),
                            "own_tsim_idf": [k / 400 for k in range(100)] + [0.9] * (MIN_NULL_PAIRS - 1)})
    floors = language_pair_nulls(randoms)
    assert list(floors) == ["eng-zho"] and floors["eng-zho"] == pytest.approx(0.99 * 99 / 400)  # ara: too few random pairs
    # the same null of another column: the coverage a URL-exact pair's covered page must beat (decide)
    coverage = language_pair_nulls(randoms.assign(own_coverage_idf=randoms["own_tsim_idf"] * 2), column="own_coverage_idf")
    assert coverage == {"eng-zho": pytest.approx(2 * floors["eng-zho"])}
    labels = np.repeat([True, False], 10)
    training = pd.DataFrame({"src_lang": "eng", "trg_lang": "zho", "tsim": np.where(labels, 0.6, 0.1),
                             "tsim_idf": np.where(labels, 0.6, 0.1), "own_tsim_idf": np.where(labels, 0.6, 0.1)})
    fitted = ContentModel.fit_per_language_pair(training, labels, floors=floors, default_floor=0.18)
    assert dict(fitted.own_text_floors) == floors and fitted.default_own_text_floor == 0.18
    p = 0.6  # every pair: the model alone accepts them all
    features = len(CONTENT_FEATURES)
    model = dataclasses.replace(fitted, weights=(0.0,) * features, bias=math.log(p / (1 - p)), language_pairs=(),
                                means=(0.0,) * features, scales=(1.0,) * features, ranges=())
    pairs = pd.DataFrame({"src_lang": "eng", "trg_lang": ["zho", "zho", "ara", "ara"], "tsim": 0.3,
                          "own_tsim_idf": [0.22, 0.3, 0.17, 0.22], "reason": None, "parallel": False})
    decided = decide(pairs, model)
    assert np.allclose(decided.p_parallel_content, p)
    assert decided.parallel.tolist() == [False, True, False, True]  # ara: the null of all random pairs, 0.18
    assert decided.reason.tolist() == ["content_rejected", None, "content_rejected", None]
    assert decide(pairs, ContentModel.from_dict(json.loads(json.dumps(model.to_dict())))).parallel.tolist() == \
        [False, True, False, True]
    assert decide(pairs, dataclasses.replace(model, own_text_floors=(), default_own_text_floor=None)).parallel.all()


def test_a_language_pair_whose_lexicon_knows_too_few_of_its_words_is_judged_without_it():
    # a lexicon bootstrapped from other sites' links to one home page knows a handful of words: the language pair's
    # candidates' coverage is low and its translations score no higher than random pairs (own_tsim_idf ~0.03),
    # below the pooled model's scale: a model of the other features judges them, with no own-text floor
    # eng-fra: its lexicon covers its pages; eng-eus: it does not, and the mutual-best pairs score at the random
    # pairs' null; eng-zho: low coverage too (a Bible lexicon on a morphology it splits badly) but its mutual-best
    # pairs score far above the null; eng-ara: too few candidates to tell
    n = MIN_SELF_LABELS
    candidates = pd.DataFrame({"src_lang": "eng", "trg_lang": ["fra"] * n + ["eus"] * n + ["zho"] * n + ["ara"] * (n - 1),
                               "best_side_coverage_idf": [0.5] * n + [0.05] * (3 * n - 1),
                               "own_tsim_idf": [0.5] * n + [0.025] * n + [0.5] * n + [0.025] * (n - 1),
                               "mutual_best": True})
    nulls = {"eng-fra": 0.2, "eng-eus": 0.025, "eng-zho": 0.2, "eng-ara": 0.025}
    assert lexicon_free_pairs(candidates, nulls) == ["eng-eus"]
    assert lexicon_free_pairs(candidates, {}) == []  # no null: nothing to compare with
    assert MIN_LEXICON_COVERAGE > 0.05 and MIN_LEXICON_SEPARATION > 1
    rng = np.random.default_rng(0)
    labels = np.repeat([True, False], 60)
    text = np.where(labels, 0.6, 0.1) + rng.normal(0, 0.03, 120)
    training = pd.DataFrame({"src_lang": "eng", "trg_lang": "fra", "tsim": text, "tsim_idf": text, "own_tsim_idf": text,
                             "paragraph_length_r": np.where(labels, 0.95, 0.2) + rng.normal(0, 0.05, 120)})
    basque = pd.DataFrame({"src_lang": "eng", "trg_lang": "eus", "tsim": 0.03, "tsim_idf": 0.03,
                           "own_tsim_idf": [0.03, 0.02], "paragraph_length_r": [0.95, 0.2], "reason": None,
                           "parallel": False})
    floors = {"eng-fra": 0.2, "eng-eus": 0.025}
    pooled = ContentModel.fit_per_language_pair(training, labels, floors=floors, default_floor=0.2)
    assert not decide(basque, pooled).parallel.any()
    free = ContentModel.fit_per_language_pair(training, labels, floors=floors, default_floor=0.2,
                                              lexicon_free=("eng-eus",), coverage_floors={"eng-eus": 0.3},
                                              default_coverage_floor=0.4)
    assert decide(basque, free).parallel.tolist() == [True, False]  # by its layout, whatever its own text
    # a weak lexicon's coverage says nothing: no pair of the language pair is judged covered by its partner
    assert free.coverage_floor(basque).tolist() == [NO_PAIR_COVERED, NO_PAIR_COVERED] and NO_PAIR_COVERED >= 1
    assert json.loads(json.dumps(free.to_dict(), allow_nan=False))["coverage_floors"] == {"eng-eus": NO_PAIR_COVERED}
    assert free.coverage_floor(training.iloc[:1]).tolist() == [0.4]
    restored = ContentModel.from_dict(json.loads(json.dumps(free.to_dict())))
    assert decide(basque, restored).parallel.tolist() == [True, False]
    french = training.assign(reason=None, parallel=False)
    assert np.allclose(free.predict(french), pooled.predict(french))  # a pair its lexicon covers keeps its model


def test_pages_left_without_a_partner_pair_by_their_mutual_best_text():
    # a bootstrapped lexicon knows the words of the pairs it learned from, not those of a host's last pair: that pair
    # falls below the floor, but its pages still pick each other by text, their paragraphs and images agree
    floor = 0.3
    model = ContentModel(None, 0.0, (), (), 1.0, own_text_floors=(("eng-zho", floor), ("eng-ara", -1.0)))
    above, below = RESIDUAL_FLOOR_SHARE * floor + 0.01, RESIDUAL_FLOOR_SHARE * floor - 0.01
    rows = [("a1", "b1", True, True, 0.6, 0.95, None),   # parallel already
            ("a2", "b2", False, True, above, 0.95, None),  # left without partners: becomes parallel
            ("a1", "b3", False, True, above, 0.95, None),  # a1 is taken
            ("a4", "b4", False, True, below, 0.95, 1.0),   # too little own text
            ("a5", "b5", False, True, above, 0.5, 1.0),    # paragraphs disagree
            ("a6", "b6", False, True, above, 0.95, 0.2),   # images disagree
            ("a7", "b7", False, False, above, 0.95, 1.0),  # not each other's best
            ("a8", "b8", False, True, above, 0.95, 0.5),   # becomes parallel
            ("a9", "b9", False, True, above, None, None)]  # one paragraph each: their lengths prove nothing
    frame = pd.DataFrame(rows, columns=["src_url", "trg_url", "parallel", "mutual_best", "own_tsim_idf",
                                        "paragraph_length_r", "image_jaccard"]).assign(
        src_lang="eng", trg_lang="zho", src_key=None, trg_key=None, text_paragraph_ratio=1.0)
    frame["reason"] = np.where(frame.parallel, None, "content_rejected")
    frame.loc[2, "trg_key"] = "b1"  # b3 a near-duplicate of b1: one page
    decided = residual_pairs(frame, model)
    assert decided.parallel.tolist() == [True, True, False, False, False, False, False, True, False]
    assert decided.reason[decided.parallel].isna().all() and (decided.reason[~decided.parallel] == "content_rejected").all()
    assert (decided.method == RESIDUAL_METHOD).tolist() == [False, True] + [False] * 5 + [True, False]
    assert residual_pairs(frame, None).equals(frame)
    assert not residual_pairs(frame.assign(trg_lang="ara"), model).parallel[1]  # a lexicon-free language pair: no floor
