"""One pass over a parsed page (udfs.fetch.html_text): what a Page collects, the walk that fills it, and the paragraph
step that classifies its text blocks.

One source, two engines: run as it is, the walk reads nodes through udfs.fetch.tree_nodes (selectolax's Node API),
keeps text through udfs.fetch.walk_text (lists of strings) and the paragraph step folds, keys and hashes text through
udfs.fetch.paragraph_text (str methods, re, hashlib); compiled with Cython (`make walk`: page_walk.pxd declares its C
types), the same names come from tree_nodes.pxd (Lexbor's structs), walk_text.pxd (C buffers) and paragraph_text.pxd
(C loops). Nothing else differs.
"""
from __future__ import annotations

from urllib.parse import urljoin

from parascout.udfs.common.language_id import cld2_detect
from parascout.udfs.common.urls import _image_file_name, _resolve_link, base_part, image_scope, link_scope
from parascout.udfs.fetch.collector import pause_collection, resume_collection
from parascout.udfs.fetch.config import DEFAULT, ExtractionConfig
from parascout.udfs.fetch.language_cues import code_language, link_cue
from parascout.udfs.fetch.meta_tags import METADATA_NAMES
from parascout.udfs.fetch.tag_rules import (
    ANCHOR,
    ATTRIBUTED,
    BLOCK,
    CHUNK_TOKENS,
    FIRST_ELEMENT_ID,
    FURNITURE,
    HEADING,
    HINTED,
    IMAGE,
    LINK_ATTRIBUTES,
    LIST_ITEM,
    MAX_STATIC_TAG_ID,
    SKIPPED,
    TAG_IDS,
    TEXT_NODE,
    TITLE,
    is_boilerplate_hint,
    tag_entry,
)

try:
    import cython
except ImportError:  # Cython compiles this module (`make walk`); run as it is, it needs only cython.compiled
    from parascout.udfs.fetch import cython_shim as cython

if cython.compiled:  # the C forms of the pieces (their .pxd files), each called as module.function
    from cython.cimports.parascout.udfs.fetch import paragraph_text, tree_nodes, walk_text

    #: the selectolax (and bundled Lexbor) versions whose struct layouts the build read (compiled_walk checks them)
    SELECTOLAX_VERSION = tree_nodes.PARASCOUT_SELECTOLAX_VERSION.decode("ascii")
    LEXBOR_VERSION = tree_nodes.LEXBOR_VERSION_STRING.decode("ascii")
else:
    from parascout.udfs.fetch import paragraph_text, tree_nodes, walk_text

#: a page keeps at most this many outlinks, each at most this long and all together at most this many characters,
#: and this many image names (`outlinks_cut` / `images_cut` count what is left out)
MAX_OUTLINKS = 2_000
MAX_OUTLINK_CHARS = 2_048
MAX_OUTLINKS_TOTAL_CHARS = 512 * 1024
MAX_IMAGES = 500


class LinkBudget:
    """Caps a page's outlinks by count, URL length and total characters; counts what it cut (an extension type where
    the walk is compiled: the walk admits a link without a Python call)."""

    if not cython.compiled:
        __slots__ = ("chars", "cut", "kept", "max_link_chars", "max_links", "max_total_chars")

    def __init__(self, max_links: int = MAX_OUTLINKS, max_link_chars: int = MAX_OUTLINK_CHARS,
                 max_total_chars: int = MAX_OUTLINKS_TOTAL_CHARS):
        self.max_links, self.max_link_chars, self.max_total_chars = max_links, max_link_chars, max_total_chars
        self.kept = self.chars = self.cut = 0

    def admit(self, link: str) -> bool:
        """Whether `link` fits; a link that does not is counted in `cut`."""
        size = len(link)
        if size > self.max_link_chars or self.kept >= self.max_links or self.chars + size > self.max_total_chars:
            self.cut += 1
            return False
        self.kept += 1
        self.chars += size
        return True


def bound_links(links, budget: LinkBudget | None = None) -> tuple[list, int]:
    """(the links that fit the caps, in order; how many were cut)."""
    budget = budget or LinkBudget()
    kept = [link for link in links if budget.admit(link)]
    return kept, budget.cut


#: anchor text read for a language cue (a switcher label is short; longer text names no language anyway)
MAX_CUE_TEXT_CHARS = 200


#: what the walk reads of an <a> (href in walk_page, the others in Page.close_anchor): all the compiled walk hands on
ANCHOR_ATTRIBUTES = ("href", "hreflang", "lang", "title")


#: what a Page holds (compiled, its C fields: page_walk.pxd), in the order page_state lists them
PAGE_FIELDS = ("base_url", "block_count", "blocks", "html_lang", "images", "kept_chars", "label_words", "link_budget",
               "link_cues", "links", "metas", "structure", "text_cues", "text_input", "text_truncated", "title_parts")


class Page:
    """What one pass over a tree collects (an extension type where the walk is compiled: html_text makes the Page
    of the walk it runs)."""

    if not cython.compiled:
        __slots__ = PAGE_FIELDS

    def __init__(self, base_url: str | None, max_label_words: int = DEFAULT.max_label_words):
        self.base_url = base_url
        self.label_words = max_label_words  # a language name is a link's cue in a label of at most this many words
        self.text_cues = TEXT_CUES.setdefault(max_label_words, {})  # the memo of anchor texts' cues, for that rule
        self.structure: list[str] = []
        self.links: list[tuple[str, str]] = []  # (url, host)
        self.link_cues: dict[str, str] = {}  # url -> the language the first cue-marked link to it names
        self.link_budget = LinkBudget()
        self.images: list[str] = []
        self.title_parts: list[str] = []
        self.html_lang: str | None = None
        self.blocks: list[tuple[str, str, int, bool]] = []  # (text, type, link characters, in a boilerplate region)
        self.block_count = 0
        self.kept_chars = 0
        self.text_truncated = False
        #: page_cld2_input of every text run, whitespace-normalised (the page text CLD2 reads): (its input, its length)
        self.text_input: tuple[bytes | None, int] = (None, 0)
        self.metas: dict[str, str] = {}  # 'description' / 'og:description' / 'keywords' -> the first content


def other_attributes(page: Page, tag: str, attributes: dict) -> None:
    """Links, <base>, <meta> and <html lang> of the other elements that carry them (anchors and images: the walk)."""
    if tag in LINK_ATTRIBUTES:
        keep_link(page, attributes.get(LINK_ATTRIBUTES[tag]), None)
    elif tag == "link":
        if "alternate" in (attributes.get("rel") or "").lower():
            keep_link(page, attributes.get("href"), code_language(attributes.get("hreflang")))
    elif tag == "meta":
        name = (attributes.get("name") or attributes.get("property") or "").strip().lower()
        content = attributes.get("content")
        if name in METADATA_NAMES and content and not content.isspace():
            page.metas.setdefault(name, content)
    elif tag == "base":
        href = attributes.get("href")
        if href and page.base_url is not None and len(href) <= MAX_OUTLINK_CHARS:
            page.base_url = urljoin(page.base_url, href.strip())
    elif attributes.get("lang"):
        page.html_lang = attributes["lang"].strip()[:20]


def add_block(page: Page, text: str, kind: str, link_chars: int, region: bool, max_text_chars: int) -> None:
    """Close a text block: counted always, kept while the page's kept text stays within max_text_chars
    (the block that crosses the cap is cut there)."""
    page.block_count += 1
    room = max_text_chars - page.kept_chars
    if len(text) > room:
        page.text_truncated = True
        text = text[:max(room, 0)].rstrip()
        if not text:
            return
    page.kept_chars += len(text) + 1
    page.blocks.append((text, kind, min(link_chars, len(text)), region))


def keep_link(page: Page, href: str | None, cue: str | None) -> str | None:
    """Keep a link (resolved, within the link budget); the URL kept, or None."""
    if not href:
        return None
    target = href.strip()
    resolved = remembered(LINKS, _resolve_link, scoped_base(page.base_url or "", LINK_SCOPES, link_scope, target),
                          target)
    if resolved and page.link_budget.admit(resolved[0]):
        page.links.append(resolved)
        if cue:
            page.link_cues.setdefault(resolved[0], cue)
        return resolved[0]
    return None


def add_image(page: Page, attributes: dict) -> None:
    """An image's file name (urls.image_file_name), kept while the page has fewer than MAX_IMAGES."""
    src = attributes.get("src") or attributes.get("data-src")
    if not src or src.strip().lower().startswith("data:"):
        return
    target = src.strip()
    name = remembered(IMAGE_NAMES, _image_file_name, scoped_base(page.base_url or "", IMAGE_SCOPES, image_scope, target),
                      target)
    if name and len(page.images) < MAX_IMAGES:
        page.images.append(name)


def close_anchor(page: Page, anchor: list) -> None:
    """An <a> ends: the language its context names (udfs.fetch.language_cues) for the link it made: its text,
    hreflang / lang / title, or the alt text and file name of the first image inside it when it has no text."""
    url, attributes, parts, image = anchor
    if url is None:
        return
    text = "".join(parts)
    image_src = image_alt = None
    if image is not None and not text.strip():
        image_src, image_alt = image
    hreflang, lang, title = attributes.get("hreflang"), attributes.get("lang"), attributes.get("title")
    if hreflang or lang or title or image_src or image_alt:
        cue = link_cue(text[:MAX_CUE_TEXT_CHARS], hreflang=hreflang, lang=lang, title=title, image_alt=image_alt,
                       image=image_src, max_label_words=page.label_words)
        found = cue.lang if cue else None
    else:  # most anchors: link_cue reads the text alone
        memo = page.text_cues
        found = memo.get(text[:MAX_CUE_TEXT_CHARS], memo)
        if found is memo:
            cue = link_cue(text[:MAX_CUE_TEXT_CHARS], max_label_words=page.label_words)
            found = cue.lang if cue else None
            remember(memo, text[:MAX_CUE_TEXT_CHARS], found)
    if found:
        page.link_cues.setdefault(url, found)


def furniture_hint(node, parser) -> bool:
    """Whether a container's class or id names page furniture (menu, footer, cookie banner...)."""
    class_name, element_id = tree_nodes.class_and_id(node, parser)
    if element_id is not None:
        return is_boilerplate_hint(class_name, element_id)
    if class_name is None:
        return False
    found = CLASS_HINTS.get(class_name)
    if found is None:
        found = remember(CLASS_HINTS, class_name, is_boilerplate_hint(class_name, None))
    return found


#: memos in front of the lru_caches of udfs.common.urls and language_cues, read with str keys (an lru_cache hashes a
#: tuple of its arguments): links and image names (base -> {href or src -> answer}), the part of the base each href
#: or src uses (urls.link_scope, image_scope) and the parts of each base (urls.base_part, by scope), link cues of
#: anchor texts (per max_label_words), boilerplate hints of class attributes; each cleared when it holds MAX_MEMO_KEYS
#: keys
LINKS: dict[str, dict] = {}
IMAGE_NAMES: dict[str, dict] = {}
LINK_SCOPES: dict[str, int] = {}
IMAGE_SCOPES: dict[str, int] = {}
BASE_PARTS: dict[str, tuple] = {}
TEXT_CUES: dict[int, dict[str, str | None]] = {}
CLASS_HINTS: dict[str, bool] = {}
MAX_MEMO_KEYS = 65536


def remember(memo: dict, key: str, answer: object) -> object:
    """memo[key] = answer, the memo cleared first when it is full; the answer."""
    if len(memo) >= MAX_MEMO_KEYS:
        memo.clear()
    memo[key] = answer
    return answer


def remembered(memo: dict, function, base: str, target: str) -> object:
    """function(base, target), from the memo when it was asked before."""
    targets = memo.get(base)
    if targets is None:
        targets = remember(memo, base, {})
    found = targets.get(target, memo)  # the memo itself: no answer yet
    if found is memo:
        found = remember(targets, target, function(base, target))
    return found


def scoped_base(base: str, scopes: dict, scope_of, target: str) -> str:
    """The part of base that target uses (urls.base_part of scope_of(target)), from the memos: a site's pages repeat
    their hrefs, and a page's links share its base."""
    scope = scopes.get(target)
    if scope is None:
        scope = remember(scopes, target, scope_of(target))
    parts = BASE_PARTS.get(base)
    if parts is None:
        parts = remember(BASE_PARTS, base, (base_part(base, 0), base_part(base, 1), base_part(base, 2)))
    return parts[scope]


def walk_page(tops: list, page: Page, max_text_chars: int) -> None:
    """One depth-first pass over the trees in `tops`, as the old tokenizer saw the page: a STRAND token per
    start tag, end tag (void elements have none) and text run; a text block ends at every block tag.

    Written as one loop with local state (iterative: broken pages nest deeply); this is the hot path, so a
    tag's rules are one lookup in TAG_IDS and most elements (inline, no rule) cost a token and a step."""
    structure, title_parts = page.structure, page.title_parts
    tag_ids = TAG_IDS
    page_text = walk_text.new_text()  # the open block's text and the page's text runs
    block_open = False  # whether the open block holds text
    piece_links = 0
    piece_type, piece_region = "text", False
    skip = titles = headings = items = regions = 0
    anchors: list[list] = []  # open <a>: [url kept or None, attributes, text parts, first image (src, alt)]
    open_entries: list = []  # the entry and region of each element the walk is inside
    open_regions: list = []
    entry, region = None, False
    pause_collection()
    try:
        for top in tops:
            parser = tree_nodes.node_parser(top)
            node = tree_nodes.top_node(top)
            walking = True
            while walking:
                node_id = tree_nodes.tag_id(node)
                if node_id == TEXT_NODE:
                    entry = None
                    if titles or anchors:  # they keep the raw text
                        data = tree_nodes.text_of(node)
                        if titles:
                            title_parts.append(data)
                        for anchor in anchors:
                            anchor[2].append(data)
                    size = 0 if skip else walk_text.add_text(page_text, node)
                    if size:
                        structure.append(CHUNK_TOKENS[size] if size < 4096 else f"[Chunk:{size}]")
                        if not block_open:
                            piece_type = "heading" if headings else "list_item" if items else "text"
                            piece_region = regions > 0
                            block_open = True
                        if anchors:
                            piece_links += size
                elif node_id < FIRST_ELEMENT_ID:  # a comment, doctype or document node
                    entry = None
                else:
                    entry = tag_ids[node_id] if node_id < MAX_STATIC_TAG_ID else None
                    if entry is None:
                        entry = tag_entry(tree_nodes.python_node(node, parser))
                    structure.append(entry[0])
                    flags = entry[2]
                    region = False
                    if flags:
                        if flags & BLOCK:
                            if block_open:
                                add_block(page, walk_text.take_block(page_text), piece_type, piece_links, piece_region,
                                          max_text_chars)
                                piece_links, block_open = 0, False
                            if flags & HEADING:
                                headings += 1
                            elif flags & LIST_ITEM:
                                items += 1
                        if flags & ATTRIBUTED:
                            attributes = (tree_nodes.python_node(node, parser).attributes if entry[3] == "meta"
                                          else tree_nodes.attributes(node, parser, flags & IMAGE))
                            if flags & ANCHOR:
                                anchors.append([keep_link(page, attributes.get("href"), None), attributes, [], None])
                            elif flags & IMAGE:
                                add_image(page, attributes)
                                for anchor in anchors:
                                    if anchor[3] is None:
                                        anchor[3] = (attributes.get("src"), attributes.get("alt"))
                            else:
                                other_attributes(page, entry[3], attributes)
                        if flags & SKIPPED:
                            skip += 1
                            if flags & TITLE:
                                titles += 1
                        if flags & FURNITURE or flags & HINTED and furniture_hint(node, parser):
                            region = True
                            regions += 1
                    child = tree_nodes.first_child(node)
                    if child:
                        open_entries.append(entry)
                        open_regions.append(region)
                        node = child
                        continue
                # leave this node, then every ancestor whose last child it was
                while True:
                    if entry is not None:
                        if region:
                            regions -= 1
                        if entry[1] is not None:  # not a void element
                            structure.append(entry[1])
                            flags = entry[2]
                            if flags:
                                if flags & BLOCK:
                                    if block_open:
                                        add_block(page, walk_text.take_block(page_text), piece_type, piece_links,
                                                  piece_region, max_text_chars)
                                        piece_links, block_open = 0, False
                                    if flags & HEADING:
                                        headings -= 1
                                    elif flags & LIST_ITEM:
                                        items -= 1
                                elif flags & ANCHOR:
                                    close_anchor(page, anchors.pop())
                                if flags & SKIPPED:
                                    skip -= 1
                                    if flags & TITLE:
                                        titles -= 1
                    if not open_entries:  # back at the top
                        walking = False
                        break
                    following = tree_nodes.next_sibling(node)
                    if following:
                        node = following
                        break
                    node = tree_nodes.parent(node)
                    entry, region = open_entries.pop(), open_regions.pop()
        if block_open:
            add_block(page, walk_text.take_block(page_text), piece_type, piece_links, piece_region, max_text_chars)
        page.text_input = walk_text.page_input(page_text)
    finally:
        walk_text.free_text(page_text)
        resume_collection()


def text_runs(runs: list) -> tuple:
    """walk_text.add_utf8 of each UTF-8 run in turn (how the tests read the walk's text): (the block's text, the
    page's CLD2 input and length, each run's length)."""
    page_text = walk_text.new_text()
    try:
        sizes = [walk_text.add_utf8(page_text, run) for run in runs]
        return walk_text.take_block(page_text), walk_text.page_input(page_text), sizes
    finally:
        walk_text.free_text(page_text)


#: what a cookie/copyright notice says, searched in case-folded text (str.find per phrase: ~2x faster than
#: one regex alternation over the page)
NOTICE_PHRASES = ("cookie", "gdpr", "\u00a9", "copyright", "all rights reserved", "privacy policy", "terms of use",
                  "terms of service", "datenschutz", "impressum", "alle rechte vorbehalten",
                  "tous droits r\u00e9serv\u00e9s", "todos los derechos reservados", "版权所有", "隐私")
#: languages whose pages' blocks count each character as three against the length rules (ExtractionConfig)
DENSE_SCRIPT_LANGS = frozenset({"zho", "jpn", "kor", "tha", "yue", "lzh"})


def page_paragraphs(blocks: list, title: str | None, page_lang: str | None, single_language: bool = False,
                    rules: ExtractionConfig = DEFAULT) -> list:
    """Paragraph structs (text, type, lang, boilerplate, hash) of a page's text blocks (Page.blocks), classed by
    `rules`' lengths and link densities (udfs.fetch.config).

    Language: a block of rules.min_lang_chars or more gets the page's language when CLD2 found no other language on
    the whole page; otherwise a main-text block gets CLD2's language of its own text and a boilerplate block
    none (CLD2 runs where the text is used: on the main text)."""
    if not blocks:
        return []
    pause_collection()
    try:
        return classed_paragraphs(blocks, title, page_lang, single_language, rules)
    finally:
        resume_collection()


def classed_paragraphs(blocks: list, title: str | None, page_lang: str | None, single_language: bool,
                       rules: ExtractionConfig) -> list:
    """page_paragraphs of a page with blocks."""
    short_chars, good_chars, notice_chars = rules.short_chars, rules.good_chars, rules.max_notice_chars
    link_density, good_link_density = rules.max_link_density, rules.max_good_link_density
    min_lang_chars = rules.min_lang_chars
    texts = [block[0] for block in blocks]
    folded = paragraph_text.fold_case("\n".join(texts))  # one pass for every block: newlines separate them
    keys = paragraph_text.split_keys(folded)
    notices = notice_lines(folded)
    title_key = (paragraph_text.split_keys(paragraph_text.fold_case(paragraph_text.collapse_spaces(title)))[0]
                 if title else "")
    weight = 3 if page_lang in DENSE_SCRIPT_LANGS else 1
    kinds, classes = [], []
    linked_headline = False  # the block before is a heading that is all link: this one is a teaser
    for index, (text, kind, link_chars, region) in enumerate(blocks):
        if kind == "heading" and title_key and keys[index] in title_key:
            kind = "title"
            region = region and keys[index] != title_key  # the page's headline, though its template calls it header
        kinds.append(kind)
        size = len(text)
        length, density = size * weight, link_chars / size
        if region or length < notice_chars and index in notices or linked_headline:
            classes.append("bad")
        elif density > link_density:
            classes.append("bad" if length >= short_chars else "short_link")
        elif length < short_chars:
            classes.append("short")
        elif length >= good_chars and density <= good_link_density:
            classes.append("good")
        else:
            classes.append("near_good")
        linked_headline = kind == "heading" and density > link_density
    merge_short_runs(classes, blocks, weight, rules.min_short_run, good_chars, link_density)
    boilerplate = [label != "good" for label in resolve_classes(classes, kinds)]
    if single_language:
        langs = [page_lang if len(text) >= min_lang_chars else None for text in texts]
    else:
        langs = [None if bad else block_language(text, min_lang_chars) for text, bad in zip(texts, boilerplate)]
    return [{"text": text, "type": kind, "lang": lang, "boilerplate": bad, "hash": key}
            for text, kind, lang, bad, key in zip(texts, kinds, langs, boilerplate, key_hashes(keys))]


def notice_lines(folded: str) -> set:
    """Indexes of the newline-separated texts that hold a notice phrase (NOTICE_PHRASES)."""
    lines = set()
    for phrase in NOTICE_PHRASES:
        found = folded.find(phrase)
        while found >= 0:
            lines.add(folded.count("\n", 0, found))
            end = folded.find("\n", found)  # the next search starts on the next text
            found = folded.find(phrase, end + 1) if end >= 0 else -1
    return lines


def merge_short_runs(classes: list, blocks: list, weight: int, min_run: int, good_chars: int,
                     link_density: float) -> None:
    """Runs of min_run or more short blocks, good_chars together and at most link_density link text, become
    near-good; the other short blocks that are mostly link (short_link) are bad."""
    start = 0
    for end in range(len(classes) + 1):
        if end < len(classes) and classes[end] in ("short", "short_link"):
            continue
        chars = sum([len(blocks[i][0]) for i in range(start, end)])
        if end - start >= min_run and chars * weight >= good_chars and \
                sum([blocks[i][2] for i in range(start, end)]) <= link_density * chars:
            classes[start:end] = ["near_good"] * (end - start)
        else:
            classes[start:end] = ["bad" if label == "short_link" else label for label in classes[start:end]]
        start = end + 1


def resolve_classes(classes: list, kinds: list) -> list:
    """justext's context pass (short and near-good blocks take their class from the nearest good/bad ones),
    after the headline rules: a heading repeating the page's <title> is good, and so is a heading opening
    good text, so the short lines between a headline and its article (date, byline) read as the article's."""
    classes = list(classes)
    after = nearest_decided(classes, True)
    for i, kind in enumerate(kinds):
        if classes[i] != "bad" and (kind == "title" or kind == "heading" and after[i] == "good"):
            classes[i] = "good"
    final = list(classes)
    before, after = nearest_decided(classes, False), nearest_decided(classes, True)
    for i, label in enumerate(classes):
        if label == "short":
            final[i] = "good" if before[i] == after[i] == "good" else "bad"
        elif label == "near_good":
            final[i] = "bad" if before[i] == after[i] == "bad" else "good"
    return final


def nearest_decided(classes: list, backwards: bool) -> list:
    """For each block, the class of the nearest good/bad block before it (after it, backwards; 'bad' at the edge)."""
    nearest, seen = [""] * len(classes), "bad"
    for step in range(len(classes)):
        i = len(classes) - 1 - step if backwards else step
        nearest[i] = seen
        if classes[i] in ("good", "bad"):
            seen = classes[i]
    return nearest


def block_language(text: str, min_chars: int) -> str | None:
    """CLD2's language of one block (ISO 639-3, as language_id.cld2_language), None when it is shorter than
    min_chars (too short to tell)."""
    if len(text) < min_chars:
        return None
    return cld2_detect(paragraph_text.cld2_bytes(text))[0]


#: a paragraph key -> its hash: the keys of a site's furniture (menus, footers) repeat on every page
KEY_HASHES: dict[str, str] = {}


def key_hashes(keys: list) -> list:
    """paragraph_text.key_hash of each key, from KEY_HASHES when it was hashed before."""
    hashes = []
    for key in keys:
        found = KEY_HASHES.get(key)
        if found is None:
            found = remember(KEY_HASHES, key, paragraph_text.key_hash(key))
        hashes.append(found)
    return hashes


# The paragraph step's string pieces as functions of this module (compiled: the C ones), for paragraph_hash, the
# agreement probes of udfs.fetch.compiled_walk and the tests.
def casefold(text: str) -> str:
    return paragraph_text.fold_case(text)


def collapse_whitespace(text: str) -> str:
    return paragraph_text.collapse_spaces(text)


def paragraph_keys(folded: str) -> list:
    return paragraph_text.split_keys(folded)


def paragraph_key_hashes(folded: str) -> list:
    return key_hashes(paragraph_text.split_keys(folded))


def cld2_input(text: str) -> bytes | None:
    return paragraph_text.cld2_bytes(text)
