"""The synthetic web: host plans, each host's pages in its languages, their URLs and captures.

`plan_sites` draws every host's outline (name, languages, conventions, size) from
the seed; `build_site` expands one outline into pages, URLs and captures. A host
depends only on (seed, index), so hosts can be built one group at a time.

Why one module: a host's outline, its pages and its URLs are drawn from one seeded stream in
a fixed order; byte-identical archives for a seed depend on that order staying in one place.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from urllib.parse import urlsplit, urlunsplit

from parascout.udfs.common.langs import load_languages
from parascout.udfs.sample_archive.conventions import (
    MARKERS,
    PATH_STYLES,
    Convention,
    build_url,
    draw_convention,
    name_token,
)
from parascout.udfs.sample_archive.corpus import TextCorpus
from parascout.udfs.sample_archive.page_texts import assign_texts
from parascout.udfs.sample_archive.texts import PageText, Version, build_version, lead_and_title
from parascout.udfs.sample_archive.topics import assign_mentions
from parascout.udfs.sample_archive.vocabulary import REGION_CODES, country_codes, slugify, vocabulary

ARTICLES_PER_LISTING = 10
SERVERS = ("nginx", "Apache", "nginx/1.24.0", "Apache/2.4.58 (Ubuntu)", "cloudflare", "LiteSpeed",
           "Microsoft-IIS/10.0", "openresty")
IP_PREFIXES = ("192.0.2", "198.51.100", "203.0.113")
IDS_FORMS = ("path", "path", "query_id", "query_p", "slug_id")
IDS_WORDS = ("article", "node", "post", "item", "news", "p")


@dataclass
class Page:
    """One logical page of a host; `languages` are those it exists in (host order)."""

    key: str
    kind: str  # home | section | listing | article
    section: int
    number: int
    languages: tuple[str, ...]
    seed: int
    topic: tuple = ()
    images: tuple[str, ...] = ()
    pdf: str | None = None
    text: PageText | None = None  # --text-corpus: the page's passage and plan
    on_topic: bool = False  # --topical-sites: an article about the topic (topics.py)
    mentions: tuple[str, ...] = ()  # --topical-sites: currencies the article names in its body
    title_mention: str | None = None  # --topical-sites: the currency its title names


@dataclass
class Capture:
    """One fetched URL as the crawler stored it."""

    url: str
    subset: str  # warc | crawldiagnostics | robotstxt
    kind: str  # page | duplicate | image | pdf | redirect | notfound | robots
    status: int
    mime: str
    fetch_time: datetime
    page: str | None = None
    lang: str | None = None
    location: str | None = None
    variant: str | None = None  # near-duplicates with --text-corpus: tracking | print | section_copy


@dataclass
class SiteSpec:
    """A host's outline, drawn before any page exists."""

    index: int
    seed: str
    domain: str
    host: str
    languages: tuple[str, ...]
    n_pages: int
    convention: Convention
    secondary: Convention | None
    neighbours: tuple[str, ...]
    passage_share: float = 0.0  # share of the archive's pages planned before this host (where its passages start)
    topic: str | None = None  # --topical-sites: the topic most of its articles are about


@dataclass
class Site:
    """A host with its pages, their URLs per language, and its captures."""

    spec: SiteSpec
    sections: tuple[str, ...]
    section_conventions: dict
    pages: dict = field(default_factory=dict)
    urls: dict = field(default_factory=dict)  # (page key, lang) -> URL
    ids: dict = field(default_factory=dict)  # (page key, lang) -> numeric id (ids path style)
    listings: dict = field(default_factory=dict)  # (section, lang) -> article keys, newest first
    extra_links: dict = field(default_factory=dict)  # (page key, lang) -> [(url, kind)]
    captures: list = field(default_factory=list)
    switcher_mode: str = "none"
    no_switcher: set = field(default_factory=set)
    hreflang: bool = False
    template: int = 0
    server: str = "nginx"
    ip: str = "192.0.2.1"
    ascii_slugs: bool = True
    html_lang: str = "correct"
    listing_style: str = "path"
    ids_form: str = "path"
    ids_word: str = "article"
    trailing: str = "/"
    corpus: TextCorpus | None = None
    versions: dict = field(default_factory=dict)  # (page key, lang) -> Version (--text-corpus)
    leads: dict = field(default_factory=dict)  # (page key, lang) -> (first sentence, title) (--text-corpus)
    passages_reused: int = 0

    @property
    def host(self) -> str:
        return self.spec.host

    @property
    def languages(self) -> tuple[str, ...]:
        return self.spec.languages

    def convention_of(self, page: Page) -> Convention:
        return self.section_conventions.get(page.section, self.spec.convention)

    def home_url(self, lang: str) -> str:
        return self.urls[("home", lang)]

    def version(self, page: Page, lang: str) -> Version:
        """A page's real text in a language (--text-corpus), built once."""
        key = (page.key, lang)
        if key not in self.versions:
            self.versions[key] = build_version(page.text, lang, self.corpus)
        return self.versions[key]

    def lead(self, page: Page, lang: str) -> tuple[str, str]:
        """A page's first sentence and title in a language (--text-corpus), without building its whole text."""
        key = (page.key, lang)
        if key in self.versions:
            version = self.versions[key]
            return (version.paragraphs[0][0].text if version.paragraphs else ""), version.title
        if key not in self.leads:
            self.leads[key] = lead_and_title(page.text, lang, self.corpus)
        return self.leads[key]

    def has_switcher(self, page: Page, lang: str) -> bool:
        if len(self.languages) < 2 or self.switcher_mode == "none":
            return False
        if self.switcher_mode == "home_only":
            return page.kind == "home"
        return (page.key, lang) not in self.no_switcher


def weighted(rng: random.Random, weights: dict):
    keys = list(weights)
    return rng.choices(keys, weights=[float(weights[k]) for k in keys])[0]


def deck(rng: random.Random, weights: dict, n: int) -> list:
    """n draws whose shares follow the weights closely even for small n (a shuffled deck)."""
    total = sum(float(w) for w in weights.values())
    cards = []
    for key, weight in weights.items():
        cards += [key] * math.floor(n * float(weight) / total)
    while len(cards) < n:
        cards.append(weighted(rng, weights))
    rng.shuffle(cards)
    return cards[:n]


def plan_sites(n_hosts: int, seed: int, langs: list[str], conf: dict, pages_per_host: int) -> list[SiteSpec]:
    """Every host's outline: deterministic for (n_hosts, seed, langs, conf, pages_per_host)."""
    rng = random.Random(f"plan:{seed}")
    n_multi = round(n_hosts * float(conf["multilingual_share"])) if len(langs) > 1 else 0
    multilingual = [True] * n_multi + [False] * (n_hosts - n_multi)
    rng.shuffle(multilingual)
    markers = deck(rng, {m: conf["markers"].get(m, 0) for m in MARKERS}, n_hosts)
    styles = deck(rng, {s: conf["path_styles"].get(s, 0) for s in PATH_STYLES}, n_hosts)
    primaries = [langs[i % len(langs)] for i in range(n_hosts)]
    rng.shuffle(primaries)
    sizes = [rng.lognormvariate(0, 0.8) for _ in range(n_hosts)]
    scale = pages_per_host * n_hosts / sum(sizes)
    weights = {lang: float((conf.get("language_weights") or {}).get(lang, 1)) for lang in langs}
    specs, domains = [], set()
    for index in range(n_hosts):
        host_rng = random.Random(f"spec:{seed}:{index}")
        primary = primaries[index]
        languages = [primary]
        if multilingual[index]:
            n_langs = min(len(langs), int(weighted(host_rng, conf["languages_per_host"])))
            while len(languages) < n_langs:
                choice = weighted(host_rng, {k: v for k, v in weights.items() if k not in languages})
                languages.append(choice)
        domain = _domain_name(host_rng, primary, conf, domains)
        convention = draw_convention(host_rng, markers[index], styles[index],
                                     host_rng.random() < float(conf["primary_unmarked_share"]))
        secondary = None
        if len(languages) > 1 and host_rng.random() < float(conf["secondary_convention_share"]):
            secondary = draw_convention(host_rng, weighted(host_rng, conf["markers"]),
                                        weighted(host_rng, conf["path_styles"]), host_rng.random() < 0.5)
        n_pages = max(12, min(int(sizes[index] * scale), pages_per_host * 12))
        specs.append(SiteSpec(index, f"{seed}:{index}", domain,
                              f"www.{domain}" if host_rng.random() < 0.7 else domain,
                              tuple(languages), n_pages, convention, secondary, ()))
    planned, total = 0, sum(spec.n_pages for spec in specs)
    for spec in specs:
        picks = random.Random(f"links:{spec.seed}").sample(range(n_hosts - 1), min(3, n_hosts - 1))
        spec.neighbours = tuple(specs[i + (i >= spec.index)].host for i in picks)
        spec.passage_share, planned = planned / total, planned + spec.n_pages
    return specs


def _domain_name(rng: random.Random, primary: str, conf: dict, taken: set) -> str:
    vocab = vocabulary(primary if primary not in ("zho", "ara", "rus", "ell") else "eng")
    tlds = (conf.get("tlds") or {}).get(primary) or conf.get("default_tlds") or ["com"]
    while True:
        words = [slugify(vocab.word(rng.randrange(200, 2500))) for _ in range(2)]
        words = [w for w in words if w.isascii() and 3 <= len(w) <= 10]
        if len(words) < 2:
            continue
        name = ("-" if rng.random() < 0.3 else "").join(words) + "." + rng.choice(tlds)
        if name not in taken:
            taken.add(name)
            return name


def build_site(spec: SiteSpec, conf: dict, crawl_start: datetime, corpus: TextCorpus | None = None,
               seed: int = 0) -> Site:
    """Expand a host outline into pages, URLs (one per page and language) and captures; with a corpus, real text."""
    rng = random.Random(f"site:{spec.seed}")
    langs = spec.languages
    n_sections = max(2, min(6, round(spec.n_pages / (45 * len(langs)))))
    sections = tuple(rng.sample(REGION_CODES, n_sections))
    section_conventions = {}
    if spec.secondary and n_sections > 2:
        section_conventions[rng.randrange(1, n_sections)] = spec.secondary
    site = Site(spec, sections, section_conventions)
    site.switcher_mode = weighted(rng, conf["switcher_modes"]) if len(langs) > 1 else "none"
    site.hreflang = rng.random() < float(conf["hreflang_share"])
    site.template = rng.randrange(4)
    site.server = rng.choice(SERVERS)
    site.ip = f"{rng.choice(IP_PREFIXES)}.{rng.randrange(1, 255)}"
    site.ascii_slugs = rng.random() < 0.8
    site.html_lang = rng.choices(("correct", "primary", "missing"), weights=(8, 1, 1))[0]
    site.listing_style = rng.choice(("path", "query"))
    site.ids_form = rng.choice(IDS_FORMS)
    site.ids_word = rng.choice(IDS_WORDS)
    site.trailing = rng.choice(("/", "", ".html"))
    _add_pages(site, rng, conf)
    _assign_urls(site, rng)
    if corpus:
        site.corpus = corpus
        assign_texts(site, corpus, conf, seed)
    if int(conf.get("topical_sites") or 0):
        assign_mentions(site, conf)
    if site.switcher_mode == "most":
        share = float(conf["switcher_most_share"])
        site.no_switcher = {(p.key, lang) for p in site.pages.values() if p.kind != "home"
                            for lang in p.languages if rng.random() > share}
    _add_captures(site, rng, conf, crawl_start)
    return site


def _add_pages(site: Site, rng: random.Random, conf: dict) -> None:
    langs, primary = site.languages, site.languages[0]
    low, high = conf["translated_share"]
    translated = {lang: rng.uniform(float(low), float(high)) for lang in langs[1:]}
    fixed = len(langs) * (1 + len(site.sections))
    per_article = (1 + sum(translated.values())) * (1 + 1 / ARTICLES_PER_LISTING)
    n_articles = max(2, round((site.spec.n_pages - fixed) / per_article))
    seeds = iter(lambda: rng.getrandbits(62), -1)  # endless: one seed per page, drawn in page order
    site.pages["home"] = Page("home", "home", -1, 0, langs, next(seeds))
    for s in range(len(site.sections)):
        site.pages[f"section/{s}"] = Page(f"section/{s}", "section", s, 1, langs, next(seeds))
    topics = rng.sample(range(len(country_codes()) * 12), min(n_articles, len(country_codes()) * 12))
    for number in range(n_articles):
        topic_index = topics[number % len(topics)]
        topic = (country_codes()[topic_index // 12], topic_index % 12, number // len(topics))
        if len(langs) > 1 and rng.random() < float(conf["local_only_share"]):
            present = (rng.choice(langs[1:]),)
        else:
            present = (primary,) + tuple(lang for lang in langs[1:] if rng.random() < translated[lang])
        key = f"article/{number}"
        images = tuple(_image_path(rng, topic, number, k) for k in range(rng.randint(0, 3)))
        pdf = f"/files/{slugify(vocabulary('eng').title(*topic[:2]))}-{number}.pdf" \
            if rng.random() < float(conf["pdf_share"]) else None
        site.pages[key] = Page(key, "article", rng.randrange(len(site.sections)), number, present,
                               next(seeds), topic, images, pdf)
    for page in list(site.pages.values()):
        if page.kind == "article":
            for lang in page.languages:
                site.listings.setdefault((page.section, lang), []).insert(0, page.key)
    for s in range(len(site.sections)):
        n_listing = max(len(site.listings.get((s, lang), ())) for lang in langs)
        for k in range(2, math.ceil(n_listing / ARTICLES_PER_LISTING) + 1):
            present = tuple(lang for lang in langs
                            if len(site.listings.get((s, lang), ())) > (k - 1) * ARTICLES_PER_LISTING)
            site.pages[f"list/{s}/{k}"] = Page(f"list/{s}/{k}", "listing", s, k, present, next(seeds))


def _image_path(rng: random.Random, topic: tuple, number: int, k: int) -> str:
    if rng.random() < 0.5:
        return f"/images/IMG_{rng.randrange(1000, 9999)}.jpg"
    slug = slugify(vocabulary("eng").territories[topic[0]])
    return f"/media/{2090 + number % 9}/{(number % 12) + 1:02d}/{slug}-{number}-{k}.jpg"


def _assign_urls(site: Site, rng: random.Random) -> None:
    """One URL per (page, language), unique within the host."""
    languages = load_languages()
    numbers = {lang: n for n, lang in enumerate(site.languages)}
    id_pool = iter(rng.sample(range(11, 40 * len(site.pages) * len(site.languages) + 1000),
                              len(site.pages) * len(site.languages)))
    taken = set()
    for page in site.pages.values():
        convention = site.convention_of(page)
        for lang in page.languages:
            site.ids[(page.key, lang)] = next(id_pool)
            path, query = _page_path(site, page, lang, convention, site.ids[(page.key, lang)])
            url = build_url(convention, site.spec.domain, site.host, languages[lang], numbers[lang], path, query,
                            is_primary=lang == site.languages[0])
            repeat = 1
            while url in taken:
                repeat += 1
                stem = (path.removesuffix("/")) or "/index"
                bumped = f"{stem}-{repeat}" + ("/" if path.endswith("/") else "")
                url = build_url(convention, site.spec.domain, site.host, languages[lang], numbers[lang], bumped,
                                query, is_primary=lang == site.languages[0])
            taken.add(url)
            site.urls[(page.key, lang)] = url


def _slug_language(site: Site, convention: Convention, lang: str) -> str:
    return lang if convention.path_style == "translated" else site.languages[0]


def _section_path(site: Site, section: int, lang: str, convention: Convention, number: int) -> str:
    if convention.path_style == "ids":
        return f"/category/{number}/"
    region = vocabulary(_slug_language(site, convention, lang)).regions[site.sections[section]]
    return f"/{slugify(region, site.ascii_slugs)}/"


def _page_path(site: Site, page: Page, lang: str, convention: Convention, number: int) -> tuple[str, str]:
    """The language-independent part of a URL: (path, query) before the convention's marker."""
    if page.kind == "home":
        if convention.marker == "none" and lang != site.languages[0]:  # no marker: a home page per language
            return f"/{name_token(load_languages()[lang], 'endonym')}/", ""
        return "/", ""
    if page.kind == "section":
        return _section_path(site, page.section, lang, convention, number), ""
    if page.kind == "listing":
        base = _section_path(site, page.section, lang, convention, site.ids.get((f"section/{page.section}", lang), 0))
        if site.listing_style == "query":
            return base, f"page={page.number}"
        return f"{base}page/{page.number}/", ""
    vocab = vocabulary(_slug_language(site, convention, lang))
    slug = slugify(vocab.title(*page.topic[:2]), site.ascii_slugs) + (f"-{page.topic[2]}" if page.topic[2] else "")
    if convention.path_style == "ids":
        if site.ids_form == "query_id":
            return "/index.php", f"id={number}"
        if site.ids_form == "query_p":
            return "/", f"p={number}"
        if site.ids_form == "slug_id":
            return f"/{site.ids_word}/{number}-{slug}", ""
        return f"/{site.ids_word}/{number}", ""
    section = _section_path(site, page.section, lang, convention, 0)
    return f"{section}{slug}{'' if convention.marker == 'suffix' else site.trailing}", ""


def _add_captures(site: Site, rng: random.Random, conf: dict, crawl_start: datetime) -> None:
    window = float(conf["crawl_days"]) * 86400

    def when() -> datetime:
        return crawl_start + timedelta(seconds=int(rng.uniform(0, window)))

    captures = site.captures
    for page in site.pages.values():
        for lang in page.languages:
            captures.append(Capture(site.urls[(page.key, lang)], "warc", "page", 200, "text/html", when(),
                                    page.key, lang))
    hosts = sorted({url.split("/")[2] for url in site.urls.values()} | {site.host})
    for host in hosts:
        captures.append(Capture(f"https://{host}/robots.txt", "robotstxt", "robots", 200, "text/plain", when()))
    captures.append(Capture(f"http://{site.host}/", "crawldiagnostics", "redirect", 301, "text/html", when(),
                            location=f"https://{site.host}/"))
    root = f"https://{site.host}/"
    if site.home_url(site.languages[0]) != root and root not in site.urls.values():
        captures.append(Capture(root, "crawldiagnostics", "redirect", 301, "text/html", when(),
                                location=site.home_url(site.languages[0])))
    _add_special_captures(site, rng, conf, when)


def _add_special_captures(site: Site, rng: random.Random, conf: dict, when) -> None:
    """Duplicates, legacy redirects, broken links, images and PDFs, each linked from a page."""
    variants = [(p.key, lang) for p in site.pages.values() if p.kind == "article" for lang in p.languages]
    if not variants:
        return
    captures = site.captures
    used = set(site.urls.values())

    def link_from(lang: str, url: str, kind: str) -> None:
        sources = [v for v in variants if v[1] == lang] or variants
        site.extra_links.setdefault(rng.choice(sources), []).append((url, kind))

    copies = random.Random(f"copies:{site.spec.seed}") if site.corpus else None
    for key, lang in variants:
        url = site.urls[(key, lang)]
        draw = rng.random()
        if draw < float(conf["duplicate_share"]):
            duplicate = url + ("&" if "?" in url else "?") + rng.choice(("utm_source=newsletter", "share=1", "amp"))
            variant = None
            if copies:
                variant, duplicate = _near_duplicate(copies, conf, url, duplicate, used)
            captures.append(Capture(duplicate, "warc", "duplicate", 200, "text/html", when(), key, lang, variant=variant))
            link_from(lang, duplicate, "duplicate")
        elif draw < float(conf["duplicate_share"]) + float(conf["legacy_redirect_share"]):
            legacy = f"https://{site.host}/?p={rng.randrange(100000, 999999)}"
            if legacy not in used:
                used.add(legacy)
                captures.append(Capture(legacy, "crawldiagnostics", "redirect", 301, "text/html", when(),
                                        location=url))
                link_from(lang, legacy, "legacy")
    if copies and not any(c.kind == "duplicate" for c in captures):
        _add_one_near_duplicate(site, copies, conf, variants, used)
    vocab = vocabulary(site.languages[0])
    for _ in range(int(conf["broken_links_per_host"])):
        words = "-".join(slugify(vocab.word(rng.randrange(50, 2000)), site.ascii_slugs) for _ in range(2))
        broken = f"https://{site.host}/{words}-{rng.randrange(10, 99)}/"
        if broken not in used:
            used.add(broken)
            captures.append(Capture(broken, "crawldiagnostics", "notfound", 404, "text/html", when()))
            link_from(site.languages[rng.randrange(len(site.languages))], broken, "broken")
    media = {}
    for page in site.pages.values():
        for image in page.images:
            media.setdefault(image, "image")
        if page.pdf:
            media[page.pdf] = "pdf"
    media["/static/logo.png"] = "logo"
    share = float(conf["image_capture_share"])
    for path, kind in media.items():
        if kind == "image" and rng.random() > share:
            continue
        mime = {"image": "image/jpeg", "pdf": "application/pdf", "logo": "image/png"}[kind]
        captures.append(Capture(f"https://{site.host}{path}", "warc", "pdf" if kind == "pdf" else "image", 200,
                                mime, when()))


def _near_duplicate(rng: random.Random, conf: dict, url: str, tracking: str, used: set) -> tuple[str, str]:
    """(variant, URL) of a near-duplicate: the tracking-parameter URL, a print view, or a copy in another section."""
    variant = weighted(rng, conf["text_corpus"]["near_duplicate_variants"])
    if variant == "print":
        return variant, url + ("&" if "?" in url else "?") + "print=1"
    if variant == "section_copy":
        parts = urlsplit(url)
        copy = urlunsplit((parts.scheme, parts.netloc, "/archive" + parts.path, parts.query, ""))
        if copy not in used:
            used.add(copy)
            return variant, copy
    return "tracking", tracking


def _add_one_near_duplicate(site: Site, rng: random.Random, conf: dict, variants: list, used: set) -> None:
    """--text-corpus: every host has at least one near-duplicate (drawn apart from the host's main draws)."""
    key, lang = variants[rng.randrange(len(variants))]
    url = site.urls[(key, lang)]
    variant, duplicate = _near_duplicate(rng, conf, url, url + ("&" if "?" in url else "?") + "utm_source=feed", used)
    moment = next(c.fetch_time for c in site.captures if c.url == url) + timedelta(hours=rng.randint(1, 48))
    site.captures.append(Capture(duplicate, "warc", "duplicate", 200, "text/html", moment, key, lang, variant=variant))
    sources = [v for v in variants if v[1] == lang]
    site.extra_links.setdefault(sources[rng.randrange(len(sources))], []).append((duplicate, "duplicate"))
