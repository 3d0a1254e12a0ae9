"""verify-pairs: STRAND + ILSP-FC signals on docs built from real parses; every pair accounted by reason."""
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
from parascout.udfs.common.lexicon import Lexicon, write_lexicon
from parascout.udfs.common.urls import url_host
from parascout.udfs.fetch.documents import DOC_COLUMNS, empty_doc, parse_record
from parascout.udfs.fetch.html_text import paragraph_hash
from parascout.udfs.verify import verification
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
from parascout.udfs.verify.pages import HostPages
from parascout.udfs.verify.structure import ThresholdRule
from parascout.udfs.verify.verification import (
    CONTENT_FEATURES,
    HELD_OUT_COLUMNS,
    LEXICON_FEATURES,
    MIN_LEXICON_COVERAGE,
    MIN_LEXICON_SEPARATION,
    MIN_NULL_PAIRS,
    MIN_SELF_LABELS,
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
from tests.test_documents import ENGLISH, GERMAN, html_page, record_bytes

HOST = "www.example.com"


def text_of(base: str, length: int) -> str:
    """`length` characters of running text in the language of `base`."""
    return (base * (length // len(base) + 1))[:length].rsplit(" ", 1)[0]


def doc_row(url: str, paragraphs: list[str], images: tuple[str, ...] = ()) -> dict:
    page = html_page("Report", paragraphs, images=("logo.png", *images))
    doc = parse_record(record_bytes(url, page), url)
    return {**{c: None for c in DOC_COLUMNS}, **doc, "url": url, "host": url_host(url)}


def build_site(rng: random.Random, translations: int = 1) -> tuple[list[dict], list[dict], dict]:
    """docs rows of one host, its candidate pairs, and the expected outcome of each pair."""
    docs, expected = [], {}
    for k in range(translations):
        lengths = [rng.randint(60, 600) for _ in range(8)]
        docs += [doc_row(f"http://{HOST}/en/report-{k}", [text_of(ENGLISH, x) for x in lengths], (f"chart{k}.png",)),
                 doc_row(f"http://{HOST}/de/bericht-{k}", [text_of(GERMAN, int(x * 1.2)) for x in lengths],
                         (f"chart{k}.png",))]
        expected[(f"http://{HOST}/en/report-{k}", f"http://{HOST}/de/bericht-{k}")] = "ok"
    docs += [doc_row(f"http://{HOST}/de/andere", [text_of(GERMAN, rng.randint(60, 600)) for _ in range(8)]),
             doc_row(f"http://{HOST}/de/kurz", [text_of(GERMAN, 200)]),
             doc_row(f"http://{HOST}/en/copy", [text_of(ENGLISH, int(x * 1.1)) for x in lengths])]
    docs[-2]["structure"] = docs[-2]["structure"] + ["[START:table]", "[START:tr]", "[START:td]"] * 40
    docs.append({**{c: None for c in DOC_COLUMNS}, **empty_doc("truncated"), "url": f"http://{HOST}/en/broken",
                 "host": HOST})
    docs += [doc_row(f"http://{HOST}/misc/{i}", [text_of(ENGLISH, 100)]) for i in range(6)]
    src = f"http://{HOST}/en/report-0"
    for trg, outcome in ((f"http://{HOST}/de/andere", "p_too_high"), (f"http://{HOST}/de/kurz", "dp_too_high"),
                         (f"http://{HOST}/en/copy", "lang_mismatch"), (f"http://{HOST}/de/missing", "missing_trg_doc")):
        expected[(src, trg)] = outcome
    expected[(f"http://{HOST}/en/broken", f"http://{HOST}/de/bericht-0")] = "failed_src_doc"
    pairs = [{"host": HOST, "src_url": s, "trg_url": t, "src_lang": "eng", "trg_lang": "deu", "source": "handle"}
             for s, t in expected]
    return docs, pairs, expected


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


# ---- content: texts rows, a lexicon, the self-labelled decision, 1-1 --------------------------
ENGLISH_WORDS = [f"{a}{b}{c}" for a in "bdfgk" for b in "aeiou" for c in "lmnrst"][:120]
LEXICON = Lexicon("eng", "deu", {w: {w.upper()[::-1].lower() + "x": 0.9} for w in ENGLISH_WORDS})


def sentences(rng: random.Random, count: int) -> list[str]:
    return [" ".join(rng.choice(ENGLISH_WORDS) for _ in range(rng.randint(8, 20))) for _ in range(count)]


def translate(text: str) -> str:
    return " ".join(next(iter(LEXICON.translations(w))) for w in text.split())


def text_columns(lang: str, paragraphs: list[str], duplicate_of: str | None = None) -> dict:
    rows = [{"text": t, "type": "text", "lang": lang, "boilerplate": False, "hash": paragraph_hash(t)}
            for t in paragraphs]
    return {"text_paragraphs": rows, "main_text": "\n".join(paragraphs), "duplicate_of": duplicate_of}


def content_site(rng: random.Random, translations: int = 12) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Pages (docs + texts columns) of a templated host, its candidate pairs and the expected outcomes."""
    pages, pairs, expected = [], [], {}
    lengths = [300] * 8  # one template: every page has the same structure, only the words differ
    english = {k: sentences(rng, 8) for k in range(translations)}
    for k in range(translations):
        src, trg = f"http://{HOST}/en/p{k}", f"http://{HOST}/de/p{k}"
        pages += [{**doc_row(src, [text_of(ENGLISH, x) for x in lengths]), **text_columns("eng", english[k])},
                  {**doc_row(trg, [text_of(GERMAN, x) for x in lengths]),
                   **text_columns("deu", [translate(t) for t in english[k]])}]
        pairs.append({"host": HOST, "src_url": src, "trg_url": trg, "src_lang": "eng", "trg_lang": "deu",
                      "source": "link" if k % 2 else "handle"})
        expected[(src, trg)] = "ok"
        wrong = f"http://{HOST}/de/p{(k + 1) % translations}"  # same template, other words
        pairs.append({"host": HOST, "src_url": src, "trg_url": wrong, "src_lang": "eng", "trg_lang": "deu",
                      "source": "similar"})
        expected[(src, wrong)] = "content_rejected"
    copy = f"http://{HOST}/de/p0-copy"  # a near-duplicate of de/p0: the same page for the 1-1 alignment
    pages.append({**doc_row(copy, [text_of(GERMAN, x) for x in lengths]),
                  **text_columns("deu", [translate(t) for t in english[0]], duplicate_of=f"http://{HOST}/de/p0")})
    pairs.append({"host": HOST, "src_url": f"http://{HOST}/en/p0", "trg_url": copy, "src_lang": "eng",
                  "trg_lang": "deu", "source": "similar"})
    expected[(f"http://{HOST}/en/p0", copy)] = "not_one_to_one"
    return pd.DataFrame(pages), pd.DataFrame(pairs), expected


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


def list_columns(lang: str, own: list[str], items: list[str]) -> dict:
    """texts columns of a page with its own text (a title, running text) and list items (teasers of other pages)."""
    rows = [{"text": t, "type": "text", "lang": lang, "boilerplate": False, "hash": paragraph_hash(t)} for t in own]
    rows += [{"text": t, "type": "list_item", "lang": lang, "boilerplate": False, "hash": paragraph_hash(t)}
             for i, t in enumerate(items)]
    return {"text_paragraphs": rows, "main_text": "\n".join(own + items), "duplicate_of": None}


def section_site(rng: random.Random, sections: int = 3) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """content_site plus, per section k: an English section page (an intro, then teasers of three articles), its
    German translation (the intro translated, teasers of three other articles) and a German listing page (teasers
    only: those of the English page, translated). The listing page shares more words with the English section page
    than its translation does: by tsim alone it is the better partner."""
    pages, pairs, expected = content_site(rng)
    rows, extra = [], []
    for k in range(sections):
        intro, teasers, others = sentences(rng, 2), sentences(rng, 3), sentences(rng, 3)
        src, trg, listing = (f"http://{HOST}/en/section-{k}", f"http://{HOST}/de/sektion-{k}",
                             f"http://{HOST}/de/liste-{k}")
        lengths = [300] * 8
        rows += [{**doc_row(src, [text_of(ENGLISH, x) for x in lengths]), **list_columns("eng", intro, teasers)},
                 {**doc_row(trg, [text_of(GERMAN, x) for x in lengths]),
                  **list_columns("deu", [translate(t) for t in intro], [translate(t) for t in others])},
                 {**doc_row(listing, [text_of(GERMAN, x) for x in lengths]),
                  **list_columns("deu", [], [translate(t) for t in teasers])}]
        extra += [{"host": HOST, "src_url": src, "trg_url": trg, "src_lang": "eng", "trg_lang": "deu",
                   "source": "handle"},
                  {"host": HOST, "src_url": src, "trg_url": listing, "src_lang": "eng", "trg_lang": "deu",
                   "source": "link"}]
        expected[(src, trg)], expected[(src, listing)] = "ok", "content_rejected"
    return (pd.concat([pages, pd.DataFrame(rows)], ignore_index=True),
            pd.concat([pairs, pd.DataFrame(extra)], ignore_index=True), expected)


def test_a_section_page_pairs_with_its_translation_not_with_the_listing_of_its_teasers():
    pages, pairs, expected = section_site(random.Random(4))
    features = verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON], random_count=40, seed=1)
    candidates = features[features.role == "candidate"].set_index(["src_url", "trg_url"])
    section, listing = (candidates.loc[(f"http://{HOST}/en/section-0", f"http://{HOST}/de/{page}")]
                        for page in ("sektion-0", "liste-0"))
    assert listing.tsim > section.tsim and listing.tsim_idf > section.tsim_idf  # by all the text: the listing
    assert section.own_tsim_idf == 1.0 and listing.own_tsim_idf == 0.0  # by the pages' own text: the translation
    article = candidates.loc[(f"http://{HOST}/en/p1", f"http://{HOST}/de/p1")]
    assert article.own_tsim_idf == article.tsim_idf  # no list items: its own text is all of it
    labelled, stats = self_labels(features)
    positives = set(zip(labelled[labelled.label].src_url, labelled[labelled.label].trg_url))
    assert stats["positives"] == 12 + 3 and (f"http://{HOST}/en/section-0", f"http://{HOST}/de/liste-0") not in positives
    decided = one_to_one(decide(features[features.role == "candidate"],
                                ContentModel.fit_per_language_pair(labelled, labelled["label"])))
    assert {(r.src_url, r.trg_url): "ok" if r.parallel else r.reason for r in decided.itertuples()} == expected


def test_a_feature_is_clipped_to_the_range_its_labels_showed():
    # p (the length correlation's significance) spread over 0.00-0.01 in training; a pair at p = 0.9 is far
    # outside: standardised, it alone outweighed tsim before the model clipped features to their training range
    rng = np.random.default_rng(1)
    labels = np.repeat([True, False], 40)
    frame = pd.DataFrame({"tsim": np.where(labels, 0.8, 0.2) + rng.normal(0, 0.05, 80), "tsim_idf": 0.5,
                          "p": np.where(labels, rng.uniform(0.004, 0.01, 80), rng.uniform(0.0, 0.006, 80))})
    model = ContentModel.fit(frame, labels, l2=SELF_LABEL_L2)
    outlier = pd.DataFrame({"tsim": [0.2], "tsim_idf": [0.5], "p": [0.9]})
    assert model.weights[list(CONTENT_FEATURES).index("p")] > 0
    assert dataclasses.replace(model, ranges=()).predict(outlier)[0] > 0.5 > model.predict(outlier)[0]
    restored = ContentModel.from_dict(json.loads(json.dumps(model.to_dict())))
    assert np.allclose(restored.predict(outlier), model.predict(outlier))


def test_too_little_text_or_text_in_another_language_is_not_judged_as_a_translation():
    rng = random.Random(6)
    english = sentences(rng, 4)
    lengths = [300] * 8
    pages = pd.DataFrame([
        {**doc_row(f"http://{HOST}/en/a", [text_of(ENGLISH, x) for x in lengths]), **text_columns("eng", english)},
        # the German page of the template shows the English text, untranslated
        {**doc_row(f"http://{HOST}/de/a", [text_of(GERMAN, x) for x in lengths]), **text_columns("eng", english)},
        {**doc_row(f"http://{HOST}/en/b", [text_of(ENGLISH, x) for x in lengths]), **text_columns("eng", ["Europe 2"])},
        {**doc_row(f"http://{HOST}/de/b", [text_of(GERMAN, x) for x in lengths]), **text_columns("deu", ["Europa 2"])}])
    pairs = pd.DataFrame([{"host": HOST, "src_url": f"http://{HOST}/en/{k}", "trg_url": f"http://{HOST}/de/{k}",
                           "src_lang": "eng", "trg_lang": "deu", "source": "handle"} for k in "ab"])
    features = verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON]).set_index("trg_url")
    untranslated, title_only = features.loc[f"http://{HOST}/de/a"], features.loc[f"http://{HOST}/de/b"]
    assert untranslated.tsim == 1.0 and untranslated.trg_lang_share == 0.0 and not untranslated.lang_ok
    assert untranslated.reason == "untranslated"
    assert title_only.lang_ok and pd.isna(title_only.tsim)  # 2 words a side: no text to judge
    model = ContentModel(None, 0.0, (), (), 0.1, "null-threshold")
    decided = decide(features.reset_index(), model).set_index("trg_url")
    assert decided.loc[f"http://{HOST}/de/b", "reason"] == "no_text"
    assert decided.loc[f"http://{HOST}/de/a", "reason"] == "untranslated"


FRENCH = ("Le comité a publié son rapport annuel sur la protection des eaux côtières. "
          "Nous utilisons des cookies pour vous offrir la meilleure expérience sur notre site. ")


def template_page(url: str, lang: str, main: list[str], template: str) -> dict:
    """A page whose main paragraphs are `main` (in `lang`) inside a template (boilerplate) written like `template`."""
    paragraphs = [{"text": text_of(template, 200), "type": "text", "lang": None, "boilerplate": True, "hash": "b"}]
    paragraphs += [{"text": t, "type": "text", "lang": lang, "boilerplate": False, "hash": paragraph_hash(t)}
                   for t in main]
    return {**doc_row(url, [text_of(GERMAN, 300)] * 4), "text_paragraphs": paragraphs,
            "main_text": "\n".join(main), "duplicate_of": None}


def test_an_untranslated_copy_in_another_languages_template_loses_the_one_to_one_to_its_page():
    # de/a's German text copied into the French template (only its date line translated): one page for the 1-1,
    # and the German page keeps the pair even when the copy scores a little higher
    english = sentences(random.Random(7), 4)
    german = [translate(t) for t in english]
    pages = pd.DataFrame([
        template_page(f"http://{HOST}/en/a", "eng", ["May 2098", *english], ENGLISH),
        template_page(f"http://{HOST}/de/a", "deu", ["Mai 2098", *german], GERMAN),
        template_page(f"http://{HOST}/fr/a", "deu", ["mai 2098", *german], FRENCH),
        # the same copy in the German template is no template copy: two German pages, neither stands for the other
        template_page(f"http://{HOST}/de/a2", "deu", ["Juni 2098", *german], GERMAN)])
    pages["cld2_lang"] = ["eng", "deu", "deu", "deu"]
    pairs = pd.DataFrame([{"host": HOST, "src_url": f"http://{HOST}/en/a", "trg_url": f"http://{HOST}/{k}",
                           "src_lang": "eng", "trg_lang": "deu", "source": "similar"} for k in ("de/a", "fr/a")])
    features = verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON])
    assert dict(zip(features.trg_url, features.trg_key)) == {f"http://{HOST}/de/a": f"http://{HOST}/de/a",
                                                             f"http://{HOST}/fr/a": f"http://{HOST}/de/a"}
    decided = one_to_one(features.assign(parallel=True, reason=None, p_parallel_content=[0.96, 0.97]))
    assert dict(zip(decided.trg_url, decided.reason)) == {f"http://{HOST}/de/a": None,
                                                          f"http://{HOST}/fr/a": "not_one_to_one"}
    # texts may have kept the copy's URL for the two (duplicate_of): the page still stands for itself
    kept_copy = pages.assign(duplicate_of=[None, f"http://{HOST}/fr/a", None, None])
    keys = verify_host(pairs, kept_copy, ThresholdRule().to_dict(), [LEXICON])
    assert set(keys.trg_key) == {f"http://{HOST}/de/a"}
    # without its page among the parallel pairs, the copy's pair stands
    alone = one_to_one(features[features.trg_url.str.endswith("fr/a")].assign(parallel=True, reason=None,
                                                                               p_parallel_content=0.97))
    assert alone.parallel.tolist() == [True]


def test_a_paragraph_on_most_of_a_sites_pages_makes_no_template_copies():
    # two notices the extractor kept as main text on 60 German pages and 1 German text in the French template:
    # they are the site's, so the French-template page copies nothing (and no page is compared with every other)
    notices = ["Alle Preise verstehen sich inklusive Mehrwertsteuer und zuzüglich Versand.",
               "Wir versenden innerhalb von zwei Werktagen an jede Adresse in Europa."]
    german = sentences(random.Random(9), 60)
    pages = [template_page(f"http://{HOST}/de/{i}", "deu", [*notices, translate(t)], GERMAN)
             for i, t in enumerate(german)]
    pages.append(template_page(f"http://{HOST}/fr/0", "deu", [*notices, "Ein anderer Satz steht nur hier."], FRENCH))
    frame = pd.DataFrame(pages).assign(cld2_lang="deu")
    assert HostPages(frame).key(f"http://{HOST}/fr/0") == f"http://{HOST}/fr/0"
    # on a few pages the same two paragraphs are most of the French-template page: a copy of the first German one
    few = frame[frame.url.str.endswith(("/de/0", "/de/1", "/fr/0"))]
    assert HostPages(few).key(f"http://{HOST}/fr/0") == f"http://{HOST}/de/0"


def test_a_page_cld2_found_in_its_language_unreliably_passes_by_its_main_text():
    # the German page inside an English template: CLD2 finds the page's language, not reliably; its main paragraphs
    # are all labelled in it. Without texts (no main text to check) an unreliable page still fails, unless the URLs
    # differ only in their language markers and so declare the languages CLD2 guessed
    english = sentences(random.Random(8), 4)
    lengths = [300] * 8
    src, trg = f"http://{HOST}/en/a", f"http://{HOST}/de/a"
    pages = pd.DataFrame([
        {**doc_row(src, [text_of(ENGLISH, x) for x in lengths]), **text_columns("eng", english)},
        {**doc_row(trg, [text_of(GERMAN, x) for x in lengths]),
         **text_columns("deu", [translate(t) for t in english]), "cld2_reliable": False}])
    pairs = pd.DataFrame([{"host": HOST, "src_url": src, "trg_url": trg, "src_lang": "eng", "trg_lang": "deu",
                           "source": "handle"}])
    judged = verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON]).iloc[0]
    assert judged.trg_lang_share == 1.0 and judged.lang_ok and judged.reason != "lang_mismatch"
    untexted = pages.assign(text_paragraphs=None, main_text=None)
    proposed = pairs.assign(source="similar")
    assert verify_host(proposed, untexted, ThresholdRule().to_dict(), [LEXICON]).iloc[0].reason == "lang_mismatch"
    declared = verify_host(pairs, untexted, ThresholdRule().to_dict(), [LEXICON]).iloc[0]
    assert declared.lang_ok and declared.reason != "lang_mismatch"


REAL_ENGLISH = [
    "The selection tools are designed to select regions from the active layer so you can work on them.",
    "Each tool has its own options, which appear in the dialog when you double-click on the tool icon.",
    "You can save the current settings of a tool and restore them later from the list of presets.",
    "When the image is larger than the window, the navigation dialog shows which part of it you see.",
    "Most filters can be applied to a selection only, leaving the rest of the layer as it was.",
    "The history of your changes is kept in memory until you close the image or clear it yourself."]
REAL_GERMAN = [
    "Die Auswahlwerkzeuge dienen dazu, Bereiche der aktiven Ebene auszuwählen, um daran zu arbeiten.",
    "Jedes Werkzeug hat eigene Einstellungen, die im Dialog erscheinen, wenn Sie doppelt auf das Symbol klicken.",
    "Sie können die aktuellen Einstellungen eines Werkzeugs speichern und später aus der Liste wiederherstellen.",
    "Wenn das Bild größer als das Fenster ist, zeigt der Navigationsdialog, welchen Teil Sie gerade sehen.",
    "Die meisten Filter lassen sich nur auf eine Auswahl anwenden, der Rest der Ebene bleibt unverändert.",
    "Der Verlauf Ihrer Änderungen bleibt im Speicher, bis Sie das Bild schließen oder ihn selbst leeren."]
REAL_SPANISH = [
    "Las herramientas de selección sirven para elegir regiones de la capa activa y trabajar sobre ellas.",
    "Cada herramienta tiene sus propias opciones, que aparecen en el diálogo al pulsar dos veces el icono.",
    "Puede guardar la configuración actual de una herramienta y recuperarla más tarde desde la lista.",
    "Cuando la imagen es más grande que la ventana, el diálogo de navegación muestra qué parte está viendo."]


def test_a_half_translated_page_or_one_quoting_code_is_in_its_language_a_mostly_untranslated_one_is_not():
    # a side is in its language unless most of its main prose is the other side's words or prose CLD2 reliably
    # finds in another language: English leftovers below half of it, English code blocks of any size, or short
    # lines CLD2 cannot tell keep a German page German; English prose over half of it is untranslated, Spanish
    # prose a language mismatch
    src, trg = f"http://{HOST}/en/a", f"http://{HOST}/de/a"

    def paragraph(text: str, kind: str = "text", lang: str | None = None) -> dict:
        return {"text": text, "type": kind, "lang": lang, "boilerplate": False, "hash": paragraph_hash(text)}

    def judged(target: list[dict]):
        english = [paragraph(t, lang="eng") for t in REAL_ENGLISH]
        pages = pd.DataFrame([
            {**doc_row(src, [text_of(ENGLISH, 300)] * 6), "text_paragraphs": english,
             "main_text": "\n".join(REAL_ENGLISH), "duplicate_of": None},
            {**doc_row(trg, [text_of(GERMAN, 300)] * 6), "text_paragraphs": target,
             "main_text": "\n".join(p["text"] for p in target), "duplicate_of": None}])
        pairs = pd.DataFrame([{"host": HOST, "src_url": src, "trg_url": trg, "src_lang": "eng", "trg_lang": "deu",
                               "source": "handle"}])
        return verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON]).iloc[0]

    def english(index: int) -> str:  # an untranslated paragraph long enough for CLD2 to tell
        return f"{REAL_ENGLISH[index]} {REAL_ENGLISH[(index + 1) % len(REAL_ENGLISH)]}"

    leftovers = [paragraph(t) for t in REAL_GERMAN] + [paragraph(english(index)) for index in (4, 5)]
    partial = judged(leftovers)
    assert partial.lang_ok and 0.5 < partial.trg_lang_share < 0.8
    # labels CLD2 gave the whole page are not evidence: a paragraph's own text is
    mislabelled = judged([paragraph(t, lang="eng") for t in REAL_GERMAN])
    assert mislabelled.lang_ok and mislabelled.trg_lang_share == 1.0
    code = [paragraph(t) for t in REAL_GERMAN[:2]] + [paragraph(
        "Use the command line to install the package and then run the program with every option you need.", "code")
        for _ in range(4)] + [paragraph("Abbildung 17.53"), paragraph("5.2 Optionen")]
    assert judged(code).lang_ok and judged(code).trg_lang_share == 1.0
    mostly_english = [paragraph(REAL_GERMAN[0])] + [paragraph(english(index)) for index in range(1, 6)]
    assert judged(mostly_english).reason == "untranslated" and not judged(mostly_english).lang_ok
    copied = [paragraph(t) for t in REAL_ENGLISH[:4]] + [paragraph(REAL_GERMAN[4])]
    assert judged(copied).reason == "untranslated"
    spanish = [paragraph(t) for t in REAL_SPANISH]
    assert judged(spanish).reason == "lang_mismatch"


def test_of_a_line_translated_in_part_only_the_words_the_other_page_holds_are_its_copy():
    # a reference page's trail and entry titles keep the function names and translate the rest: the French words
    # of `Scilab Help >> Fonctions Elémentaires > Trigonométrie > tand` are French, not a copy of the English trail
    en, fr = f"http://{HOST}/en_US/tand.html", f"http://{HOST}/fr_FR/tand.html"

    def row(url: str, texts: list[str]) -> dict:
        return {"url": url, "status": "ok", "cld2_lang": None, "duplicate_of": None, "main_text": None,
                "text_paragraphs": [{"text": t, "type": "text", "boilerplate": False, "hash": paragraph_hash(t)}
                                    for t in texts]}

    untranslated = "The elements of t are the tangent of the elements of x (in degree)."
    trail_en, trail_fr = ("Scilab Help >> Elementary Functions > Trigonometry > tand",
                          "Scilab Help >> Fonctions Elémentaires > Trigonométrie > tand")
    pages = HostPages(pd.DataFrame([row(en, [trail_en, untranslated]), row(fr, [trail_fr, untranslated])]))
    assert pages.is_shared(pages.prose(fr)[0], en)  # most of its words are the English trail's
    words = ("scilab", "help", "fonctions", "elémentaires", "trigonométrie", "tand")
    held = sum(len(word) for word in ("scilab", "help", "tand")) / sum(map(len, words))
    assert pages.copied_share(pages.prose(fr)[0], en) == pytest.approx(held)
    assert pages.copied_share(pages.prose(fr)[1], en) == 1.0
    share, other = pages.language_shares(fr, "fra", "eng", en)
    total = len(trail_fr) + len(untranslated)
    assert other == pytest.approx((held * len(trail_fr) + len(untranslated)) / total)
    assert share == pytest.approx(1 - other)


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


def test_a_copy_of_the_other_pages_text_is_no_translation():
    # the German article shown untranslated in the English template (CLD2 and the paragraph labels say English):
    # its main paragraphs are the German page's, word for word
    english = sentences(random.Random(9), 4)
    german = [translate(t) for t in english]
    pages = pd.DataFrame([template_page(f"http://{HOST}/en/a", "eng", ["January 2098", *german], ENGLISH),
                          template_page(f"http://{HOST}/de/a", "deu", ["Januar 2098", *german], GERMAN),
                          template_page(f"http://{HOST}/en/b", "eng", ["January 2098", *english], ENGLISH)])
    pages["cld2_lang"] = ["eng", "deu", "eng"]
    pairs = pd.DataFrame([{"host": HOST, "src_url": f"http://{HOST}/en/{k}", "trg_url": f"http://{HOST}/de/a",
                           "src_lang": "eng", "trg_lang": "deu", "source": "handle"} for k in "ab"])
    features = verify_host(pairs, pages, ThresholdRule().to_dict(), [LEXICON]).set_index("src_url")
    copy, translation = features.loc[f"http://{HOST}/en/a"], features.loc[f"http://{HOST}/en/b"]
    assert copy.tsim > 0.9 and copy.reason == "untranslated" and not copy.lang_ok
    assert translation.tsim > 0.9 and translation.lang_ok and translation.reason != "lang_mismatch"


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
                                              lexicon_free=("eng-eus",))
    assert decide(basque, free).parallel.tolist() == [True, False]  # by its layout, whatever its own text
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


def logit_model(floor: float | None = None) -> ContentModel:
    """A model whose p_parallel_content is sigmoid(tsim): the tests set each pair's content score through tsim."""
    features = len(CONTENT_FEATURES)
    weights = tuple(1.0 if name == "tsim" else 0.0 for name in CONTENT_FEATURES)
    return ContentModel(weights, 0.0, (0.0,) * features, (1.0,) * features, default_own_text_floor=floor)


def url_frame(rows: list[tuple[str, str, str, float, float]]) -> pd.DataFrame:
    """(src page, trg page, source, p_parallel_content, own_tsim_idf) rows of one host and language pair."""
    return pd.DataFrame([{"host": HOST, "src_url": f"http://{HOST}/en/{src}", "trg_url": f"http://{HOST}/de/{trg}",
                          "src_lang": "eng", "trg_lang": "deu", "source": source,
                          "tsim": math.log(p / (1 - p)), "own_tsim_idf": own, "reason": None, "parallel": False,
                          "structure_ok": True, "src_key": None, "trg_key": None} for src, trg, source, p, own in rows])


def decided(frame: pd.DataFrame, model: ContentModel) -> dict[tuple[str, str], pd.Series]:
    result = one_to_one(decide(frame, model))
    return {(row.src_url.rsplit("/", 1)[1], row.trg_url.rsplit("/", 1)[1]): row for row in result.itertuples()}


def test_a_sibling_of_one_template_does_not_displace_a_url_exact_partner():
    # reference pages 03030111 and 03030113 on one template with near-identical examples: by content alone each
    # English page prefers the other's German page; their URLs pair them exactly
    pages = [("03030111.html", "03030111.html", "handle,similar", 0.70, 0.5),
             ("03030113.html", "03030113.html", "handle,similar", 0.72, 0.5),
             ("03030111.html", "03030113.html", "similar", 0.90, 0.6),
             ("03030113.html", "03030111.html", "similar", 0.91, 0.6)]
    rows = decided(url_frame(pages), logit_model(floor=0.1))
    assert {key for key, row in rows.items() if row.parallel} == {("03030111.html", "03030111.html"),
                                                                  ("03030113.html", "03030113.html")}
    exact = rows[("03030111.html", "03030111.html")]
    assert exact.url_exact and exact.url_log_odds == pytest.approx(math.log(3)) and exact.evidence == "url+content"
    assert exact.p_parallel == pytest.approx(0.875) and exact.p_parallel_content == pytest.approx(0.7)
    assert rows[("03030111.html", "03030113.html")].reason == "not_one_to_one"
    # the same pairs without the URL evidence: content alone swaps them (what the URL evidence prevents)
    alone = decided(url_frame([(s, t, "similar", p, own) for s, t, _, p, own in pages]), logit_model(floor=0.1))
    assert {key for key, row in alone.items() if row.parallel} == {("03030111.html", "03030113.html"),
                                                                   ("03030113.html", "03030111.html")}


def test_a_page_whose_url_exact_partner_is_left_untranslated_pairs_with_no_sibling():
    frame = url_frame([("base2dec", "base2dec", "handle", 0.99, 0.8), ("dec2base", "dec2base", "handle", 0.9, 0.7),
                       ("base2dec", "dec2base", "similar", 0.9, 0.3)])
    frame.loc[0, "reason"] = "untranslated"  # the language check's verdict: the German page is the English text
    rows = decided(frame, logit_model(floor=0.1))
    assert rows[("base2dec", "base2dec")].reason == "untranslated" and not rows[("base2dec", "base2dec")].parallel
    sibling = rows[("base2dec", "dec2base")]
    assert not sibling.parallel and sibling.reason == "not_one_to_one" and sibling.evidence == "url+content"
    assert rows[("dec2base", "dec2base")].parallel


def test_content_still_rejects_a_url_exact_pair_of_two_different_documents():
    frame = url_frame([("a", "a", "handle", 0.95, 0.5), ("b", "b", "handle", 0.9, 0.5),
                       ("c", "c", "handle", 0.6, 0.05)])  # c: own text at the random pairs' level
    rows = decided(frame, logit_model(floor=0.1))
    assert rows[("a", "a")].parallel and rows[("b", "b")].parallel
    assert not rows[("c", "c")].parallel and rows[("c", "c")].reason == "content_rejected"


def test_url_exact_pairs_earn_no_prior_on_a_site_whose_language_slots_pair_other_documents():
    # most of the site's URL-exact pairs are different documents by their text: a doubtful one gets no help
    frame = url_frame([(k, k, "handle", 0.3, 0.05) for k in "abcd"] + [("e", "e", "handle", 0.3, 0.5)])
    rows = decided(frame, logit_model(floor=0.1))
    assert rows[("e", "e")].url_log_odds == pytest.approx(math.log(2 / 5)) and not rows[("e", "e")].parallel


def test_a_url_exact_pair_without_text_passes_on_its_languages_and_structure_unless_it_lists_other_pages():
    frame = url_frame([("a", "a", "handle", 0.9, 0.5), ("menu", "menu", "handle", 0.5, 0.0),
                       ("x", "toc2", "similar", 0.5, 0.0), ("toc3", "toc3", "handle", 0.5, 0.0),
                       ("page-2", "page-2", "handle", 0.5, 0.0), ("toc", "toc", "handle", 0.5, 0.0)])
    frame.loc[1:, "tsim"] = np.nan  # fewer words of main text than the check needs: no content features
    frame.loc[3, "structure_ok"] = False
    # a section's menu: every link is the site's navigation; page 2 of a listing: links of its own to other items
    # in each language; a manual's table of contents: links of its own to each other's counterparts
    frame["link_agreement"] = [np.nan, np.nan, np.nan, np.nan, 0.3, 1.0]
    rows = decided(frame, logit_model(floor=0.1))
    assert rows[("menu", "menu")].parallel and rows[("menu", "menu")].evidence == "url+structure"
    assert rows[("toc", "toc")].parallel and rows[("toc", "toc")].evidence == "url+structure"
    assert rows[("x", "toc2")].reason == "no_text" and rows[("toc3", "toc3")].reason == "no_text"
    assert rows[("page-2", "page-2")].reason == "no_text"


def test_a_neighbour_pair_whose_links_agree_is_one_document_whatever_its_own_text():
    # section pages named by a hash per language: rank-pairs paired them by the counterparts of what they link. A
    # section is its entries' titles (no own text of its own above the random pairs' level): links say it is one
    # document; a pair whose links mostly disagree, or that content rejects, stays out
    frame = url_frame([("a", "a", "handle", 0.9, 0.5), ("b", "b", "handle", 0.9, 0.5),
                       ("section_1", "section_9", "neighbours", 0.9, 0.0), ("section_2", "section_8", "neighbours", 0.9, 0.0),
                       ("section_3", "section_7", "neighbours", 0.05, 0.0), ("toc_1", "toc_9", "neighbours", 0.5, 0.0),
                       ("toc_2", "toc_8", "neighbours", 0.5, 0.0)])
    frame.loc[5:, "tsim"] = np.nan  # tables of contents: too few words of main prose to judge
    frame["link_agreement"] = [np.nan, np.nan, 1.0, 0.5, 1.0, 1.0, np.nan]
    rows = decided(frame, logit_model(floor=0.1))
    assert rows[("section_1", "section_9")].parallel and rows[("section_1", "section_9")].evidence == "links+content"
    assert rows[("section_2", "section_8")].reason == "content_rejected"
    assert rows[("section_3", "section_7")].reason == "content_rejected"
    assert rows[("toc_1", "toc_9")].parallel and rows[("toc_1", "toc_9")].evidence == "links+structure"
    assert rows[("toc_2", "toc_8")].reason == "no_text"
    assert rows[("section_1", "section_9")].url_log_odds == 0  # no URL evidence: the links carry it


def test_link_agreement_is_the_share_of_links_that_go_to_each_others_counterparts():
    links = {"en": [f"http://{HOST}/en/{k}" for k in "abcd"], "de": [f"http://{HOST}/de/{k}" for k in "abc"]}
    pages = pd.DataFrame([{"url": f"http://{HOST}/{lang}/{page}", "status": "ok", "cld2_lang": None,
                           "outlinks": links[lang] if page in ("toc", "list") else [],
                           "text_paragraphs": None, "main_text": None, "duplicate_of": None}
                          for lang in ("en", "de") for page in ("toc", "list", *"abcd")])
    pages.loc[pages["url"] == f"http://{HOST}/de/list", "outlinks"] = pd.Series(
        [[f"http://{HOST}/de/d", f"http://{HOST}/de/other"]], index=pages.index[pages["url"] == f"http://{HOST}/de/list"])
    pairs = pd.DataFrame([{"host": HOST, "src_url": f"http://{HOST}/en/{k}", "trg_url": f"http://{HOST}/de/{k}",
                           "role": "candidate", "source": "handle"} for k in ("toc", "list", *"abcd")])
    pairs["url_exact"] = True
    values = verification.link_agreements(pairs, HostPages(pages)).tolist()
    # toc: 3 of its 4 counterpart links agree; list: 1 of 4; a page without links: no evidence
    assert values[0] == pytest.approx(3 / 4) and values[1] == pytest.approx(1 / 4) and np.isnan(values[2])
    # links on most of the host's pages are its navigation, whatever they point to
    everywhere = pages.assign(outlinks=[links[url.split("/")[3]] for url in pages["url"]])
    assert np.isnan(verification.link_agreements(pairs, HostPages(everywhere)).iloc[0])

