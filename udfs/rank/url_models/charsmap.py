"""A SentencePiece `precompiled_charsmap` built from a per-character rewrite table.

`tokenizers.normalizers.Precompiled` reads SentencePiece's format: a little-endian u32
giving the byte size of a darts-clone double-array trie, the trie's u32 units, then the
replacement strings, each ending in NUL. A trie key is a character's UTF-8 bytes, its
value the byte offset of the replacement. Building one here lets a tokenizer whose
normaliser ships only as a table be saved and reloaded as a plain `tokenizer.json`.
"""
from __future__ import annotations

import struct

#: darts-clone unit bits: the byte label (8 bits), "has a leaf" flag, and the child offset from bit 10
_HAS_LEAF = 1 << 8
_OFFSET_SHIFT = 10
_MAX_OFFSET = 1 << 21
_VALUE_FLAG = 1 << 31


def precompiled_charsmap(rewrites: dict[str, str]) -> bytes:
    """The charsmap that replaces each key (one character) by its value ("" deletes it)."""
    replacements, offsets = bytearray(), {}
    keys = {}
    for char, replacement in sorted(rewrites.items()):
        if replacement not in offsets:
            offsets[replacement] = len(replacements)
            replacements += replacement.encode("utf-8") + b"\0"
        keys[char.encode("utf-8")] = offsets[replacement]
    units = double_array(keys)
    return struct.pack("<I", 4 * len(units)) + struct.pack(f"<{len(units)}I", *units) + bytes(replacements)


def double_array(keys: dict[bytes, int]) -> list[int]:
    """darts-clone units for `keys` (byte strings without NUL) mapping to values below 2**31."""
    root: dict = {}
    for key, value in keys.items():
        node = root
        for byte in key:
            node = node.setdefault(byte, {})
        node[None] = value
    units: list[int] = []
    used_bases: set[int] = set()
    queue, search_from = [(root, 0, 0)], 0
    _grow(units, 1)
    units[0] = _VALUE_FLAG  # the root's slot is taken; its unit is written when the root is placed
    while queue:
        node, position, label = queue.pop()
        labels = sorted(k for k in node if k is not None)
        slots = ([0] if None in node else []) + labels
        base, search_from = _free_base(units, used_bases, slots, search_from)
        offset = position ^ base
        if offset >= _MAX_OFFSET:
            raise ValueError("rewrite table too large for a darts-clone trie")
        units[position] = label | (_HAS_LEAF if None in node else 0) | (offset << _OFFSET_SHIFT)
        if None in node:
            units[base] = _VALUE_FLAG | node[None]
        for child_label in labels:
            units[base ^ child_label] = child_label  # reserved; completed when the child is placed
            queue.append((node[child_label], base ^ child_label, child_label))
    return units


def _free_base(units: list[int], used_bases: set[int], slots: list[int], search_from: int) -> tuple[int, int]:
    """The first unused base whose slots (base XOR label) are all free, and where the next search starts."""
    while search_from < len(units) and units[search_from] != 0:
        search_from += 1
    position = search_from
    while True:
        _grow(units, position + 256)
        if units[position] == 0:
            base = position ^ slots[0]
            if base and base not in used_bases and all(units[base ^ slot] == 0 for slot in slots):
                used_bases.add(base)
                return base, search_from
        position += 1


def _grow(units: list[int], size: int) -> None:
    if len(units) < size:
        units.extend([0] * (size - len(units)))
