"""The Python functions Spark runs for parascout (mapInPandas, applyInPandas and cogroup bodies), their settings bound.

Spark reads a body's arity (one frame, or grouping keys and a frame; two frames for a cogroup) and its type hints; a
`functools.partial` hides both, and PySpark warns that it cannot infer the body's kind. `bind` gives a plain function
of just the frames.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable

POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def bind(function: Callable, **settings) -> Callable:
    """`function` with keyword `settings` fixed, as a plain function of the arguments left: one (a frame or an
    iterator of frames) or two (a cogroup's frames)."""
    free = [parameter for parameter in inspect.signature(function).parameters.values()
            if parameter.kind in POSITIONAL and parameter.name not in settings and parameter.default is parameter.empty]
    if len(free) == 2:
        def bound_pair(left, right):
            return function(left, right, **settings)

        return bound_pair

    def bound(data):
        return function(data, **settings)

    return bound
