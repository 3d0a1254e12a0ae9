"""Every table of two parascout roots compared row for row: the check that a refactoring left the outputs as they were.

    .venv/bin/python benchmarks/compare_roots.py ROOT_BEFORE ROOT_AFTER

Each table's current version is read whole (small roots: the demo's, a real-sites run), its rows compared as a
multiset with floats to 9 digits and timestamp-like columns left out; plain folders (bitext/, crawl-plan/) are compared
file by file (a TMX's creationdate, which differs between any two runs, left out). Exit 1 when anything differs.
"""
from __future__ import annotations

import gzip
import json
import math
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from parascout.udfs.common.table_layout import table_location

SKIP_COLUMNS = {"version", "fetched_at", "run_id", "seconds", "written_at", "created_at"}

def canon(value):
    """A value as plain JSON-able data: arrays as lists, floats rounded, NaN as None."""
    if isinstance(value, np.ndarray): return [canon(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)): return [canon(v) for v in value]
    if isinstance(value, dict): return {k: canon(v) for k, v in sorted(value.items())}
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else round(float(value), 9)
    if isinstance(value, (np.integer,)): return int(value)
    if isinstance(value, (np.bool_,)): return bool(value)
    if isinstance(value, (pd.Timestamp,)): return "ts"
    return value

def rows(location: str) -> tuple[list[str], Counter]:
    """(the columns compared, the rows as a multiset of canonical JSON lines)."""
    frame = pq.read_table(location).to_pandas()
    frame = frame[[c for c in sorted(frame.columns) if c not in SKIP_COLUMNS]]
    return list(frame.columns), Counter(json.dumps([canon(v) for v in row], default=str, sort_keys=True)
                                        for row in frame.itertuples(index=False, name=None))

def folder_files(root: str) -> dict[Path, bytes]:
    """The files of a plain folder by relative path; a TMX without its creationdate (the time it was written)."""
    def content(path: Path) -> bytes:
        data = path.read_bytes()
        if path.name.endswith(".tmx.gz"):
            data = re.sub(rb'creationdate="[^"]*"', b"", gzip.decompress(data))
        return data

    return {path.relative_to(root): content(path) for path in Path(root).rglob("*")
            if path.is_file() and not path.name.startswith("_")}


def main(before: str, after: str) -> int:
    names = sorted({p.name for p in Path(before).iterdir() if p.is_dir() and not p.name.startswith("_")}
                   | {p.name for p in Path(after).iterdir() if p.is_dir() and not p.name.startswith("_")})
    same = True
    for name in names:
        try:
            a, b = table_location(f"{before}/{name}"), table_location(f"{after}/{name}")
        except KeyError:  # a plain folder with a manifest of its own (bitext/, crawl-plan/): compare its files
            fa, fb = folder_files(f"{before}/{name}"), folder_files(f"{after}/{name}")
            differing = sorted(str(k) for k in set(fa) | set(fb) if fa.get(k) != fb.get(k))
            print(f"{name}/: {len(fa)} files before, {len(fb)} after, "
                  f"{'identical' if not differing else f'differ: {differing[:5]}'}")
            same &= not differing
            continue
        if not a and not b:
            continue
        if not a or not b:
            print(f"{name}: only in {'after' if b else 'before'}"); same = False; continue
        (ca, ra), (cb, rb) = rows(a), rows(b)
        if ca != cb:
            print(f"{name}: columns differ: -{sorted(set(ca)-set(cb))} +{sorted(set(cb)-set(ca))}"); same = False; continue
        diff = sum(((ra - rb) + (rb - ra)).values())
        total = sum(ra.values())
        print(f"{name}: {total} rows before, {sum(rb.values())} after, {'identical' if not diff else f'{diff} rows differ'}")
        same &= not diff
    print("ALL IDENTICAL" if same else "DIFFERENCES")
    return 0 if same else 1

if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
