"""The table registry: every table a job writes, its columns, Spark SQL types and meanings, each declared by the
stage that writes it (udfs/<stage>/schemas.py) and found here by name.

Writers check a DataFrame against it before writing (check_columns, schema_problems), UDFs take their output schemas
from it (ddl, columns), and docs/tables.md is generated from it (docs/generate.py). Where a table's rows live on disk,
its versions and manifest, is udfs.common.table_layout.
"""
from __future__ import annotations

import functools
import importlib
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    """One column of a table: Spark SQL type, one line of meaning; `required` columns are the tables' contract."""

    name: str
    type: str
    meaning: str
    required: bool = False


@dataclass(frozen=True)
class Table:
    name: str
    job: str
    meaning: str
    columns: tuple[Column, ...]

    def column_names(self) -> set[str]:
        return {column.name for column in self.columns}

    def required_names(self) -> set[str]:
        return {column.name for column in self.columns if column.required}


class TableColumnsError(ValueError):
    """A DataFrame written as a registered table lacks a required column or holds one the registry does not know."""


#: set to 1 (the tests do) to refuse unregistered columns; otherwise they are logged and written
STRICT_ENVIRONMENT = "PARASCOUT_STRICT_TABLES"


def columns_from(*rows: tuple) -> tuple[Column, ...]:
    """Columns from (name, type, meaning) rows; a name ending in '*' is required (the star is dropped)."""
    return tuple(Column(name.rstrip("*"), type_, meaning, name.endswith("*")) for name, type_, meaning in rows)


#: the site a pair belongs to, in the tables rank-pairs and the jobs after it write (its `host` is the source page's)
SITE_KEY = ("site*", "string", ("the site the pair was found in: its hosts as rank-pairs --group-by groups them "
                                "(www.x.org and en.x.org are x.org by default)"))
PAIR_KEYS = (
    ("host*", "string", "host of the source page"),
    ("src_url*", "string", "URL of the page in the first language of --langs"),
    ("trg_url*", "string", "URL of the page in the second language"),
    ("src_lang*", "string", "language of src_url, ISO 639-3"),
    ("trg_lang*", "string", "language of trg_url, ISO 639-3"),
)
LINK_EVIDENCE = (
    ("link_src_to_trg", "boolean", "the source page links to the target page (docs.outlinks)"),
    ("link_trg_to_src", "boolean", "the target page links to the source page"),
    ("cue_links", "int", "links between the two (0-2 directions) whose context names the target's language"),
    ("cue_exclusive", "boolean", "no other page cue-links to the target: one page's translation, not a site-wide link"),
    ("shared_alternates", "int", "rare cue-marked third pages both pages link to"),
)
SCORED = (
    SITE_KEY,
    *PAIR_KEYS,
    ("group_key", "string", "the bounded group (site, path prefix or handle hash) the pair was proposed in"),
    ("source*", "string", "what proposed the pair: handle, similar, link, cue, image, structure, neighbours, exhaustive (joined by ,)"),
    ("handle", "string", "the shared STRAND handle, when a handle proposed the pair"),
    ("p_src_lang*", "double", "P(src_url is in src_lang) by the url2lang model (1 when the index says so)"),
    ("p_trg_lang*", "double", "P(trg_url is in trg_lang)"),
    *LINK_EVIDENCE,
    ("p_parallel_fast", "double", "P(parallel) by the fast n-gram pair model"),
    ("p_parallel*", "double", "P(parallel) by the pair model (the rescoring model where one ran)"),
    ("score_url", "double", "p_src_lang x p_trg_lang x p_parallel"),
    ("link_log_odds", "double", "weighted sum of the link evidence, added to the URL score's logit"),
    ("score*", "double", "sigmoid(logit(score_url) + link_log_odds)"),
    ("scored_by", "string", "the model that gave p_parallel"),
    ("rank*", "int", "rank of the pair among the source URL's candidates, by score"),
)
REPLAY_KEYS = (("site*", "string", ("the replayed site: every host of a registered domain (replay-crawl --group-by; "
                                    "with --group-by host, each host is its own site)")),
               ("policy*", "string", "crawl policy (bfs, smart, smart+site, oracle ...)"))

#: tables written per language pair (jobs.language_pairs.LanguagePairs.for_each_pair): partitioned by lang_pair
PER_PAIR_TABLES = ("candidates", "learned_lss", "scored_pairs", "alignment", "rank_hosts", "verified_pairs",
                   "bitext_documents", "bitext_sentences", "bitext_sites", "shortlist", "replay_summary",
                   "replay_curves", "replay_deciles", "replay_frontier")
LANG_PAIR = Column("lang_pair", "string", "the language pair of --langs the row belongs to, src-trg in ISO 639-3 "
                   "(eng-fra); the table is partitioned by it")

#: the stages whose `schemas` module declares tables (udfs/<stage>/schemas.py), in the pipeline's order
SCHEMA_STAGES = ("index", "fetch", "rank", "verify", "export", "replay")


class _Registry(dict):
    """Table name -> Table; looking up a name not declared yet loads every stage's schemas first."""

    def __missing__(self, name: str) -> Table:
        _load_stage_schemas()
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        raise KeyError(name)


TABLES: dict[str, Table] = _Registry()
#: each stage's tables in their declared order (the built-in tables; register() adds others)
_DECLARED: dict[str, list[str]] = {}


def declare(stage: str, *stage_tables: Table) -> None:
    """A stage's tables (its schemas module calls this once): registered, with `lang_pair` added to those written
    per language pair."""
    for table in stage_tables:
        if table.name in PER_PAIR_TABLES:
            table = Table(table.name, table.job, table.meaning, (*table.columns, LANG_PAIR))
        TABLES[table.name] = table
        _DECLARED.setdefault(stage, []).append(table.name)


@functools.cache
def _load_stage_schemas() -> None:
    # each stage declares its own tables; the registry finds them by name, as `parascout` finds its jobs, so common
    # imports no later stage (a stage's schemas module imports this one alone)
    for stage in SCHEMA_STAGES:
        importlib.import_module(f"parascout.udfs.{stage}.schemas")


def registry() -> dict[str, Table]:
    """Every registered table by name: each stage's, and those register() added."""
    _load_stage_schemas()
    return TABLES


def built_in_tables() -> tuple[str, ...]:
    """The tables of parascout's own jobs, stage by stage in the pipeline's order (what docs/tables.md lists)."""
    _load_stage_schemas()
    return tuple(name for stage in SCHEMA_STAGES for name in _DECLARED.get(stage, ()))


def register(table: Table) -> None:
    """Add a table to the registry (a job outside this package, or a test's job, declares its tables here)."""
    TABLES[table.name] = table


def fields(table: str, without: tuple[str, ...] = ()) -> tuple[Column, ...]:
    """The registered columns of `table` in the registry's order, less `without`; a name in `without` the table
    does not have is refused, so a copy that leaves a column out cannot outlive the column."""
    registered = TABLES[table]
    unknown = sorted(set(without) - registered.column_names())
    if unknown:
        raise TableColumnsError(f"{table}: cannot leave out {', '.join(unknown)}: not in the table registry")
    return tuple(column for column in registered.columns if column.name not in without)


def columns(table: str, without: tuple[str, ...] = ()) -> list[str]:
    """The column names of `table` in the registry's order, less `without` (a writer's select list)."""
    return [column.name for column in fields(table, without)]


def ddl(table: str, without: tuple[str, ...] = (), struct: bool = False) -> str:
    """Spark DDL of `table`'s columns, less `without`: 'url string, host string, ...' (a UDF's output schema), or
    with `struct` 'struct<url:string, host:string, ...>' (the table's rows nested in another's)."""
    if struct:
        return f"struct<{', '.join(f'{column.name}:{column.type}' for column in fields(table, without))}>"
    return ", ".join(f"{column.name} {column.type}" for column in fields(table, without))


def schema_problems(table: str, schema) -> list[str]:
    """How a written Spark schema (a StructType) differs from the registry: a column it does not know, another
    type, or another order than the registry's (a registered column that is not required may be absent)."""
    registered = {column.name: column for column in TABLES[table].columns}
    problems = [f"{table}.{field.name}: not in the table registry" for field in schema.fields
                if field.name not in registered]
    problems += [f"{table}.{field.name}: written as {field.dataType.simpleString()}, registered as "
                 f"{registered[field.name].type}" for field in schema.fields
                 if field.name in registered and field.dataType.simpleString() != registered[field.name].type]
    written = [field.name for field in schema.fields if field.name in registered]
    if written != [name for name in registered if name in written]:
        problems.append(f"{table}: columns written in the order {written}, not the registry's")
    return problems


def check_columns(table: str, columns: list[str], strict: bool | None = None) -> list[str]:
    """Problems of writing `columns` as `table`: registered required columns missing (always raised) and columns the
    registry does not know (raised when strict, the tests' setting; otherwise returned for the job to log)."""
    if table not in registry():
        problems = [f"{table}: not a registered table (declare it in its stage's schemas module)"]
    else:
        registered = TABLES[table]
        missing = sorted(registered.required_names() - set(columns))
        if missing:
            raise TableColumnsError(f"{table}: required columns missing: {', '.join(missing)}")
        unknown = [name for name in columns if name not in registered.column_names()]
        problems = [f"{table}: column {name!r} is not in the table registry (declare it in its stage's schemas module)"
                    for name in unknown]
    strict = os.environ.get(STRICT_ENVIRONMENT) == "1" if strict is None else strict
    if problems and strict:
        raise TableColumnsError("; ".join(problems))
    return problems
