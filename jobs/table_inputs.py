"""The tables under --root a job declares it reads: the required ones must be there before it starts, an optional
one is read as `--use-<table> auto|yes|no` says, and the choice and the version read go to the report."""
from __future__ import annotations

import argparse
from collections.abc import Callable

from parascout.jobs.errors import ConfigError
from parascout.udfs.common import table_layout
from parascout.udfs.common.table_store import TableStore


class TableInputs:
    """Job's declared inputs: `resolve_inputs()` decides which this run reads, `uses(table)` says."""

    args: argparse.Namespace
    name: str
    store: TableStore
    inputs: tuple[str, ...]
    optional_inputs: tuple[str, ...]
    tables_read: dict[str, dict]
    table_path: Callable[[str], str]

    def resolve_inputs(self) -> None:
        """Decide which declared inputs this run reads (and their current versions); fails when one must be there."""
        for table in (*self.inputs, *self.optional_inputs):
            choice = getattr(self.args, f"use_{table}", "yes") if table in self.optional_inputs else "required"
            manifest = table_layout.read_manifest(self.table_path(table)) if choice != "no" else None
            present = manifest is not None or (choice != "no" and self.store.table_exists(table))
            if choice in ("yes", "required") and not present:
                flag = "" if choice == "required" else f" (--use-{table.replace('_', '-')} yes)"
                raise ConfigError(f"{self.name}: table {table!r} not found at {self.table_path(table)}{flag}; "
                                  "run the job that writes it first")
            self.tables_read[table] = {"used": present, "choice": choice,
                                       "version": manifest["version"] if manifest else None}

    def uses(self, table: str) -> bool:
        """Whether this run reads the declared input `table` (resolve_inputs decided)."""
        if table not in self.tables_read:
            raise KeyError(f"{self.name}: {table!r} is not a declared input (inputs / optional_inputs)")
        return self.tables_read[table]["used"]
