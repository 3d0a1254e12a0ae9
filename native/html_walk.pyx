# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""udfs.fetch.html_text.walk_page and page_paragraphs and udfs.common.language_id.cld2_input compiled: the same pass
over a Lexbor tree, reading Lexbor's node structs directly, the same paragraph step, and the same bytes for CLD2.

An optional accelerator (`make walk`): udfs.fetch.html_text uses it only when it was built against the running
selectolax version and agrees with the Python functions on the probes of udfs.fetch.compiled_walk; the Python ones
are the reference, and tests/test_html_walk.py pins the two together on real CommonCrawl and sample-archive pages.
What is rare or Python-shaped stays in Python through the same calls the Python walk makes: a tag met for the first
time (`_tag_entry`), attribute dicts of <meta> and of elements with prefixed or (images) unusual attributes
(`LexborNode.attributes`), link resolution (udfs.common.urls' `_resolve_link`, cached, behind a memo here), link cues
(`link_cue`, `code_language`), image names (urls' `_image_file_name`, cached), <meta>, <base>, <html> and frames
(`Page.element_attributes`), block languages (CLD2). Anchors' links, cues and link budget, images, alternate <link>s,
text blocks and the paragraph step's classes and hashes (BLAKE2b, as hashlib's) follow `Page.link`,
`Page.close_anchor`, `Page.image`, `Page.element_attributes`, `Page.add_block` and `page_paragraphs` here. Nothing here
calls Lexbor or links to selectolax's library: selectolax's own .pxd gives LexborNode's layout, Lexbor's headers (from
selectolax's source package, same version) the structs'.
"""
from cpython.ref cimport PyObject
from cpython.unicode cimport (
    Py_UNICODE_ISALNUM,
    PyUnicode_4BYTE_KIND,
    PyUnicode_DATA,
    PyUnicode_DecodeASCII,
    PyUnicode_DecodeUTF8,
    PyUnicode_FromKindAndData,
    PyUnicode_KIND,
    PyUnicode_READ,
)
from libc.stdint cimport uintptr_t
from libc.stdlib cimport free, malloc, realloc
from selectolax.lexbor cimport LexborHTMLParser, LexborNode, lexbor_str_t, lxb_dom_node_t


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

cdef extern from "lexbor/dom/interfaces/character_data.h":
    ctypedef struct walk_character_data "lxb_dom_character_data_t":
        lexbor_str_t data

cdef extern from "lexbor/core/base.h":
    const char *LEXBOR_VERSION_STRING

cdef extern from *:
    """
    #ifndef PARASCOUT_SELECTOLAX_VERSION
    #define PARASCOUT_SELECTOLAX_VERSION "unknown"
    #endif
    """
    const char *PARASCOUT_SELECTOLAX_VERSION

#: the selectolax (and bundled Lexbor) versions whose struct layouts this module was compiled against
SELECTOLAX_VERSION = PARASCOUT_SELECTOLAX_VERSION.decode("ascii")
LEXBOR_VERSION = LEXBOR_VERSION_STRING.decode("ascii")

DEF MAX_STATIC_TAG_ID = 1024
DEF TEXT_NODE = 2
DEF FIRST_ELEMENT_ID = 6
DEF CHUNK_TOKEN_COUNT = 4096

# the flags of udfs.fetch.html_text (set by configure, checked against the values below)
DEF BLOCK = 1
DEF HEADING = 2
DEF LIST_ITEM = 4
DEF ATTRIBUTED = 8
DEF SKIPPED = 16
DEF TITLE = 32
DEF FURNITURE = 64
DEF HINTED = 128
DEF ANCHOR = 256
DEF IMAGE = 512

cdef object _resolve_link = None
cdef object _image_file_name = None
cdef object _code_language = None
cdef Py_ssize_t _max_images = 0
cdef object _link_cue = None
cdef Py_ssize_t _max_cue_text_chars = 0
cdef object _tag_entry = None
cdef object _hinted = None
cdef object _is_boilerplate_hint = None
cdef tuple _chunk_tokens = ()
#: tag id -> the (start token, end token, flags, name) entry of udfs.fetch.html_text, and its flags, as met
cdef list _entries = [None] * MAX_STATIC_TAG_ID
cdef int _flags[MAX_STATIC_TAG_ID]


#: the attributes of an <a> that udfs.fetch.html_text reads (Page.link, Page.close_anchor), in the order read here
ANCHOR_ATTRIBUTES = ("href", "hreflang", "lang", "title")


def configure(tag_entry, hinted, is_boilerplate_hint, chunk_tokens, flags: dict, anchor_attributes: tuple,
              resolve_link, link_cue, max_cue_text_chars: int, image_file_name, code_language,
              max_images: int) -> None:
    """Hand over udfs.fetch.html_text's helpers (no import back: html_text imports this module)."""
    global _tag_entry, _hinted, _is_boilerplate_hint, _chunk_tokens, _entries, _resolve_link, _link_cue
    global _max_cue_text_chars, _image_file_name, _code_language, _max_images
    _resolve_link, _link_cue, _max_cue_text_chars = resolve_link, link_cue, max_cue_text_chars
    _image_file_name, _code_language, _max_images = image_file_name, code_language, max_images
    expected = {"BLOCK": BLOCK, "HEADING": HEADING, "LIST_ITEM": LIST_ITEM, "ATTRIBUTED": ATTRIBUTED,
                "SKIPPED": SKIPPED, "TITLE": TITLE, "FURNITURE": FURNITURE, "HINTED": HINTED, "ANCHOR": ANCHOR,
                "IMAGE": IMAGE, "TEXT_NODE": TEXT_NODE, "FIRST_ELEMENT_ID": FIRST_ELEMENT_ID,
                "MAX_STATIC_TAG_ID": MAX_STATIC_TAG_ID}
    if flags != expected:
        raise ValueError(f"udfs.fetch.html_text's flags {flags} are not the ones this module was built with {expected}")
    if anchor_attributes != ANCHOR_ATTRIBUTES:
        raise ValueError(f"udfs.fetch.html_text reads {anchor_attributes} of an anchor, this module gives {ANCHOR_ATTRIBUTES}")
    if len(chunk_tokens) != CHUNK_TOKEN_COUNT:
        raise ValueError(f"{len(chunk_tokens)} chunk tokens, not {CHUNK_TOKEN_COUNT}")
    _tag_entry, _hinted, _is_boilerplate_hint, _chunk_tokens = tag_entry, hinted, is_boilerplate_hint, chunk_tokens
    _entries = [None] * MAX_STATIC_TAG_ID


cdef struct Frame:
    lxb_dom_node_t *node
    PyObject *end_token  # NULL for a void element; borrowed from an entry that _entries or `held` keeps
    int flags
    bint region


cdef inline bint ascii_space(const unsigned char *data, size_t length) noexcept nogil:
    """Whether every byte is ASCII whitespace as str.isspace() sees it (true for no bytes)."""
    cdef size_t i
    cdef unsigned char c
    for i in range(length):
        c = data[i]
        if not (c == 32 or 9 <= c <= 13 or 28 <= c <= 31):
            return False
    return True


cdef extern from *:
    """
    /* str.isspace() of one character (Py_UNICODE_ISSPACE), its non-ASCII cases spelled out: the table call was ~8%
       of the walk on real pages; tests/test_html_walk.py checks every code point */
    static inline int walk_is_space(Py_UCS4 c) {
        if (c < 128) return c == 32 || (9 <= c && c <= 13) || (28 <= c && c <= 31);
        if (c < 0x1680) return c == 0x85 || c == 0xa0;
        return c == 0x1680 || (0x2000 <= c && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f
               || c == 0x205f || c == 0x3000;
    }
    /* one code point (not a surrogate) appended to the UTF-8 in out at out[length] */
    #define WALK_PUT_UTF8(out, length, c) do { \\
        if ((c) < 0x80) (out)[(length)++] = (c); \\
        else if ((c) < 0x800) { (out)[(length)++] = 0xc0 | ((c) >> 6); (out)[(length)++] = 0x80 | ((c) & 0x3f); } \\
        else if ((c) < 0x10000) { (out)[(length)++] = 0xe0 | ((c) >> 12); \\
            (out)[(length)++] = 0x80 | (((c) >> 6) & 0x3f); (out)[(length)++] = 0x80 | ((c) & 0x3f); } \\
        else { (out)[(length)++] = 0xf0 | ((c) >> 18); (out)[(length)++] = 0x80 | (((c) >> 12) & 0x3f); \\
            (out)[(length)++] = 0x80 | (((c) >> 6) & 0x3f); (out)[(length)++] = 0x80 | ((c) & 0x3f); } \\
    } while (0)
    #define WALK_COLLAPSED(TYPE) { \\
        const TYPE *text = (const TYPE *) data; \\
        int after_space = 1; \\
        Py_ssize_t i; \\
        for (i = 0; i < size; i++) { \\
            Py_UCS4 c = text[i]; \\
            if (c == 32) { if (after_space) return 0; after_space = 1; } \\
            else if (c < 128 ? (9 <= c && c <= 13) || (28 <= c && c <= 31) : walk_is_space(c)) return 0; \\
            else after_space = 0; \\
        } \\
        return !after_space || size == 0; }
    #define WALK_COLLAPSE(TYPE) { \\
        const TYPE *text = (const TYPE *) data; \\
        TYPE *out = (TYPE *) buffer; \\
        int gap = 0; \\
        Py_ssize_t i; \\
        for (i = 0; i < size; i++) { \\
            Py_UCS4 c = text[i]; \\
            if (walk_is_space(c)) gap = 1; \\
            else { if (gap && kept) out[kept++] = 32; gap = 0; out[kept++] = c; } \\
        } \\
        return kept; }
    /* " ".join(text.split()) written into buffer (size characters of the text's kind): its length */
    static Py_ssize_t walk_collapse(int kind, const void *data, Py_ssize_t size, void *buffer) {
        Py_ssize_t kept = 0;
        if (kind == PyUnicode_1BYTE_KIND) WALK_COLLAPSE(Py_UCS1)
        if (kind == PyUnicode_2BYTE_KIND) WALK_COLLAPSE(Py_UCS2)
        WALK_COLLAPSE(Py_UCS4)
    }
    #define WALK_ALL_SPACE(TYPE) { \\
        const TYPE *text = (const TYPE *) data; \\
        Py_ssize_t i; \\
        for (i = 0; i < size; i++) if (!walk_is_space(text[i])) return 0; \\
        return 1; }
    /* str.isspace() of a non-empty text */
    static int walk_all_space(int kind, const void *data, Py_ssize_t size) {
        if (kind == PyUnicode_1BYTE_KIND) WALK_ALL_SPACE(Py_UCS1)
        if (kind == PyUnicode_2BYTE_KIND) WALK_ALL_SPACE(Py_UCS2)
        WALK_ALL_SPACE(Py_UCS4)
    }
    /* whether " ".join(text.split()) == text: no whitespace but single ' ' between other characters */
    static int walk_collapsed(int kind, const void *data, Py_ssize_t size) {
        if (kind == PyUnicode_1BYTE_KIND) WALK_COLLAPSED(Py_UCS1)
        if (kind == PyUnicode_2BYTE_KIND) WALK_COLLAPSED(Py_UCS2)
        WALK_COLLAPSED(Py_UCS4)
    }
    """
    bint is_space "walk_is_space"(Py_UCS4 character) noexcept nogil
    bint walk_collapsed(int kind, const void *data, Py_ssize_t size) noexcept nogil
    Py_ssize_t walk_collapse(int kind, const void *data, Py_ssize_t size, void *buffer) noexcept nogil
    bint walk_all_space(int kind, const void *data, Py_ssize_t size) noexcept nogil


cdef extern from *:
    """
    /* the walk's text (see Text) */
    typedef struct {
        unsigned char *block, *page;
        Py_ssize_t block_length, page_length, runs, characters;
        int gap, blank;
    } walk_text_t;
    #define WALK_KEEP(LENGTH, UNSAFE) { \
        if (gap && (content || kept)) { block[b++] = 32; if (kept) { page[p++] = 32; kept++; } } \
        gap = 0; \
        memcpy(block + b, s + i, LENGTH); b += LENGTH; \
        if (UNSAFE) page[p++] = 32; else { memcpy(page + p, s + i, LENGTH); p += LENGTH; blank = 0; } \
        kept++; i += LENGTH; }
    /* One text node's UTF-8 (n bytes) added to the open block and to the page's CLD2 input, in one pass: its
       whitespace runs (str.split's) collapsed to one ' ' between two kept characters, and one before the first when
       the block holds text and whitespace came before (t->gap); the run, after a ' ' when it is not the page's first,
       with the characters CLD2 cannot take (language_id.CLD2_UNSAFE) as spaces. The buffers hold n + 1 more bytes.
       The characters of the collapsed run (0 when the text is all whitespace: nothing added), or -1 at the first
       ill-formed sequence CPython's strict decoder rejects (overlong, surrogate, past U+10FFFF, cut short), with
       nothing added. */
    static Py_ssize_t walk_text_add(walk_text_t *t, const unsigned char *s, Py_ssize_t n) {
        unsigned char *block = t->block + t->block_length, *page = t->page + t->page_length;
        Py_ssize_t b = 0, p = t->runs > 0, kept = 0, i = 0;
        int gap = t->gap, content = t->block_length > 0, blank = t->blank;
        page[0] = 32;
        while (i < n) {
            unsigned int c = s[i], c1, c2, c3;
            Py_UCS4 code;
            Py_ssize_t start = i, characters = 0;
            while (i < n) {  /* a run copied as it is: no whitespace but single ' ', nothing CLD2 cannot take */
                c = s[i];
                if (c - 0x21u < 0x5eu) { i++; characters++; continue; }
                if (c == 32 && i > start && i + 1 < n && s[i + 1] - 0x21u < 0x5eu) {  /* one ' ' between two */
                    i += 2; characters += 2; continue;
                }
                if (c < 0xc2) break;
                if (c < 0xe0) {
                    if (i + 1 >= n || (s[i + 1] & 0xc0) != 0x80 || (c == 0xc2 && s[i + 1] <= 0xa0)) break;
                    i += 2; characters++; continue;
                }
                if (c < 0xf0) {
                    if (i + 2 >= n) break;
                    c1 = s[i + 1]; c2 = s[i + 2];
                    if ((c1 & 0xc0) != 0x80 || (c2 & 0xc0) != 0x80 || (c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0))
                        break;
                    code = ((c & 0x0f) << 12) | ((c1 & 0x3f) << 6) | (c2 & 0x3f);
                    if (code >= 0xfffe || ((c == 0xe1 || c == 0xe2 || c == 0xe3) && walk_is_space(code))) break;
                    i += 3; characters++; continue;
                }
                if (c < 0xf5) {
                    if (i + 3 >= n) break;
                    c1 = s[i + 1]; c2 = s[i + 2]; c3 = s[i + 3];
                    if ((c1 & 0xc0) != 0x80 || (c2 & 0xc0) != 0x80 || (c3 & 0xc0) != 0x80 || (c == 0xf0 && c1 < 0x90)
                            || (c == 0xf4 && c1 >= 0x90))
                        break;
                    i += 4; characters++; continue;
                }
                break;
            }
            if (characters) {
                if (gap && (content || kept)) { block[b++] = 32; if (kept) { page[p++] = 32; kept++; } }
                gap = 0;
                memcpy(block + b, s + start, i - start);
                memcpy(page + p, s + start, i - start);
                b += i - start; p += i - start; kept += characters;
                blank = 0;
                if (i >= n) break;
                c = s[i];
            }
            if (c < 0x80) {
                if (c == 32 || (9 <= c && c <= 13) || (28 <= c && c <= 31)) { gap = 1; i++; continue; }
                WALK_KEEP(1, c < 32 || c == 0x7f)
                continue;
            }
            if (c < 0xc2) return -1;
            if (c < 0xe0) {
                if (i + 1 >= n || (s[i + 1] & 0xc0) != 0x80) return -1;
                code = ((c & 0x1f) << 6) | (s[i + 1] & 0x3f);
                if (code == 0x85 || code == 0xa0) { gap = 1; i += 2; continue; }
                WALK_KEEP(2, code <= 0x9f)
                continue;
            }
            if (c < 0xf0) {
                if (i + 2 >= n) return -1;
                c1 = s[i + 1]; c2 = s[i + 2];
                if ((c1 & 0xc0) != 0x80 || (c2 & 0xc0) != 0x80 || (c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0))
                    return -1;
                code = ((c & 0x0f) << 12) | ((c1 & 0x3f) << 6) | (c2 & 0x3f);
                if (walk_is_space(code)) { gap = 1; i += 3; continue; }
                WALK_KEEP(3, code == 0xfffe || code == 0xffff)
                continue;
            }
            if (c < 0xf5) {
                if (i + 3 >= n) return -1;
                c1 = s[i + 1]; c2 = s[i + 2]; c3 = s[i + 3];
                if ((c1 & 0xc0) != 0x80 || (c2 & 0xc0) != 0x80 || (c3 & 0xc0) != 0x80 || (c == 0xf0 && c1 < 0x90)
                        || (c == 0xf4 && c1 >= 0x90))
                    return -1;
                WALK_KEEP(4, 0)
                continue;
            }
            return -1;
        }
        if (!kept) {
            t->gap = 1;
            return 0;
        }
        t->block_length += b;
        t->page_length += p;
        t->gap = gap;
        t->blank = blank;
        t->runs++;
        t->characters += kept;
        return kept;
    }
    """
    ctypedef struct walk_text_t:
        unsigned char *block
        unsigned char *page
        Py_ssize_t block_length, page_length, runs, characters
        int gap, blank
    Py_ssize_t walk_text_add(walk_text_t *text, const unsigned char *data, Py_ssize_t size) noexcept nogil


cdef str collapse_spaces(str text):
    """" ".join(text.split()): runs of whitespace (str.split's, is_space) as one space, none at the ends."""
    cdef Py_ssize_t size = len(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef void *buffer
    if walk_collapsed(kind, data, size):  # most text runs: nothing to do
        return text
    buffer = malloc(size * kind)
    if buffer == NULL:
        raise MemoryError()
    try:
        return PyUnicode_FromKindAndData(kind, buffer, walk_collapse(kind, data, size, buffer))
    finally:
        free(buffer)


def collapse_whitespace(str text) -> str:
    """collapse_spaces, for the tests: " ".join(text.split())."""
    return collapse_spaces(text)


cdef inline object attribute_value(walk_attr *attr):
    """An attribute's value as LexborNode.attributes decodes it (None when it has none)."""
    if attr.value == NULL or attr.value.data == NULL:
        return None
    return PyUnicode_DecodeUTF8(<char *> attr.value.data, attr.value.length, "replace")


#: class attribute -> _is_boilerplate_hint(class, None) of an element with no id (most): a memo in front of that
#: function's lru_cache (a str key, not a tuple), cleared when it holds MAX_CLASS_HINTS classes
cdef dict _class_hints = {}
DEF MAX_CLASS_HINTS = 16384


cdef bint hinted(lxb_dom_node_t *node, LexborHTMLParser parser) except -1:
    """html_text._hinted: whether the element's class or id names page furniture. Reads the first `class` and
    `id` attributes from the struct; an element with a prefixed attribute asks the Python function."""
    cdef walk_attr *attr = (<walk_element *> node).first_attr
    cdef walk_attr *class_attr = NULL
    cdef walk_attr *id_attr = NULL
    while attr != NULL:
        if attr.qualified_name != 0:
            return bool(_hinted(LexborNode.new(node, parser)))
        if attr.node.local_name == LXB_DOM_ATTR_CLASS:
            if class_attr == NULL:
                class_attr = attr
        elif attr.node.local_name == LXB_DOM_ATTR_ID:
            if id_attr == NULL:
                id_attr = attr
        attr = attr.next
    if class_attr == NULL and id_attr == NULL:
        return False
    class_name = attribute_value(class_attr) if class_attr != NULL else None
    element_id = attribute_value(id_attr) if id_attr != NULL else None
    if class_name is None and element_id is None:
        return False
    if element_id is not None:
        return bool(_is_boilerplate_hint(class_name, element_id))
    found = _class_hints.get(class_name)
    if found is None:
        found = bool(_is_boilerplate_hint(class_name, None))
        if len(_class_hints) >= MAX_CLASS_HINTS:
            _class_hints.clear()
        _class_hints[class_name] = found
    return found


cdef list new_anchor(lxb_dom_node_t *node, LexborHTMLParser parser, page, Budget budget, list links):
    """An open <a>: [its link (Page.link of its href), hreflang, lang, title, text parts, first image (src, alt)], the
    attributes as LexborNode.attributes has them (the last of a repeated one); an element with a prefixed attribute
    reads LexborNode.attributes itself."""
    cdef walk_attr *attr = (<walk_element *> node).first_attr
    cdef walk_attr *found[4]
    cdef uintptr_t name
    found[0] = found[1] = found[2] = found[3] = NULL
    while attr != NULL:
        if attr.qualified_name != 0:
            attributes = LexborNode.new(node, parser).attributes
            return [anchor_link(page, budget, links, attributes.get("href")), attributes.get("hreflang"), attributes.get("lang"),
                    attributes.get("title"), [], None]
        name = attr.node.local_name
        if name == LXB_DOM_ATTR_HREF:
            found[0] = attr
        elif name == LXB_DOM_ATTR_HREFLANG:
            found[1] = attr
        elif name == LXB_DOM_ATTR_LANG:
            found[2] = attr
        elif name == LXB_DOM_ATTR_TITLE:
            found[3] = attr
        attr = attr.next
    return [anchor_link(page, budget, links, attribute_value(found[0]) if found[0] != NULL else None),
            attribute_value(found[1]) if found[1] != NULL else None,
            attribute_value(found[2]) if found[2] != NULL else None,
            attribute_value(found[3]) if found[3] != NULL else None, [], None]


cdef dict element_attributes(lxb_dom_node_t *node, LexborHTMLParser parser, bint image):
    """What html_text reads of an <img>, <link>, <base>, <html>, <area>, <frame> or <iframe> (src, alt, href, rel,
    hreflang, lang) as LexborNode.attributes has them; the element's LexborNode.attributes itself when it has a
    prefixed attribute, or, for an image (which may read data-src), an attribute outside Lexbor's static names."""
    cdef walk_attr *attr = (<walk_element *> node).first_attr
    cdef dict attributes = {}
    cdef uintptr_t name
    while attr != NULL:
        name = attr.node.local_name
        if attr.qualified_name != 0 or image and name >= LXB_DOM_ATTR__LAST_ENTRY:
            return LexborNode.new(node, parser).attributes
        if name == LXB_DOM_ATTR_SRC:
            attributes["src"] = attribute_value(attr)
        elif name == LXB_DOM_ATTR_ALT:
            attributes["alt"] = attribute_value(attr)
        elif name == LXB_DOM_ATTR_HREF:
            attributes["href"] = attribute_value(attr)
        elif name == LXB_DOM_ATTR_REL:
            attributes["rel"] = attribute_value(attr)
        elif name == LXB_DOM_ATTR_HREFLANG:
            attributes["hreflang"] = attribute_value(attr)
        elif name == LXB_DOM_ATTR_LANG:
            attributes["lang"] = attribute_value(attr)
        attr = attr.next
    return attributes


cdef class Budget:
    """The page's LinkBudget (udfs.fetch.warc_record) kept in C during a walk: read at its start, written back before any
    Python code that may admit a link runs (Page.element_attributes) and at its end."""
    cdef object budget
    cdef Py_ssize_t max_links, max_link_chars, max_total_chars, kept, chars, cut
    cdef bint changed  # since the last read or write

    def __init__(self, budget):
        self.budget = budget
        self.max_links, self.max_link_chars = budget.max_links, budget.max_link_chars
        self.max_total_chars = budget.max_total_chars
        self.read()

    cdef read(self):
        self.kept, self.chars, self.cut = self.budget.kept, self.budget.chars, self.budget.cut
        self.changed = False

    cdef write(self):
        if self.changed:
            self.budget.kept, self.budget.chars, self.budget.cut = self.kept, self.chars, self.cut
            self.changed = False

    cdef bint admit(self, str link) noexcept:
        """LinkBudget.admit: whether the link fits; one that does not is counted in `cut`."""
        cdef Py_ssize_t size = len(link)
        self.changed = True
        if size > self.max_link_chars or self.kept >= self.max_links or self.chars + size > self.max_total_chars:
            self.cut += 1
            return False
        self.kept += 1
        self.chars += size
        return True


DEF MAX_MEMO_ANSWERS = 65536


cdef class Memo:
    """Answers of a pure two-argument function cached by lru_cache, kept as base -> {target -> answer}: two str-keyed
    look-ups instead of lru_cache's tuple key (~0.5 us a link); cleared when it holds MAX_MEMO_ANSWERS answers."""
    cdef dict answers
    cdef Py_ssize_t count

    def __init__(self):
        self.answers, self.count = {}, 0

    cdef object call(self, function, str base, str target):
        """function(base, target), remembered."""
        targets = self.answers.get(base)
        if targets is None:
            targets = self.answers[base] = {}
        found = (<dict> targets).get(target, self)
        if found is self:
            found = function(base, target)
            if self.count >= MAX_MEMO_ANSWERS:
                self.answers.clear()
                self.count = 0
                targets = self.answers[base] = {}
            (<dict> targets)[target] = found
            self.count += 1
        return found


#: _image_file_name's and _resolve_link's answers (image names, links)
cdef Memo _image_memo = Memo()
cdef Memo _link_memo = Memo()


cdef add_image(page, list images, dict attributes):
    """Page.image: an image's file name (urls.image_file_name's narrowing and its cached _image_file_name),
    kept while the page has fewer than MAX_IMAGES."""
    src = attributes.get("src") or attributes.get("data-src")
    if not src or (<str> src).strip().lower().startswith("data:"):
        return
    cdef str target = (<str> src).strip()
    absolute = target.startswith("/") or target[:8].lower().startswith(("http://", "https://"))
    name = _image_memo.call(_image_file_name, "" if absolute else page.base_url or "", target)
    if name and len(images) < _max_images:
        images.append(name)


#: hreflang -> code_language(hreflang): a memo in front of its lru_cache
cdef dict _hreflang_languages = {}


cdef alternate_link(page, Budget budget, list links, dict link_cues, dict attributes):
    """Page.element_attributes of a <link>: an alternate version's link (Page.link) and the language its hreflang
    names."""
    if "alternate" not in (attributes.get("rel") or "").lower():
        return
    hreflang = attributes.get("hreflang")
    cue = _hreflang_languages.get(hreflang, _hreflang_languages)
    if cue is _hreflang_languages:
        cue = _code_language(hreflang)
        if len(_hreflang_languages) >= MAX_MEMO_ANSWERS:
            _hreflang_languages.clear()
        _hreflang_languages[hreflang] = cue
    url = anchor_link(page, budget, links, attributes.get("href"))
    if url is not None and cue:
        link_cues.setdefault(url, cue)


cdef inline bint starts_with_ascii(str text, const char *prefix, Py_ssize_t length) noexcept:
    """Whether text starts with the lower-case ASCII prefix, ASCII letters compared case-insensitively: as
    text[:8].lower().startswith(prefix) for "http://" / "https://" (no non-ASCII character lower-cases to a string
    starting with h, t, p, s, ':' or '/'; tests/test_html_walk.py checks every code point)."""
    cdef Py_ssize_t i
    cdef unsigned int character
    if len(text) < length:
        return False
    for i in range(length):
        character = PyUnicode_READ(PyUnicode_KIND(text), PyUnicode_DATA(text), i)
        if 65 <= character <= 90:
            character += 32
        if character != <unsigned char> prefix[i]:
            return False
    return True


cdef object anchor_link(page, Budget budget, list links, object href):
    """Page.link(href) of an <a> (no cue): urls.resolve_link's base narrowing, its cached _resolve_link, the
    page's link budget; the URL kept, or None."""
    if not href:
        return None
    cdef str target = <str> href
    cdef Py_ssize_t size = len(target)
    if is_space(PyUnicode_READ(PyUnicode_KIND(target), PyUnicode_DATA(target), 0)) or \
            is_space(PyUnicode_READ(PyUnicode_KIND(target), PyUnicode_DATA(target), size - 1)):
        target = target.strip()
    cdef str base = page.base_url or ""
    cdef Py_ssize_t start, end
    if starts_with_ascii(target, "/", 1) and not starts_with_ascii(target, "//", 2):
        start = base.find("://")
        end = base.find("/", start + 3) if start > 0 else -1
        if end > 0:
            base = base[:end]
    elif starts_with_ascii(target, "http://", 7) or starts_with_ascii(target, "https://", 8):
        base = ""
    resolved = _link_memo.call(_resolve_link, base, target)
    if resolved and budget.admit((<tuple> resolved)[0]):
        links.append(resolved)
        return (<tuple> resolved)[0]
    return None


#: anchor text -> the language link_cue finds in it when the anchor has no other context (no hreflang, lang,
#: title or image): most anchors; a memo in front of link_cue's own cache, cleared when it grows past MAX_TEXT_CUES
cdef dict _text_cues = {}
DEF MAX_TEXT_CUES = 65536


cdef object text_cue(str text):
    """link_cue(text)'s language, or None."""
    cdef object found = _text_cues.get(text, _text_cues)
    if found is _text_cues:
        cue = _link_cue(text)
        found = cue.lang if cue else None
        if len(_text_cues) >= MAX_TEXT_CUES:
            _text_cues.clear()
        _text_cues[text] = found
    return found


cdef close_anchor(dict link_cues, list anchor):
    """Page.close_anchor: the language an <a>'s context names (its text, hreflang / lang / title, or its first
    image's alt text and file name when it has no text) for the link it made (an anchor as new_anchor made it)."""
    url = anchor[0]
    if url is None:
        return
    cdef str text = "".join(<list> anchor[4])
    image_src = image_alt = None
    if anchor[5] is not None and not text.strip():
        image_src, image_alt = anchor[5]
    hreflang, lang, title = anchor[1], anchor[2], anchor[3]
    if not (hreflang or lang or title or image_src or image_alt):  # link_cue then reads the text alone
        found = text_cue(text[:_max_cue_text_chars]) if text else None
        if found:
            link_cues.setdefault(url, found)
        return
    cue = _link_cue(text[:_max_cue_text_chars], hreflang=hreflang, lang=lang, title=title, image_alt=image_alt,
                    image=image_src)
    if cue:
        link_cues.setdefault(url, cue.lang)


cdef class Blocks:
    """Page.add_block's state and rule, kept in C during a walk and written back to the Page at its end."""
    cdef list blocks
    cdef Py_ssize_t block_count, kept_chars, max_text_chars
    cdef bint text_truncated

    def __init__(self, page, Py_ssize_t max_text_chars):
        self.blocks = page.blocks
        self.block_count, self.kept_chars, self.text_truncated = page.block_count, page.kept_chars, page.text_truncated
        self.max_text_chars = max_text_chars

    cdef add(self, str text, str kind, Py_ssize_t link_chars, bint region):
        """Page.add_block: counted always, kept while the kept text stays within max_text_chars (cut there); the text
        is Page.add_block's " ".join("".join(raw runs).split()), written by Text."""
        cdef Py_ssize_t room = self.max_text_chars - self.kept_chars
        self.block_count += 1
        if len(text) > room:
            self.text_truncated = True
            text = text[:max(room, 0)].rstrip()
            if not text:
                return
        self.kept_chars += len(text) + 1
        self.blocks.append((text, kind, min(link_chars, len(text)), region))

    cdef write(self, page):
        page.block_count, page.kept_chars, page.text_truncated = self.block_count, self.kept_chars, self.text_truncated


cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object, Py_ssize_t *) except NULL

DEF FIRST_TEXT_SIZE = 4096


cdef class Text:
    """The walk's text, in C buffers (walk_text_add): the open block's text, UTF-8 (its text runs whitespace-collapsed,
    a ' ' between two where the raw text had whitespace: Page.add_block's " ".join("".join(raw runs).split())),
    made a str once a block, and the page's CLD2 input (page_cld2_input of the collapsed runs)."""
    cdef walk_text_t text
    cdef Py_ssize_t block_size, page_size  # the buffers' capacities

    def __cinit__(self):
        self.text.block = <unsigned char *> malloc(FIRST_TEXT_SIZE)
        self.text.page = <unsigned char *> malloc(FIRST_TEXT_SIZE)
        if self.text.block == NULL or self.text.page == NULL:
            raise MemoryError()
        self.block_size = self.page_size = FIRST_TEXT_SIZE
        self.text.blank = True

    def __dealloc__(self):
        free(self.text.block)
        free(self.text.page)

    cdef Py_ssize_t add(self, const unsigned char *data, Py_ssize_t size) except -1:
        """A text node's UTF-8 added to the block and the page, whitespace-collapsed, decoded as
        PyUnicode_DecodeUTF8(data, size, "replace") decodes it: the length of its run (0 when it is all whitespace:
        nothing added)."""
        cdef Py_ssize_t run
        if self.text.block_length + size + 1 > self.block_size:
            self.block_size = 2 * (self.text.block_length + size + 1)
            self.text.block = <unsigned char *> grown(self.text.block, self.block_size)
        if self.text.page_length + size + 1 > self.page_size:
            self.page_size = 2 * (self.text.page_length + size + 1)
            self.text.page = <unsigned char *> grown(self.text.page, self.page_size)
        run = walk_text_add(&self.text, data, size)
        if run < 0:  # ill-formed UTF-8
            return self.add_str(PyUnicode_DecodeUTF8(<const char *> data, size, "replace"))
        return run

    cdef Py_ssize_t add_str(self, str data) except -1:
        """add() of a text node's text as "replace" decoded its ill-formed UTF-8 (well-formed: no surrogates)."""
        cdef Py_ssize_t size
        cdef const char *utf8 = PyUnicode_AsUTF8AndSize(data, &size)
        return self.add(<const unsigned char *> utf8, size)

    cdef str take_block(self):
        """The open block's text; the next run starts a new block."""
        text = PyUnicode_DecodeUTF8(<const char *> self.text.block, self.text.block_length, NULL)
        self.text.block_length = 0
        return text

    cdef tuple page_input(self):
        """page_cld2_input of the page's text runs: (the page text's CLD2 input or None, the page text's length)."""
        return ((None if self.text.blank else
                 PyBytes_FromStringAndSize(<const char *> self.text.page, self.text.page_length)),
                self.text.characters + max(self.text.runs - 1, 0))


cdef void *grown(void *buffer, size_t size) except NULL:
    """realloc, or MemoryError."""
    cdef void *larger = realloc(buffer, size)
    if larger == NULL:
        raise MemoryError()
    return larger


def text_runs(list runs) -> tuple:
    """Text.add of each UTF-8 run in turn, for the tests: (the block's text, the page's CLD2 input and length, each
    run's length)."""
    cdef Text text = Text()
    cdef bytes run
    sizes = [text.add(<const unsigned char *> (<char *> run), len(run)) for run in runs]
    return text.take_block(), text.page_input(), sizes


def walk_page(list tops, page, Py_ssize_t max_text_chars) -> None:
    """udfs.fetch.html_text.walk_page over the same trees, with the same effects on `page`."""
    if _tag_entry is None:
        raise RuntimeError("html_walk.configure() was not called")
    if not tops:
        return
    cdef LexborHTMLParser parser = (<LexborNode> tops[0]).parser
    cdef list structure = page.structure
    cdef list title_parts = page.title_parts
    page_element_attributes = page.element_attributes
    cdef list images = page.images
    cdef list links = page.links
    cdef dict link_cues = page.link_cues
    cdef Budget budget = Budget(page.link_budget)
    cdef Blocks blocks = Blocks(page, max_text_chars)
    cdef list entries = _entries
    cdef tuple chunk_tokens = _chunk_tokens
    cdef list held = []  # entries of tags with per-document ids (not cached): alive while their frames are
    cdef Text page_text = Text()
    cdef list anchors = []
    cdef Py_ssize_t piece_links = 0, size
    cdef bint opening
    cdef str piece_type = "text"
    cdef bint piece_region = False
    cdef int skip = 0, titles = 0, headings = 0, items = 0, regions = 0
    cdef Py_ssize_t depth = 0, capacity = 256
    cdef Frame *stack = <Frame *> malloc(capacity * sizeof(Frame))
    cdef Frame *grown
    cdef lxb_dom_node_t *node
    cdef lxb_dom_node_t *following
    cdef lexbor_str_t *text_data
    cdef uintptr_t tag_id
    cdef bint is_element = False, region = False
    cdef int flags = 0
    cdef PyObject *end_token = NULL
    cdef object entry, data
    if stack == NULL:
        raise MemoryError()
    try:
        for top in tops:
            node = (<LexborNode> top).node
            while node != NULL:
                tag_id = node.local_name
                if tag_id == TEXT_NODE:
                    is_element = False
                    text_data = &(<walk_character_data *> node).data
                    opening = page_text.text.block_length == 0
                    size = 0
                    if titles or anchors:  # they keep the raw text
                        if text_data.data == NULL:
                            data = None
                        else:
                            data = PyUnicode_DecodeUTF8(<char *> text_data.data, text_data.length, "replace")
                        if titles:
                            title_parts.append(data)
                        for anchor in anchors:
                            (<list> (<list> anchor)[4]).append(data)
                        if skip:
                            pass
                        elif data is None:
                            page_text.text.gap = True
                        else:
                            size = page_text.add(text_data.data, text_data.length)
                    elif skip:
                        pass
                    elif text_data.data == NULL or ascii_space(text_data.data, text_data.length):
                        page_text.text.gap = True  # the space between two inline elements (when the block has text)
                    else:
                        size = page_text.add(text_data.data, text_data.length)
                    if size:
                        structure.append(chunk_tokens[size] if size < CHUNK_TOKEN_COUNT else f"[Chunk:{size}]")
                        if opening:
                            piece_type = "heading" if headings else "list_item" if items else "text"
                            piece_region = regions > 0
                        if anchors:
                            piece_links += size
                elif tag_id < FIRST_ELEMENT_ID:  # a comment, doctype or document node
                    is_element = False
                else:
                    is_element = True
                    if tag_id < MAX_STATIC_TAG_ID and entries[tag_id] is not None:
                        entry = entries[tag_id]
                        flags = _flags[tag_id]
                    else:
                        entry = _tag_entry(LexborNode.new(node, parser))
                        flags = entry[2]
                        if tag_id < MAX_STATIC_TAG_ID:
                            entries[tag_id] = entry
                            _flags[tag_id] = flags
                        else:
                            held.append(entry)
                    structure.append((<tuple> entry)[0])
                    end_token = NULL if (<tuple> entry)[1] is None else <PyObject *> (<tuple> entry)[1]
                    region = False
                    if flags:
                        if flags & BLOCK:
                            if page_text.text.block_length:
                                blocks.add(page_text.take_block(), piece_type, piece_links, piece_region)
                                piece_links = 0
                            if flags & HEADING:
                                headings += 1
                            elif flags & LIST_ITEM:
                                items += 1
                        if flags & ANCHOR:
                            anchors.append(new_anchor(node, parser, page, budget, links))
                        elif flags & ATTRIBUTED:
                            if flags & IMAGE:
                                attributes = element_attributes(node, parser, True)
                                add_image(page, images, attributes)
                                for anchor in anchors:
                                    if (<list> anchor)[5] is None:
                                        (<list> anchor)[5] = (attributes.get("src"), attributes.get("alt"))
                            elif (<tuple> entry)[3] == "link":
                                alternate_link(page, budget, links, link_cues,
                                               element_attributes(node, parser, False))
                            else:  # may admit a link (Page.link): the budget is handed over and back
                                name = (<tuple> entry)[3]
                                attributes = (LexborNode.new(node, parser).attributes if name == "meta"
                                              else element_attributes(node, parser, False))
                                budget.write()
                                page_element_attributes(name, attributes)
                                budget.read()
                        if flags & SKIPPED:
                            skip += 1
                            if flags & TITLE:
                                titles += 1
                        if flags & FURNITURE or flags & HINTED and hinted(node, parser):
                            region = True
                            regions += 1
                    if node.first_child != NULL:
                        if depth == capacity:
                            capacity *= 2
                            grown = <Frame *> realloc(stack, capacity * sizeof(Frame))
                            if grown == NULL:
                                raise MemoryError()
                            stack = grown
                        stack[depth].node = node
                        stack[depth].end_token = end_token
                        stack[depth].flags = flags
                        stack[depth].region = region
                        depth += 1
                        node = node.first_child
                        continue
                # leave this node, then every ancestor whose last child it was
                while True:
                    if is_element:
                        if region:
                            regions -= 1
                        if end_token != NULL:  # not a void element
                            structure.append(<object> end_token)
                            if flags:
                                if flags & BLOCK:
                                    if page_text.text.block_length:
                                        blocks.add(page_text.take_block(), piece_type, piece_links, piece_region)
                                        piece_links = 0
                                    if flags & HEADING:
                                        headings -= 1
                                    elif flags & LIST_ITEM:
                                        items -= 1
                                elif flags & ANCHOR:
                                    close_anchor(link_cues, anchors.pop())
                                if flags & SKIPPED:
                                    skip -= 1
                                    if flags & TITLE:
                                        titles -= 1
                    following = node.next if depth else NULL
                    if following != NULL or not depth:
                        node = following
                        break
                    depth -= 1
                    node = stack[depth].node
                    end_token = stack[depth].end_token
                    flags = stack[depth].flags
                    region = stack[depth].region
                    is_element = True
        if page_text.text.block_length:
            blocks.add(page_text.take_block(), piece_type, piece_links, piece_region)
        blocks.write(page)
        page.text_input = page_text.page_input()
        budget.write()
    finally:
        free(stack)


def paragraph_keys(str folded) -> list:
    """udfs.fetch.html_text.paragraph_keys: each newline-separated text with every run of characters that are not word
    characters (re's \\w: alphanumeric, or '_', which counts as a break here) as one space, stripped."""
    cdef Py_ssize_t size = len(folded), index, length = 0
    cdef int kind = PyUnicode_KIND(folded)
    cdef void *data = PyUnicode_DATA(folded)
    cdef Py_UCS4 character
    cdef bint gap = False
    cdef list keys = []
    cdef Py_UCS4 *line = <Py_UCS4 *> malloc((size + 1) * sizeof(Py_UCS4))
    if line == NULL:
        raise MemoryError()
    try:
        for index in range(size):
            character = PyUnicode_READ(kind, data, index)
            if character == 10:  # '\n'
                keys.append(PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, line, length))
                length, gap = 0, False
            elif word_character(character):
                if gap and length:
                    line[length] = 32
                    length += 1
                gap = False
                line[length] = character
                length += 1
            else:
                gap = True
        keys.append(PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, line, length))
    finally:
        free(line)
    return keys


cdef inline bint word_character(Py_UCS4 character) noexcept:
    """Alphanumeric as re's \\w sees it (Py_UNICODE_ISALNUM), '_' excluded."""
    if character < 128:
        return (48 <= character <= 57) or (65 <= character <= 90) or (97 <= character <= 122)
    return Py_UNICODE_ISALNUM(character)


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object)
    object PyBytes_FromStringAndSize(const char *, Py_ssize_t)
    Py_ssize_t PyUnicode_FindChar(object, Py_UCS4, Py_ssize_t, Py_ssize_t, int) except -2
    Py_ssize_t PyUnicode_Find(object, object, Py_ssize_t, Py_ssize_t, int) except -2

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* BLAKE2b (RFC 7693) with an 8-byte digest and no key: hashlib.blake2b(data, digest_size=8) */
    static const uint64_t walk_blake2b_iv[8] = {
        0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
        0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};
    static const uint8_t walk_blake2b_sigma[12][16] = {
        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
        {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
        {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
        {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
        {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};
    static inline uint64_t walk_rotr64(uint64_t word, unsigned bits) { return (word >> bits) | (word << (64 - bits)); }
    #define WALK_G(a, b, c, d, x, y) do { \\
        v[a] = v[a] + v[b] + (x); v[d] = walk_rotr64(v[d] ^ v[a], 32); v[c] = v[c] + v[d]; \\
        v[b] = walk_rotr64(v[b] ^ v[c], 24); v[a] = v[a] + v[b] + (y); v[d] = walk_rotr64(v[d] ^ v[a], 16); \\
        v[c] = v[c] + v[d]; v[b] = walk_rotr64(v[b] ^ v[c], 63); } while (0)
    /* one round, with the message words in sigma[r]'s order: the 12 unrolled, so that every index is a constant
       (~110 instead of ~145 ns a 128-byte block; not inlined, which made the key loops slower) */
    #define WALK_ROUND(r) do { const uint8_t *s = walk_blake2b_sigma[r]; \\
        WALK_G(0, 4, 8, 12, m[s[0]], m[s[1]]); WALK_G(1, 5, 9, 13, m[s[2]], m[s[3]]); \\
        WALK_G(2, 6, 10, 14, m[s[4]], m[s[5]]); WALK_G(3, 7, 11, 15, m[s[6]], m[s[7]]); \\
        WALK_G(0, 5, 10, 15, m[s[8]], m[s[9]]); WALK_G(1, 6, 11, 12, m[s[10]], m[s[11]]); \\
        WALK_G(2, 7, 8, 13, m[s[12]], m[s[13]]); WALK_G(3, 4, 9, 14, m[s[14]], m[s[15]]); } while (0)
    #if defined(__GNUC__)
    #define WALK_NOINLINE __attribute__((noinline))
    #else
    #define WALK_NOINLINE
    #endif
    static WALK_NOINLINE void walk_blake2b_compress(uint64_t h[8], const unsigned char *block, uint64_t counter,
                                                    int last) {
        uint64_t m[16], v[16];
        int i, j;
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        (void) j;
        memcpy(m, block, sizeof(m));  /* the words are little-endian */
    #else
        for (i = 0; i < 16; i++) {
            m[i] = 0;
            for (j = 0; j < 8; j++) m[i] |= (uint64_t) block[8 * i + j] << (8 * j);
        }
    #endif
        for (i = 0; i < 8; i++) { v[i] = h[i]; v[i + 8] = walk_blake2b_iv[i]; }
        v[12] ^= counter;  /* the counter's high word stays 0 below 2^64 bytes */
        if (last) v[14] = ~v[14];
        WALK_ROUND(0); WALK_ROUND(1); WALK_ROUND(2); WALK_ROUND(3); WALK_ROUND(4); WALK_ROUND(5);
        WALK_ROUND(6); WALK_ROUND(7); WALK_ROUND(8); WALK_ROUND(9); WALK_ROUND(10); WALK_ROUND(11);
        for (i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
    }
    /* the 16 lower-case hex characters of blake2b(data, digest_size=8) */
    static void walk_blake2b_8_hex(const unsigned char *data, size_t length, char *out) {
        static const char hex[] = "0123456789abcdef";
        uint64_t h[8], counter = 0;
        unsigned char block[128];
        int i;
        for (i = 0; i < 8; i++) h[i] = walk_blake2b_iv[i];
        h[0] ^= 0x01010000ULL ^ 8;
        while (length > 128) {
            counter += 128;
            walk_blake2b_compress(h, data, counter, 0);
            data += 128;
            length -= 128;
        }
        memset(block, 0, sizeof(block));
        if (length) memcpy(block, data, length);
        counter += length;
        walk_blake2b_compress(h, block, counter, 1);
        for (i = 0; i < 8; i++) {
            unsigned char byte = (unsigned char) (h[0] >> (8 * i));
            out[2 * i] = hex[byte >> 4];
            out[2 * i + 1] = hex[byte & 15];
        }
    }
    """
    void walk_blake2b_8_hex(const unsigned char *data, size_t length, char *out) noexcept nogil


cdef extern from *:
    """
    /* alphanumeric as re's \\w sees it (Py_UNICODE_ISALNUM), '_' excluded: html_walk.word_character */
    static inline int walk_word_character(Py_UCS4 c) {
        if (c < 128) return (48 <= c && c <= 57) || (65 <= c && c <= 90) || (97 <= c && c <= 122);
        return Py_UNICODE_ISALNUM(c);
    }
    #define WALK_KEYS(TYPE) { \\
        const TYPE *text = (const TYPE *) data; \\
        for (i = 0; i < size; i++) { \\
            Py_UCS4 c = text[i]; \\
            if (c == 10) { \\
                ends[lines++] = length; \\
                gap = 0; \\
            } else if (walk_word_character(c)) { /* never a surrogate */ \\
                if (gap && length > (lines ? ends[lines - 1] : 0)) keys[length++] = 32; \\
                gap = 0; \\
                WALK_PUT_UTF8(keys, length, c); \\
            } else gap = 1; \\
        } }
    /* the UTF-8 key of each newline-separated text, one after the other in keys (4 bytes a character); ends[i]: where
       key i ends (one a text, at most size + 1): the number of texts */
    static Py_ssize_t walk_keys(int kind, const void *data, Py_ssize_t size, unsigned char *keys, Py_ssize_t *ends) {
        Py_ssize_t i, length = 0, lines = 0;
        int gap = 0;
        if (kind == PyUnicode_1BYTE_KIND) WALK_KEYS(Py_UCS1)
        else if (kind == PyUnicode_2BYTE_KIND) WALK_KEYS(Py_UCS2)
        else WALK_KEYS(Py_UCS4)
        ends[lines++] = length;
        return lines;
    }
    """
    Py_ssize_t walk_keys(int kind, const void *data, Py_ssize_t size, unsigned char *keys, Py_ssize_t *ends) nogil


#: a key's UTF-8 -> its hash: the keys of a site's furniture (menus, footers) repeat on every page (87% of the keys
#: of a sample-archive pass were met before, 25% on the real CommonCrawl pages); cleared at MAX_KEY_HASHES keys
cdef dict _key_hashes = {}
DEF MAX_KEY_HASHES = 65536


def paragraph_key_hashes(str folded) -> list:
    """[blake2b(key.encode("utf-8", "ignore"), digest_size=8).hexdigest() for key in paragraph_keys(folded)], with no
    key str made: each key's UTF-8 is written as the text is scanned, and hashed unless it was before."""
    cdef Py_ssize_t size = len(folded), lines, index, start = 0
    cdef unsigned char *keys = <unsigned char *> malloc(size * 4 + 1)
    cdef Py_ssize_t *ends = <Py_ssize_t *> malloc((size + 1) * sizeof(Py_ssize_t))
    cdef char out[16]
    cdef list hashes = []
    try:
        if keys == NULL or ends == NULL:
            raise MemoryError()
        lines = walk_keys(PyUnicode_KIND(folded), PyUnicode_DATA(folded), size, keys, ends)
        for index in range(lines):
            key = PyBytes_FromStringAndSize(<const char *> keys + start, ends[index] - start)
            found = _key_hashes.get(key)
            if found is None:
                walk_blake2b_8_hex(keys + start, ends[index] - start, out)
                found = PyUnicode_DecodeASCII(out, 16, NULL)
                if len(_key_hashes) >= MAX_KEY_HASHES:
                    _key_hashes.clear()
                _key_hashes[key] = found
            hashes.append(found)
            start = ends[index]
        return hashes
    finally:
        free(keys)
        free(ends)


# udfs.fetch.html_text's paragraph rules (set by configure_paragraphs)
cdef tuple _notice_phrases = ()
cdef object _block_language = None
cdef object _dense_script_langs = frozenset()
cdef Py_ssize_t _short_chars = 0, _good_chars = 0, _max_notice_chars = 0, _min_lang_chars = 0, _min_short_run = 0
cdef double _max_link_density = 0.0, _max_good_link_density = 0.0

# justext's classes of a block
DEF BAD = 0
DEF SHORT = 1
DEF NEAR_GOOD = 2
DEF GOOD = 3
DEF SHORT_LINK = 4  # short and mostly link: bad unless in a run of short blocks (html_text._merge_short_runs)


def configure_paragraphs(notice_phrases: tuple, block_language, dense_script_langs: frozenset, rules: dict) -> None:
    """Hand over udfs.fetch.html_text's paragraph helpers and thresholds (page_paragraphs' rules)."""
    global _notice_phrases, _block_language, _dense_script_langs, _short_chars, _good_chars
    global _max_notice_chars, _min_lang_chars, _max_link_density, _max_good_link_density, _min_short_run
    if any("\n" in phrase or not phrase for phrase in notice_phrases):
        raise ValueError("a notice phrase is empty or spans two texts")
    _notice_phrases, _block_language = notice_phrases, block_language
    _dense_script_langs = dense_script_langs
    _short_chars, _good_chars = rules["SHORT_CHARS"], rules["GOOD_CHARS"]
    _max_notice_chars, _min_lang_chars = rules["MAX_NOTICE_CHARS"], rules["MIN_LANG_CHARS"]
    _min_short_run = rules["MIN_SHORT_RUN"]
    _max_link_density, _max_good_link_density = rules["MAX_LINK_DENSITY"], rules["MAX_GOOD_LINK_DENSITY"]


cdef extern from *:
    """
    #if PY_VERSION_HEX < 0x030D0000
    /* str.casefold() (do_casefold's loop: each character's full case folding, no context) with ASCII lowered
       here: CPython looks every character up, ~2 us a sample page */
    static PyObject *walk_casefold(PyObject *text) {
        Py_ssize_t size = PyUnicode_GET_LENGTH(text), i, length = 0;
        int kind = PyUnicode_KIND(text), j, mapped_length;
        const void *data = PyUnicode_DATA(text);
        Py_UCS4 *out, mapped[3];
        PyObject *folded;
        if (PyUnicode_IS_ASCII(text)) return PyObject_CallMethod(text, "lower", NULL);  /* the same on ASCII */
        out = (Py_UCS4 *) PyMem_Malloc((3 * size + 1) * sizeof(Py_UCS4));
        if (out == NULL) return PyErr_NoMemory();
        for (i = 0; i < size; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (c < 128) {
                out[length++] = 65 <= c && c <= 90 ? c + 32 : c;
                continue;
            }
            mapped_length = _PyUnicode_ToFoldedFull(c, mapped);
            for (j = 0; j < mapped_length; j++) out[length++] = mapped[j];
        }
        folded = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, length);
        PyMem_Free(out);
        return folded;
    }
    #else
    static PyObject *walk_casefold(PyObject *text) { return PyObject_CallMethod(text, "casefold", NULL); }
    #endif
    """
    str walk_casefold(str text)


def casefold(str text) -> str:
    """walk_casefold, for the tests: str.casefold()."""
    return walk_casefold(text)


cdef bint has_notice(str folded, Py_ssize_t start, Py_ssize_t end) except -1:
    """Whether folded[start:end] (one text) holds a notice phrase: html_text.notice_lines for that text alone."""
    for phrase in _notice_phrases:
        if PyUnicode_Find(folded, phrase, start, end, 1) >= 0:
            return True
    return False


cdef void nearest_decided(const int *classes, int *nearest, Py_ssize_t count, bint backwards) noexcept:
    """html_text._nearest_decided: the class of the nearest good/bad block before each in the order (bad at the edge)."""
    cdef Py_ssize_t step, i
    cdef int seen = BAD
    for step in range(count):
        i = count - 1 - step if backwards else step
        nearest[i] = seen
        if classes[i] == GOOD or classes[i] == BAD:
            seen = classes[i]


cdef void resolve_classes(int *classes, const bint *headings, const bint *titles, int *final,
                          int *before, int *after, Py_ssize_t count) noexcept:
    """html_text._resolve_classes: the headline rules, then justext's context pass (into final)."""
    cdef Py_ssize_t i
    nearest_decided(classes, after, count, True)
    for i in range(count):
        if classes[i] != BAD and (titles[i] or headings[i] and after[i] == GOOD):
            classes[i] = GOOD
    nearest_decided(classes, before, count, False)
    nearest_decided(classes, after, count, True)
    for i in range(count):
        final[i] = classes[i]
        if classes[i] == SHORT:
            final[i] = GOOD if before[i] == GOOD and after[i] == GOOD else BAD
        elif classes[i] == NEAR_GOOD:
            final[i] = BAD if before[i] == BAD and after[i] == BAD else GOOD


cdef void merge_short_runs(int *classes, list blocks, Py_ssize_t weight, Py_ssize_t count):
    """html_text._merge_short_runs: runs of short blocks as one medium block; other short_link blocks bad."""
    cdef Py_ssize_t start = 0, end, i, chars, links
    for end in range(count + 1):
        if end < count and (classes[end] == SHORT or classes[end] == SHORT_LINK):
            continue
        chars = links = 0
        for i in range(start, end):
            chars += len(blocks[i][0])
            links += blocks[i][2]
        if end - start >= _min_short_run and chars * weight >= _good_chars and links <= _max_link_density * chars:
            for i in range(start, end):
                classes[i] = NEAR_GOOD
        else:
            for i in range(start, end):
                if classes[i] == SHORT_LINK:
                    classes[i] = BAD
        start = end + 1


def page_paragraphs(list blocks, title, page_lang, single_language=False) -> list:
    """udfs.fetch.html_text.page_paragraphs: the same paragraph structs (text, type, lang, boilerplate, hash)."""
    if _block_language is None:
        raise RuntimeError("html_walk.configure_paragraphs() was not called")
    cdef Py_ssize_t count = len(blocks), index, size, length, link_chars
    if not count:
        return []
    cdef list texts = [block[0] for block in blocks]
    cdef str folded = walk_casefold("\n".join(texts))
    cdef list hashes = paragraph_key_hashes(folded)
    cdef Py_ssize_t line_start = 0, line_end = -1  # of the text `index` in folded, found as the loop reaches it
    # the first key of WHITESPACE.sub(" ", title).casefold(): the same word runs, whitespace being no word character
    cdef str title_key = paragraph_keys(walk_casefold(collapse_spaces(title)))[0] if title else ""
    cdef Py_ssize_t weight = 3 if page_lang in _dense_script_langs else 1
    cdef int *classes = <int *> malloc(count * 4 * sizeof(int) + count * 2 * sizeof(bint))
    if classes == NULL:
        raise MemoryError()
    cdef int *final = classes + count
    cdef int *before = classes + 2 * count
    cdef int *after = classes + 3 * count
    cdef bint *headings = <bint *> (classes + 4 * count)
    cdef bint *titles = headings + count
    cdef list kinds = []
    cdef double density
    cdef bint linked_headline = False
    cdef tuple block
    cdef list paragraphs = []
    try:
        for index in range(count):
            block = blocks[index]
            text, kind, link_chars, region = block
            line_start = line_end + 1
            line_end = PyUnicode_FindChar(folded, 10, line_start, len(folded), 1)
            if line_end < 0:
                line_end = len(folded)
            if kind == "heading" and title_key:
                key = paragraph_keys(folded[line_start:line_end])[0]
                if key in title_key:
                    kind = "title"
                    region = region and key != title_key
            kinds.append(kind)
            headings[index], titles[index] = kind == "heading", kind == "title"
            size = len(text)
            if size == 0:
                raise ZeroDivisionError("division by zero")
            length, density = size * weight, <double> link_chars / <double> size
            if region or length < _max_notice_chars and has_notice(folded, line_start, line_end) or linked_headline:
                classes[index] = BAD
            elif density > _max_link_density:
                classes[index] = BAD if length >= _short_chars else SHORT_LINK
            elif length < _short_chars:
                classes[index] = SHORT
            elif length >= _good_chars and density <= _max_good_link_density:
                classes[index] = GOOD
            else:
                classes[index] = NEAR_GOOD
            linked_headline = headings[index] and density > _max_link_density
        merge_short_runs(classes, blocks, weight, count)
        resolve_classes(classes, headings, titles, final, before, after, count)
        for index in range(count):
            text = texts[index]
            bad = final[index] != GOOD
            if single_language:
                lang = page_lang if len(text) >= _min_lang_chars else None
            else:
                lang = None if bad else _block_language(text)
            paragraphs.append({"text": text, "type": kinds[index], "lang": lang, "boilerplate": bad,
                               "hash": hashes[index]})
    finally:
        free(classes)
    return paragraphs


cdef extern from "Python.h":
    object PyUnicode_AsUTF8String(object)

cdef extern from *:
    """
    /* what language_id.CLD2_UNSAFE matches: C0 controls but tab, newline and carriage return; DEL and the C1 controls;
       surrogates; U+FFFE and U+FFFF */
    static inline int walk_cld2_unsafe(Py_UCS4 c) {
        return (c < 32 && c != 9 && c != 10 && c != 13) || (0x7f <= c && c <= 0x9f) || (0xd800 <= c && c <= 0xdfff)
               || c == 0xfffe || c == 0xffff;
    }
    #define WALK_CLD2_INPUT(TYPE) { \\
        const TYPE *text = (const TYPE *) data; \\
        for (i = 0; i < size; i++) { \\
            Py_UCS4 c = text[i]; \\
            if (c - 32u < 95u) { out[length++] = c; blank &= c == 32; continue; } /* printable ASCII */ \\
            if (walk_cld2_unsafe(c)) { out[length++] = 32; continue; } \\
            if (!walk_is_space(c)) blank = 0; \\
            WALK_PUT_UTF8(out, length, c); \\
        } }
    /* language_id.cld2_input's characters into out (4 bytes a character): the UTF-8 length; *blank cleared when a
       character other than whitespace is written */
    static Py_ssize_t walk_cld2_write(int kind, const void *data, Py_ssize_t size, unsigned char *out, int *blank_text) {
        Py_ssize_t i, length = 0;
        int blank = *blank_text;
        if (kind == PyUnicode_1BYTE_KIND) WALK_CLD2_INPUT(Py_UCS1)
        else if (kind == PyUnicode_2BYTE_KIND) WALK_CLD2_INPUT(Py_UCS2)
        else WALK_CLD2_INPUT(Py_UCS4)
        *blank_text = blank;
        return length;
    }
    /* walk_cld2_write of an ASCII text: copied when it holds no unsafe character (no C0 control but tab, newline and
       carriage return, no DEL) */
    static Py_ssize_t walk_cld2_write_ascii(const unsigned char *text, Py_ssize_t size, unsigned char *out,
                                            int *blank) {
        Py_ssize_t i;
        for (i = 0; i < size; i++) {
            unsigned char c = text[i];
            if (c < 32 ? c != 9 && c != 10 && c != 13 : c == 0x7f) return walk_cld2_write(PyUnicode_1BYTE_KIND, text,
                                                                                        size, out, blank);
        }
        for (i = 0; i < size && *blank; i++)
            if (!walk_is_space(text[i])) *blank = 0;
        memcpy(out, text, size);
        return size;
    }
    #define WALK_CLD2_READY(TYPE) { \\
        const TYPE *text = (const TYPE *) data; \\
        for (i = 0; i < size && walk_is_space(text[i]); i++) \\
            if (walk_cld2_unsafe(text[i])) return 0; \\
        if (i == size) return 0; \\
        for (; i < size; i++) \\
            if (walk_cld2_unsafe(text[i])) return 0; \\
        return 1; }
    /* whether the text is CLD2's input as it is: no unsafe character, and one that is not whitespace */
    static int walk_cld2_ready(int kind, const void *data, Py_ssize_t size) {
        Py_ssize_t i;
        if (kind == PyUnicode_1BYTE_KIND) WALK_CLD2_READY(Py_UCS1)
        if (kind == PyUnicode_2BYTE_KIND) WALK_CLD2_READY(Py_UCS2)
        WALK_CLD2_READY(Py_UCS4)
    }
    """
    Py_ssize_t walk_cld2_write(int kind, const void *data, Py_ssize_t size, unsigned char *out,
                               int *blank) noexcept nogil
    Py_ssize_t walk_cld2_write_ascii(const unsigned char *text, Py_ssize_t size, unsigned char *out,
                                     int *blank) noexcept nogil
    bint walk_cld2_ready(int kind, const void *data, Py_ssize_t size) noexcept nogil


def cld2_input(str text):
    """udfs.common.language_id.cld2_input: the text's UTF-8 with the characters CLD2 cannot take as spaces, or None when nothing
    but whitespace is left; a text with neither (most) is encoded as it is."""
    cdef Py_ssize_t size = len(text), length
    if walk_cld2_ready(PyUnicode_KIND(text), PyUnicode_DATA(text), size):
        return PyUnicode_AsUTF8String(text)  # no surrogate: str.encode("utf-8", "ignore") ignores nothing
    cdef unsigned char *out = <unsigned char *> malloc(size * 4 + 1)
    cdef int blank = True
    if out == NULL:
        raise MemoryError()
    try:
        length = walk_cld2_write(PyUnicode_KIND(text), PyUnicode_DATA(text), size, out, &blank)
        return None if blank else PyBytes_FromStringAndSize(<const char *> out, length)
    finally:
        free(out)
