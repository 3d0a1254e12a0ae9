"""The versioned tables under a dataset root as one run sees them: new versions written to the staging folder,
read back by the run's later steps, then switched in or discarded whole (the layout is udfs.common.table_layout's)."""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from parascout.udfs.common import storage, table_layout, tables

#: the column (and partition folder) naming a row's language pair in the tables of per-pair jobs
PAIR_COLUMN = "lang_pair"


class TableMissing(LookupError):
    """A table asked for has no data under the root."""

    def __init__(self, path: str):
        super().__init__(path)
        self.path = path


class SwitchFailed(RuntimeError):
    """The new versions could not be switched in; the tables keep their current versions."""


class TableStore:
    """Reads and writes the tables under `root`: a write is a new version in the staging folder, which `commit`
    moves into the table folder (and `discard` removes); a pair's rows go to a `lang_pair=<src>-<trg>` partition.

    `spark` gives the SparkSession when a step needs one (a store that writes nothing never starts Spark)."""

    def __init__(self, root: str, spark: Callable[[], Any], log: logging.Logger):
        self.root = root
        self._spark = spark
        self.log = log
        self.staged: dict[str, tuple[str, int]] = {}  # table -> (version written by this run, rows)
        self._pair_writes: dict[str, list[str]] = {}  # pair label -> partition folders it wrote
        self._prepared = None  # the session whose Hadoop was set up for the root

    @property
    def spark(self):
        """The SparkSession, set up for the root on first use (storage.prepare_spark: raises
        storage.HadoopStorageMissing where Hadoop has no file system for the root's scheme)."""
        session = self._spark()
        if self._prepared is not session:
            if self.root:
                storage.prepare_spark(session, self.root)
            self._prepared = session
        return session

    # ---- locations ---------------------------------------------------------------------
    def table_path(self, table: str) -> str:
        return storage.join(self.root, table)

    def table_location(self, table: str) -> str | None:
        """Where `table`'s data is: this run's new version once written, else the current version (None: absent)."""
        if table in self.staged:
            return table_layout.staging_path(self.table_path(table), self.staged[table][0])
        return table_layout.table_location(self.table_path(table))

    def table_exists(self, table: str) -> bool:
        return self.table_location(table) is not None

    def current_version(self, table: str) -> str | None:
        """The version the table's manifest names (None: no manifest)."""
        return _manifest_version(self.table_path(table))

    # ---- reading and writing -----------------------------------------------------------
    def read_table(self, table: str, pair: str | None = None):
        """The table's data; with `pair` (a label, eng-fra), only that partition of a table this run wrote per pair
        (inputs are read whole: each job picks its pair's rows by src_lang / trg_lang, in either direction)."""
        location = self.table_location(table)
        if location is None:
            raise TableMissing(self.table_path(table))
        if pair is None:
            return self.spark.read.parquet(location)
        partition = storage.join(location, f"{PAIR_COLUMN}={pair}")
        if table in self.staged and storage.exists(partition):
            return self.spark.read.option("basePath", location).parquet(partition)
        return self.spark.read.parquet(location)

    def write_table(self, df, table: str, pair: str | None = None) -> int:
        """Write a DataFrame as a new version of `table` in the root's staging folder and return its row count.

        Later reads get the new version; readers elsewhere keep the current one until `commit` moves it into the
        table folder (see parascout.udfs.common.table_layout). With `pair` the rows go to the version's
        `lang_pair=<pair>` partition, and every pair of the run shares the version; a frame with a `lang_pair`
        column written without a pair is partitioned by it the same way."""
        if pair is not None and PAIR_COLUMN in df.columns:
            df = df.drop(PAIR_COLUMN)  # a pair's rows read from a per-pair input: the partition path says it
        columns = [*df.columns, PAIR_COLUMN] if pair is not None else df.columns
        for problem in tables.check_columns(table, columns):  # raises on a missing required column (tests: any)
            self.log.warning("%s", problem)
        version, rows_before = self._version_to_write(table, pair)
        location = table_layout.staging_path(self.table_path(table), version)
        if pair is not None:
            location = storage.join(location, f"{PAIR_COLUMN}={pair}")
            self._pair_writes.setdefault(pair, []).append(location)
        self._write_parquet(df, location, by_pair=pair is None and PAIR_COLUMN in df.columns)
        rows = self.spark.read.parquet(location).count()
        self.staged[table] = (version, rows_before + rows)
        self.log.info("wrote %s: %d rows -> %s", table, rows, location)
        return rows

    def rows_written(self, table: str) -> int:
        """The rows of the version this run wrote of `table`, every pair's together."""
        return self.staged[table][1]

    def _version_to_write(self, table: str, pair: str | None) -> tuple[str, int]:
        """(version, rows already in it): the run's version of the table for a further pair, else a new one."""
        if pair is not None and table in self.staged:
            return self.staged[table]
        self._remove_stale_versions(self.table_path(table))
        return table_layout.new_version(), 0

    def _write_parquet(self, df, location: str, by_pair: bool) -> None:
        """Write `df` at `location`, by_pair: partitioned by lang_pair (every pair in one pass, the layout of
        per-pair writes)."""
        writer = df.write.mode("errorifexists")
        if by_pair:
            writer = writer.partitionBy(PAIR_COLUMN)
        writer.parquet(location)
        if by_pair and not self._has_partitions(location):
            # no rows: a partitioned write leaves no file to read the table's columns from
            self.spark.createDataFrame([], df.schema).write.mode("overwrite").parquet(location)

    def _has_partitions(self, location: str) -> bool:
        """Whether a partitioned write made any `lang_pair=` folder under `location`."""
        fs, folder = self._hadoop_fs(location), self._hadoop_path(location)
        return any(status.getPath().getName().startswith(f"{PAIR_COLUMN}=") for status in fs.listStatus(folder))

    # ---- language pairs ----------------------------------------------------------------
    def remove_pair_writes(self, pair: str) -> dict[str, int]:
        """Remove the partitions a skipped pair wrote; returns {table: rows} of the tables that lost rows."""
        rows_now = {}
        for location in self._pair_writes.pop(pair, []):
            for table, (version, rows) in list(self.staged.items()):
                if location.startswith(table_layout.staging_path(self.table_path(table), version) + "/"):
                    removed = self.spark.read.parquet(location).count()
                    self.staged[table] = (version, rows - removed)
                    rows_now[table] = rows - removed
            self._delete(location)
        return rows_now

    def mark_versions_complete(self) -> None:
        """Every pair's partitions are written: mark each new version complete (its `_SUCCESS` file)."""
        for table, (version, _) in self.staged.items():
            marker = storage.join(table_layout.staging_path(self.table_path(table), version), "_SUCCESS")
            if not storage.exists(marker):
                storage.write_text(marker, "")

    # ---- switching versions --------------------------------------------------------------
    def commit(self, job: str, run_id: str) -> None:
        """Switch every table this run wrote to its new version: move it from the staging folder into the table
        folder, write the manifest, remove the version it replaced; nothing is switched unless every new version
        is still complete (SwitchFailed)."""
        gone = [table for table, (version, _) in self.staged.items()
                if not table_layout.staged_complete(self.table_path(table), version)]
        if gone:
            raise SwitchFailed(f"the new versions of {gone} are gone before the switch (removed by another "
                               "writer?); the tables keep their current versions")
        for table, (version, rows) in list(self.staged.items()):
            table_dir = self.table_path(table)
            self._move(table_layout.staging_path(table_dir, version), table_layout.version_path(table_dir, version))
            self._delete(table_layout.staging_path(table_dir))
            table_layout.write_manifest(table_dir, version, rows=rows, job=job, run_id=run_id)
            del self.staged[table]
            self._remove_versions(table_dir, keep=version, legacy_too=True)

    def discard(self) -> None:
        """A failed run: remove the versions it wrote (best effort; the next write removes what is left)."""
        for table, (version, _) in self.staged.items():
            table_dir = self.table_path(table)
            moved = [table_layout.version_path(table_dir, version)] if _manifest_version(table_dir) != version else []
            try:
                for location in [table_layout.staging_path(table_dir, version), *moved]:  # moved: a switch cut short
                    self._delete(location)
            except Exception as error:  # noqa: BLE001 - the job's own error is the one to report
                self.log.warning("could not remove the unfinished %s version %s: %s", table, version, error)
        self.staged = {}

    def _move(self, source: str, target: str) -> None:
        """Rename a version folder into its table folder (a rename on local disks and HDFS, a copy on object
        stores); the table folder is made first where the table is new."""
        fs = self._hadoop_fs(target)
        try:
            fs.mkdirs(self._hadoop_path(target).getParent())
            moved = fs.rename(self._hadoop_path(source), self._hadoop_path(target))
        except Exception as error:  # noqa: BLE001 - Py4JJavaError: the store's own error (a cut copy, throttling)
            raise SwitchFailed(f"could not move the new version {source} to {target} ({storage.java_error(error)}); "
                               "the table keeps its current version") from None
        if not moved:
            raise SwitchFailed(f"could not move the new version {source} to {target}; the table keeps its current "
                               "version")

    def _remove_stale_versions(self, table_dir: str) -> None:
        """Before a new version is written: the table folder's versions but the current one, and the table's
        staging folder (versions of failed or killed runs: the writer lock makes this run the only writer)."""
        self._remove_versions(table_dir, keep=_manifest_version(table_dir))
        self._delete(table_layout.staging_path(table_dir))

    def _remove_versions(self, table_dir: str, keep: str | None, legacy_too: bool = False) -> None:
        """Delete the table folder's version folders but `keep`; with `legacy_too`, also files of a plain table
        that the manifest replaced (everything but the manifest)."""
        fs, folder = self._hadoop_fs(table_dir), self._hadoop_path(table_dir)
        if not fs.exists(folder):
            return
        for status in fs.listStatus(folder):
            name = status.getPath().getName()
            is_version = name.startswith(table_layout.VERSION_PREFIX)
            if name == table_layout.MANIFEST or (is_version and name == table_layout.VERSION_PREFIX + str(keep)):
                continue
            if is_version or legacy_too:
                fs.delete(status.getPath(), True)

    # ---- Hadoop file system --------------------------------------------------------------
    def _delete(self, location: str) -> None:
        """Remove a folder and everything under it (nothing to do when it is not there)."""
        self._hadoop_fs(location).delete(self._hadoop_path(location), True)

    def _hadoop_path(self, path: str):
        return self.spark.sparkContext._jvm.org.apache.hadoop.fs.Path(storage.to_hadoop(path))

    def _hadoop_fs(self, path: str):
        return self._hadoop_path(path).getFileSystem(self.spark.sparkContext._jsc.hadoopConfiguration())


def _manifest_version(table_dir: str) -> str | None:
    manifest = table_layout.read_manifest(table_dir)
    return manifest["version"] if manifest else None
