"""rank-pairs' test archive: convention, image, link and prose sites with their true pairs, broken rows, and the
URL models trained on them."""
from __future__ import annotations

import random
from pathlib import Path

import pandas as pd

from parascout.udfs.common.urls import registered_domain, surt
from parascout.udfs.rank.url_models import model_dir, training, training_data
from testkit.sites import ICELANDIC, WORDS, convention_pair, prose_pages, synthetic_sites


def site_rows(site: str, pairs: list[tuple[str, str]]) -> list[tuple]:
    return [row for pair_id, (en, is_) in enumerate(pairs)
            for row in ((en, site, "eng", f"{site}:{pair_id}"), (is_, site, "isl", f"{site}:{pair_id}"))]


def archive_urls() -> pd.DataFrame:
    """Sites of every URL convention, a big site to split, a flat site to hash-chunk, a translated-slug site
    found only through links, unrelated-id sites found only through shared images or paragraph lengths, a tiny
    exhaustive site, a monolingual site, and broken rows."""
    rng = random.Random(5)
    frames = [synthetic_sites(n_sites=8, pages=40, seed=3)]
    big = [convention_pair("dir_code", "big.is", page, rng) for page in range(150)]
    flat = [(f"https://flat.is/{WORDS[page % 30]}-{page}.en.html", f"https://flat.is/{WORDS[page % 30]}-{page}.is.html")
            for page in range(120)]
    links = [(f"https://links.is/en/{WORDS[i]}/{WORDS[(i * 7) % 30]}", f"https://links.is/is/{ICELANDIC[i]}/s{i}")
             for i in range(30)]
    tiny = [(f"https://tiny.is/en/{WORDS[i]}", f"https://tiny.is/is/{ICELANDIC[i]}") for i in range(6)]
    rows = site_rows("big.is", big) + site_rows("flat.is", flat) + site_rows("links.is", links) + site_rows(
        "tiny.is", tiny) + site_rows("images.is", image_site_pairs()) + site_rows("prose.is", prose_site_pairs())
    rows += [(f"https://mono.is/en/page-{i}", "mono.is", "eng", None) for i in range(5)]
    frames.append(pd.DataFrame(rows, columns=["url", "site", "lang", "pair_id"]))
    urls = pd.concat(frames, ignore_index=True)
    urls["host"] = [u.split("/")[2] for u in urls["url"]]
    urls["domain"] = [registered_domain(h) for h in urls["host"]]
    urls["surt"] = [surt(u) for u in urls["url"]]
    urls["status"], urls["mime"] = "200", "text/html"
    return urls


def image_site_pairs() -> list[tuple[str, str]]:
    """Translations with unrelated numeric ids and no links: no URL token, handle or link pairs them."""
    return [(f"https://images.is/en/article/{1000 + i}", f"https://images.is/is/grein/{5000 + 37 * i}")
            for i in range(30)]


def prose_site_pairs() -> list[tuple[str, str]]:
    """Translations with unrelated ids, no links and no images, whose paragraph lengths match (docs.structure)."""
    pages = prose_pages(host="prose.is")
    return list(zip(pages.loc[pages["lang"] == "eng", "url"], pages.loc[pages["lang"] == "isl", "url"]))


def prose_docs() -> list[tuple]:
    return [(row.url, "prose.is", "ok", [], None, row.structure, None)
            for row in prose_pages(host="prose.is").itertuples() if row.url != "https://prose.is/is/"]


def image_docs() -> list[tuple]:
    """docs rows of images.is: each pair shares photo-i.jpg; a logo on every page and a flag on every English
    page (site furniture), an English-only picture, a gallery on 5 pages (over --image-max-pages 3), and a
    failed fetch of an Icelandic page whose image would pair it with the wrong English page."""
    rows = []
    for i, (en, is_) in enumerate(image_site_pairs()):
        en_images = [f"photo-{i}.jpg", "logo.png", "flag-en.png"] + ["gallery.jpg"] * (i < 3) + ["only-en.jpg"] * (
            i == 5)
        rows += [(en, "images.is", "ok", [], en_images, None, None),
                 (is_, "images.is", "ok", [], [f"photo-{i}.jpg", "logo.png"] + ["gallery.jpg"] * (i < 2), None, None)]
    rows.append((image_site_pairs()[1][1], "images.is", "http_error", [], ["photo-0.jpg"], None, None))  # not its image
    return rows


def links_docs(urls: pd.DataFrame) -> list[tuple]:
    """links.is pages link to their translation both ways; the first 10 pairs' switcher names the language (a
    cue); the first English page also links one way, without a cue, to the second Icelandic page."""
    linked = urls[urls["host"] == "links.is"].reset_index(drop=True)
    partners = linked.groupby("pair_id")["url"].transform(lambda group: group.iloc[::-1].to_numpy())
    rows = []
    for row, partner in zip(linked.itertuples(), partners):
        cue = ({"eng": "isl", "isl": "eng"}[row.lang] if int(row.pair_id.split(":")[1]) < 10 else None)
        outlinks, cues = [partner, "https://elsewhere.org/", "/relative"], [cue, None, None]
        if row.Index == 0:
            outlinks, cues = outlinks + [linked.loc[3, "url"]], cues + [None]
        rows.append((row.url, "links.is", "ok", outlinks, None, None, cues))
    return rows


def broken_rows() -> pd.DataFrame:
    rows = [
        {"url": None, "host": "x.is", "lang": "eng"},                                            # bad
        {"url": "https://site0.is/de/seite", "host": "site0.is", "lang": "deu"},                 # lang_other
        {"url": "https://site0.is/en/redirected", "host": "site0.is", "lang": "eng", "status": "301"},
        {"url": "https://site0.is/en/logo.png", "host": "site0.is", "lang": None, "mime": "image/png"},
        {"url": "https://big.is/en/bridge/x-1", "host": "big.is", "lang": None},                 # url2lang decides
        {"url": "https://big.is/is/bridge/x-1", "host": "big.is", "lang": None},
        {"url": "https://big.is/other", "host": "big.is", "lang": None},
    ]
    frame = pd.DataFrame(rows)
    frame["status"] = frame["status"].fillna("200") if "status" in frame else "200"
    frame["mime"] = frame["mime"].fillna("text/html")
    frame["domain"] = [registered_domain(h) for h in frame["host"]]
    frame["surt"] = [surt(u) if u else None for u in frame["url"]]
    return frame


def true_pairs(urls: pd.DataFrame) -> pd.DataFrame:
    paired = urls.dropna(subset=["pair_id"])
    src = paired[paired["lang"] == "eng"].set_index("pair_id")
    trg = paired[paired["lang"] == "isl"].set_index("pair_id").loc[src.index]
    return pd.DataFrame({"host": src["site"].to_numpy(), "src_url": src["url"].to_numpy(),
                         "trg_url": trg["url"].to_numpy(), "src_lang": "eng", "trg_lang": "isl", "label": 1})


def train_models(out: Path) -> dict:
    """A url2lang and a pair model (hashed n-grams, a few epochs) trained on archive_urls(), written under `out`."""
    urls = archive_urls()
    config = training.TrainingConfig(backend="ngram", max_epochs=3, buckets=1 << 14, dim=16, seed=0)
    lang_frame = urls[["url", "host", "lang"]].copy()
    lang_frame["split"] = training_data.split_by_host(lang_frame["host"], 0.2, 0.0).to_numpy()
    model_dir.write_model_dir(training.train_model("url2lang", lang_frame, config, {"source": "test"}),
                             str(out / "url2lang"))
    examples = training_data.pair_examples(true_pairs(urls), dev_fraction=0.2, test_fraction=0.0)
    model_dir.write_model_dir(training.train_model("pairs", examples, config, {"source": "test"}),
                             str(out / "pairs"))
    return {"lang": str(out / "url2lang"), "pairs": str(out / "pairs")}
