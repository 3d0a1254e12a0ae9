"""Every `parascout.*` import in the repository resolves for a tool that reads code without running it (pyright,
an IDE): pyright runs on a clean copy of the tracked files, with no parascout installed and no site-packages, so
only the checkout itself (parascout/jobs, parascout/udfs and parascout/conf are links to the top-level folders)
can resolve them."""
from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROBE = "_static_import_probe.py"
MISSING = "parascout.udfs._no_such_module"  # a control: the check must report this one
pytestmark = pytest.mark.slow


def project_imports(source: str) -> list[str]:
    """Each `parascout` import in a module's source as one statement per imported name (lazy imports included)."""
    statements = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            statements += [f"import {alias.name}" for alias in node.names if alias.name.split(".")[0] == "parascout"]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "parascout":
            statements += [f"from {node.module} import {alias.name}" for alias in node.names]
    return statements


def clean_copy(target: Path) -> list[str]:
    """The files git tracks or would add (links kept as links), as a fresh clone with local edits holds them."""
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO, check=True,
                           capture_output=True).stdout.decode().split("\0")
    names = [name for name in names if name and ((REPO / name).is_symlink() or (REPO / name).is_file())]
    for name in names:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        if (REPO / name).is_symlink():
            (target / name).symlink_to((REPO / name).readlink())
        else:
            shutil.copy2(REPO / name, target / name)
    return names


def test_project_imports_parse():
    assert project_imports("import parascout.udfs.common.urls as u\nfrom parascout.jobs.report import JobReport, UnknownReason\n"
                           "def f():\n    from parascout.udfs import tables\nimport pandas\nfrom . import x\n") == [
        "import parascout.udfs.common.urls", "from parascout.jobs.report import JobReport",
        "from parascout.jobs.report import UnknownReason",
        "from parascout.udfs import tables"]


def test_pyright_resolves_every_project_import(tmp_path):
    pytest.importorskip("pyright", reason="pyright (requirements-dev.txt) is not installed")
    if shutil.which("node") is None:
        pytest.skip("pyright needs Node.js on PATH (without it the wrapper would download one)")
    checkout = tmp_path / "checkout"
    names = clean_copy(checkout)
    # where each distinct import statement is written, so a failure names the source lines
    written: dict[str, list[str]] = {}
    for name in names:
        if name.endswith(".py") and not (REPO / name).is_symlink():
            source = (REPO / name).read_text(encoding="utf-8")
            for statement in project_imports(source):
                written.setdefault(statement, []).append(name)
    assert len(written) > 100, "too few project imports found: the scan is broken"
    statements = sorted(written) + [f"import {MISSING}"]
    # one file of import statements checked instead of every module: pyright resolves absolute imports from the
    # project root for both, and checking only this file keeps the run to seconds
    (checkout / PROBE).write_text("".join(f"{line}  # noqa\n" for line in statements), encoding="utf-8")
    (checkout / "pyrightconfig.json").write_text(json.dumps({
        "include": [PROBE], "typeCheckingMode": "off",
        "reportMissingImports": "error", "reportAttributeAccessIssue": "error"}))
    empty_env = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(empty_env)  # no site-packages: an installed parascout cannot answer
    done = subprocess.run([sys.executable, "-m", "pyright", "--outputjson", "--pythonpath",
                           str(empty_env / "bin" / "python")], check=False, cwd=checkout, capture_output=True, text=True,
                          timeout=600)
    diagnostics = json.loads(done.stdout)["generalDiagnostics"]
    unresolved = {statements[d["range"]["start"]["line"]]: d["message"] for d in diagnostics
                  if d["severity"] == "error" and d["file"].endswith(PROBE)}
    assert f"import {MISSING}" in unresolved, f"the control import was not reported: {done.stdout[-2000:]}"
    del unresolved[f"import {MISSING}"]
    assert not unresolved, "\n".join(f"{statement} (in {', '.join(written[statement])}): {message}"
                                     for statement, message in unresolved.items())
