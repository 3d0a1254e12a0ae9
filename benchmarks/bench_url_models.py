"""Throughput per core of the URL model backends, as ratios to an XLM-R-base-sized model in the same run.

Backends (random weights: speed does not depend on training): the n-gram url2lang model
(predict_lang) and pair model (predict_parallel), the compact transformer (XLM-R style,
4 layers x 128, URL BPE tokenizer, max 64 tokens per pair, int8 dynamic quantisation,
length-sorted batches), and the reference: XLMRobertaConfig's default sizes (12 x 768,
3072 feed-forward; vocabulary shrunk to the URL tokenizer's to save RAM), float32 and int8.
One torch thread, so the figures are per core. Targets: n-gram >= 50,000 URLs/s/core,
compact transformer >= 1,000 pairs/s/core.

    .venv/bin/python benchmarks/bench_url_models.py [--urls 100000] [--pairs 4000] [--seconds 3]
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

import numpy as np
import torch

from parascout.udfs.rank.url_models.ngram import NgramUrlModel
from parascout.udfs.rank.url_models.ngram_features import NgramSpec
from parascout.udfs.rank.url_models.preprocess import preprocess_url
from parascout.udfs.rank.url_models.transformer import (
    TransformerUrlModel,
    compact_config,
    quantize_dynamic_int8,
    train_url_tokenizer,
)

WMT16 = os.path.join(REPO, "..", "shared", "data", "wmt16", "train.pairs")
LANGUAGES = [f"l{i:02d}" for i in range(160)] + ["unk"]


def real_pairs() -> list[tuple[str, str]]:
    """WMT16 gold pairs when present (real URL lengths), else synthetic ones; shuffled across hosts."""
    pairs = []
    if os.path.exists(WMT16):
        with open(WMT16, encoding="utf-8") as handle:
            pairs = [tuple(line.split()) for line in handle if len(line.split()) == 2]
    if not pairs:
        words = ["news", "about", "products", "report", "media", "events", "history", "contact"]
        pairs = [(f"http://site{i % 97}.com/en/{words[i % 8]}/{i}.html", f"http://site{i % 97}.com/fr/{words[i % 5]}/{i}")
                 for i in range(2000)]
    src = [p[0] for p in pairs]
    trg = [p[1] for p in pairs]
    random.Random(0).shuffle(trg)           # mostly non-parallel pairs, as in a candidate pool
    return list(zip(src, trg))


def rate(function, items: int, seconds: float) -> tuple[float, float]:
    """Items per CPU second and per wall second of function() (after one warm-up call).

    With one torch thread the CPU-time rate is the per-core figure; on a shared machine the
    wall-clock rate also counts the time other processes held the core.
    """
    function()
    wall, cpu, calls = time.perf_counter(), time.process_time(), 0
    while True:
        function()
        calls += 1
        elapsed = time.perf_counter() - wall
        if elapsed >= seconds:
            return calls * items / (time.process_time() - cpu), calls * items / elapsed


def transformer(tokenizer, layers: int, hidden: int, intermediate: int | None = None, quantize: bool = False,
                batch_size: int = 128) -> TransformerUrlModel:
    config = compact_config(len(tokenizer), ["non-parallel", "parallel"], layers=layers, hidden=hidden, max_length=64,
                            pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                            eos_token_id=tokenizer.eos_token_id)
    if intermediate:
        config.intermediate_size = intermediate
        config.num_attention_heads = 12
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_config(config).eval()
    if quantize:
        model = quantize_dynamic_int8(model)
    return TransformerUrlModel(model, tokenizer, "pairs", ["non-parallel", "parallel"], max_length=64, device="cpu",
                               batch_size=batch_size)


def pool_pairs(pairs: list[tuple[str, str]], max_per_host: int = 4000) -> tuple[list[str], list[str]]:
    """Every src x trg pair of each WMT16 host (at most max_per_host per host): what `align` scores, where
    each URL is in many pairs."""
    from parascout.udfs.common.urls import url_host

    hosts: dict[str, tuple[set[str], set[str]]] = {}
    for src, trg in pairs:
        hosts.setdefault(url_host(src) or "", (set(), set()))[0].add(src)
        hosts.setdefault(url_host(trg) or "", (set(), set()))[1].add(trg)
    src_urls, trg_urls = [], []
    for host in sorted(hosts):
        src, trg = hosts[host]
        combined = [(s, t) for s in sorted(src) for t in sorted(trg)][:max_per_host]
        src_urls += [s for s, _ in combined]
        trg_urls += [t for _, t in combined]
    return src_urls, trg_urls


def pool_context_rate(src: list[str], trg: list[str], seconds: float) -> float:
    """pairs/CPU-s of calibration.context_features (what the pair model's decision adds in `align`)."""
    import pandas as pd

    from parascout.udfs.common.urls import url_host
    from parascout.udfs.rank.url_models.calibration import context_features

    frame = pd.DataFrame({"host": [url_host(url) for url in src], "src_url": src, "trg_url": trg,
                          "p_parallel": np.random.default_rng(0).random(len(src))})
    return rate(lambda: context_features(frame), len(frame), seconds)[0]


def ngram_pair_versions(pairs: list[tuple[str, str]], seconds: float) -> int:
    """pairs/s/core of the pair model as `train-pairs` builds it today (cross bag, PAIR_EXTRA_DENSE, accent
    folding, calibrated output) against the feature set before the extras, in the same run, on two inputs:
    distinct pairs (the WMT16 gold pairs with shuffled partners: every URL in one pair) and pool pairs (each
    host's src x trg, as `align` scores them: each URL featurised once for all its pairs)."""
    versions = {
        "before extras (cross bag, symmetric)": (NgramSpec(cross_bag=True, symmetric_cross=True), {}),
        "today (+ extras, cognates, folding, calibration)": (
            NgramSpec(cross_bag=True, symmetric_cross=True, pair_extras=True, fold_accents=True, cognates=True),
            {"calibration": {"method": "platt", "scale": 1.0, "bias": 0.0}}),
    }
    inputs = {"distinct pairs": ([s for s, _ in pairs], [t for _, t in pairs]), "pool pairs": pool_pairs(pairs)}
    rates = {}
    for input_name, (src, trg) in inputs.items():
        for name, (spec, metadata) in versions.items():
            model = NgramUrlModel.create("pairs", ["non-parallel", "parallel"], spec)
            model.metadata = metadata
            rates[input_name, name] = rate(
                lambda model=model, src=src, trg=trg: model.predict_parallel(src, trg), len(src), seconds)[0]
        baseline = rates[input_name, "before extras (cross bag, symmetric)"]
        print(f"{input_name}: {len(src):,} pairs of {len(set(src)) + len(set(trg)):,} distinct URLs")
        for name in versions:
            per_cpu = rates[input_name, name]
            print(f"  ngram pair model, {name:<40} {per_cpu:12,.0f} pairs/CPU-s  x{per_cpu / baseline:.2f}")
    today = rates["pool pairs", "today (+ extras, cognates, folding, calibration)"]
    context = pool_context_rate(*inputs["pool pairs"], seconds)
    print(f"pool context of the decision (margins, shared tokens and stems, id order, difference convention) on "
          f"pool pairs: {context:,.0f} pairs/CPU-s; model + context as `align` scores: "
          f"{1 / (1 / today + 1 / context):,.0f} pairs/CPU-s")
    print(f"target >= 45,000 pairs/s/core on pool pairs: {'met' if today >= 45_000 else 'NOT met'} ({today:,.0f}; "
          f"distinct pairs {rates['distinct pairs', 'today (+ extras, cognates, folding, calibration)']:,.0f})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--urls", type=int, default=100_000, help="URLs per n-gram call")
    parser.add_argument("--pairs", type=int, default=4_000, help="pairs per compact-transformer call")
    parser.add_argument("--reference-pairs", type=int, default=64, help="pairs per XLM-R-base call")
    parser.add_argument("--seconds", type=float, default=3.0, help="minimum timing window per measurement")
    parser.add_argument("--ngram-only", action="store_true",
                        help="only the n-gram models: the pair model as trained today against its earlier feature sets")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    pairs = real_pairs()
    src = [pairs[i % len(pairs)][0] for i in range(args.urls)]
    trg = [pairs[i % len(pairs)][1] for i in range(args.urls)]
    print(f"torch {torch.__version__}, 1 thread, CPU capability {torch.backends.cpu.get_cpu_capability()}, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if args.ngram_only:
        return ngram_pair_versions(pairs, args.seconds)

    tokenizer = train_url_tokenizer([preprocess_url(u) for u in src[:20_000] + trg[:20_000]], vocab_size=8000)
    sequences = TransformerUrlModel(torch.nn.Linear(1, 1), tokenizer, "pairs", ["n", "p"]).encode_pairs(
        src[:2000], trg[:2000])
    print(f"URL tokenizer: {len(tokenizer)} tokens; mean {np.mean([len(s) for s in sequences]):.1f} tokens per pair "
          f"(max 64)")

    results = {}
    lang_model = NgramUrlModel.create("url2lang", LANGUAGES, NgramSpec())
    results["ngram predict_lang (URLs/s)"] = rate(lambda: lang_model.predict_lang(src), len(src), args.seconds)
    pair_model = NgramUrlModel.create("pairs", ["non-parallel", "parallel"], NgramSpec())
    half = args.urls // 2
    pair_rate = rate(lambda: pair_model.predict_parallel(src[:half], trg[:half]), half, args.seconds)
    results["ngram predict_parallel (pairs/s)"] = pair_rate
    results["ngram predict_parallel (URLs/s)"] = (2 * pair_rate[0], 2 * pair_rate[1])

    n = args.pairs
    for name, model in (("compact 4x128 int8", transformer(tokenizer, 4, 128, quantize=True)),
                        ("compact 4x128 fp32", transformer(tokenizer, 4, 128)),
                        ("compact 4x256 int8", transformer(tokenizer, 4, 256, quantize=True))):
        results[f"{name} predict_parallel (pairs/s)"] = rate(
            lambda model=model: model.predict_parallel(src[:n], trg[:n]), n, args.seconds)
    m = args.reference_pairs
    for name, quantize in (("XLM-R-base 12x768 fp32", False), ("XLM-R-base 12x768 int8", True)):
        reference = transformer(tokenizer, 12, 768, intermediate=3072, quantize=quantize, batch_size=32)
        results[f"{name} predict_parallel (pairs/s)"] = rate(
            lambda reference=reference: reference.predict_parallel(src[:m], trg[:m]), m, args.seconds)
        del reference

    baseline = results["XLM-R-base 12x768 fp32 predict_parallel (pairs/s)"][0]
    print(f"\n{'backend':<48} {'per core (CPU s)':>16} {'x XLM-R-base fp32':>18} {'per wall s':>11}")
    for name, (per_cpu, per_wall) in results.items():
        print(f"{name:<48} {per_cpu:16,.0f} {per_cpu / baseline:18,.1f} {per_wall:11,.0f}")
    ngram_ok = min(results["ngram predict_lang (URLs/s)"][0], results["ngram predict_parallel (URLs/s)"][0]) >= 50_000
    compact_ok = results["compact 4x128 int8 predict_parallel (pairs/s)"][0] >= 1_000
    print(f"\ntargets: n-gram >= 50,000 URLs/s/core: {'met' if ngram_ok else 'NOT met'}; "
          f"compact transformer >= 1,000 pairs/s/core: {'met' if compact_ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
