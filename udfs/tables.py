"""Versioned tables under a dataset root: version folders of plain Parquet and a manifest naming the current one.

    ROOT/docs/_manifest.json                        {"version": "v20261125T030102-3f9a1c2e", "rows": ..., ...}
    ROOT/docs/version=v20261125T030102-3f9a1c2e/    part-*.parquet, _SUCCESS (written by Spark)

A job writes a new version folder beside the current one and switches by writing the manifest last (one small
object: a rename on local disks and HDFS, a single PUT on object stores), so a reader that resolves the manifest sees
the old version or the new one, never half of one; a failed job leaves no manifest pointing at its data. Old and
stale versions are removed after the switch (Job.write_table / Job.commit_outputs).

Reading a table with another tool: read `table_location(ROOT/docs)` (the current version folder), or the table
folder itself while no job is writing it (it then holds one version folder, seen as a `version` column).
A folder of Parquet files with `_SUCCESS` and no manifest (written by another tool) is read as it is.
"""
from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone

from parascout.udfs import storage

MANIFEST = "_manifest.json"
VERSION_PREFIX = "version="


def new_version() -> str:
    """A version name that sorts by time and never repeats."""
    return f"v{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


def version_path(table_dir: str, version: str) -> str:
    return storage.join(table_dir, VERSION_PREFIX + version)


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
