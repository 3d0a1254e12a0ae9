"""parascout: find parallel (translated) web documents in CommonCrawl archives.

One installed package: `parascout.jobs` (Spark jobs, the `parascout` command),
`parascout.udfs` (pure per-record / per-batch functions and their pandas UDFs) and
`parascout.conf` (YAML data). In a source checkout the three live in the top-level
folders jobs/, udfs/ and conf/; setup.py maps them under this package for an install,
and the links parascout/jobs, parascout/udfs and parascout/conf (to ../jobs ...) let
tools that read imports without running code (pyright, IDEs) resolve them without one.
"""
__version__ = "0.2.0"
