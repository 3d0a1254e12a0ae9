"""The STRAND markup features computed with the standard library's HTMLParser: the reference the selectolax walk
is timed against (bench_fetch_verify) and held equal to (tests/fetch/test_html_text.py)."""
from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urljoin

from parascout.udfs.common.language_id import cld2_language
from parascout.udfs.common.urls import _resolve_link, image_file_name, url_host
from parascout.udfs.fetch.html_text import MAX_IMAGE_NAME_CHARS, MAX_STRUCTURE_TOKENS, MAX_TITLE_CHARS, WHITESPACE
from parascout.udfs.fetch.page_walk import MAX_IMAGES, MAX_OUTLINK_CHARS, LinkBudget, bound_links
from parascout.udfs.fetch.tag_rules import BLOCK_TAGS, LINK_ATTRIBUTES, SKIPPED_CONTENT_TAGS, VOID_TAGS


class StrandParser(HTMLParser):
    """The html.parser path fetch-docs used before udfs.fetch.html_text (kept only as this benchmark's baseline
    and the agreement test's reference): one pass over the tokens, as the page's source lists them."""

    def __init__(self, base_url: str | None):
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.structure: list[str] = []
        self.structure_truncated = False
        self.chunks: list[str] = []
        self.paragraphs = 0
        self.links: list[tuple[str, str]] = []  # (url, host)
        self.link_budget = LinkBudget()
        self.images: list[str] = []
        self.title_parts: list[str] = []
        self.html_lang: str | None = None
        self._skip_depth = 0
        self._in_title = False
        self._block_has_text = False

    def _token(self, token: str) -> None:
        if len(self.structure) < MAX_STRUCTURE_TOKENS:
            self.structure.append(token)
        else:
            self.structure_truncated = True

    def _end_block(self) -> None:
        if self._block_has_text:
            self.paragraphs += 1
        self._block_has_text = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._token(f"[START:{tag}]")
        if tag in BLOCK_TAGS:
            self._end_block()
        attributes = dict(attrs)
        if tag == "base" and attributes.get("href") and self.base_url is not None \
                and len(attributes["href"]) <= MAX_OUTLINK_CHARS:
            self.base_url = urljoin(self.base_url, attributes["href"].strip())
        elif tag == "html" and attributes.get("lang"):
            self.html_lang = attributes["lang"].strip()[:20]
        elif tag in LINK_ATTRIBUTES or (tag == "link" and "alternate" in (attributes.get("rel") or "").lower()):
            href = attributes.get(LINK_ATTRIBUTES.get(tag, "href"))
            resolved = _resolve_link(self.base_url or "", href.strip()) if href else None
            if resolved and self.link_budget.admit(resolved[0]):
                self.links.append(resolved)
        elif tag == "img":
            name = image_file_name(self.base_url, attributes.get("src") or attributes.get("data-src"))
            if name and len(self.images) < MAX_IMAGES:
                self.images.append(name)
        if tag == "title":
            self._in_title = True
        if tag in SKIPPED_CONTENT_TAGS:
            self._skip_depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag in SKIPPED_CONTENT_TAGS:
            self.handle_endtag(tag, emit=False)

    def handle_endtag(self, tag: str, emit: bool = True) -> None:
        if tag in VOID_TAGS:
            return
        if emit:
            self._token(f"[END:{tag}]")
        if tag in BLOCK_TAGS:
            self._end_block()
        if tag in SKIPPED_CONTENT_TAGS and self._skip_depth:
            self._skip_depth -= 1
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
        if self._skip_depth:
            return
        text = WHITESPACE.sub(" ", data).strip()
        if text:
            self._token(f"[Chunk:{len(text)}]")
            self.chunks.append(text)
            self._block_has_text = True


def html_parser_features(html: str, url: str | None) -> dict:
    """The docs features as the html.parser path computed them (baseline)."""
    parser = StrandParser(url)
    parser.feed(html)
    parser.close()
    parser._end_block()
    text = " ".join(parser.chunks)
    lang, reliable, percent = cld2_language(text)
    host = url_host(url) if url else None
    links = dict(parser.links)  # first occurrence order, one host per URL
    outlinks, outlinks_cut = list(links), parser.link_budget.cut
    images, images_cut = bound_links(dict.fromkeys(parser.images), LinkBudget(MAX_IMAGES, MAX_IMAGE_NAME_CHARS))
    title = WHITESPACE.sub(" ", "".join(parser.title_parts)).strip()[:MAX_TITLE_CHARS] or None
    return {
        "status": "ok", "cld2_lang": lang, "cld2_reliable": reliable, "cld2_percent": percent,
        "html_lang": parser.html_lang, "text_chars": len(text), "paragraphs": parser.paragraphs,
        "outlinks": outlinks, "outlinks_same_host": [links[link] == host for link in outlinks],
        "images": images, "structure": parser.structure, "title": title,
        "outlinks_cut": outlinks_cut, "images_cut": images_cut,
        "error": "structure_truncated" if parser.structure_truncated else None,
    }
