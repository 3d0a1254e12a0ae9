"""CommonCrawl CDX lines and ZipNum collections (cdx-NNNNN.gz + cluster.idx).

A CDX line is `SURT TIMESTAMP {json}`; all JSON values are strings. A ZipNum
collection is a set of `cdx-NNNNN.gz` files made of independent gzip members of
up to 3,000 lines each, plus `cluster.idx` with one line per member:
`SURT TIMESTAMP<TAB>cdx-NNNNN.gz<TAB>offset<TAB>length<TAB>seq`.
"""
from __future__ import annotations

import gzip
import json
import os
from typing import Iterable

ZIPNUM_BLOCK_LINES = 3000
CDX_FIELD_ORDER = ("url", "mime", "mime-detected", "status", "digest", "length", "offset",
                   "filename", "charset", "languages", "redirect", "truncated")


def format_cdx_line(surt_key: str, timestamp: str, fields: dict) -> str:
    """One CDX line as CommonCrawl writes it (string values, CommonCrawl's key order)."""
    ordered = {k: str(fields[k]) for k in CDX_FIELD_ORDER if fields.get(k) not in (None, "")}
    ordered.update({k: str(v) for k, v in fields.items() if k not in ordered and v not in (None, "")})
    return f"{surt_key} {timestamp} {json.dumps(ordered, ensure_ascii=False)}"


def write_zipnum(lines: Iterable[str], out_dir: str, block_lines: int = ZIPNUM_BLOCK_LINES,
                 lines_per_file: int = 3_000_000) -> dict:
    """Write sorted CDX lines as a ZipNum collection; returns {files, blocks, lines}."""
    os.makedirs(out_dir, exist_ok=True)
    cluster_entries: list[str] = []
    file_index, offset, seq, total = 0, 0, 0, 0
    handle = None
    block: list[str] = []
    lines_in_file = 0

    def flush() -> None:
        nonlocal offset, seq
        if not block:
            return
        member = gzip.compress(("\n".join(block) + "\n").encode("utf-8"), compresslevel=6, mtime=0)
        handle.write(member)
        first_key = " ".join(block[0].split(" ", 2)[:2])
        cluster_entries.append(f"{first_key}\tcdx-{file_index:05d}.gz\t{offset}\t{len(member)}\t{seq}")
        offset += len(member)
        seq += 1
        block.clear()

    for line in lines:
        if handle is None or lines_in_file >= lines_per_file:
            flush()
            if handle is not None:
                handle.close()
                file_index += 1
            handle = open(os.path.join(out_dir, f"cdx-{file_index:05d}.gz"), "wb")
            offset, lines_in_file = 0, 0
        block.append(line.rstrip("\n"))
        lines_in_file += 1
        total += 1
        if len(block) >= block_lines:
            flush()
    if handle is not None:
        flush()
        handle.close()
    with open(os.path.join(out_dir, "cluster.idx"), "w", encoding="utf-8") as index:
        index.write("".join(entry + "\n" for entry in cluster_entries))
    return {"files": file_index + (1 if handle is not None else 0), "blocks": len(cluster_entries), "lines": total}
