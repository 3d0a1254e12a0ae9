"""Synthetic language-marked URLs and tiny n-gram / transformer configurations for URL-model tests."""
from __future__ import annotations

import random

import pandas as pd

from parascout.udfs.rank.url_models.training import TrainingConfig

WORDS = {
    "eng": ["news", "about", "products", "contact", "history", "events", "report", "search", "team", "energy"],
    "fra": ["actualites", "propos", "produits", "contactez", "histoire", "evenements", "rapport", "recherche",
            "equipe", "energie"],
    "deu": ["nachrichten", "uber", "produkte", "kontakt", "geschichte", "veranstaltungen", "bericht", "suche",
            "mannschaft", "energie"],
}
MARKERS = {"eng": ["en", "english", "eng"], "fra": ["fr", "francais", "fra"], "deu": ["de", "deutsch", "deu"]}


def synthetic_language_urls(hosts: int = 60, per_host: int = 24, seed: int = 0) -> pd.DataFrame:
    """A language-directory web: each host marks languages one way (/xx/, subdomain, ?lang=, -xx suffix)."""
    rng = random.Random(seed)
    rows = []
    for h in range(hosts):
        host = f"site{h}.{rng.choice(['com', 'org', 'net', 'eu'])}"
        style = h % 4
        for i in range(per_host):
            lang = rng.choice(sorted(WORDS))
            marker = rng.choice(MARKERS[lang])
            path = "/".join(rng.choice(WORDS[lang]) for _ in range(rng.randint(1, 3)))
            if style == 0:
                url = f"http://{host}/{marker}/{path}/{i}.html"
            elif style == 1:
                url = f"https://{marker}.{host}/{path}-{i}"
            elif style == 2:
                url = f"http://www.{host}/{path}.php?id={i}&lang={marker}"
            else:
                url = f"http://{host}/{path}_{i}-{marker}.htm"
            rows.append((url, f"{host}", lang))
    return pd.DataFrame(rows, columns=["url", "host", "lang"]).drop_duplicates("url", ignore_index=True)


def tiny_ngram_config(**changes) -> TrainingConfig:
    values = {"backend": "ngram", "buckets": 1 << 14, "dim": 16, "max_epochs": 6, "batch_size": 64, "patience": 3,
              "threads": 1}
    values.update(changes)
    return TrainingConfig(**values)


def tiny_transformer_config(**changes) -> TrainingConfig:
    values = {"backend": "transformer", "layers": 2, "hidden": 64, "vocab_size": 600, "max_length": 48,
              "max_epochs": 3, "batch_size": 32, "learning_rate": 2e-3, "patience": 3, "threads": 1}
    values.update(changes)
    return TrainingConfig(**values)
