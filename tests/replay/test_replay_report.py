"""The replay report from hand-made aggregates (no Spark): rho in words only where defined, PNGs written."""
import itertools

import numpy as np
import pandas as pd

from parascout.udfs.replay import metrics
from parascout.udfs.replay.report import build_report, prediction_agreement_sentence

PNG = b"\x89PNG\r\n\x1a\n"
POLICIES = ("bfs", "smart", "oracle")


def summary(sites: list[str]) -> pd.DataFrame:
    rows = []
    for number, (site, policy) in enumerate(itertools.product(sites, POLICIES)):
        fetches = 10.0 + number
        rows.append({"site": site, "policy": policy, "status": "ok", "n_docs": 40, "n_parallel_docs": 20, "n_pairs": 10,
                     "auc": 0.3 + 0.1 * POLICIES.index(policy), "recall": 1.0, "pairs_found": 10 - number // 3,
                     "docs_found": 20, "fetched": 40, "wasted_fetches": 1, "bytes_fetched": 12_345,
                     **{f"fetches_to_{p}": fetches * p / 50 for p in (50, 80, 90)},
                     **{f"share_fetches_to_{p}": fetches * p / 50 / 40 for p in (50, 80, 90)}})
    return pd.DataFrame(rows)


def means() -> tuple[pd.DataFrame, pd.DataFrame]:
    curves = pd.DataFrame([{"policy": p, "percent": x, "mean_recall": min(1.0, x / 60), "sites": 3}
                           for p in POLICIES for x in range(101)])
    deciles = pd.DataFrame([{"policy": p, "decile": d, "mean_share": 0.1} for p in POLICIES for d in range(1, 11)])
    return curves, deciles


def test_rho_in_words_and_why_it_is_missing_only_when_it_is():
    both = prediction_agreement_sentence({"spearman_pairs": 0.6612, "spearman_ratio": 0.25})
    assert "predicted pairs vs pairs found ρ = 0.66" in both and "ρ = 0.25" in both and "No ρ" not in both
    one = prediction_agreement_sentence({"spearman_pairs": 0.5, "spearman_ratio": float("nan")})
    assert "ρ = 0.50" in one and "No ρ for predicted ratio vs parallel documents per fetch" in one
    assert "nan" not in one


def test_report_has_every_plot_and_no_nan_text():
    sites = ["a.example", "b.example", "c.example"]
    table = summary(sites)
    shortlist = pd.DataFrame({"site": sites, "predicted_pairs": [12, 5, 1], "predicted_ratio": [0.6, 0.3, 0.1]})
    comparison = metrics.prediction_agreement(shortlist, table, "smart")
    assert not np.isnan(comparison[1]["spearman_pairs"])
    curves, deciles = means()
    report, images = build_report(table, curves, deciles, {"langs": ("eng", "fra"), "budget": 1.0}, [], comparison)
    assert sorted(images) == ["deciles.png", "prediction.png", "yield_curves.png"]
    assert all(data[:8] == PNG and len(data) > 5000 for data in images.values())
    markdown = report.markdown()
    assert "- langs: eng, fra" in markdown and "Spearman" in markdown and "nan" not in markdown.lower()
    assert "| a.example |" in markdown and "12,345" not in markdown  # totals are per policy: 3 sites summed
    assert "| bfs | 3 |" in markdown
