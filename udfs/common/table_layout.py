"""Versioned tables under a dataset root: one version folder of plain Parquet and a manifest naming it.

    ROOT/docs/_manifest.json                        {"version": "v20261125T030102-3f9a1c2e", "rows": ..., ...}
    ROOT/docs/version=v20261125T030102-3f9a1c2e/    part-*.parquet, _SUCCESS (written by Spark)
    ROOT/_staging/docs/version=v20261205T...        a job's new version while it runs (outside the table folder)

A job writes its new version under ROOT/_staging/, outside the table folder, and switches by moving it into the
table folder (a rename on local disks and HDFS), writing the manifest, and removing the version it replaced. So the
table folder holds one version (two for the moment between the move and the removal): any reader of the folder
(DuckDB's `read_parquet('ROOT/docs/**/*.parquet')`, pandas, pyarrow, Spark) reads the current rows once, also
while a job rewrites the table or after one was killed. A reader that resolves the manifest (`table_location`)
sees the old version or the new one, never half of one. On object stores (s3://, gs://) the move is a copy: read
through `table_location` there while a job may be switching. Stale versions (failed or killed runs) are removed
by the next write (Job.write_table / Job.commit_outputs).
A folder of Parquet files with `_SUCCESS` and no manifest (written by another tool) is read as it is.
"""
from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone

from parascout.udfs.common import storage

MANIFEST = "_manifest.json"
VERSION_PREFIX = "version="
#: the folder under a root where jobs write new versions until they switch (readers of a table never see it)
STAGING = "_staging"


def new_version() -> str:
    """A version name that sorts by time and never repeats."""
    return f"v{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


def version_path(table_dir: str, version: str) -> str:
    return storage.join(table_dir, VERSION_PREFIX + version)


#: a table folder as other tools read it (docs/tables.md; tests/jobs/test_base.py runs each with a second version
#: present): every one reads the current version's rows once, and sees `version` (and `lang_pair`) as columns
READ_EXAMPLES = (
    ("DuckDB", "sql", "SELECT * FROM read_parquet('{table}/**/*.parquet')"),
    ("pandas", "python", "pandas.read_parquet('{table}')"),
    ("pyarrow", "python", "pyarrow.parquet.read_table('{table}')"),
    ("Spark", "python", "spark.read.parquet('{table}')"),
)


def staging_path(table_dir: str, version: str = "") -> str:
    """Where a job writes `version` of the table until the switch: ROOT/_staging/<table>/version=<v> (the
    table's staging folder when `version` is empty). Outside the table folder, so no reader of it sees the rows."""
    parent, _, name = table_dir.rstrip("/").rpartition("/")
    folder = storage.join(parent or ".", STAGING, name)
    return storage.join(folder, VERSION_PREFIX + version) if version else folder


def staged_complete(table_dir: str, version: str) -> bool:
    """Whether a staged version is there with its _SUCCESS marker (its writer finished it)."""
    return storage.exists(storage.join(staging_path(table_dir, version), "_SUCCESS"))


def read_manifest(table_dir: str) -> dict | None:
    """The table's manifest, or None when it has none (never written, or written by another tool)."""
    path = storage.join(table_dir, MANIFEST)
    return json.loads(storage.read_text(path)) if storage.exists(path) else None


def version_complete(table_dir: str, version: str) -> bool:
    """Whether the version folder is there with its _SUCCESS marker (its writer finished it)."""
    return storage.exists(storage.join(version_path(table_dir, version), "_SUCCESS"))


def write_manifest(table_dir: str, version: str, **facts) -> None:
    """Make `version` the table's current version: the switch, written after the version's data; a version
    that is not complete (removed by another writer, never finished) is refused, so a manifest never names
    a missing folder."""
    if not version_complete(table_dir, version):
        raise FileNotFoundError(f"{version_path(table_dir, version)} is missing or unfinished: "
                                f"the manifest of {table_dir} keeps its current version")
    manifest = {"version": version, "written_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), **facts}
    storage.write_text(storage.join(table_dir, MANIFEST), json.dumps(manifest, indent=2, default=str))


def table_problem(table_dir: str) -> str | None:
    """Why the table's current version cannot be read as its manifest says (None: it can). Reads the Parquet
    footers only: the row count must match the manifest's."""
    import pyarrow.dataset as ds

    manifest = read_manifest(table_dir)
    if manifest is None:
        return f"{table_dir} has no manifest"
    if not version_complete(table_dir, manifest["version"]):
        return f"{version_path(table_dir, manifest['version'])} is missing or unfinished"
    filesystem, inner = storage.arrow_filesystem(version_path(table_dir, manifest["version"]))
    try:
        rows = ds.dataset(inner, filesystem=filesystem, format="parquet").count_rows()
    except Exception as error:  # noqa: BLE001 - any unreadable file makes the table unreadable
        return f"{table_dir} cannot be read: {type(error).__name__}: {error}"[:300]
    if manifest.get("rows") is not None and rows != manifest["rows"]:
        return f"{table_dir} holds {rows} rows, its manifest says {manifest['rows']}"
    return None


def table_location(table_dir: str) -> str | None:
    """The folder holding the table's current data, or None when there is no complete table."""
    manifest = read_manifest(table_dir)
    if manifest is not None:
        return version_path(table_dir, manifest["version"])
    return table_dir if storage.exists(storage.join(table_dir, "_SUCCESS")) else None


def write_files_manifest(folder: str, run_id: str) -> None:
    """Mark a folder of plain files complete: the manifest, written after them, names the run and each file's size."""
    files = {name: size for name, size in storage.file_sizes(folder).items()
             if name != MANIFEST and not name.startswith(storage.TEMPORARY_PREFIX)}
    storage.write_text(storage.join(folder, MANIFEST), json.dumps({"run_id": run_id, "files": files}, indent=2))


def files_problem(folder: str, run_id: str) -> str | None:
    """Why a folder of plain files is not what run `run_id` completed (None: it is): no manifest (a run was
    killed while writing), another run's, or a file missing or of another size."""
    manifest = read_manifest(folder)
    if manifest is None or manifest.get("run_id") != run_id:
        return f"{folder} has no completion manifest of run {run_id}"
    sizes = storage.file_sizes(folder)
    changed = sorted(name for name, size in manifest["files"].items() if sizes.get(name) != size)
    return f"{folder}: {changed} missing or of another size than written" if changed else None
