"""`parascout <job> ...`: one entry point for every job in this package.

Jobs are discovered: every module in jobs/ that defines a `Job` subclass with a
`name` is a command, so adding a job needs no edit here.
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import sys

import parascout.jobs as job_package
from parascout.jobs.base import Job
from parascout.jobs.errors import ConfigError, JobFailed
from parascout.jobs.pipeline import pipeline_order
from parascout.jobs.spark_session import spark_properties
from parascout.udfs.common import table_layout
from parascout.udfs.common.extras import missing_extra_message

#: the framework's modules, not commands
SKIP_MODULES = {"arguments", "base", "cli", "errors", "fingerprints", "language_pairs", "pipeline", "report",
                "spark_session", "table_inputs", "training_job", "writer_lock"}
#: job module -> why it cannot be imported here (a missing optional dependency names its extra)
UNAVAILABLE: dict[str, str] = {}


def discover() -> dict[str, type[Job]]:
    """Job name -> Job class, for every job module in the package."""
    found: dict[str, type[Job]] = {}
    for module_info in pkgutil.iter_modules(job_package.__path__):
        if module_info.name in SKIP_MODULES or module_info.name.startswith("_"):
            continue
        try:
            module = importlib.import_module(f"parascout.jobs.{module_info.name}")
        except ImportError as error:  # a job whose optional dependency is missing stays listed as broken
            reason = missing_extra_message(error) if isinstance(error, ModuleNotFoundError) else str(error)
            UNAVAILABLE[module_info.name] = reason
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Job) and cls is not Job and cls.__module__ == module.__name__ and cls.name != "job":
                found[cls.name] = cls
    return dict(sorted(found.items()))


def load_job(name: str) -> type[Job] | None:
    """The job called `name`, importing only its own module (jobs/<name with _>.py), so `parascout <job> --help`
    does not pay for every other job's imports; None when that module defines no such job."""
    try:
        module = importlib.import_module(f"parascout.jobs.{name.replace('-', '_')}")
    except ImportError:
        return None
    found = [cls for _, cls in inspect.getmembers(module, inspect.isclass)
             if issubclass(cls, Job) and cls is not Job and cls.__module__ == module.__name__ and cls.name == name]
    return found[0] if found else None


class HelpFormatter(argparse.HelpFormatter):
    """Help that says each option's default (when it has one) and which options are required."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.required:
            return f"{text} (required)".strip()
        default = action.default
        if "%(default)" in text or default in (None, False, argparse.SUPPRESS) or default == [] or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)".strip()


def print_help(job_class: type[Job]) -> None:
    parser = job_class().build_parser()
    parser.formatter_class = HelpFormatter
    parser.print_help()


def usage(registry: dict[str, type[Job]]) -> str:
    width = max((len(n) for n in registry), default=10)
    lines = ["usage: parascout <job> [--help] [arguments]", "", "jobs, in the pipeline's order:"]
    lines += [f"  {name.ljust(width)}  {registry[name].description}" for name in pipeline_order(registry)]
    lines += [f"  {module.replace('_', '-').ljust(width)}  (unavailable: {why})" for module, why in UNAVAILABLE.items()]
    lines += ["", "tools:", "  spark-properties CONF.yaml  print the conf's `spark:` section as a spark-submit --properties-file",
              "  table-location ROOT/TABLE   print the folder of the table's current version (for other tools)"]
    lines += ["", "Each job is also `spark-submit jobs/<job_module>.py ...`; `parascout <job> --help` shows its arguments."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage(discover()))
        return 0
    job_class = load_job(argv[0])
    if job_class is not None and any(word in ("-h", "--help") for word in argv[1:]):
        print_help(job_class)
        return 0
    registry = {argv[0]: job_class} if job_class is not None else discover()
    name, rest = argv[0], argv[1:]
    if name == "spark-properties" and len(rest) == 1:
        print(spark_properties(rest[0]), end="")
        return 0
    if name == "table-location" and len(rest) == 1:
        location = table_layout.table_location(rest[0])
        print(location or f"parascout: no complete table at {rest[0]}", file=sys.stdout if location else sys.stderr)
        return 0 if location else 1
    if name not in registry:
        module = name.replace("-", "_")
        if module in UNAVAILABLE:
            print(f"parascout {name}: {UNAVAILABLE[module]}", file=sys.stderr)
            return 2
        print(f"parascout: unknown job {name!r}\n\n{usage(registry)}", file=sys.stderr)
        return 2
    try:
        registry[name]().run(rest)
    except (ConfigError, ValueError) as error:
        print(f"parascout {name}: {error}", file=sys.stderr)
        return 2
    except JobFailed as error:
        print(f"parascout {name}: FAILED: {error}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as error:
        print(f"parascout {name}: {missing_extra_message(error)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
