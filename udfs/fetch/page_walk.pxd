# The C types of udfs.fetch.page_walk where Cython compiles it (`make walk`): its nodes are Lexbor's structs, read
# through tree_nodes.pxd, its text is walk_text.pxd's buffers, its paragraph step's strings go through paragraph_text.pxd.
import cython
from parascout.udfs.fetch.tree_nodes cimport Node
from parascout.udfs.fetch.walk_text cimport WalkText


cdef class LinkBudget:
    cdef public Py_ssize_t max_links, max_link_chars, max_total_chars, kept, chars, cut
    @cython.locals(size=Py_ssize_t)
    cpdef bint admit(self, str link)

cdef class Page:
    cdef public object base_url, html_lang
    cdef public LinkBudget link_budget
    cdef public list structure, links, images, title_parts, blocks
    cdef public dict link_cues, metas, text_cues
    cdef public Py_ssize_t block_count, kept_chars, label_words
    cdef public bint text_truncated
    cdef public tuple text_input


@cython.locals(node=Node, child=Node, following=Node, node_id=Py_ssize_t, flags=int, skip=int, titles=int,
               headings=int, items=int, regions=int, piece_links=Py_ssize_t, size=Py_ssize_t, region=bint,
               piece_region=bint, walking=bint, block_open=bint, page_text=WalkText, structure=list,
               title_parts=list, tag_ids=list, anchors=list, open_entries=list, open_regions=list, entry=tuple,
               attributes=dict, data=str, anchor=list)
cpdef walk_page(list tops, Page page, Py_ssize_t max_text_chars)

@cython.locals(page_text=WalkText)
cpdef tuple text_runs(list runs)

cdef other_attributes(Page page, str tag, dict attributes)
@cython.locals(room=Py_ssize_t)
cdef add_block(Page page, str text, str kind, Py_ssize_t link_chars, bint region, Py_ssize_t max_text_chars)
@cython.locals(target=str, resolved=tuple)
cdef keep_link(Page page, str href, cue)
@cython.locals(src=str, target=str)
cdef add_image(Page page, dict attributes)
@cython.locals(text=str, memo=dict, attributes=dict, parts=list)
cdef close_anchor(Page page, list anchor)
cdef bint furniture_hint(Node node, parser) except -1
cdef remember(dict memo, key, answer)
@cython.locals(targets=dict)
cdef remembered(dict memo, function, str base, str target)
@cython.locals(parts=tuple)
cdef str scoped_base(str base, dict scopes, scope_of, str target)
cdef dict LINKS, IMAGE_NAMES, LINK_SCOPES, IMAGE_SCOPES, BASE_PARTS, TEXT_CUES, CLASS_HINTS
cdef Py_ssize_t MAX_MEMO_KEYS

cdef int BLOCK, HEADING, LIST_ITEM, ATTRIBUTED, SKIPPED, TITLE, FURNITURE, HINTED, ANCHOR, IMAGE
cdef Py_ssize_t TEXT_NODE, FIRST_ELEMENT_ID, MAX_STATIC_TAG_ID
cdef tuple CHUNK_TOKENS

cpdef list page_paragraphs(list blocks, title, page_lang, bint single_language=*, rules=*)
@cython.locals(texts=list, folded=str, keys=list, notices=set, title_key=str, weight=Py_ssize_t, kinds=list,
               classes=list, linked_headline=bint, index=Py_ssize_t, link_chars=Py_ssize_t, region=bint,
               size=Py_ssize_t, length=Py_ssize_t, density=double, boilerplate=list, langs=list,
               short_chars=Py_ssize_t, good_chars=Py_ssize_t, notice_chars=Py_ssize_t, link_density=double,
               good_link_density=double, min_lang_chars=Py_ssize_t)
cdef list classed_paragraphs(list blocks, title, page_lang, bint single_language, rules)
@cython.locals(lines=set, found=Py_ssize_t, end=Py_ssize_t)
cdef set notice_lines(str folded)
@cython.locals(start=Py_ssize_t, end=Py_ssize_t, chars=Py_ssize_t)
cdef merge_short_runs(list classes, list blocks, Py_ssize_t weight, Py_ssize_t min_run, Py_ssize_t good_chars,
                      double link_density)
@cython.locals(after=list, before=list, final=list, i=Py_ssize_t)
cdef list resolve_classes(list classes, list kinds)
@cython.locals(nearest=list, step=Py_ssize_t, i=Py_ssize_t)
cdef list nearest_decided(list classes, bint backwards)
cdef block_language(str text, Py_ssize_t min_chars)
@cython.locals(hashes=list)
cdef list key_hashes(list keys)
cdef dict KEY_HASHES
cdef tuple NOTICE_PHRASES
cdef frozenset DENSE_SCRIPT_LANGS
