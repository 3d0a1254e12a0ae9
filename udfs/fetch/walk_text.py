"""The text udfs.fetch.page_walk keeps: the open block's text and the page's text runs for CLD2, a text node at a time.

Run as plain Python, a WalkText is two lists of strings; compiled (`make walk`), page_walk cimports walk_text.pxd
instead: the same functions over two C buffers, filled in one pass over a text node's UTF-8. The walk's rules (which
text counts, where a block ends) are page_walk's; these functions only keep the text.
"""
from __future__ import annotations

from parascout.udfs.common.language_id import page_cld2_input


class WalkText:
    """The open block's raw text runs (whitespace between them as ' ') and the page's whitespace-collapsed runs."""

    __slots__ = ("pieces", "runs")

    def __init__(self):
        self.pieces: list[str] = []
        self.runs: list[str] = []


def new_text() -> WalkText:
    return WalkText()


def free_text(text: WalkText) -> None:
    """Nothing to free in Python (compiled: the buffers)."""


def add_run(text: WalkText, data: str | None) -> int:
    """A text node's text added to the open block and the page: the length of its whitespace-collapsed run, 0 when it
    is empty or all whitespace (then only the space before the block's next run)."""
    if not data or data.isspace():  # most text nodes: the layout between two tags
        if text.pieces:
            text.pieces.append(" ")  # the space between two inline elements
        return 0
    run = " ".join(data.split())
    text.pieces.append(data)
    text.runs.append(run)
    return len(run)


def add_text(text: WalkText, node) -> int:
    """add_run of a text node (the walk's tree_nodes node)."""
    return add_run(text, node.text_content)


def add_utf8(text: WalkText, data: bytes) -> int:
    """add_run of a text node's UTF-8, decoded as the walk decodes it."""
    return add_run(text, data.decode("utf-8", "replace"))


def take_block(text: WalkText) -> str:
    """The open block's text, whitespace runs as one space (Page.add_block's text); the next run opens a new block."""
    block = " ".join("".join(text.pieces).split())
    text.pieces = []
    return block


def page_input(text: WalkText) -> tuple[bytes | None, int]:
    """page_cld2_input of the page's runs: (the page text's CLD2 input or None, the page text's length)."""
    return page_cld2_input(text.runs)
