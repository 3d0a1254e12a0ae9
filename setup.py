"""parascout: mine CommonCrawl for parallel (translated) web documents."""
from pathlib import Path

from setuptools import find_packages, setup

here = Path(__file__).parent


def requirements() -> list[str]:
    lines = (here / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


setup(
    name="parascout",
    version="0.1.0",
    description="Find parallel web documents in CommonCrawl archives with Spark and URL-only models",
    long_description=(here / "README.md").read_text(encoding="utf-8") if (here / "README.md").exists() else "",
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["jobs", "jobs.*", "udfs", "udfs.*"]) + ["conf"],
    package_data={"conf": ["*.yaml", "*/*.yaml"], "udfs": ["*.jar"]},  # the jar: `make jar`, never committed
    include_package_data=True,
    install_requires=requirements(),
    entry_points={"console_scripts": ["parascout=jobs.cli:main"]},
)
