"""How udfs.fetch.page_walk reads a parsed page, over selectolax's Node API.

page_walk runs on these functions as plain Python; compiled (`make walk`), it cimports tree_nodes.pxd instead: the
same functions over Lexbor's node structs. This is all that differs between the two walks. The readers are
operator.attrgetter's (C calls, no Python frame: the walk calls them once or twice a node).
"""
from __future__ import annotations

from operator import attrgetter

from selectolax.lexbor import LexborHTMLParser, LexborNode

#: the parser of a walk's nodes (python_node's second argument)
node_parser = attrgetter("parser")
first_child = attrgetter("child")
next_sibling = attrgetter("next")
parent = attrgetter("parent")
#: Lexbor's tag id (udfs.fetch.tag_rules.TEXT_NODE for text), and a text node's text
tag_id = attrgetter("tag_id")
text_of = attrgetter("text_content")


def top_node(top: LexborNode) -> LexborNode:
    """The node a walk starts from (a top-level node of udfs.fetch.html_text.parse_tops)."""
    return top


def python_node(node: LexborNode, parser: LexborHTMLParser) -> LexborNode:
    """The node as selectolax's Python object (its tag name and attributes)."""
    return node


def attributes(node: LexborNode, parser: LexborHTMLParser, image: bool) -> dict:
    """What the walk reads of an element's attributes (an image may read data-src)."""
    return node.attributes


def class_and_id(node: LexborNode, parser: LexborHTMLParser) -> tuple[str | None, str | None]:
    """An element's class and id attributes."""
    return node.attrs.get("class"), node.id
