"""Frozen dataclasses of a stage's tunable knobs (VerificationConfig, ReplayConfig, AlignmentConfig, BlockingConfig):
built from a job's `--conf` section, recorded in its report, listed in docs/configuration.md.

Each field is declared with `knob(default, help)`: its default and `metadata={"help": ...}`, why it exists; a knob
people set per run is also a command-line option generated from the field (`knob(..., option=True)`). A mapping
with a key that is not a field is refused, naming the fields.
"""
from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def knob(default, help_text: str, option: bool = False):
    """A config field: its default and one line saying what it decides and why; `option`: the jobs that take the
    config also take it as a command-line option (`--image-max-share`), generated from the field."""
    return dataclasses.field(default=default, metadata={"help": help_text, "option": option})


def option_fields(cls) -> list[dataclasses.Field]:
    """The fields of `cls` a job offers as command-line options too."""
    return [field for field in dataclasses.fields(cls) if field.metadata.get("option")]


def config_from_mapping(cls: type[T], mapping: Any, where: str) -> T:
    """`cls` with the defaults replaced by `mapping`'s values; ValueError (one line, naming the valid keys) on an
    unknown key or a value of the wrong type; TypeError when `mapping` is not a mapping."""
    if mapping is None:
        return cls()
    if not isinstance(mapping, dict):
        raise TypeError(f"{where}: expected a mapping of {', '.join(field_names(cls))}, got {mapping!r}")
    names = field_names(cls)
    unknown = sorted(str(key) for key in mapping if key not in names)
    if unknown:
        raise ValueError(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
                         f"valid: {', '.join(names)}")
    defaults = cls()
    values = {}
    for key, value in mapping.items():
        default = getattr(defaults, key)
        if dataclasses.is_dataclass(default):  # a config of its own (CodeConfig): its section, checked the same way
            values[key] = value if isinstance(value, type(default)) else config_from_mapping(
                type(default), value, f"{where}.{key}")
            continue
        if isinstance(default, bool):
            ok = isinstance(value, bool)
        elif isinstance(default, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif isinstance(default, float):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            value = float(value) if ok else value
        else:
            ok = True
        if not ok:
            raise ValueError(f"{where}.{key}: expected {type(default).__name__} (default {default!r}), got {value!r}")
        values[key] = value
    return dataclasses.replace(defaults, **values)


def field_names(cls) -> list[str]:
    return [field.name for field in dataclasses.fields(cls)]


def nested_configs(cls) -> list[type]:
    """The config classes `cls`'s fields hold (CodeConfig inside VerificationConfig), depth first, each once."""
    found: list[type] = []
    for field in dataclasses.fields(cls):
        if dataclasses.is_dataclass(field.default):
            for nested in [type(field.default), *nested_configs(type(field.default))]:
                if nested not in found:
                    found.append(nested)
    return found


def config_rows(cls) -> list[tuple[str, Any, str]]:
    """(name, default, help) of each field, in declaration order."""
    defaults = cls()
    return [(field.name, getattr(defaults, field.name), field.metadata.get("help", ""))
            for field in dataclasses.fields(cls)]
