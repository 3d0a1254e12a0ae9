"""The pipeline's order, derived from what each job declares it reads and writes.

A job reads the tables it names in `inputs` and `optional_inputs`, and the files other jobs make that it is given by
an argument (`input_paths`, `model_paths`, `input_prefixes`: `--lang-model` reads what train-url2lang `makes`);
it writes its `outputs` and what it `makes`. A job comes after every job that writes something it reads, except
what it names in `later_inputs`: optional inputs written further down the pipeline, read on a second pass
(fetch-docs `--select shortlist` after shortlist). Jobs that the data leaves free are ordered by name, so the order
is the same wherever it is printed: `parascout --help`, the demo's steps, docs/jobs/README.md.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple


class PipelineCycle(ValueError):
    """Jobs whose declared inputs and outputs wait on each other: one of them must declare a later input."""


class Edges(NamedTuple):
    """What one job reads and writes, by artifact name (a table, or a file another job is given by an argument)."""

    reads: frozenset[str]
    writes: frozenset[str]


def job_edges(job_class) -> Edges:
    """The artifacts `job_class` reads (less its later inputs) and writes, from its declarations."""
    arguments = (*job_class.input_paths, *job_class.model_paths, *job_class.input_prefixes)
    reads = {*job_class.inputs, *job_class.optional_inputs,
             *(artifact for a in arguments for artifact in job_class.path_artifacts.get(a, (a,)))}
    writes = {*job_class.outputs, *job_class.unversioned_outputs, *job_class.makes}
    return Edges(frozenset(reads - set(job_class.later_inputs)), frozenset(writes))


def pipeline_order(registry: Mapping[str, type]) -> list[str]:
    """The job names of `registry`, each after the jobs that write what it reads (Kahn's algorithm, the first name
    in alphabetical order among the jobs ready together); jobs that read and write nothing (demo) come last."""
    edges = {name: job_edges(cls) for name, cls in registry.items()}
    staged = {name for name, edge in edges.items() if edge.reads or edge.writes}
    writers: dict[str, set[str]] = {}
    for name in staged:
        for artifact in edges[name].writes:
            writers.setdefault(artifact, set()).add(name)
    waits_on = {name: set().union(*(writers.get(a, set()) for a in edges[name].reads)) - {name} for name in staged}
    order: list[str] = []
    while len(order) < len(staged):
        ready = sorted(name for name in staged - set(order) if waits_on[name] <= set(order))
        if not ready:
            left = sorted(staged - set(order))
            raise PipelineCycle("jobs wait on each other's outputs: " + "; ".join(
                f"{name} reads what {', '.join(sorted(waits_on[name] - set(order)))} write" for name in left)
                + " (declare the input written further down as one of the job's later_inputs)")
        order.append(ready[0])
    return order + sorted(set(registry) - staged)
