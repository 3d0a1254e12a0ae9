"""rank-pairs at scale: blocking vs the Cartesian product, end-to-end pairs per core-second, a 1M-URL run.

1. blocking: candidate pairs kept vs the Cartesian product (per site and language pair) and the
   share of true pairs kept, on the sample archive (udfs.sample_archive; a synthetic URL set when
   that package is missing): token-Jaccard top-k, + STRAND handles, + the exhaustive product of
   small groups, + link neighbours (page -> linked page in the other language, from the archive's
   WAT files, matched by SURT as rank-pairs matches `docs` outlinks), + shared rare image names
   (the WAT records' IMG@/src names, as `docs.images`, paired by blocking.shared_image_pairs with
   rank-pairs' defaults), links + images, and + nearest paragraph-length profiles (the WARC HTML
   parsed by udfs.fetch.documents, as `docs.structure`), at two exhaustive budgets. `with_links*` take every
   link between pages of the two languages (rank-pairs --uncued-links any, as before link cues);
   `with_cue_links*` what rank-pairs takes by default: links whose context names their target's
   language (WAT anchor text, title, hreflang alternates: `outlink_cues`) and pages linking both ways.
2. end to end: `rank-pairs` in a local[2] Spark session with n-gram models trained here (the pair
   model on a second archive, other hosts); pairs scored per core-second against the pair model
   alone on the same pairs in this process (the baseline), and true pairs kept after the cascade.
3. --million: a 1,000,000-URL cdx-only sample archive ranked on this machine; peak memory of the
   driver + JVM + Python workers (psutil, sampled every 0.5 s) and wall time.

    .venv/bin/python benchmarks/bench_rank_pairs.py [--hosts 60] [--seed 42] [--blocking-only | --links-only]
        [--million] [--work /tmp/bench-rank-pairs]

A held-out check of the blocking settings (chosen on seed 42): --seed 7 --blocking-only --work /tmp/bench-rank-pairs-7.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.measure import PeakMemory
from parascout.udfs.common.langs import language_markers
from parascout.udfs.common.sites import site_of
from parascout.udfs.rank import blocking

CORES = 2


# ---- inputs: a sample archive (or synthetic URLs) as a `urls` frame and true pairs ----------------
def sample_archive(out: Path, hosts: int, seed: int, pages_per_host: int | None = None, langs=None,
                   cdx_only: bool = True) -> Path | None:
    """A sample archive under `out` (reused when present); None without udfs.sample_archive."""
    try:
        from parascout.udfs.sample_archive import generate
    except ImportError:
        return None
    if not (out / "truth" / "pairs.parquet").exists():
        generate(str(out), hosts=hosts, seed=seed, langs=langs, cdx_only=cdx_only, pages_per_host=pages_per_host,
                 progress=True, verbose=False, workers=CORES)
    return out


def archive_urls_table(archive: Path) -> pa.Table:
    """The columnar index of an archive as a `urls` table (HTML 200 captures, one row per URL)."""
    index = pq.read_table(next(archive.glob("cc-index/table/cc-main/warc/crawl=*/subset=warc")),
                          columns=["url", "url_surtkey", "url_host_name", "url_host_registered_domain",
                                   "fetch_status", "content_mime_detected", "content_languages"])
    keep = pc.and_(pc.equal(index["fetch_status"], 200), pc.equal(index["content_mime_detected"], "text/html"))
    index = index.filter(keep)
    languages = pc.list_element(pc.split_pattern(pc.fill_null(index["content_languages"], ""), ","), 0)
    languages = pc.if_else(pc.equal(languages, ""), pa.scalar(None, pa.string()), languages)
    table = pa.table({"url": index["url"], "surt": index["url_surtkey"], "host": index["url_host_name"],
                      "domain": index["url_host_registered_domain"], "lang": languages,
                      "status": pc.cast(index["fetch_status"], pa.string()), "mime": index["content_mime_detected"]})
    _, first = np.unique(table["url"].to_numpy(zero_copy_only=False), return_index=True)
    return table.take(pa.array(np.sort(first)))


def truth_pairs(archive: Path, urls: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """True pairs whose two URLs are in `urls` with the right languages (and how many the truth has)."""
    truth = pd.read_parquet(archive / "truth" / "pairs.parquet")
    language = urls.set_index("url")["lang"]
    present = truth["src_url"].map(language).eq(truth["src_lang"]) & truth["trg_url"].map(language).eq(truth["trg_lang"])
    truth = truth[present].copy()
    truth["style"] = [c.split("+")[1] if "+" in c else "marker-only" for c in truth["convention"]]
    return truth, len(present)


def archive_documents(archive: Path, urls: pd.DataFrame) -> tuple[dict[tuple[str, str], str | None],
                                                                   dict[str, list[str]]]:
    """From the archive's WAT records: {(page, linked page): the language the link's context names or None} for
    links that hit a URL of `urls`, and each page's image file names (as fetch-docs puts them in `docs.images`)."""
    from parascout.udfs.common.urls import surt
    from parascout.udfs.index.wat import read_wat

    by_surt = dict(zip(urls["surt"], urls["url"]))
    links, images = {}, {}
    for path in sorted((archive / "wat").glob("*.wat.gz")):
        with open(path, "rb") as stream:
            for doc in read_wat(stream):
                page = by_surt.get(surt(doc["url"])) if doc["status"] == "ok" else None
                if page is None:
                    continue
                images[page] = sorted(set(images.get(page, ())) | set(doc["images"] or ()))
                for link, cue in zip(doc["outlinks"], doc["outlink_cues"] or [None] * len(doc["outlinks"])):
                    target = by_surt.get(surt(link))
                    if target and target != page:
                        links[(page, target)] = links.get((page, target)) or cue
    return links, images


def archive_profiles(archive: Path, urls: pd.DataFrame) -> dict[str, list[float]]:
    """Paragraph-length profile of each HTML page of `urls`, from the archive's WARC records (as fetch-docs
    parses them into `docs.structure`)."""
    from warcio.archiveiterator import ArchiveIterator

    from parascout.udfs.fetch.documents import decode_html, html_features

    wanted, profiles = set(urls["url"]), {}
    for path in sorted((archive / "warc").glob("*.warc.gz")):
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream):
                url = record.rec_headers.get_header("WARC-Target-URI")
                if record.rec_type != "response" or url not in wanted or url in profiles:
                    continue
                content_type = record.http_headers.get_header("Content-Type") or ""
                if record.http_headers.get_statuscode() != "200" or "html" not in content_type:
                    continue
                text, _, _ = decode_html(record.content_stream().read(), content_type)
                profiles[url] = blocking.paragraph_profile(html_features(text, url)["structure"])
    return profiles


def synthetic_inputs() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fallback without a sample archive: the tests' multi-convention sites, larger."""
    from testkit.sites import synthetic_sites

    frame = synthetic_sites(n_sites=64, pages=300, seed=1)
    frame["host"] = [u.split("/")[2] for u in frame["url"]]
    frame["domain"] = frame["site"]
    paired = frame.dropna(subset=["pair_id"])
    src = paired[paired["lang"] == "eng"].set_index("pair_id")
    trg = paired[paired["lang"] == "isl"].set_index("pair_id").loc[src.index]
    truth = pd.DataFrame({"host": src["host"].to_numpy(), "src_url": src["url"].to_numpy(),
                          "trg_url": trg["url"].to_numpy(), "src_lang": "eng", "trg_lang": "isl",
                          "convention": "synthetic", "switcher_linked": False, "style": "marker-only"})
    return frame, truth


# ---- 1. blocking ------------------------------------------------------------------------------------
def blocking_candidates(urls: pd.DataFrame, languages: tuple[str, str], exhaustive_max_pairs: int, k: int = 5,
                        images: dict[str, list[str]] | None = None, profiles: dict[str, list[float]] | None = None
                        ) -> tuple[set, set, set, set, int]:
    """(similar/exhaustive pairs, handle pairs, shared-image pairs, nearest-profile pairs, Cartesian size) for
    one language pair, per language-neutral site."""
    from parascout.udfs.rank import handles

    markers = language_markers(languages)
    pool = urls[urls["lang"].isin(languages)].copy()
    pool["site"] = [site_of(h, d, markers) for h, d in zip(pool["host"], pool["domain"])]
    similar, structure, cartesian = set(), set(), 0
    for site, group in pool.groupby("site"):
        counts = group["lang"].value_counts()
        cartesian += int(counts.get(languages[0], 0)) * int(counts.get(languages[1], 0))
        pairs = blocking.similar_pairs_for_group(group.assign(host=site), *languages, k, 5000, 2_000_000,
                                                 exhaustive_max_pairs=exhaustive_max_pairs)
        similar |= set(zip(pairs["src_url"], pairs["trg_url"]))
        if profiles is not None:
            fetched = group[group["url"].isin(profiles.keys())]
            nearest = blocking.structure_pairs_for_group(fetched.assign(host=site, profile=fetched["url"].map(profiles)),
                                                         *languages, k, 5000)
            structure |= set(zip(nearest["src_url"], nearest["trg_url"]))
    stripper = handles.build_stripper(languages)
    handle_pairs, _, _ = handles.strand_candidates(pool.assign(host=pool["site"]), stripper, *languages, learn=True)
    handle_set = set(zip(handle_pairs["src_url"], handle_pairs["trg_url"]))
    image_set = set()
    if images is not None:
        fetched = pool[pool["url"].isin(images.keys())]
        image_pairs, _ = blocking.shared_image_pairs(fetched.assign(images=fetched["url"].map(images)), languages)
        image_set = set(zip(image_pairs["src_url"], image_pairs["trg_url"]))
    return similar, handle_set, image_set, structure, cartesian


def bench_blocking(urls: pd.DataFrame, truth: pd.DataFrame, budgets: tuple[int, ...],
                   links: dict[tuple[str, str], str | None] | None = None,
                   images: dict[str, list[str]] | None = None,
                   profiles: dict[str, list[float]] | None = None) -> list[dict]:
    """Per exhaustive budget: candidates and true pairs kept by each cumulative set of blockers."""
    language = dict(zip(urls["url"], urls["lang"]))
    names = ["similar", "with_handles"] + (["with_links", "with_cue_links"] if links is not None else [])
    names += (["with_images"] + (["with_links_and_images", "with_cue_links_and_images"] if links is not None else [])
              ) if images is not None else []
    names += (["with_links_images_structure", "with_cue_links_images_structure"]
              if links is not None and images is not None and profiles is not None else [])
    either_way, cued = set(), set()
    for (page, target), cue in (links or {}).items():
        either_way.update(((page, target), (target, page)))
        if cue is not None and cue == language.get(target) or (target, page) in links:
            cued.update(((page, target), (target, page)))
    rows = []
    for budget in budgets:
        totals = dict.fromkeys(names, 0)
        totals["cartesian"] = 0
        kept = {name: [] for name in names}
        started = time.monotonic()
        for (src_lang, trg_lang), pairs in truth.groupby(["src_lang", "trg_lang"]):
            similar, handle_set, image_set, structure, cartesian = blocking_candidates(
                urls, (src_lang, trg_lang), budget, images=images, profiles=profiles)
            sets = {"similar": similar, "with_handles": similar | handle_set}
            if links is not None:
                for name, linked in (("links", either_way), ("cue_links", cued)):
                    sets[f"with_{name}"] = sets["with_handles"] | {
                        (s, t) for s, t in linked if language.get(s) == src_lang and language.get(t) == trg_lang}
            if images is not None:
                sets["with_images"] = sets["with_handles"] | image_set
                for name in ("links", "cue_links") if links is not None else ():
                    sets[f"with_{name}_and_images"] = sets[f"with_{name}"] | image_set
                    if profiles is not None:
                        sets[f"with_{name}_images_structure"] = sets[f"with_{name}_and_images"] | structure
            totals["cartesian"] += cartesian
            for name in names:
                totals[name] += len(sets[name])
                kept[name].append(pd.Series([(s, t) in sets[name] for s, t in zip(pairs["src_url"], pairs["trg_url"])],
                                            index=pairs.index))
        seconds = time.monotonic() - started
        for name in names:
            hits = pd.concat(kept[name])
            row = {"exhaustive_max_pairs": budget, "blockers": name, "candidates": totals[name],
                   "cartesian": totals["cartesian"], "true_kept": round(float(hits.mean()), 4),
                   "seconds": round(seconds, 1)}
            row["ratio"] = round(row["candidates"] / max(1, row["cartesian"]), 4)
            for (style, linked), part in hits.groupby([truth.loc[hits.index, "style"],
                                                       truth.loc[hits.index, "switcher_linked"]]):
                row[f"kept_{style}{'_switcher' if linked else ''}"] = round(float(part.mean()), 4)
            rows.append(row)
    return rows


def link_sources(links: dict[tuple[str, str], str | None], urls: pd.DataFrame, truth: pd.DataFrame) -> dict:
    """Pairs of pages of two languages that links join, every link (rank-pairs --uncued-links any) against
    rank-pairs' default (a cue naming the target's language either way, or links both ways), and the true
    pairs among them: what the `cue` + `link` sources change, without the other blockers."""
    language = dict(zip(urls["url"], urls["lang"]))
    gold = {frozenset(pair) for pair in zip(truth["src_url"], truth["trg_url"])}
    every, default = set(), set()
    for (page, target), cue in links.items():
        if language.get(page) is None or language.get(target) in (None, language.get(page)):
            continue
        every.add(frozenset((page, target)))
        if cue == language[target] or (target, page) in links:
            default.add(frozenset((page, target)))
    return {"link_pairs_every_link": len(every), "true_every_link": len(every & gold),
            "link_pairs_cue_or_both_ways": len(default), "true_cue_or_both_ways": len(default & gold),
            "share_of_link_pairs": round(len(default) / max(1, len(every)), 3), "true_pairs": len(gold)}


# ---- 2./3. the job --------------------------------------------------------------------------------
def write_urls(table: pa.Table, root: Path) -> None:
    (root / "urls").mkdir(parents=True, exist_ok=True)
    pq.write_table(table, root / "urls" / "part-00000.parquet", row_group_size=100_000)
    (root / "urls" / "_SUCCESS").write_text("")


def train_models(work: Path, urls: pd.DataFrame, pair_truth: pd.DataFrame, max_minutes: float) -> dict:
    """Hashed n-gram url2lang (on these URLs' CDX languages) and pair model (on another archive's truth)."""
    from parascout.udfs.rank.url_models import model_dir, training, training_data

    config = training.TrainingConfig(backend="ngram", max_epochs=4, max_minutes=max_minutes, seed=0)
    models = {}
    if not (work / "url2lang").exists():
        labelled = urls.dropna(subset=["lang"])
        frame = labelled.sample(min(60_000, len(labelled)), random_state=0)[["url", "host", "lang"]]
        frame["split"] = training_data.split_by_host(frame["host"], 0.1, 0.0).to_numpy()
        model_dir.write_model_dir(training.train_model("url2lang", frame, config, {"source": "bench"}),
                                 str(work / "url2lang"))
    if not (work / "pairs").exists():
        examples = training_data.pair_examples(pair_truth.assign(label=1), dev_fraction=0.1, test_fraction=0.0)
        model_dir.write_model_dir(training.train_model("pairs", examples, config, {"source": "bench"}),
                                 str(work / "pairs"))
    models["lang"], models["pairs"] = str(work / "url2lang"), str(work / "pairs")
    return models


def spark_session(memory: str = "4g"):
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (SparkSession.builder.master(f"local[{CORES}]").appName("bench-rank-pairs")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "16").config("spark.driver.memory", memory)
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "5000").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session


def run_rank_pairs(spark, root: Path, langs: str, models: dict, extra: list[str] = ()) -> tuple[dict, PeakMemory]:
    from parascout.jobs.rank_pairs import RankPairs

    argv = ["--root", str(root), "--langs", langs, "--lang-model", models["lang"], "--pair-model", models["pairs"],
            "--force", *extra]
    with PeakMemory() as memory:
        report = RankPairs().use_spark(spark).run(argv)
    return report, memory


def model_baseline(models: dict, root: Path, limit: int = 200_000) -> dict:
    """The pair model alone, in this process, on scored pairs: pairs per core-second (one core)."""
    import torch

    from parascout.udfs.rank.url_models import load_model

    torch.set_num_threads(1)
    pairs = pd.read_parquet(root / "scored_pairs", columns=["src_url", "trg_url"]).head(limit)
    model = load_model(models["pairs"])
    started = time.process_time()
    for start in range(0, len(pairs), 8192):
        model.predict_parallel(pairs["src_url"].iloc[start:start + 8192].tolist(),
                               pairs["trg_url"].iloc[start:start + 8192].tolist())
    seconds = time.process_time() - started
    return {"pairs": len(pairs), "cpu_seconds": round(seconds, 2), "pairs_per_core_second": round(len(pairs) / seconds)}


def cascade_quality(root: Path, truth: pd.DataFrame, langs: tuple[str, str]) -> dict:
    """True pairs of the language pair present in scored_pairs, and in the 1-1 alignment (recall, precision)."""
    wanted = truth[(truth["src_lang"] == langs[0]) & (truth["trg_lang"] == langs[1])]
    reverse = truth[(truth["src_lang"] == langs[1]) & (truth["trg_lang"] == langs[0])]
    gold = set(zip(wanted["src_url"], wanted["trg_url"])) | set(zip(reverse["trg_url"], reverse["src_url"]))
    scored = pd.read_parquet(root / "scored_pairs", columns=["src_url", "trg_url"])
    aligned = pd.read_parquet(root / "alignment", columns=["src_url", "trg_url", "score"])
    scored_set = set(zip(scored["src_url"], scored["trg_url"]))
    confident = aligned[aligned["score"] >= 0.5]
    aligned_set = set(zip(confident["src_url"], confident["trg_url"]))
    return {"true_pairs": len(gold), "kept_in_scored_pairs": round(len(gold & scored_set) / max(1, len(gold)), 4),
            "aligned_recall_at_0.5": round(len(gold & aligned_set) / max(1, len(gold)), 4),
            "aligned_precision_at_0.5": round(len(gold & aligned_set) / max(1, len(aligned_set)), 4)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=60)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--work", default="/tmp/bench-rank-pairs")
    parser.add_argument("--million", action="store_true", help="also rank a 1,000,000-URL cdx-only archive")
    parser.add_argument("--million-urls", type=int, default=1_000_000)
    parser.add_argument("--million-pages-per-host", type=int, default=330,
                        help="mean pages per host of the 1M archive (large values make huge, skewed sites)")
    parser.add_argument("--million-langs", default=None,
                        help="languages of the 1M archive, e.g. eng,isl,fra (default: the sample mix)")
    parser.add_argument("--skip-blocking", action="store_true")
    parser.add_argument("--blocking-only", action="store_true",
                        help="run part 1 only (no model training, Spark or --million)")
    parser.add_argument("--links-only", action="store_true",
                        help="only the link sources: every link vs cue-marked or both-ways links (`link_sources`)")
    parser.add_argument("--train-minutes", type=float, default=3.0)
    args = parser.parse_args(argv)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    results: dict = {"load_average": os.getloadavg()}

    archive = sample_archive(work / "archive", args.hosts, args.seed, cdx_only=False)
    links = images = profiles = None
    if archive is None:
        print("udfs.sample_archive not importable: synthetic URL set (testkit.sites.synthetic_sites)")
        urls, truth = synthetic_inputs()
        table = pa.Table.from_pandas(urls[["url", "host", "domain", "lang"]], preserve_index=False)
    else:
        table = archive_urls_table(archive)
        urls = table.to_pandas()
        truth, truth_all = truth_pairs(archive, urls)
        print(f"sample archive: {len(urls)} HTML URLs, {truth_all} true pairs, {len(truth)} with both URLs captured")
        links, images = archive_documents(archive, urls)
        if args.links_only:
            results["link_sources"] = link_sources(links, urls, truth)
            print(json.dumps(results["link_sources"]))
            return 0
        print(f"link graph (WAT): {len(links)} links between captured pages "
              f"({sum(cue is not None for cue in links.values())} with a language cue); "
              f"{sum(map(bool, images.values()))} of {len(images)} pages show images")
        profiles = archive_profiles(archive, urls)
        print(f"paragraph profiles (WARC HTML): {sum(map(bool, profiles.values()))} of {len(profiles)} pages")
    if not args.skip_blocking:
        print("\n1. blocking (all language pairs of the truth; candidates vs Cartesian per site)")
        results["blocking"] = bench_blocking(urls, truth, budgets=(10_000, 100_000), links=links, images=images,
                                             profiles=profiles)
        print(pd.DataFrame(results["blocking"]).to_string(index=False))

    if archive is not None and not args.blocking_only:
        pair_counts = truth.groupby(["src_lang", "trg_lang"]).size().sort_values()
        langs = tuple(pair_counts.index[-1])
        print(f"\n2. end to end: rank-pairs --langs {','.join(langs)} on local[{CORES}]")
        training_archive = sample_archive(work / "training-archive", max(20, args.hosts // 2), args.seed + 1)
        pair_truth = pd.read_parquet(training_archive / "truth" / "pairs.parquet")
        models = train_models(work, urls, pair_truth, args.train_minutes)
        spark = spark_session()
        root = work / "root"
        write_urls(table, root)
        report, memory = run_rank_pairs(spark, root, ",".join(langs), models)
        metrics = report["metrics"]
        job_seconds = report["seconds"]
        end_to_end = {"urls": report["inputs"]["urls"], "pairs_scored": metrics["pairs_scored_fast"],
                      "job_seconds": job_seconds,
                      "pairs_per_core_second": round(metrics["pairs_scored_fast"] / (job_seconds * CORES), 1),
                      "peak_memory_gib": round(memory.peak / 2**30, 2),
                      "candidates_vs_cartesian": metrics["candidates_vs_cartesian"],
                      "scored_vs_cartesian": metrics["scored_vs_cartesian"],
                      "candidates_per_source": metrics["candidates_per_source"]}
        baseline = model_baseline(models, root)
        end_to_end["model_alone_pairs_per_core_second"] = baseline["pairs_per_core_second"]
        end_to_end["ratio_vs_model_alone"] = round(end_to_end["pairs_per_core_second"]
                                                   / baseline["pairs_per_core_second"], 3)
        end_to_end.update(cascade_quality(root, truth, langs))
        results["end_to_end"] = end_to_end
        print(json.dumps(end_to_end, indent=1))
        if args.million:
            results["million"] = bench_million(spark, work, args, models, langs)
            print(json.dumps(results["million"], indent=1))
        spark.stop()
    (work / "results.json").write_text(json.dumps(results, indent=1, default=str))
    print(f"\nresults: {work / 'results.json'}")
    return 0


def bench_million(spark, work: Path, args, models: dict, langs: tuple[str, str]) -> dict:
    """Rank a cdx-only sample archive of ~args.million_urls HTML URLs; peak memory and time."""
    pages_per_host = args.million_pages_per_host
    hosts = int(np.ceil(args.million_urls / (pages_per_host * 0.97)))  # ~97% of pages are unique HTML URLs
    print(f"\n3. {args.million_urls:,}-URL archive: {hosts} hosts, {pages_per_host} pages per host on average")
    started = time.monotonic()
    name = f"million-archive-{pages_per_host}-{(args.million_langs or 'mix').replace(',', '-')}"
    langs_of_archive = args.million_langs.split(",") if args.million_langs else None
    archive = sample_archive(work / name, hosts, args.seed + 2, pages_per_host, langs_of_archive)
    generated = time.monotonic() - started
    table = archive_urls_table(archive)
    root = work / "million-root"
    write_urls(table, root)
    ranked = langs_of_archive[:2] if langs_of_archive else langs
    report, memory = run_rank_pairs(spark, root, ",".join(ranked), models)
    metrics = report["metrics"]
    return {"langs": ",".join(ranked), "urls": report["inputs"]["urls"], "archive_seconds": round(generated), "job_seconds": report["seconds"],
            "peak_memory_gib": round(memory.peak / 2**30, 2),
            "peak_by_process_gib": {k: round(v / 2**30, 2) for k, v in memory.peak_by_kind.items()},
            "kept_urls": report["kept"], "pairs_scored": metrics["pairs_scored_fast"],
            "pairs_per_core_second": round(metrics["pairs_scored_fast"] / (report["seconds"] * CORES), 1),
            "sites": metrics["sites"], "sites_split": metrics["sites_split"], "groups": metrics["groups"],
            "groups_chunked": metrics["groups_chunked"], "urls_capped": metrics["urls_capped"],
            "largest_site_urls": int(pd.read_parquet(root / "rank_hosts").eval("n_urls_src + n_urls_trg").max()),
            "candidates_vs_cartesian": metrics["candidates_vs_cartesian"], "balanced": report["balanced"],
            "load_average": os.getloadavg()}


if __name__ == "__main__":
    sys.exit(main())
