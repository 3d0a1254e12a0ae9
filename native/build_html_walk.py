"""Build the optional compiled HTML walk into udfs/, like `make jar` builds the Java UDFs: udfs/fetch/page_walk.py (the
walk and paragraph step, run as plain Python otherwise) compiled by Cython as the extension udfs/html_walk, with
page_walk.pxd's C types and the C forms of its pieces (tree_nodes.pxd, walk_text.pxd, paragraph_text.pxd).

    .venv/bin/python native/build_html_walk.py [--work build/walk]

Needs a C compiler, Python's headers, the pinned Cython (constraints.txt; fetched into the work folder with
`pip install --target`, never into the virtualenv) and Lexbor's headers from selectolax's source package at the
version that is installed (`pip download --no-binary :all:`). Whatever is missing, it says what and exits 0:
udfs.fetch.html_text then runs page_walk as plain Python, which gives the same output ~2x slower. `--strict`
exits 1 instead (to check a build on purpose).
"""
from __future__ import annotations

import argparse
import importlib.metadata
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FETCH = ROOT / "udfs" / "fetch"
#: the module compiled, its C types, and the .pxd forms of the pieces it cimports
SOURCE, DECLARATIONS = FETCH / "page_walk.py", FETCH / "page_walk.pxd"
PIECES = tuple(FETCH / f"{name}.pxd" for name in ("tree_nodes", "walk_text", "paragraph_text"))
TARGET = ROOT / "udfs" / f"html_walk{sysconfig.get_config_var('EXT_SUFFIX')}"


class BuildSkipped(Exception):
    """Why the compiled walk was not built (the Python walk stays in use)."""


def pinned(name: str) -> str:
    """`name==version` as constraints.txt pins it."""
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.split("==")[0].strip().lower() == name.lower():
            return line.strip()
    raise BuildSkipped(f"constraints.txt pins no {name}")


def pip(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "-q", "--disable-pip-version-check", *args],
                          check=False, capture_output=True, text=True)
    if done.returncode:
        raise BuildSkipped(f"pip {' '.join(args)} failed: {(done.stderr or done.stdout).strip()[-400:]}")


def cython_path(work: Path) -> Path | None:
    """A folder to put on sys.path for the pinned Cython (None: the running Python already has it)."""
    requirement = pinned("Cython")
    try:
        import Cython
        if Cython.__version__ == requirement.split("==")[1]:
            return None
    except ImportError:
        pass
    folder = work / "cython"
    marker = folder / f"{requirement}.ok"
    if not marker.exists():
        shutil.rmtree(folder, ignore_errors=True)
        pip("install", "--no-deps", "--only-binary", ":all:", "--target", str(folder), requirement)
        marker.touch()
    return folder


def selectolax_sources(work: Path, version: str) -> Path:
    """The unpacked selectolax source package (its .pxd and Lexbor's headers) of the installed version."""
    unpacked = work / f"selectolax-{version}"
    if (unpacked / "lexbor" / "source" / "lexbor" / "core" / "base.h").exists():
        return unpacked
    download = work / "sdist"
    archive = download / f"selectolax-{version}.tar.gz"
    if not archive.exists():
        pip("download", "--no-deps", "--no-binary", ":all:", "--no-build-isolation", "-d", str(download),
            f"selectolax=={version}")
    with tarfile.open(archive) as tar:
        members = [member for member in tar.getmembers()
                   if member.isfile() and member.name.endswith((".h", ".pxd", "__init__.py", "PKG-INFO"))]
        tar.extractall(work, members=members, filter="data")
    if not (unpacked / "lexbor" / "source").is_dir():
        raise BuildSkipped(f"{archive.name} holds no lexbor/source headers")
    return unpacked


def up_to_date(version: str) -> bool:
    """Whether udfs/ already holds the extension, newer than its sources and built for this selectolax."""
    sources = (SOURCE, DECLARATIONS, *PIECES, Path(__file__), ROOT / "constraints.txt")
    if not TARGET.exists() or TARGET.stat().st_mtime < max(path.stat().st_mtime for path in sources):
        return False
    probe = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('html_walk', sys.argv[1]); "
             "walk = importlib.util.module_from_spec(spec); spec.loader.exec_module(walk); print(walk.SELECTOLAX_VERSION)")
    done = subprocess.run([sys.executable, "-c", probe, str(TARGET)], check=False, capture_output=True, text=True)
    return done.returncode == 0 and done.stdout.strip() == version


def build(work: Path) -> str:
    """Compile html_walk into udfs/ unless it is up to date; what was done."""
    if not (shutil.which(sysconfig.get_config_var("CC").split()[0] if sysconfig.get_config_var("CC") else "cc")):
        raise BuildSkipped("no C compiler (install gcc, e.g. 'sudo apt-get install build-essential')")
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").exists():
        raise BuildSkipped("no Python.h (install the Python development headers, e.g. python3-dev)")
    try:
        version = importlib.metadata.version("selectolax")
    except importlib.metadata.PackageNotFoundError as error:
        raise BuildSkipped("selectolax is not installed") from error
    if up_to_date(version):
        return f"{TARGET.relative_to(ROOT)} is up to date (selectolax {version})"
    work.mkdir(parents=True, exist_ok=True)
    sources = selectolax_sources(work, version)
    extra = cython_path(work)
    if extra is not None:
        sys.path.insert(0, str(extra))
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    if not re.fullmatch(r"[0-9A-Za-z.+-]+", version):
        raise BuildSkipped(f"unexpected selectolax version {version!r}")
    with tempfile.TemporaryDirectory(dir=work) as temporary:
        # the module's name is the extension's: page_walk.py and its .pxd copied as html_walk.py / .pxd; its cimports
        # (parascout.udfs.fetch.*) resolve through the checkout's parascout/ folder
        shutil.copyfile(SOURCE, Path(temporary) / "html_walk.py")
        shutil.copyfile(DECLARATIONS, Path(temporary) / "html_walk.pxd")
        extension = Extension(
            "html_walk", [str(Path(temporary) / "html_walk.py")], include_dirs=[str(sources / "lexbor" / "source")],
            define_macros=[("LEXBOR_STATIC", None), ("PARASCOUT_SELECTOLAX_VERSION", f'"{version}"')],
            extra_compile_args=["-O2", "-g0", "-Wno-unused-function"])
        directives = {"language_level": 3, "annotation_typing": False, "boundscheck": False, "wraparound": False}
        modules = cythonize([extension], include_path=[str(sources), str(ROOT)], build_dir=temporary, quiet=True,
                            compiler_directives=directives)
        command = build_ext(Distribution({"ext_modules": modules}))
        command.build_lib, command.build_temp = temporary, temporary
        command.ensure_finalized()
        command.run()
        built = next(Path(temporary).glob("html_walk*.so"), None) or next(Path(temporary).glob("html_walk*.pyd"))
        partial = TARGET.with_suffix(".partial")
        shutil.copyfile(built, partial)
        partial.replace(TARGET)  # atomic: a running import never sees half a file
    return f"built {TARGET.relative_to(ROOT)} (selectolax {version}, {pinned('Cython')})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "walk", help="downloads and build files")
    parser.add_argument("--strict", action="store_true", help="exit 1 when the extension cannot be built")
    args = parser.parse_args(argv)
    try:
        done = build(args.work.resolve())
    except (BuildSkipped, Exception) as error:  # noqa: BLE001 - any failure falls back, and says why
        print(f"{TARGET.relative_to(ROOT)} not built: {error}")
        print("udfs.fetch.html_text runs page_walk as plain Python (same output; the HTML stage ~2x slower).")
        return 1 if args.strict else 0
    print(done)
    return 0


if __name__ == "__main__":
    sys.exit(main())
