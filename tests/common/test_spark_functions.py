"""udfs.common.spark_functions.bind: a Spark body with its settings fixed keeps the arity Spark reads off it."""
from __future__ import annotations

import inspect

from parascout.udfs.common.spark_functions import bind


def one_frame(batches, *, scale, offset=0):
    return [batch * scale + offset for batch in batches]


def two_frames(left, right, scale, offset=0):
    return (left + right) * scale + offset


def test_a_bound_body_takes_just_the_frames_and_the_settings_reach_it():
    mapped = bind(one_frame, scale=2)
    assert list(inspect.signature(mapped).parameters) == ["data"] and mapped([1, 2]) == [2, 4]
    cogrouped = bind(two_frames, scale=3, offset=1)
    assert len(inspect.signature(cogrouped).parameters) == 2 and cogrouped(1, 2) == 10  # a cogroup's two frames
    assert bind(two_frames, scale=1)(1, 1) == 2  # a setting left at its default is no frame
