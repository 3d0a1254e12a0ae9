"""Python's cyclic garbage collector paused while a page is walked and its paragraphs classed (udfs.fetch.page_walk).

They make no reference cycles, so a collection during them (one every 700 new lists, dicts and tuples) finds
nothing and re-scans what they made: a quarter of the compiled walk's time. The pause is counted, so fetch-docs'
worker threads resume the collector only when the last of them is done, and only when it ran before.
"""
from __future__ import annotations

import gc
import threading

#: [walks and paragraph steps running, whether the cyclic collector ran before the first of them]
PAUSED = [0, False]
PAUSE_LOCK = threading.Lock()


def pause_collection() -> None:
    """Pause the cyclic collector until the matching resume_collection."""
    with PAUSE_LOCK:
        if not PAUSED[0]:
            PAUSED[1] = gc.isenabled()
            gc.disable()
        PAUSED[0] += 1


def resume_collection() -> None:
    with PAUSE_LOCK:
        PAUSED[0] -= 1
        if not PAUSED[0] and PAUSED[1]:
            gc.enable()
