"""Synthetic URLs with language markers in every position STRAND's handles strip (bench_handles' workload,
tests/rank/test_handles.py's agreement input)."""
from __future__ import annotations

import random

WORDS = ["news", "about", "products", "team", "energy", "report", "contact", "index", "article", "media",
         "events", "services", "history", "press", "search", "catalog", "shop", "help", "faq", "gallery"]
MARKERS = ["/{l}/", "/{name}/", "-{l}.html", "_{l3}.htm", "?lang={l}", "&lang={L}", "/{l}_{R}/", "/{l}-{r}/", ""]
LANGS = [("en", "eng", "english", "GB"), ("fr", "fra", "francais", "CA")]


def synthetic_urls(n: int, seed: int = 1) -> list[str]:
    """Realistic-looking URLs: hosts, 1-4 path words, ids, one language marker convention each."""
    rng = random.Random(seed)
    urls = []
    for i in range(n):
        code, code3, name, region = rng.choice(LANGS)
        marker = rng.choice(MARKERS).format(l=code, L=code.upper(), l3=code3, name=name, R=region, r=region.lower())
        host = f"{rng.choice(['www.', '', 'en.', 'shop.'])}site{rng.randrange(50_000)}.{rng.choice(['com', 'org', 'ca'])}"
        path = "/".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
        url = f"http{rng.choice(['', 's'])}://{host}/{path}/{rng.randrange(10**6)}"
        if marker.startswith("/"):
            url = f"http://{host}{marker}{path}/{i}.html"
        elif marker.startswith(("?", "&")):
            url = f"{url}.php?id={i}{marker.replace('?', '&')}"
        else:
            url = f"{url}{marker}"
        urls.append(url)
    return urls
