# udfs.fetch.paragraph_text as C loops over a str's code points: what the compiled udfs.fetch.page_walk cimports for its
# paragraph step (case folding, whitespace collapse, paragraph keys, BLAKE2b of a key, a text's CLD2 input).
from cpython.unicode cimport (
    Py_UNICODE_ISALNUM,
    PyUnicode_4BYTE_KIND,
    PyUnicode_DATA,
    PyUnicode_DecodeASCII,
    PyUnicode_FromKindAndData,
    PyUnicode_KIND,
    PyUnicode_READ,
)
from libc.stdlib cimport free, malloc
from parascout.udfs.fetch.walk_text cimport walk_is_space

cdef extern from "Python.h":
    object PyBytes_FromStringAndSize(const char *, Py_ssize_t)
    object PyUnicode_AsUTF8String(object)
    const char *PyUnicode_AsUTF8AndSize(object, Py_ssize_t *) except NULL

cdef extern from *:
    """
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
    /* whether " ".join(text.split()) == text: no whitespace but single ' ' between other characters */
    static int walk_collapsed(int kind, const void *data, Py_ssize_t size) {
        if (kind == PyUnicode_1BYTE_KIND) WALK_COLLAPSED(Py_UCS1)
        if (kind == PyUnicode_2BYTE_KIND) WALK_COLLAPSED(Py_UCS2)
        WALK_COLLAPSED(Py_UCS4)
    }
    """
    bint walk_collapsed(int kind, const void *data, Py_ssize_t size) noexcept nogil
    Py_ssize_t walk_collapse(int kind, const void *data, Py_ssize_t size, void *buffer) noexcept nogil


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


cdef inline str fold_case(str text):
    return walk_casefold(text)


cdef inline str collapse_spaces(str text):
    cdef Py_ssize_t size = len(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef void *buffer
    if walk_collapsed(kind, data, size):  # most texts: nothing to do
        return text
    buffer = malloc(size * kind)
    if buffer == NULL:
        raise MemoryError()
    try:
        return PyUnicode_FromKindAndData(kind, buffer, walk_collapse(kind, data, size, buffer))
    finally:
        free(buffer)


cdef inline bint word_character(Py_UCS4 character) noexcept:
    """Alphanumeric as re's \\w sees it (Py_UNICODE_ISALNUM), '_' excluded."""
    if character < 128:
        return (48 <= character <= 57) or (65 <= character <= 90) or (97 <= character <= 122)
    return Py_UNICODE_ISALNUM(character)


cdef inline list split_keys(str folded):
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
            if character == 10:  # a newline ends a text
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


cdef inline str key_hash(str key):
    cdef Py_ssize_t size
    cdef const char *utf8 = PyUnicode_AsUTF8AndSize(key, &size)
    cdef char out[16]
    walk_blake2b_8_hex(<const unsigned char *> utf8, size, out)
    return PyUnicode_DecodeASCII(out, 16, NULL)


cdef inline object cld2_bytes(str text):
    """language_id.cld2_input; a text with no unsafe character and one that is not whitespace (most) as it is."""
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
