"""Frozen dataclasses of a stage's tunable knobs (VerificationConfig, ReplayConfig, AlignmentConfig, BlockingConfig):
built from a job's `--conf` section, recorded in its report, listed in docs/configuration.md.

Each field is declared with `knob(default, help)`: its default and `metadata={"help": ...}`, why it exists. A mapping
with a key that is not a field is refused, naming the fields.
"""
from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def knob(default, help_text: str):
    """A config field: its default and one line saying what it decides and why."""
    return dataclasses.field(default=default, metadata={"help": help_text})


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


def config_rows(cls) -> list[tuple[str, Any, str]]:
    """(name, default, help) of each field, in declaration order."""
    defaults = cls()
    return [(field.name, getattr(defaults, field.name), field.metadata.get("help", ""))
            for field in dataclasses.fields(cls)]
