"""export-bitext and sentence-alignment inputs: English/French documents, a tiny lexicon and tokenizer, the docs,
texts and verified tables written under a root."""
from __future__ import annotations

from typing import ClassVar

import pandas as pd


def document(src_paragraphs, trg_paragraphs):
    def texts(paragraphs):
        if paragraphs is None:
            return None
        return [{"text": p, "type": "text", "lang": None, "boilerplate": False, "hash": str(i)}
                for i, p in enumerate(paragraphs)] + [{"text": "Menu", "type": "text", "boilerplate": True}]
    return {"site": "a.example", "host": "a.example", "src_url": "http://a.example/en", "trg_url": "http://a.example/fr",
            "src_lang": "eng", "trg_lang": "fra", "p_parallel_content": 0.9,
            "src_paragraphs": texts(src_paragraphs), "trg_paragraphs": texts(trg_paragraphs)}


EN = ["The house is red. It stands by the river.", "My father built it in 1950."]
FR = ["La maison est rouge. Elle se trouve au bord de la rivière.", "Mon père l'a construite en 1950."]


def write_inputs(spark, tmp_path) -> None:
    """verified_pairs and texts of three document pairs (one missing a text, one with identical sides) and two
    pairs of no interest (another language pair, not parallel)."""
    root = str(tmp_path)
    rows = [document(EN, FR), {**document(None, FR), "src_url": "http://a.example/en2", "trg_url": "http://a.example/fr2"},
            {**document(["Same words here."], ["Same words here."]), "src_url": "http://b.example/en",
             "trg_url": "http://b.example/fr", "site": "b.example", "host": "b.example"}]
    pairs = pd.DataFrame([{k: r[k] for k in ("site", "host", "src_url", "trg_url", "src_lang", "trg_lang", "p_parallel_content")}
                          for r in rows])
    pairs["parallel"] = True
    other = pairs.iloc[[0]].assign(src_url="http://a.example/de", src_lang="deu")  # another language pair
    pairs = pd.concat([pairs, other, pairs.iloc[[0]].assign(parallel=False, src_url="x")], ignore_index=True)
    spark.createDataFrame(pairs).write.parquet(f"{root}/verified_pairs")
    (tmp_path / "verified_pairs" / "_SUCCESS").touch()
    texts = []
    for r in rows:
        for side in ("src", "trg"):
            if r[f"{side}_paragraphs"] is not None:
                texts.append({"url": r[f"{side}_url"], "paragraphs": r[f"{side}_paragraphs"], "duplicate_of": None,
                              "main_text": "\n".join(p["text"] for p in r[f"{side}_paragraphs"] if not p["boilerplate"])})
    spark.createDataFrame(pd.DataFrame(texts), "url string, paragraphs array<struct<text:string, type:string, "
                          "lang:string, boilerplate:boolean, hash:string>>, duplicate_of string, main_text string"
                          ).write.parquet(f"{root}/texts")
    (tmp_path / "texts" / "_SUCCESS").touch()


SRC = ["The house is red.", "It stands by the river, and it is very old.", "My father built it in 1950.",
       "We love it."]
TRG = ["La maison est rouge.", "Elle se trouve au bord de la rivière.", "Elle est très vieille.",
       "Mon père l'a construite en 1950.", "Nous l'aimons."]


class TinyLexicon:
    """A lexicon with the contract of parascout.udfs.lexicon.lexicon.Lexicon (translations, prob)."""

    table: ClassVar[dict] = {"house": {"maison": 0.9}, "red": {"rouge": 0.9}, "river": {"rivière": 0.8}, "old": {"vieille": 0.7},
             "very": {"très": 0.8}, "father": {"père": 0.9}, "built": {"construite": 0.6},
             "love": {"aimons": 0.5}, "cat": {"chat": 0.9}, "sleeps": {"dort": 0.8}, "garden": {"jardin": 0.9}}

    def translations(self, word):
        return self.table.get(word, {})

    def prob(self, src_word, trg_word):
        return self.translations(src_word).get(trg_word, 0.0)


def tokenize(text, lang=None):
    """Lower-cased words, elisions split (l'aimons -> l, aimons) as parascout.udfs.lexicon.lexicon.tokenize does."""
    return [word.strip(".,!?").lower() for word in text.replace("'", " ").split() if word.strip(".,!?")]
