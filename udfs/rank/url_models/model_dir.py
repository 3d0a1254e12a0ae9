"""A trained URL model as a versioned directory: weights (the backend writes them), parascout_model.json
(labels, data fingerprint, library versions, date, calibration and decision) and metrics.json; local or s3://."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import platform
import shutil
import uuid
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from parascout.udfs.common import storage
from parascout.udfs.rank.url_models import METADATA_FILE, METRICS_FILE, REPORT_FILE

if TYPE_CHECKING:  # annotations only: training.py imports this module
    from parascout.udfs.rank.url_models.training import TrainingConfig, TrainingResult

log = logging.getLogger("parascout.url_models")


FORMAT_VERSION = 1


def data_fingerprint(frame: pd.DataFrame) -> str:
    """A stable digest of the training rows (order-independent)."""
    columns = [c for c in ("url", "lang", "src_url", "trg_url", "label", "split") if c in frame]
    hashes = np.sort(pd.util.hash_pandas_object(frame[columns], index=False).to_numpy())
    return hashlib.sha256(hashes.tobytes()).hexdigest()[:16]


def _versions() -> dict:
    from importlib import metadata

    versions = {"python": platform.python_version()}
    for package in ("parascout", "torch", "transformers", "tokenizers", "numpy", "pandas"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def model_metadata(task: str, config: TrainingConfig, labels: list[str], frame: pd.DataFrame,
                   data_description: dict, metrics: dict) -> dict:
    created = datetime.now(timezone.utc)
    fingerprint = data_fingerprint(frame)
    return {
        "format": "parascout-url-model", "format_version": FORMAT_VERSION,
        "model_version": f"{created:%Y%m%dT%H%M%SZ}-{fingerprint[:8]}",
        "created_at": created.isoformat(timespec="seconds"),
        "task": task, "backend": config.backend, "labels": labels,
        "max_length": config.max_length if config.backend == "transformer" else None,
        "preprocessing": {"name": "garcia-romero-2024-url-tokens", "version": 1},
        "training": {k: v for k, v in asdict(config).items() if k != "extra"},
        "data": {**data_description, "fingerprint": fingerprint, "rows": metrics["rows"]},
        "metrics": {name: {"macro_f1": metrics[name]["macro"]["f1"], "accuracy": metrics[name]["accuracy"],
                           "examples": metrics[name]["examples"]} for name in ("dev", "test")},
        "versions": _versions(),
    }


def training_report(result: TrainingResult) -> str:
    """The tables a reader checks a trained model by (report.txt): dev and test per class and confusion,
    and for a pair model its calibration and alignment cut-off."""
    from parascout.udfs.rank.url_models.evaluation import format_report

    task = result.metadata["task"]
    parts = [format_report(result.metrics[split], title=f"{task} {split} (held-out hosts)") for split in ("dev", "test")]
    decision = result.metrics.get("decision")
    if decision:
        parts.append(f"alignment cut-off {decision['min_score']:.4f} (dev pools with orphans: precision "
                     f"{decision['precision']:.3f}, recall {decision['recall']:.3f})")
    return "\n\n".join(parts) + "\n"


def summary_line(result: TrainingResult, path: str) -> str:
    """One console line for a finished training run (the tables are in the model directory's report.txt)."""
    dev, test = result.metrics["dev"], result.metrics["test"]
    tested = f"test macro-F1 {test['macro']['f1']:.4f}" if test["examples"] else "no test hosts"
    return (f"{result.metadata['task']} model written to {path}: dev macro-F1 {dev['macro']['f1']:.4f}, {tested}; "
            f"per-class tables in {path.rstrip('/')}/{REPORT_FILE}")


def write_model_dir(result: TrainingResult, out: str) -> str:
    """Save model + metadata + metrics + report.txt into `out` atomically (a sibling temporary folder, then a
    rename)."""
    local_out = storage.local_path(out) if storage.is_local(out) else None
    parent = Path(local_out).resolve().parent if local_out else Path(os.environ.get("TMPDIR", "/tmp"))
    parent.mkdir(parents=True, exist_ok=True)
    staging = parent / f".{Path(out.rstrip('/')).name}.tmp-{uuid.uuid4().hex[:8]}"
    result.model.save(staging)
    (staging / METADATA_FILE).write_text(json.dumps(result.metadata, indent=2, default=str))
    (staging / METRICS_FILE).write_text(json.dumps(result.metrics, indent=2, default=str))
    (staging / REPORT_FILE).write_text(training_report(result))
    for path in staging.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    if local_out is None:
        storage.upload_dir(staging, out)
        shutil.rmtree(staging)
        return out
    target = Path(local_out)
    if target.exists():
        # a failed training leaves only its job report behind: that folder is ours to replace
        foreign = [entry for entry in target.iterdir() if entry.name != "_reports"]
        if foreign and not (target / METADATA_FILE).exists():
            shutil.rmtree(staging)
            raise ValueError(f"--out {out} exists and is not a parascout model directory; choose another path")
        retired = parent / f".{target.name}.old-{uuid.uuid4().hex[:8]}"
        target.rename(retired)
        staging.rename(target)
        shutil.rmtree(retired)
    else:
        staging.rename(target)
    return str(target)

