# udfs.fetch.tree_nodes over Lexbor's node structs: what the compiled udfs.fetch.page_walk cimports. selectolax's .pxd
# gives LexborNode's layout, Lexbor's headers (selectolax's source package, same version) the structs'.
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport uintptr_t
from selectolax.lexbor cimport LexborHTMLParser, LexborNode, lexbor_str_t, lxb_dom_node_t

cdef extern from "lexbor/dom/interfaces/character_data.h":
    ctypedef struct walk_character_data "lxb_dom_character_data_t":
        lexbor_str_t data

ctypedef lxb_dom_node_t *Node

# the selectolax version the build read the structs of (the build defines it), and its Lexbor's
cdef extern from *:
    """
    #ifndef PARASCOUT_SELECTOLAX_VERSION
    #define PARASCOUT_SELECTOLAX_VERSION "unknown"
    #endif
    """
    const char *PARASCOUT_SELECTOLAX_VERSION

cdef extern from "lexbor/core/base.h":
    const char *LEXBOR_VERSION_STRING


cdef inline Node top_node(object top) noexcept:
    return (<LexborNode> top).node

cdef inline LexborHTMLParser node_parser(object top):
    return (<LexborNode> top).parser

cdef inline Node first_child(Node node) noexcept nogil:
    return node.first_child

cdef inline Node next_sibling(Node node) noexcept nogil:
    return node.next

cdef inline Node parent(Node node) noexcept nogil:
    return node.parent

cdef inline Py_ssize_t tag_id(Node node) noexcept nogil:
    return node.local_name

cdef inline object text_of(Node node):
    cdef lexbor_str_t *text = &(<walk_character_data *> node).data
    if text.data == NULL:
        return None
    return PyUnicode_DecodeUTF8(<char *> text.data, text.length, "replace")

cdef inline object python_node(Node node, LexborHTMLParser parser):
    return LexborNode.new(node, parser)


cdef extern from "lexbor/dom/interfaces/attr_const.h":
    cdef enum:
        LXB_DOM_ATTR_CLASS
        LXB_DOM_ATTR_ID
        LXB_DOM_ATTR_HREF
        LXB_DOM_ATTR_HREFLANG
        LXB_DOM_ATTR_LANG
        LXB_DOM_ATTR_TITLE
        LXB_DOM_ATTR_SRC
        LXB_DOM_ATTR_ALT
        LXB_DOM_ATTR_REL
        LXB_DOM_ATTR__LAST_ENTRY

cdef extern from "lexbor/dom/interfaces/attr.h":
    ctypedef struct walk_attr "lxb_dom_attr_t":
        lxb_dom_node_t node
        uintptr_t qualified_name
        lexbor_str_t *value
        walk_attr *next

cdef extern from "lexbor/dom/interfaces/element.h":
    ctypedef struct walk_element "lxb_dom_element_t":
        walk_attr *first_attr


cdef inline object attribute_value(walk_attr *attr):
    """An attribute's value as LexborNode.attributes decodes it (None when it has none)."""
    if attr.value == NULL or attr.value.data == NULL:
        return None
    return PyUnicode_DecodeUTF8(<char *> attr.value.data, attr.value.length, "replace")


cdef inline dict attributes(Node node, LexborHTMLParser parser, bint image):
    """The attributes the walk reads (href, hreflang, lang, title, src, alt, rel), as LexborNode.attributes has them
    (the last of a repeated one); LexborNode.attributes itself for an element with a prefixed attribute, or an image
    with an attribute outside Lexbor's static names (data-src)."""
    cdef walk_attr *attr = (<walk_element *> node).first_attr
    cdef dict found = {}
    cdef uintptr_t name
    while attr != NULL:
        name = attr.node.local_name
        if attr.qualified_name != 0 or image and name >= LXB_DOM_ATTR__LAST_ENTRY:
            return LexborNode.new(node, parser).attributes
        if name == LXB_DOM_ATTR_HREF:
            found["href"] = attribute_value(attr)
        elif name == LXB_DOM_ATTR_HREFLANG:
            found["hreflang"] = attribute_value(attr)
        elif name == LXB_DOM_ATTR_LANG:
            found["lang"] = attribute_value(attr)
        elif name == LXB_DOM_ATTR_TITLE:
            found["title"] = attribute_value(attr)
        elif name == LXB_DOM_ATTR_SRC:
            found["src"] = attribute_value(attr)
        elif name == LXB_DOM_ATTR_ALT:
            found["alt"] = attribute_value(attr)
        elif name == LXB_DOM_ATTR_REL:
            found["rel"] = attribute_value(attr)
        attr = attr.next
    return found


cdef inline tuple class_and_id(Node node, LexborHTMLParser parser):
    """The element's first class and id attributes; LexborNode's for an element with a prefixed attribute."""
    cdef walk_attr *attr = (<walk_element *> node).first_attr
    cdef walk_attr *class_attr = NULL
    cdef walk_attr *id_attr = NULL
    while attr != NULL:
        if attr.qualified_name != 0:
            python = LexborNode.new(node, parser)
            return python.attrs.get("class"), python.id
        if attr.node.local_name == LXB_DOM_ATTR_CLASS:
            if class_attr == NULL:
                class_attr = attr
        elif attr.node.local_name == LXB_DOM_ATTR_ID:
            if id_attr == NULL:
                id_attr = attr
        attr = attr.next
    return (attribute_value(class_attr) if class_attr != NULL else None,
            attribute_value(id_attr) if id_attr != NULL else None)
