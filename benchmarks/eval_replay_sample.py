"""Crawl policies replayed on held-out sample-archive hosts, with URL models trained on other hosts.

The replay quality target: on held-out hosts, smart reaches 80% of the parallel documents
with at most half the fetches bfs needs. This script trains the n-gram url2lang and pair models on a
cdx-only sample archive of --train-hosts hosts (seed --seed + N: no host is shared with the test
archive), builds each test site's link graph from the test archive's WAT files (page languages from
the archive's truth; CLD2 agrees with it on every page there), and replays every policy per site and
language pair with `udfs.replay.replay_host` (what `replay-crawl` runs per site).

    .venv/bin/python benchmarks/eval_replay_sample.py [--train-hosts 30,1000] [--minutes 12]
        [--seed 7,1234,99] [--cue-evidence all,anchor,none]

Prints, per training size, the median ratio of fetches-to-80% against bfs for each policy, the share
of site-language-pairs at or under 0.5, and mean AUC; models are kept under --work and reused. Several
--seed values are replayed one archive each and pooled (site-pairs of all seeds together). Links carry
the language their context names (`outlink_cues`, read from the WAT as replay-crawl's docs have it);
--cue-evidence replays the cue policies (ilsp, smart+site) with all of it, with the anchor text alone
(the generator also writes hreflang alternates that real sites often lack), or with none. Each archive's summary is
saved under --work; --pool-summaries replays nothing and pools the saved summaries of the seeds given (each seed,
then all together), so held-out seeds run once in separate invocations can be reported together.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from pathlib import Path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import pandas as pd
from eval_url_models_sample import archive_truth

from parascout.udfs.fetch.language_cues import CUE_KINDS, CUE_KINDS_ANCHOR
from parascout.udfs.rank.url_models import METADATA_FILE
from parascout.udfs.rank.url_models.model_dir import write_model_dir
from parascout.udfs.rank.url_models.training import TrainingConfig, train_model
from parascout.udfs.rank.url_models.training_data import (
    load_pairs,
    load_url2lang_examples,
    pair_examples,
    split_by_host,
)
from parascout.udfs.replay.batch import ReplayRun, replay_host
from parascout.udfs.replay.metrics import speedup_versus

log = logging.getLogger("eval_replay_sample")

POLICIES = ("bfs", "bfs+cld2", "ilsp", "strand", "smart", "smart+lang", "smart+site", "random", "oracle")
#: policies whose order depends on the links' language cues (replayed again per --cue-evidence)
CUE_POLICIES = ("ilsp", "smart+site")
CUE_EVIDENCE = {"all": CUE_KINDS, "anchor": CUE_KINDS_ANCHOR, "none": ()}


def test_archive(work: Path, hosts: int, seed: int) -> Path:
    """A full sample archive (WARC + WAT) of the test hosts, generated once."""
    from parascout.udfs.sample_archive import generate

    out = work / f"full-{hosts}-{seed}"
    if not (out / "truth" / "pairs.parquet").exists():
        generate(str(out), hosts=hosts, seed=seed, progress=False, verbose=False, workers=2)
    return out


def train_models(work: Path, hosts: int, seed: int, minutes: float) -> tuple[str, str]:
    """(url2lang dir, pairs dir) trained on the truth of a cdx-only archive of `hosts` hosts (reused when present:
    the training archive is then not generated, and the models keep the seed they were trained with)."""
    lang_dir, pair_dir = work / f"models-{hosts}" / "url2lang", work / f"models-{hosts}" / "pairs"
    source = {"source": f"sample archive, {hosts} hosts, seed {seed}"}
    if not (lang_dir / METADATA_FILE).exists():
        truth = archive_truth(work, hosts, seed)
        frame, _ = load_url2lang_examples(str(truth.parent / "pages.parquet"))
        frame["split"] = split_by_host(frame["host"], 0.1, 0.0).to_numpy()
        config = TrainingConfig(backend="ngram", max_minutes=minutes / 4)
        write_model_dir(train_model("url2lang", frame, config, source), str(lang_dir))
    if not (pair_dir / METADATA_FILE).exists():
        pairs, _ = load_pairs(str(archive_truth(work, hosts, seed)))
        frame = pair_examples(pairs, dev_fraction=0.1, test_fraction=0.0, seed=0)
        config = TrainingConfig(backend="ngram", max_minutes=minutes)
        write_model_dir(train_model("pairs", frame, config, source), str(pair_dir))
    return str(lang_dir), str(pair_dir)


def archive_docs(archive: Path, cue_kinds=CUE_KINDS) -> pd.DataFrame:
    """docs rows (url, host, status, cld2_lang, outlinks, outlink_cues, warc_length) from the archive's WAT files;
    `cue_kinds`: the link context that may give a link's language cue (none: no cues)."""
    from parascout.udfs.index.wat import read_wat

    rows = []
    for path in sorted((archive / "wat").glob("*.wat.gz")):
        with open(path, "rb") as stream:
            rows.extend(read_wat(stream, cue_kinds))
    docs = pd.DataFrame(rows).drop(columns=["cld2_lang"], errors="ignore")
    pages = pd.read_parquet(archive / "truth" / "pages.parquet", columns=["url", "lang"])
    docs = docs.merge(pages.rename(columns={"lang": "cld2_lang"}), on="url", how="left")
    return docs[["url", "host", "status", "cld2_lang", "outlinks", "outlink_cues", "warc_length"]]


def site_pairs(docs: pd.DataFrame, truth: pd.DataFrame):
    """(language pair, site, the site's docs, its truth pairs) for every (site, language pair) of the truth; a site
    spans its hosts (www.x.com, en.x.com, x.com) as replay-crawl groups them by default."""
    from parascout.udfs.common.langs import language_markers
    from parascout.udfs.common.sites import site_of
    from parascout.udfs.common.urls import registered_domain, url_host

    domains = {host: registered_domain(host) for host in docs["host"].dropna().unique()}
    truth = truth.assign(src_host=truth["src_url"].map(url_host))
    for (src, trg), language_pairs in truth.groupby(["src_lang", "trg_lang"], sort=True):
        markers = language_markers((src, trg))
        sites = {host: site_of(host, domains.get(host) or registered_domain(host), markers)
                 for host in {*domains, *language_pairs["src_host"]}}
        doc_sites = docs["host"].map(sites)
        for site, pairs in language_pairs.groupby(language_pairs["src_host"].map(sites), sort=True):
            yield (src, trg), site, docs[doc_sites == site].assign(site=site), pairs[["src_url", "trg_url"]]


def replay_all(docs: pd.DataFrame, truth: pd.DataFrame, lang_model: str, pair_model: str,
               policies: tuple[str, ...] = POLICIES) -> pd.DataFrame:
    """Summary rows of every policy on every (site, language pair) of the truth (`site_pairs`)."""
    rows, total = [], truth.groupby(["host", "src_lang", "trg_lang"]).ngroups
    for done, ((src, trg), site, site_docs, pairs) in enumerate(site_pairs(docs, truth), start=1):
        config = ReplayRun(langs=(src, trg), policies=policies, lang_model=lang_model, pair_model=pair_model)
        result = replay_host(site_docs, pairs, config)
        rows.append(result.assign(site=f"{site} {src}-{trg}"))
        if done % 10 == 0:
            log.info("replayed %d/%d site-pairs", done, total)
    return pd.concat(rows, ignore_index=True)


def policy_rows(summary: pd.DataFrame, train_hosts: int, label: str = "") -> list[dict]:
    ok = summary[summary["status"] == "ok"]
    rows = []
    for policy in (p for p in POLICIES if p != "bfs" and p in set(ok["policy"])):
        speed = speedup_versus(ok, policy, "bfs")
        # every site-pair where bfs reached 80%: a policy that never got there counts as worse than any ratio
        ratios = speed.loc[speed["bfs"].notna(), "ratio"].fillna(float("inf"))
        rows.append({"train_hosts": train_hosts, "archives": label, "policy": policy,
                     "median_x_bfs_to_80": round(ratios.median(), 3) if len(ratios) else None,
                     "share_le_0.5": round((ratios <= 0.5).mean(), 3) if len(ratios) else None,
                     "mean_auc": round(ok.loc[ok["policy"] == policy, "auc"].mean(), 3),
                     "site_pairs": len(ratios), "never_reached_80": int(ratios.eq(float("inf")).sum())})
    return rows


def pooled_summaries(work: Path, args: argparse.Namespace, seeds: list[int]) -> pd.DataFrame:
    """policy_rows of each seed's saved summary (replay-summary-HOSTS-full-TEST-SEED-KINDS.csv), then of all pooled."""
    rows = []
    for hosts in (int(n) for n in args.train_hosts.split(",")):
        for kinds in args.cue_evidence.split(","):
            summaries = []
            for seed in seeds:
                summary = pd.read_csv(work / f"replay-summary-{hosts}-full-{args.test_hosts}-{seed}-{kinds}.csv")
                summary = summary.rename(columns={"host": "site"})  # summaries saved before the column was `site`
                rows.extend(policy_rows(summary, hosts, f"{seed} cues:{kinds}"))
                summaries.append(summary.assign(site=f"{seed} " + summary["site"]))
            rows.extend(policy_rows(pd.concat(summaries, ignore_index=True), hosts, f"{args.seed} cues:{kinds}"))
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-hosts", default="30,1000", help="training archive sizes (hosts)")
    parser.add_argument("--test-hosts", type=int, default=60)
    parser.add_argument("--seed", default="42", help="test archive seed(s), comma-separated and pooled; training "
                        "archives use the first seed + N")
    parser.add_argument("--cue-evidence", default="all", help="comma-separated: all, anchor, none (see above)")
    parser.add_argument("--policies", default=",".join(POLICIES), help="comma-separated policies (bfs always)")
    parser.add_argument("--minutes", type=float, default=12.0, help="pair-model training budget (url2lang: a quarter)")
    parser.add_argument("--test-archive", help="an existing full sample archive of the test seed (else generated)")
    parser.add_argument("--work", default="/tmp/eval-url-models-sample")
    parser.add_argument("--pool-summaries", action="store_true", help="replay nothing: pool the per-archive "
                        "summaries earlier runs left under --work for these seeds (each seed alone, then all)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    work = Path(args.work)
    seeds = [int(seed) for seed in args.seed.split(",")]
    if args.pool_summaries:
        print(pooled_summaries(work, args, seeds).to_string(index=False))
        return 0
    archives = [Path(args.test_archive)] if args.test_archive else [test_archive(work, args.test_hosts, seed)
                                                                     for seed in seeds]
    policies = tuple(p for p in POLICIES if p == "bfs" or p in args.policies.split(","))
    evidence = args.cue_evidence.split(",")
    rows = []
    for hosts in (int(n) for n in args.train_hosts.split(",")):
        lang_model, pair_model = train_models(work, hosts, seeds[0] + hosts, args.minutes)
        for k, kinds in enumerate(evidence):
            wanted = policies if k == 0 else tuple(p for p in policies if p == "bfs" or p in CUE_POLICIES)
            summaries = []
            for archive in archives:
                docs = archive_docs(archive, CUE_EVIDENCE[kinds])
                truth = pd.read_parquet(archive / "truth" / "pairs.parquet")
                print(f"{archive.name}: {truth['host'].nunique()} multilingual hosts of {docs['host'].nunique()}, "
                      f"{len(truth)} true pairs, {len(docs)} WAT docs, cue evidence {kinds}: "
                      f"{sum(cue is not None for cues in docs['outlink_cues'].dropna() for cue in cues)} cued links", flush=True)
                started = time.process_time()
                summary = replay_all(docs, truth, lang_model, pair_model, wanted)
                log.info("replayed with %d-host models in %.0f CPU-s", hosts, time.process_time() - started)
                summary.to_csv(work / f"replay-summary-{hosts}-{archive.name}-{kinds}.csv", index=False)
                summaries.append(summary.assign(site=archive.name + " " + summary["site"]))
            rows.extend(policy_rows(pd.concat(summaries, ignore_index=True), hosts,
                                    f"{args.seed} cues:{kinds}"))
            print(pd.DataFrame(rows).to_string(index=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
