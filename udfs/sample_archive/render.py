"""HTML of a page in a language, and the payloads of robots.txt, redirects, 404s, images and PDFs.

Translations of a page share the host template, the images and the concept-aligned
text (with noise: a dropped paragraph, a few words more or less); other pages of
the host share only the template. `render_page` also returns what a WAT records
of the page: title, metas, head links and every link in document order.

Why one module: every page kind shares one template, one vocabulary and one link order
(what the WAT records); the boilerplate blocks and the body are rendered together.
"""
from __future__ import annotations

import functools
import html
import itertools
import random
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

from parascout.udfs.common.langs import load_languages
from parascout.udfs.sample_archive.sites import ARTICLES_PER_LISTING, Page, Site
from parascout.udfs.sample_archive.texts import phrases
from parascout.udfs.sample_archive.topics import titled, with_mentions
from parascout.udfs.sample_archive.vocabulary import N_CONCEPTS, RIGHT_TO_LEFT, vocabulary

TEMPLATES = (
    {"header": '<header class="site-header">', "header_end": "</header>", "nav": '<nav class="main-menu"><ul>',
     "nav_end": "</ul></nav>", "main": '<main id="content"><article>', "main_end": "</article></main>",
     "footer": '<footer class="site-footer">', "footer_end": "</footer>", "switcher": "lang-switcher"},
    {"header": '<div id="header">', "header_end": "</div>", "nav": '<div id="menu"><ul class="menu">',
     "nav_end": "</ul></div>", "main": '<div id="main"><div class="post">', "main_end": "</div></div>",
     "footer": '<div id="footer">', "footer_end": "</div>", "switcher": "languages"},
    {"header": '<header class="navbar navbar-expand-lg">', "header_end": "</header>",
     "nav": '<nav><ul class="navbar-nav">', "nav_end": "</ul></nav>",
     "main": '<div class="container"><div class="row"><div class="col-md-8">', "main_end": "</div></div></div>",
     "footer": '<footer class="footer mt-auto">', "footer_end": "</footer>", "switcher": "wpml-ls"},
    {"header": '<table class="layout"><tr><td class="top">', "header_end": "</td></tr>",
     "nav": '<tr><td class="nav"><ul>', "nav_end": "</ul></td></tr>", "main": '<tr><td class="body">',
     "main_end": "</td></tr>", "footer": '<tr><td class="bottom">', "footer_end": "</td></tr></table>",
     "switcher": "lang"},
)


@dataclass
class Rendered:
    """A page's HTML and what a WAT records of it."""

    html: str
    title: str
    metas: list = field(default_factory=list)
    head_links: list = field(default_factory=list)
    links: list = field(default_factory=list)


@functools.lru_cache(maxsize=1)
def _zipf_cumulative() -> list[float]:
    return list(itertools.accumulate(1.0 / (rank + 1) for rank in range(N_CONCEPTS)))


@functools.lru_cache(maxsize=8192)
def text_plan(seed: int, paragraphs: tuple[int, int] = (3, 7)) -> tuple:
    """Paragraphs of sentences of concept ids, shared by every translation of a page (cached: read-only)."""
    rng = random.Random(seed)
    cumulative, concepts = _zipf_cumulative(), range(N_CONCEPTS)
    return tuple(tuple(tuple(rng.choices(concepts, cum_weights=cumulative, k=rng.randint(6, 16)))
                       for _ in range(rng.randint(2, 5))) for _ in range(rng.randint(*paragraphs)))


def translate_plan(plan: tuple, seed: int, lang: str) -> list[list[list[int]]]:
    """A translation's version of a plan: a paragraph may be dropped, words come and go."""
    rng = random.Random(f"{seed}:{lang}")
    cumulative, concepts = _zipf_cumulative(), range(N_CONCEPTS)
    result = []
    for index, paragraph in enumerate(plan):
        if index and len(plan) > 2 and rng.random() < 0.07:
            continue
        sentences = []
        for sentence in paragraph:
            words = [concept for concept in sentence if rng.random() > 0.08] or list(sentence)
            if rng.random() < 0.15:
                words = words + rng.choices(concepts, cum_weights=cumulative, k=rng.randint(1, 3))
            sentences.append(words)
        result.append(sentences)
    return result


def first_sentence(page: Page, lang: str) -> str:
    """The teaser of an article, as listing pages show it."""
    plan = text_plan(page.seed, (1, 1))
    return vocabulary(lang).sentence(plan[0][0])


def lead_text(site: Site, page: Page, lang: str) -> str:
    """An article's first sentence (its teaser and meta description): real text with a corpus."""
    if page.text is None:
        return first_sentence(page, lang)
    return site.lead(page, lang)[0] or page_title(site, page, lang)


def body_blocks(site: Site, page: Page, lang: str) -> list[tuple[str, str]]:
    """--text-corpus: the main body as (tag, text) in document order; truth's body_text joins the texts."""
    blocks = [("h1", page_title(site, page, lang))]
    if page.text is None:
        return blocks
    version = site.version(page, lang)
    if page.kind == "article":
        blocks.append(("date", f"{vocabulary(lang).months[page.topic[1]]} 2098"))
    for index, text in enumerate(version.paragraph_texts()):
        if index in version.headings:
            blocks.append(("h2", version.headings[index]))
        blocks.append(("p", text))
    blocks = with_mentions(blocks, page, lang, vocabulary(lang))
    if version.note:
        blocks.append(("note", version.note.text))
    return blocks


def body_text(site: Site, page: Page, lang: str) -> str:
    return "\n".join(text for _, text in body_blocks(site, page, lang))


def page_title(site: Site, page: Page, lang: str) -> str:
    vocab = vocabulary(lang)
    if page.kind == "article":
        if page.text is not None:
            return titled(page, lang, site.lead(page, lang)[1] or vocab.title(*page.topic[:2]))
        return titled(page, lang, vocab.title(*page.topic[:2]))
    if page.kind in ("section", "listing"):
        title = vocab.regions[site.sections[page.section]]
        return f"{title} ({page.number})" if page.kind == "listing" else title
    return site.host.removeprefix("www.").split(".")[0].replace("-", " ").title()


class _Page:
    """Builds one HTML document while recording its links the way a WAT lists them."""

    def __init__(self, site: Site, page: Page, lang: str, url: str, variant: str | None = None):
        self.site, self.page, self.lang, self.url, self.variant = site, page, lang, url, variant
        self.host = urlsplit(url).hostname
        self.absolute = site.template % 2 == 1
        self.parts: list[str] = []
        self.links: list[dict] = []

    def href(self, url: str) -> str:
        host, local = _host_and_local(url)
        return url if self.absolute or host != self.host else local

    def anchor(self, url: str, text: str, attributes: str = "") -> str:
        href = self.href(url)
        self.links.append({"path": "A@/href", "url": href, "text": text})
        return f'<a href="{html.escape(href)}"{attributes}>{html.escape(text)}</a>'

    def media(self, path: str) -> str:
        """Images and files live on the host's main name, also for pages on language subdomains."""
        return path if self.host == self.site.host and not self.absolute else f"https://{self.site.host}{path}"

    def image(self, path: str, alt: str) -> str:
        src = self.media(path)
        self.links.append({"path": "IMG@/src", "url": src, "alt": alt})
        return f'<img src="{html.escape(src)}" alt="{html.escape(alt)}">'


@functools.lru_cache(maxsize=65536)
def _host_and_local(url: str) -> tuple[str | None, str]:
    parts = urlsplit(url)
    return parts.hostname, parts.path + (f"?{parts.query}" if parts.query else "")


def render_page(site: Site, page: Page, lang: str, variant: str | None = None, url: str | None = None) -> Rendered:
    """The HTML of a page in a language, with its title, metas, head links and links.

    With a corpus, real boilerplate surrounds the body (cookie notice, sidebar, legal footer); a near-duplicate
    `variant` is a print view (body alone) or a copy in another section (its own canonical `url`).
    """
    own_url = url if variant == "section_copy" else site.urls[(page.key, lang)]
    vocab = vocabulary(lang)
    template = TEMPLATES[site.template]
    doc = _Page(site, page, lang, own_url, variant)
    title = page_title(site, page, lang)
    site_name = page_title(site, site.pages["home"], lang)
    boxed = site.corpus is not None and variant != "print"
    cookie = _cookie_notice(doc) if boxed else ""
    header = _header(doc, vocab, template, site_name) if variant != "print" else \
        f'<p class="print-header">{html.escape(site_name)}</p>\n'  # built first: WAT links follow document order
    body = _body(doc, vocab)
    description = lead_text(site, page, lang) if page.kind == "article" else title
    metas, head_links, head = _head(doc, description)
    html_lang = _html_lang(site, lang)
    direction = ' dir="rtl"' if lang in RIGHT_TO_LEFT else ""
    sidebar = _sidebar(doc, site_name) if boxed else ""
    footer = _footer(doc, template, site_name)
    document = "".join((
        "<!DOCTYPE html>\n", f"<html{html_lang}{direction}>\n<head>\n<meta charset=\"utf-8\">\n",
        f"<title>{html.escape(title)} | {html.escape(site_name)}</title>\n", "\n".join(head),
        "\n</head>\n<body>\n", cookie, header, template["main"], body, template["main_end"], sidebar, footer,
        "\n</body>\n</html>\n"))
    return Rendered(document, f"{title} | {site_name}", metas, head_links, doc.links)


def _head(doc: _Page, description: str) -> tuple[list, list, list[str]]:
    """Metas and head links (stylesheet, canonical, hreflang alternates) as WAT records them, and their HTML."""
    site, page = doc.site, doc.page
    metas = [{"name": "viewport", "content": "width=device-width, initial-scale=1"},
             {"name": "description", "content": description}]
    head_links = [{"path": "LINK@/href", "url": "/static/site.css", "rel": "stylesheet"},
                  {"path": "LINK@/href", "url": doc.href(doc.url), "rel": "canonical"}]
    if site.hreflang and len(page.languages) > 1:
        for other in page.languages:
            code = load_languages()[other].iso639_1 or other
            head_links.append({"path": "LINK@/href", "url": site.urls[(page.key, other)], "rel": "alternate",
                               "hreflang": code})
    head = [f'<meta name="{m["name"]}" content="{html.escape(m["content"])}">' for m in metas]
    for link in head_links:
        extra = f' hreflang="{link["hreflang"]}"' if "hreflang" in link else ""
        head.append(f'<link rel="{link["rel"]}" href="{html.escape(link["url"])}"{extra}>')
    return metas, head_links, head


def _html_lang(site: Site, lang: str) -> str:
    if site.html_lang == "missing":
        return ""
    code_lang = site.languages[0] if site.html_lang == "primary" else lang
    return f' lang="{load_languages()[code_lang].iso639_1 or code_lang}"'


def _header(doc: _Page, vocab, template: dict, site_name: str) -> str:
    site, lang = doc.site, doc.lang
    parts = [template["header"], doc.anchor(site.home_url(lang), site_name, ' class="logo"'),
             doc.image("/static/logo.png", site_name), template["nav"]]
    if site.corpus is not None:
        parts.append(f"<li>{doc.anchor(site.home_url(lang), phrases(lang)['home'])}</li>")
    for s in range(len(site.sections)):
        parts.append(f"<li>{doc.anchor(site.urls[(f'section/{s}', lang)], vocab.regions[site.sections[s]])}</li>")
    parts.append(template["nav_end"])
    if site.has_switcher(doc.page, lang):
        parts.append(f'<div class="{template["switcher"]}"><ul>')
        for other in site.languages:
            if other == lang:
                continue
            target = site.urls.get((doc.page.key, other)) or site.home_url(other)
            name = vocabulary(other).language_names[other]
            code = load_languages()[other].iso639_1 or other
            label = code.upper() if site.template == 3 else name[:1].upper() + name[1:]
            attribute = f' hreflang="{code}"'
            parts.append(f"<li>{doc.anchor(target, label, attribute)}</li>")
        parts.append("</ul></div>")
    parts.append(template["header_end"])
    return "\n".join(parts)


def _cookie_notice(doc: _Page) -> str:
    words = phrases(doc.lang)
    return (f'<div id="cookie-notice" class="cookie-banner"><p>{html.escape(words["cookies"])}</p>'
            f'<button type="button">{html.escape(words["accept"])}</button></div>\n')


def _sidebar(doc: _Page, site_name: str) -> str:
    """Site-wide links (the newest article of each section), social images and a newsletter box."""
    site, lang, words = doc.site, doc.lang, phrases(doc.lang)
    newest = [keys[0] for s in range(len(site.sections)) if (keys := site.listings.get((s, lang)))][:4]
    parts = ['<aside class="sidebar">', f"<h3>{html.escape(words['popular'])}</h3>", "<ul>"]
    parts += [f"<li>{doc.anchor(site.urls[(key, lang)], page_title(site, site.pages[key], lang))}</li>"
              for key in newest]
    parts += ["</ul>", f"<h3>{html.escape(words['follow'])}</h3>", '<p class="social">',
              doc.anchor(f"https://www.facebook.com/{site.spec.domain.split('.')[0]}", "Facebook"),
              doc.image("/static/social.png", words["follow"]),
              "</p>", f'<div class="newsletter"><p>{html.escape(words["newsletter"])}</p></div>',
              doc.image(f"/static/banner-{site.template}.jpg", site_name), "</aside>\n"]
    return "\n".join(parts)


def _legal_footer(doc: _Page, site_name: str) -> list[str]:
    words = phrases(doc.lang)
    parts = [f"<p>© 2099 {html.escape(site_name)}. {html.escape(words['rights'])}</p>"]
    if doc.variant == "print":
        return parts
    parts.append(f'<p class="legal">{html.escape(words["legal"])}</p>')
    links = [doc.anchor(path, words[key]) for path, key in (("/privacy/", "privacy"), ("/terms/", "terms"),
                                                             ("/legal/", "imprint"), ("/contact/", "contact"))]
    parts.append('<ul class="legal-links">' + "".join(f"<li>{link}</li>" for link in links) + "</ul>")
    return parts


def _footer(doc: _Page, template: dict, site_name: str) -> str:
    neighbours = doc.site.spec.neighbours
    if doc.site.corpus is not None:
        parts = [template["footer"], *_legal_footer(doc, site_name)]
    else:
        parts = [template["footer"], f"<p>© 2099 {html.escape(site_name)}</p>"]
    if neighbours:
        neighbour = neighbours[doc.page.seed % len(neighbours)]
        parts.append(doc.anchor(f"https://{neighbour}/", neighbour.removeprefix("www.")))
    parts.append(template["footer_end"])
    return "\n".join(parts)


def _paragraphs(vocab, plan: list) -> list[str]:
    return [" ".join(vocab.sentence(sentence) for sentence in paragraph) if vocab.joiner else
            "".join(vocab.sentence(sentence) for sentence in paragraph) for paragraph in plan]


def _body(doc: _Page, vocab) -> str:
    page = doc.page
    if page.kind == "article":
        return _article_body(doc, vocab)
    if doc.site.corpus is not None:
        parts = [_block_html(tag, text) for tag, text in body_blocks(doc.site, page, doc.lang)]
    else:
        parts = [f"<h1>{html.escape(page_title(doc.site, page, doc.lang))}</h1>"]
        plan = translate_plan(text_plan(page.seed, (1, 2)), page.seed, doc.lang)
        parts += [f"<p>{html.escape(text)}</p>" for text in _paragraphs(vocab, plan)]
    parts += _teasers(doc, vocab)
    return "\n".join(parts)


def _block_html(tag: str, text: str) -> str:
    if tag == "date":
        return f'<p class="date">{html.escape(text)}</p>'
    if tag == "note":
        return f'<p class="translator-note"><em>{html.escape(text)}</em></p>'
    return f"<{tag}>{html.escape(text)}</{tag}>"


def _teasers(doc: _Page, vocab) -> list[str]:
    site, page, lang = doc.site, doc.page, doc.lang
    if page.kind == "home":
        keys = sorted((k for s in range(len(site.sections)) for k in site.listings.get((s, lang), ())[:3]),
                      key=lambda k: -site.pages[k].number)[:8]
    else:
        start = (page.number - 1) * ARTICLES_PER_LISTING
        keys = site.listings.get((page.section, lang), [])[start:start + ARTICLES_PER_LISTING]
    parts = ['<ul class="teasers">']
    for key in keys:
        article = site.pages[key]
        title = page_title(site, article, lang)
        parts.append(f"<li><h2>{doc.anchor(site.urls[(key, lang)], title)}</h2>"
                     f"<p>{html.escape(lead_text(site, article, lang))}</p></li>")
    parts.append("</ul>")
    if page.kind != "home":
        n_pages = -(-len(site.listings.get((page.section, lang), ())) // ARTICLES_PER_LISTING)
        pager = []
        for number in range(1, n_pages + 1):
            key = f"section/{page.section}" if number == 1 else f"list/{page.section}/{number}"
            if number != page.number and (key, lang) in site.urls:
                pager.append(doc.anchor(site.urls[(key, lang)], str(number)))
        if pager:
            parts.append('<div class="pagination">' + " ".join(pager) + "</div>")
    return parts


def _article_body(doc: _Page, vocab) -> str:
    site, page, lang = doc.site, doc.page, doc.lang
    rng = random.Random(f"links:{page.seed}:{lang}")
    title = page_title(site, page, lang)
    images = [image for image in page.images if rng.random() > 0.1]
    if page.text is not None:
        blocks = body_blocks(site, page, lang)
    else:
        plan = translate_plan(text_plan(page.seed), page.seed, lang)
        blocks = [("h1", title), ("date", f"{vocab.months[page.topic[1]]} 2098")] + \
            [("p", text) for text in _paragraphs(vocab, plan)]
        blocks = with_mentions(blocks, page, lang, vocab)
    parts, index = [], 0
    for tag, text in blocks:
        parts.append(_block_html(tag, text))
        if tag == "p":
            if index % 2 == 0 and images:
                parts.append(f"<figure>{doc.image(images.pop(0), title)}</figure>")
            index += 1
    if page.pdf:
        parts.append(f'<p class="download">{doc.anchor(doc.media(page.pdf), "PDF")}</p>')
    related = [k for k in site.listings.get((page.section, lang), ()) if k != page.key]
    if related:
        parts.append('<ul class="related">')
        for key in rng.sample(related, min(len(related), rng.randint(3, 5))):
            parts.append(f"<li>{doc.anchor(site.urls[(key, lang)], page_title(site, site.pages[key], lang))}</li>")
        parts.append("</ul>")
    for url, kind in site.extra_links.get((page.key, lang), ()):
        parts.append(f"<p>{doc.anchor(url, title if kind != 'broken' else vocab.word(page.seed % 500))}</p>")
    code = load_languages()[lang].iso639_1 or lang
    territory = vocab.territories[page.topic[0]]
    wiki = f"https://{code}.wikipedia.org/wiki/{quote(territory.replace(' ', '_'))}"
    parts.append(f'<p class="source">{doc.anchor(wiki, territory)}</p>')
    return "\n".join(parts)


# ---- payloads of non-HTML and error captures ------------------------------------------------


def robots_txt(host: str) -> bytes:
    return (f"User-agent: *\nDisallow: /admin/\nDisallow: /search\n\nSitemap: https://{host}/sitemap.xml\n").encode()


def redirect_html(location: str) -> bytes:
    escaped = html.escape(location)
    return (f'<!DOCTYPE html>\n<html><head><title>301 Moved Permanently</title></head><body>\n'
            f'<h1>Moved Permanently</h1><p>The document has moved <a href="{escaped}">here</a>.</p>\n'
            f"</body></html>\n").encode()


def not_found_html() -> bytes:
    return b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body>\n<h1>Not Found</h1>\n" \
           b"<p>The requested URL was not found on this server.</p>\n</body></html>\n"


def binary_payload(kind: str, seed: str) -> bytes:
    """A small, deterministic JPEG/PNG/PDF-looking payload."""
    rng = random.Random(seed)
    noise = rng.randbytes(rng.randint(300, 1500))
    if kind == "pdf":
        return b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\nstream\n" + noise + \
            b"\nendstream\n%%EOF\n"
    if kind == "png":
        return b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + noise + b"IEND\xaeB`\x82"
    return b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + noise + b"\xff\xd9"
