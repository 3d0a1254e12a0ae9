"""Imports between the stages of udfs/ run one way: a stage imports `common` and the stages before it, never one
after it, and no udfs module imports `jobs` (jobs run stages; stages know nothing of jobs).

The order is the pipeline's: reading archived records (fetch: WARC records, HTML, the docs rows), which the
index stage reuses for an own crawl's WARCs and WAT files, then the index scan, the lexicon (ranking translates
domain terms with it, verification links words with it), ranking, verification, export and the replay simulator; the sample archive generator writes indexes, so it comes last."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
STAGE_ORDER = ("common", "fetch", "index", "lexicon", "rank", "verify", "export", "replay", "sample_archive")


def imported_modules(source: str) -> list[str]:
    """Every absolute module a source imports, lazy imports inside functions included."""
    modules = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            modules.append(node.module)
    return modules


def backward_imports(stage: str, source: str) -> list[str]:
    """The imports of a module of `stage` that break the order: jobs, or a udfs stage that is not earlier."""
    allowed = set(STAGE_ORDER[:STAGE_ORDER.index(stage) + 1])
    wrong = []
    for module in imported_modules(source):
        parts = module.split(".")
        if parts[0] != "parascout" or len(parts) < 2:
            continue
        if parts[1] == "jobs" or (parts[1] == "udfs" and len(parts) > 2 and parts[2] not in allowed):
            wrong.append(module)
    return wrong


def test_the_check_sees_a_later_stage_and_jobs():
    source = "from parascout.udfs.verify.pages import HostPages\ndef f():\n    import parascout.jobs.base\n"
    assert backward_imports("rank", source) == ["parascout.udfs.verify.pages", "parascout.jobs.base"]
    assert backward_imports("export", source) == ["parascout.jobs.base"]


def test_every_udfs_stage_imports_only_common_and_the_stages_before_it():
    stages = sorted(path.name for path in (REPO / "udfs").iterdir() if path.is_dir() and (path / "__init__.py").exists())
    assert sorted(STAGE_ORDER) == stages, "a new stage folder needs its place in STAGE_ORDER"
    wrong = {str(path.relative_to(REPO)): modules for stage in STAGE_ORDER
             for path in sorted((REPO / "udfs" / stage).rglob("*.py"))
             if (modules := backward_imports(stage, path.read_text(encoding="utf-8")))}
    assert not wrong, f"imports against the stage order {STAGE_ORDER}: {wrong}"


def test_reading_the_table_registry_loads_no_stage_but_its_schemas():
    """A fetch worker that asks the registry for a table's columns imports each stage's schemas module, and with it
    the stage's package: those stay light (the replay simulator's pandas and scipy come only with the simulator)."""
    import subprocess
    import sys

    probe = ("import sys; from parascout.udfs.common import tables; tables.columns('docs'); tables.built_in_tables(); "
             "print(sorted(m for m in ('scipy', 'pandas', 'pyarrow', 'parascout.udfs.replay.graph') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
    from parascout.udfs.replay import build_graph, simulate  # the package's names still import, on first use

    assert callable(build_graph) and callable(simulate)
