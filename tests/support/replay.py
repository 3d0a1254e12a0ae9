"""The replay's sample sites: tiny hand-made sites and truth pairs, the three-host dataset replay-crawl and
export-crawl-plan run on, and the tiny URL models the policies use."""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from parascout.jobs.export_crawl_plan import ExportCrawlPlanJob
from parascout.jobs.replay_crawl import ReplayCrawlJob
from parascout.udfs.common.storage import write_parquet_table
from parascout.udfs.replay.synthetic import multilingual_site
from testkit.jobs import run_job

HOST = "www.example.is"


def site(pages: dict, host: str = HOST, status: dict | None = None, lang: dict | None = None) -> pd.DataFrame:
    """A docs frame from {path: [linked paths]}; every page is an 'ok' English document unless told."""
    status, lang = status or {}, lang or {}
    rows = []
    for path, links in pages.items():
        rows.append({"url": f"https://{host}{path}", "host": host, "status": status.get(path, "ok"),
                     "cld2_lang": lang.get(path, "eng"), "outlinks": [f"https://{host}{p}" for p in links],
                     "warc_length": 1000})
    return pd.DataFrame(rows)


def urls(*paths: str, host: str = HOST) -> list[str]:
    return [f"https://{host}{p}" for p in paths]


def pairs(*couples: tuple[str, str]) -> pd.DataFrame:
    return pd.DataFrame([(f"https://{HOST}{a}", f"https://{HOST}{b}") for a, b in couples], columns=["src_url", "trg_url"])


NO_PAIRS = pairs()
HOSTS = ("www.alpha.is", "www.beta.is", "www.gamma.is")


def write_dataset(root: Path) -> tuple[Path, dict]:
    """A docs table of three bilingual hosts + one host without truth pairs, with a bad and duplicate rows."""
    sites = [multilingual_site(n_articles=40 + 15 * i, host=host, seed=i) for i, host in enumerate(HOSTS)]
    no_truth, _ = multilingual_site(n_articles=5, host="www.no-truth.is", seed=7)
    docs = pd.concat([d for d, _ in sites] + [no_truth], ignore_index=True)
    duplicates = docs[docs["host"] == HOSTS[0]].head(3).assign(status="warc_fetch_failed", outlinks=None)
    broken = docs.head(1).assign(url=None)
    docs = pd.concat([docs, duplicates, broken], ignore_index=True)
    write_parquet_table(docs, str(root / "docs"))
    truth = pd.concat([t for _, t in sites], ignore_index=True)
    (root / "truth").mkdir()
    truth.assign(convention="synthetic").to_parquet(root / "truth" / "pairs.parquet")
    shortlist = pd.DataFrame({"site": [*HOSTS, "www.unseen.is"], "src_lang": "eng", "trg_lang": "isl",
                              "predicted_pairs": [12, 30, 41, 3], "predicted_ratio": [0.2, 0.5, 0.6, 0.1]})
    write_parquet_table(shortlist, str(root / "shortlist"))
    archived = docs[(docs["status"] == "ok") & docs["url"].notna()]
    sites = archived["host"].str.removeprefix("www.")  # what replay-crawl replays: sites (www.alpha.is -> alpha.is)
    counts = {"rows": len(docs), "no_truth_rows": len(no_truth), "duplicates": len(duplicates),
              "truth_pairs": len(truth), "n_docs": archived.groupby(sites)["url"].nunique().to_dict()}
    return root, counts


def plan_crawl(spark, source: Path, root: Path) -> tuple:
    """replay-crawl, then export-crawl-plan --top 4 over a shortlist of the three sites and one never replayed."""
    docs = pd.read_parquet(source / "docs")
    write_parquet_table(docs, str(root / "docs"))
    shortlist = pd.DataFrame({"site": ["www.gamma.is", "www.beta.is", "www.alpha.is", "www.unseen.is"],
                              "src_lang": "eng", "trg_lang": "isl", "predicted_pairs": [41, 30, 12, 3],
                              "predicted_ratio": [0.6, 0.5, 0.2, 0.1], "rank": [1, 2, 3, 4]})
    write_parquet_table(shortlist, str(root / "shortlist"))
    truth = str(source / "truth" / "pairs.parquet")
    replay = run_job(ReplayCrawlJob, spark, ["--root", str(root), "--langs", "en,is", "--truth", truth])
    report = run_job(ExportCrawlPlanJob, spark, ["--root", str(root), "--top", "4"])
    return root, docs, pd.read_parquet(truth), replay, report


LANGS = ("eng", "isl")


@functools.lru_cache(maxsize=2)
def train_tiny_url_models(out_dir: Path) -> tuple[str, str]:
    """A url2lang and a pairs model (udfs.rank.url_models' n-gram backend) trained on synthetic sites; skip if absent."""
    pytest.importorskip("parascout.udfs.rank.url_models", reason="udfs.rank.url_models (the URL models helper) is not installed")
    try:
        from parascout.udfs.rank.url_models.model_dir import write_model_dir
        from parascout.udfs.rank.url_models.training import TrainingConfig, train_model
    except ImportError as error:
        pytest.skip(f"udfs.rank.url_models cannot train a model here: {error}")
    frames = [multilingual_site(n_articles=60, host=f"www.train{i}.is", seed=10 + i) for i in range(3)]
    docs = pd.concat([d for d, _ in frames], ignore_index=True)
    dev_host = docs["host"] == "www.train2.is"
    in_pair = docs[docs["cld2_lang"].isin(LANGS)]
    lang_frame = pd.DataFrame({"url": in_pair["url"], "host": in_pair["host"], "lang": in_pair["cld2_lang"],
                               "split": np.where(dev_host[in_pair.index], "dev", "train")})
    positives = pd.concat([t for _, t in frames], ignore_index=True)
    # negatives: the other links of the pages that have a translation (comments, tags, categories)
    links = docs.set_index("url")["outlinks"]
    negatives = positives.assign(trg_url=[[u for u in links[s] if u != t] for s, t in
                                          zip(positives["src_url"], positives["trg_url"])]).explode("trg_url")
    pair_frame = pd.concat([positives.assign(label=1, source="positive"), negatives.assign(label=0, source="link")],
                           ignore_index=True)
    pair_frame["split"] = np.where(pair_frame["host"] == "www.train2.is", "dev", "train")
    config = TrainingConfig(backend="ngram", max_epochs=3, buckets=1 << 12, dim=8, seed=0)
    directories = []
    for task, frame in (("url2lang", lang_frame), ("pairs", pair_frame)):
        result = train_model(task, frame, config, {"source": "synthetic replay test sites"})
        directories.append(write_model_dir(result, str(out_dir / task)))
    return directories[0], directories[1]
