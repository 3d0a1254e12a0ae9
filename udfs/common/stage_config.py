"""Frozen dataclasses of a stage's tunable knobs (ExtractionConfig, BlockingConfig, LexiconConfig, VerificationConfig,
AlignmentConfig, ReplayConfig and the sections they hold): built from a job's `--conf` section, recorded in its
report, listed in docs/configuration.md.

Each field is declared with `knob(default, help, low=..., high=...)`: its default, the values it may take and
`metadata={"help": ...}`, why it exists; a knob people set per run is also a command-line option generated from the
field (`knob(..., option=True)`). A config class derives from `StageConfig`, which refuses a value out of its range
however the config is made (--conf, an option, Python). A mapping with a key that is not a field is refused, naming
the fields.
"""
from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def knob(default, help_text: str, option: bool = False, low: float | None = None, high: float | None = None,
         above: float | None = None):
    """A config field: its default and one line saying what it decides and why; the values it may take (`low` and
    `high` inclusive, `above` an exclusive lower bound; none for a text or a nested config); `option`: the jobs that
    take the config also take it as a command-line option (`--image-max-share`), generated from the field."""
    if dataclasses.is_dataclass(default) or isinstance(default, str):
        bounds = None
    else:
        bounds = (low, high, above)
        if not in_range(default, bounds):
            raise ValueError(f"a knob's default {default!r} is outside its own range {range_text(bounds)}")
    return dataclasses.field(default=default, metadata={"help": help_text, "option": option, "range": bounds})


def in_range(value, bounds: tuple | None) -> bool:
    if bounds is None:
        return True
    low, high, above = bounds
    return (low is None or value >= low) and (high is None or value <= high) and (above is None or value > above)


def range_text(bounds: tuple | None) -> str:
    """A knob's range as docs/configuration.md and the options' help show it: `[0, 1]`, `(0, 1]`, `>= 1`, `> 0`."""
    if bounds is None:
        return ""
    low, high, above = bounds
    if high is None:
        return f">= {low}" if low is not None else f"> {above}" if above is not None else "any"
    if low is None and above is None:
        return f"<= {high}"
    return f"[{low}, {high}]" if low is not None else f"({above}, {high}]"


@dataclasses.dataclass(frozen=True)
class StageConfig:
    """The base of a stage's config dataclass: a field set outside its knob's range is a ValueError naming the
    field, its value and the range (a subclass with checks of its own calls super().__post_init__() first)."""

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if not in_range(value, field.metadata.get("range")):
                raise ValueError(f"{type(self).__name__}.{field.name} must be {range_text(field.metadata['range'])}, "
                                 f"got {value!r}")


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
    try:
        return dataclasses.replace(defaults, **values)
    except ValueError as error:  # a value outside its knob's range
        raise ValueError(f"{where}: {error}") from None


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


def config_rows(cls) -> list[tuple[str, Any, str, str]]:
    """(name, default, range, help) of each field, in declaration order."""
    defaults = cls()
    return [(field.name, getattr(defaults, field.name), range_text(field.metadata.get("range")),
             field.metadata.get("help", "")) for field in dataclasses.fields(cls)]
