"""Finished fetch tasks kept under the root, so a fetch-docs relaunched after a kill redoes only what is missing.

    ROOT/_staging/_resume/fetch-docs/plan.json          the run it belongs to (fingerprint, docs version) and
                                                        the number of WARC fetch partitions
    ROOT/_staging/_resume/fetch-docs/warc-00042.parquet every row one task produced, statuses and reasons included
    ROOT/_staging/_resume/fetch-docs/warc-00042.done    the completion marker, written after the rows

A WARC task is named by its partition: the selection hashed by warc_filename into the plan's partitions, so the
same URLs land in the same partition again (and a file's records share one task, for coalesced GETs). A WAT task
is named by its file. The rows are written under a temporary name and moved into place, then the marker: a part
without its marker is not finished. A task whose rows hold a transport failure is not kept, so a rerun asks the
store again, as it would after a finished run. Another run's area (other arguments, inputs or docs) is removed.
"""
from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Iterator

import pandas as pd

from parascout.udfs.common import range_reads, storage, table_layout

PLAN = "plan.json"
PART_SUFFIX = ".parquet"
DONE_SUFFIX = ".done"


def area_path(root: str, job: str) -> str:
    """Where `job` keeps its finished tasks: beside the staged table versions, never read as a table."""
    return storage.join(root, table_layout.STAGING, "_resume", job)


def load_plan(area: str, identity: dict) -> dict | None:
    """The plan of an interrupted run with the same identity (its kept tasks are reusable); None otherwise, and
    the area of another run is removed so none of its rows can be mistaken for this run's."""
    path = storage.join(area, PLAN)
    plan = json.loads(storage.read_text(path)) if storage.exists(path) else None
    if plan is not None and all(plan.get(key) == value for key, value in identity.items()):
        storage.remove_temporaries(area)  # a part a killed task was writing
        return plan
    remove_area(area)
    return None


def save_plan(area: str, plan: dict) -> None:
    """Written before the first task runs: a kept part is only ever read under the plan that made it."""
    storage.write_text(storage.join(area, PLAN), json.dumps(plan, indent=2, sort_keys=True))


def remove_area(area: str) -> None:
    storage.delete_dir(area)


def finished_parts(area: str) -> set[str]:
    """Names of the tasks whose rows and completion marker are both there."""
    names = storage.file_sizes(area)
    return {name[:-len(DONE_SUFFIX)] for name in names
            if name.endswith(DONE_SUFFIX) and name[:-len(DONE_SUFFIX)] + PART_SUFFIX in names}


def part_path(area: str, name: str) -> str:
    return storage.join(area, name + PART_SUFFIX)


def warc_part(partition: int) -> str:
    return f"warc-{partition:05d}"


def warc_partitions(names: set[str]) -> list[int]:
    """The WARC partitions among finished part names."""
    return sorted(int(name.split("-", 1)[1]) for name in names if name.startswith("warc-"))


def wat_part(path: str) -> str:
    """A WAT task's name: its file's (a digest, as paths hold characters a file name should not)."""
    return "wat-" + hashlib.sha256(path.encode("utf-8")).hexdigest()[:16]


def task_warc_part(inputs: list[pd.DataFrame]) -> str:
    """The running Spark task's WARC part: its partition of the hashed selection."""
    from pyspark import TaskContext

    return warc_part(TaskContext.get().partitionId())


def task_wat_part(inputs: list[pd.DataFrame]) -> str:
    """The running WAT task's part, named by the file it reads (by all of them in the rare task given several)."""
    paths = sorted({path for frame in inputs for path in frame["path"]})
    return wat_part("\n".join(paths))


class _NotKept(Exception):
    """Raised inside a part's write to drop it: nothing was written, or a row was lost in transport."""


def kept_frames(area: str, name: str, frames: Iterator[pd.DataFrame], arrow_schema) -> Iterator[pd.DataFrame]:
    """Hand `frames` on while writing them, typed as Spark reads them back, to the task's part; the part and its
    completion marker are kept only once every frame has passed, some row was written and none was lost in
    transport (a rerun must ask the store again). A task's rows are never all held in memory at once."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    frames = iter(frames)
    first = next(frames, None)
    if first is None:  # a task with nothing to do (its partition was finished before) writes nothing
        return
    rows, lost = 0, False
    try:
        with storage.open_output(part_path(area, name)) as handle:
            writer = None
            for frame in itertools.chain([first], frames):
                table = pa.Table.from_pandas(frame, schema=arrow_schema, preserve_index=False)
                writer = writer or pq.ParquetWriter(handle, table.schema)
                writer.write_table(table)
                rows += table.num_rows
                lost = lost or bool(frame["status"].isin(range_reads.TRANSPORT_FAILURES).any())
                yield frame
            if lost or not rows:
                raise _NotKept
            writer.close()
    except _NotKept:
        return
    storage.write_text(storage.join(area, name + DONE_SUFFIX), json.dumps({"rows": rows}))


def kept_task(batches: Iterator[pd.DataFrame], work: Callable[[Iterator[pd.DataFrame]], Iterator[pd.DataFrame]],
              area: str, name_of: Callable[[list[pd.DataFrame]], str], arrow_schema) -> Iterator[pd.DataFrame]:
    """mapInPandas body: run `work` over the task's rows, keeping what it returns as it hands it on."""
    inputs = list(batches)
    yield from kept_frames(area, name_of(inputs), work(iter(inputs)), arrow_schema)
