"""Synthetic bilingual sites (English/Icelandic URLs under eight naming conventions, image and prose pages): the
inputs of blocking and rank-pairs tests and of bench_rank_pairs' synthetic URL set."""
from __future__ import annotations

import random

import pandas as pd

from parascout.udfs.rank import blocking

WORDS = [
    "harbour", "glacier", "volcano", "festival", "museum", "history", "ferry", "island", "puffin", "geyser",
    "saga", "fjord", "north", "market", "winter", "summer", "river", "lighthouse", "valley", "church", "farm",
    "bridge", "wool", "fish", "bread", "library", "school", "concert", "theatre", "lake"
]
ICELANDIC = [
    "höfn", "jökull", "eldfjall", "hátíð", "safn", "saga", "ferja", "eyja", "lundi", "hver", "saga", "fjörður",
    "norður", "markaður", "vetur", "sumar", "á", "viti", "dalur", "kirkja", "bær", "brú", "ull", "fiskur",
    "brauð", "bókasafn", "skóli", "tónleikar", "leikhús", "vatn"
]
CONVENTIONS = ("dir_code", "query", "suffix", "locale", "name", "unmarked", "ids", "subdomain")


def convention_pair(convention: str, site: str, page: int, rng: random.Random) -> tuple[str, str]:
    """One (English URL, Icelandic URL) translation pair on `site` following a URL convention."""
    words = rng.sample(range(len(WORDS)), 3)
    section = WORDS[words[0]]
    slug = "-".join(WORDS[i] for i in words[1:]) + f"-{page}"
    base = f"https://www.{site}"
    if convention == "dir_code":
        return f"{base}/en/{section}/{slug}", f"{base}/is/{section}/{slug}"
    if convention == "query":
        return f"{base}/{section}/{slug}.php?lang=en", f"{base}/{section}/{slug}.php?lang=is"
    if convention == "suffix":
        return f"{base}/{section}/{slug}.en.html", f"{base}/{section}/{slug}.is.html"
    if convention == "locale":
        return f"{base}/en-gb/{section}/{slug}/", f"{base}/is-is/{section}/{slug}/"
    if convention == "name":
        return f"{base}/english/{section}/{slug}.htm", f"{base}/islenska/{section}/{slug}.htm"
    if convention == "unmarked":
        return f"{base}/{section}/{slug}", f"{base}/is/{section}/{slug}"
    if convention == "ids":
        is_slug = "-".join(ICELANDIC[i] for i in words[1:])
        return f"{base}/en/news/{page}-{slug}", f"{base}/is/frettir/{page}-{is_slug}"
    return f"https://en.{site}/{section}/{slug}", f"https://{site}/{section}/{slug}"


def synthetic_sites(n_sites: int = 16, pages: int = 120, translated: float = 0.6, seed: int = 7) -> pd.DataFrame:
    """URLs of bilingual sites, one convention each: url, site, lang, pair_id (None for untranslated pages)."""
    rng = random.Random(seed)
    rows = []
    for number in range(n_sites):
        convention = CONVENTIONS[number % len(CONVENTIONS)]
        site = f"site{number}.is"
        for page in range(pages):
            english, icelandic = convention_pair(convention, site, page, rng)
            if rng.random() < translated:
                rows += [(english, site, "eng", f"{site}:{page}"), (icelandic, site, "isl", f"{site}:{page}")]
            else:
                rows.append((english, site, "eng", None) if rng.random() < 0.6 else (icelandic, site, "isl", None))
    return pd.DataFrame(rows, columns=["url", "site", "lang", "pair_id"])


def image_pages() -> pd.DataFrame:
    """Fetched pages of one site: 12 translations with unrelated ids sharing a photo, a logo and an English
    flag on every page, an English-only picture, a banner on 6 pages, and a German page (another language)."""
    rows = []
    for i in range(12):
        rows.append(("x.is", f"https://x.is/en/article/{100 + i}", "eng",
                     [f"photo-{i}.jpg", "logo.png", "flag-en.png"] + ["banner.jpg"] * (i < 3) + ["only-en.jpg"] * (i == 0)))
        rows.append(("x.is", f"https://x.is/is/grein/{900 + 7 * i}", "isl",
                     [f"photo-{i}.jpg", "logo.png"] + ["banner.jpg"] * (i < 3)))
    rows.append(("x.is", "https://x.is/de/artikel/1", "deu", ["photo-0.jpg", "logo.png"]))
    rows.append(("x.is", "https://x.is/is/empty", "isl", []))
    return pd.DataFrame(rows, columns=["site", "url", "lang", "images"])


def linearised(paragraph_lengths: list[int]) -> list[str]:
    """A STRAND linearisation (docs.structure) of a page: navigation, then one chunk per paragraph."""
    tokens = ["[START:body]", "[START:a]", "[Chunk:12]", "[END:a]", "[START:img]"]
    for length in paragraph_lengths:
        tokens += ["[START:p]", f"[Chunk:{length}]", "[END:p]"]
    return tokens + ["[END:body]"]


def prose_pages(n: int = 14, seed: int = 2, host: str = "x.is") -> pd.DataFrame:
    """Translations with unrelated ids whose paragraphs are 30% longer in Icelandic, a page without paragraphs."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        lengths = [rng.randint(20, 400) for _ in range(rng.randint(3, 9))]
        rows.append((host, f"https://{host}/en/story/{200 + i}", "eng", linearised(lengths)))
        rows.append((host, f"https://{host}/is/saga/{700 + 13 * i}", "isl",
                     linearised([round(length * rng.uniform(1.2, 1.4)) for length in lengths])))
    rows.append((host, f"https://{host}/is/", "isl", linearised([])))
    frame = pd.DataFrame(rows, columns=["host", "url", "lang", "structure"])
    frame["profile"] = [blocking.paragraph_profile(structure) for structure in frame["structure"]]
    return frame
