"""verify-pairs: STRAND + ILSP-FC signals on docs built from real parses; every pair accounted by reason."""
from __future__ import annotations

import random

import pandas as pd
import pytest

from parascout.jobs.verify_pairs import VerifyPairsJob
from tests.conftest import run_job
from tests.test_documents import ENGLISH, GERMAN, html_page, record_bytes
from parascout.udfs import storage
from parascout.udfs.documents import DOC_COLUMNS, empty_doc, parse_record
from parascout.udfs.structure import ThresholdRule
from parascout.udfs.urls import url_host
from parascout.udfs.verification import image_jaccard, language_ok, ratio, verify_frame

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
    by_url = {doc["url"]: doc for doc in docs}
    rows = []
    for pair in pairs:
        row = dict(pair)
        for side in ("src", "trg"):
            doc = by_url.get(pair[f"{side}_url"], {})
            for column in ("status", "cld2_lang", "cld2_reliable", "text_chars", "paragraphs", "images", "structure"):
                row[f"{side}_{column}"] = doc.get(column)
        rows.append(row)
    result = verify_frame(pd.DataFrame(rows), ThresholdRule())
    outcomes = {(r.src_url, r.trg_url): "ok" if r.parallel else r.reason for r in result.itertuples()}
    assert outcomes == expected
    good = result[result["parallel"]].iloc[0]
    assert good["dp"] < 0.05 and good["r"] > 0.95 and 0.7 < good["length_ratio"] < 0.95
    assert good["image_jaccard"] == 1.0 and good["paragraph_ratio"] == 1.0  # logo.png counts here (no host DF)


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
    assert learned["balanced"] and learned["metrics"]["rule"]["method"] == "learned-tree"
    assert learned["metrics"]["learned_from"]["pairs"] == 12 and learned["metrics"]["learned_from"]["positives"] == 4
    assert learned["metrics"]["learned_from"]["accuracy"] == 1.0
    assert learned["kept"] == 4 and learned["bad"] == report["bad"]
