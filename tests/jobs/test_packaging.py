"""The wheel installs ONE top-level package, parascout, that other packages cannot shadow."""
from __future__ import annotations

import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from a copy of the checkout (what git tracks or would add, plus the built jar), so the
    build leaves no build/ folder in the repository and a stale one cannot leak into the test."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, check=True,
                            capture_output=True, text=True).stdout.split()
    jar = REPO / "udfs" / "parascout-udfs.jar"
    for name in listed + ([str(jar.relative_to(REPO))] if jar.exists() else []):
        if (REPO / name).is_symlink():  # parascout/jobs -> ../jobs ...: a clone holds them as links
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).symlink_to((REPO / name).readlink())
        elif (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out),
                    str(source)], check=True, capture_output=True, cwd=out)
    return next(out.glob("parascout-*.whl"))


def test_wheel_has_one_top_level_package(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert len(names) == len(set(names)), "a file is packaged twice"
        top_level = next(n for n in names if n.endswith("top_level.txt"))
        assert archive.read(top_level).decode().split() == ["parascout"]
        entry_points = archive.read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "parascout = parascout.jobs.cli:main" in entry_points
    roots = {name.split("/")[0] for name in names if not name.startswith("parascout-")}
    assert roots == {"parascout"}
    for packaged in ("parascout/conf/languages.yaml", "parascout/conf/lss.yaml", "parascout/jobs/cli.py",
                     "parascout/udfs/rank/blocking/tokens.py", "parascout/udfs/replay/simulator.py"):
        assert packaged in names
    assert ("parascout/udfs/parascout-udfs.jar" in names) == (REPO / "udfs" / "parascout-udfs.jar").exists()
    assert not any(name.startswith(("tests/", "testkit/", "benchmarks/", "notebooks/")) for name in names)
    # the links parascout/jobs -> ../jobs ... add no second copy of a module
    assert not any(name.startswith(("parascout/parascout/", "parascout/jobs/jobs/")) for name in names)
    assert "parascout/udfs/html_walk.pyi" in names
    for bundled in ("eng.tsv.gz", "fra.tsv.gz", "LICENSE.md", "MANIFEST.tsv"):  # the demo's default page text
        assert f"parascout/conf/parallel-text/bible/{bundled}" in names


def test_installed_wheel_beside_a_conf_package(wheel, tmp_path):
    """A fresh environment with the wheel and another distribution's top-level `conf` (as PyPI's `conf`
    installs): parascout still reads its own configuration, and `jobs` / `udfs` are not importable."""
    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    site = next(env_dir.glob("lib/python*/site-packages"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True, capture_output=True)
    (site / "conf").mkdir()
    (site / "conf" / "__init__.py").write_text("FOREIGN = True\n")
    # the runtime dependencies (yaml, pandas ...) from this test's environment, without its editable parascout
    deps = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (site / "zz_deps.pth").write_text("\n".join(deps) + "\n")
    code = ("import conf, importlib.util, parascout.udfs.common.langs as langs\n"
            "assert conf.FOREIGN\n"
            "assert langs.load_languages()['isl'].iso639_1 == 'is'\n"
            f"assert str(langs.CONF_DIR).startswith({str(site)!r}), langs.CONF_DIR\n"
            "assert importlib.util.find_spec('jobs') is None and importlib.util.find_spec('udfs') is None\n"
            "import parascout.jobs.cli\n")
    python = env_dir / "bin" / "python"
    done = subprocess.run([str(python), "-c", code], check=False, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_missing_extra_is_named():
    from parascout.udfs.common.extras import missing_extra_message

    message = missing_extra_message(ModuleNotFoundError("No module named 'torch'", name="torch"))
    assert "parascout[models]" in message
    assert "parascout[plots]" in missing_extra_message(ModuleNotFoundError(name="matplotlib.pyplot"))
    assert "[" not in missing_extra_message(ModuleNotFoundError(name="yaml"))
