# udfs.fetch.walk_text over two C buffers: what the compiled udfs.fetch.page_walk cimports. A text node's UTF-8 is
# read from Lexbor's struct, whitespace-collapsed and written to the open block and to the page's CLD2 input in one
# pass (walk_text_add), as walk_text.py's str.split / join / page_cld2_input would.
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdlib cimport calloc, free, malloc, realloc
from parascout.udfs.fetch.tree_nodes cimport Node, walk_character_data

cdef extern from *:
    """
    /* str.isspace() of one character (Py_UNICODE_ISSPACE), its non-ASCII cases spelled out: the table call was ~8%
       of the walk on real pages */
    static inline int walk_is_space(Py_UCS4 c) {
        if (c < 128) return c == 32 || (9 <= c && c <= 13) || (28 <= c && c <= 31);
        if (c < 0x1680) return c == 0x85 || c == 0xa0;
        return c == 0x1680 || (0x2000 <= c && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f
               || c == 0x205f || c == 0x3000;
    }
    /* a WalkText's buffers and state */
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
    bint walk_is_space(Py_UCS4 character) noexcept nogil
    Py_ssize_t walk_text_add(walk_text_t *text, const unsigned char *data, Py_ssize_t size) noexcept nogil


cdef extern from "Python.h":
    const char *PyUnicode_AsUTF8AndSize(object, Py_ssize_t *) except NULL

cdef struct WalkTextBuffers:
    walk_text_t text
    Py_ssize_t block_size, page_size  # the buffers' capacities

ctypedef WalkTextBuffers *WalkText


cdef inline WalkText new_text() except NULL:
    cdef WalkText text = <WalkText> calloc(1, sizeof(WalkTextBuffers))
    if text == NULL:
        raise MemoryError()
    text.text.block = <unsigned char *> malloc(4096)
    text.text.page = <unsigned char *> malloc(4096)
    text.block_size = text.page_size = 4096
    text.text.blank = True
    if text.text.block == NULL or text.text.page == NULL:
        free_text(text)
        raise MemoryError()
    return text


cdef inline void free_text(WalkText text) noexcept:
    if text != NULL:
        free(text.text.block)
        free(text.text.page)
        free(text)


cdef inline unsigned char *grown(unsigned char *buffer, size_t size) except NULL:
    cdef void *larger = realloc(buffer, size)
    if larger == NULL:
        raise MemoryError()
    return <unsigned char *> larger


cdef inline bint ascii_space(const unsigned char *data, size_t length) noexcept nogil:
    """Whether every byte is ASCII whitespace as str.isspace() sees it (true for no bytes)."""
    cdef size_t i
    cdef unsigned char c
    for i in range(length):
        c = data[i]
        if not (c == 32 or 9 <= c <= 13 or 28 <= c <= 31):
            return False
    return True


cdef inline Py_ssize_t add_bytes(WalkText text, const unsigned char *data, Py_ssize_t size) except -1:
    """walk_text.add_run of UTF-8 decoded as PyUnicode_DecodeUTF8(data, size, "replace") decodes it."""
    cdef Py_ssize_t run, utf8_size
    cdef const char *utf8
    if text.text.block_length + size + 1 > text.block_size:
        text.block_size = 2 * (text.text.block_length + size + 1)
        text.text.block = grown(text.text.block, text.block_size)
    if text.text.page_length + size + 1 > text.page_size:
        text.page_size = 2 * (text.text.page_length + size + 1)
        text.text.page = grown(text.text.page, text.page_size)
    run = walk_text_add(&text.text, data, size)
    if run < 0:  # ill-formed UTF-8: its "replace" decoding (well-formed) is added instead, the str held meanwhile
        decoded = PyUnicode_DecodeUTF8(<const char *> data, size, "replace")
        utf8 = PyUnicode_AsUTF8AndSize(decoded, &utf8_size)
        return add_bytes(text, <const unsigned char *> utf8, utf8_size)
    return run


cdef inline Py_ssize_t add_text(WalkText text, Node node) except -1:
    cdef walk_character_data *data = <walk_character_data *> node
    if data.data.data == NULL or ascii_space(data.data.data, data.data.length):
        text.text.gap = True  # the space between two inline elements (when the block has text)
        return 0
    return add_bytes(text, data.data.data, data.data.length)


cdef inline Py_ssize_t add_utf8(WalkText text, bytes data) except -1:
    return add_bytes(text, <const unsigned char *> (<char *> data), len(data))


cdef inline str take_block(WalkText text):
    block = PyUnicode_DecodeUTF8(<const char *> text.text.block, text.text.block_length, NULL)
    text.text.block_length = 0
    return block


cdef inline tuple page_input(WalkText text):
    return ((None if text.text.blank else
             PyBytes_FromStringAndSize(<const char *> text.text.page, text.text.page_length)),
            text.text.characters + max(text.text.runs - 1, 0))
