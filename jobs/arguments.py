"""A job's arguments beyond argparse: --conf YAML files merged into argument defaults (a job's own section, its
stage configs included), and the checks that run before anything is written: no credentials in a URL, the input
paths there and outside the root's tables (which a write would replace)."""
from __future__ import annotations

import argparse
import dataclasses
import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from parascout.jobs.errors import ConfigError
from parascout.udfs.common import storage, table_layout
from parascout.udfs.common.redaction import redact, url_credentials
from parascout.udfs.common.stage_config import config_from_mapping, option_fields, range_text

if TYPE_CHECKING:
    from parascout.jobs.base import Job


def resolve_conf_path(path: str) -> str:
    """A --conf path as given, else the same file in the packaged conf/ (a cluster node has no checkout)."""
    if os.path.exists(path):
        return path
    packaged = resources.files("parascout.conf") / Path(path).name
    if packaged.exists():
        return str(packaged)
    raise ConfigError(f"--conf {path}: no such file (nor {packaged})")


def load_conf(paths: list[str]) -> dict:
    """The --conf files merged in order: a later file's keys win, its sections update the earlier ones'."""
    merged: dict[str, Any] = {}
    for path in paths:
        path = resolve_conf_path(path)
        with open(path, encoding="utf-8") as handle:
            loaded = yaml.safe_load(handle) or {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"--conf {path}: expected a mapping at the top level")
        for key, value in loaded.items():
            if isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
    return merged


def conf_defaults(conf: dict, parser: argparse.ArgumentParser, job_name: str,
                  stage_configs: dict[str, type]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(argument defaults, built stage configs) from a merged conf: its top-level keys the parser knows (a shared
    file names other jobs' options too), then the job's section, where an unknown key is a ConfigError."""
    known = {action.dest for action in parser._actions}
    defaults = {key.replace("-", "_"): value for key, value in conf.items()
                if key not in ("spark", "jobs") and not isinstance(value, dict) and key.replace("-", "_") in known}
    built = {}
    for key, value in (conf.get(job_name) or {}).items():
        if key in stage_configs:
            try:
                built[key] = config_from_mapping(stage_configs[key], value, f"--conf {job_name}.{key}")
            except (TypeError, ValueError) as error:
                raise ConfigError(str(error)) from None
            continue
        dest = key.replace("-", "_")
        if dest not in known:
            raise ConfigError(f"--conf: unknown key {key!r} in section {job_name!r}; "
                              f"known: {sorted([*(d for d in known if d != 'help'), *stage_configs])}")
        defaults[dest] = value
    return defaults, built


def knob_option_dest(key: str, name: str) -> str:
    return f"{key.replace('-', '_')}__{name}"


def add_knob_options(parser: argparse.ArgumentParser, stage_configs: tuple[tuple[str, type], ...]) -> None:
    """An option per stage-config field declared with option=True: `--image-max-share` sets `blocking`'s field of
    that name (over the --conf section's value); the field's help and default are the option's."""
    for key, config_class in stage_configs:
        defaults = config_class()
        for field in option_fields(config_class):
            default = getattr(defaults, field.name)
            bounds = range_text(field.metadata.get("range"))
            parser.add_argument(f"--{field.name.replace('_', '-')}", type=type(default), default=None,
                                dest=knob_option_dest(key, field.name), metavar=type(default).__name__.upper(),
                                help=f"{field.metadata['help']} (default: {default}{'; ' + bounds if bounds else ''}; "
                                     f"--conf {key}.{field.name})")


def set_stage_configs(args: argparse.Namespace, stage_configs: tuple[tuple[str, type], ...], built: dict) -> None:
    """Each stage config on `args` (`args.blocking`): the one `built` from --conf, else the defaults, with the values
    given as options; the options' own attributes removed, so a knob is recorded once, in its config."""
    for key, config_class in stage_configs:
        attribute = key.replace("-", "_")
        setattr(args, attribute, built.get(key) or config_class())
        for field in option_fields(config_class):
            value = vars(args).pop(knob_option_dest(key, field.name), None)
            if value is not None:
                try:
                    setattr(args, attribute, dataclasses.replace(getattr(args, attribute), **{field.name: value}))
                except ValueError as error:  # the config's own range check (__post_init__)
                    raise ConfigError(f"--{field.name.replace('_', '-')} {value}: {error}") from error


def refuse_url_credentials(args: argparse.Namespace) -> None:
    """ConfigError for an argument holding a URL with credentials: they would reach reports, logs and data."""
    for dest, values in vars(args).items():
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, str) and url_credentials(value):
                raise ConfigError(
                    f"--{dest.replace('_', '-')} {redact(value)}: credentials in a URL are refused (they would be "
                    "written to reports, logs and tables); pass them through the environment (AWS_ACCESS_KEY_ID / "
                    "AWS_SECRET_ACCESS_KEY), an AWS profile (AWS_PROFILE) or a --conf file's spark: section "
                    "(spark.hadoop.fs.s3a.access.key / secret.key)")


def check_input_paths(job: Job, args: argparse.Namespace) -> None:
    """Every file or directory named by the job's `input_paths` / `model_paths` exists, and nothing it reads
    (those and `input_prefixes`) lies inside a table folder of --root, which a write would replace, before
    anything is written (a model argument that may be a hub id, `org/name`, is left to the loader)."""
    missing, inside = [], []
    endpoint = getattr(args, "s3_endpoint", None)
    for option in (*job.input_paths, *job.model_paths, *job.input_prefixes):
        values = getattr(args, option, None)
        for value in values if isinstance(values, list) else [values]:
            if not value or value in job.path_keywords or (option in job.model_paths and _maybe_hub_id(value)):
                continue
            flag = f"--{option.replace('_', '-')} {redact(value)}"
            table_folder = root_table_containing(job, value)
            if table_folder:
                inside.append(f"{flag} lies inside {table_folder}")
            elif option not in job.input_prefixes and storage.scheme(value) not in storage.HTTP_SCHEMES \
                    and not storage.exists(value, endpoint):
                missing.append(flag)
    if inside:
        raise ConfigError(f"{job.name}: {'; '.join(inside)}, a table folder of --root that jobs replace: "
                          "put inputs outside the root's tables")
    if missing:
        raise ConfigError(f"{job.name}: no such file or directory: {', '.join(missing)} (relative paths are "
                          f"relative to {os.getcwd()})")


def root_table_containing(job: Job, path: str) -> str | None:
    """The folder under the job's --root holding `path` when it is one jobs write: the job's outputs, reports,
    locks, or any folder with a table manifest (None: outside them)."""
    if not getattr(job.args, "root", None):
        return None
    root, target = _comparable(job.args.root), _comparable(path)
    if not target.startswith(root.rstrip("/") + "/"):
        return None
    folder = target[len(root.rstrip("/")) + 1:].split("/", 1)[0]
    written = {*job.outputs, *job.unversioned_outputs, "_reports", "_locks", table_layout.STAGING}
    table_dir = storage.join(job.args.root, folder)
    if folder in written or storage.exists(storage.join(table_dir, table_layout.MANIFEST)):
        return table_dir
    return None


def _comparable(path: str) -> str:
    """A path in one spelling for prefix comparison: local paths absolute with symlinks resolved, s3a/s3n as s3."""
    if storage.is_local(path):
        return os.path.realpath(storage.local_path(path))
    kind = storage.scheme(path)
    return ("s3" + path[len(kind):] if kind in storage.S3_SCHEMES else path).rstrip("/")


def _maybe_hub_id(value: str) -> bool:
    """`xlm-roberta-base` or `org/name`: what from_pretrained may fetch from a hub rather than read from disk."""
    return "://" not in value and not value.startswith(("/", ".", "~")) and value.count("/") <= 1 \
        and not os.path.exists(value)
