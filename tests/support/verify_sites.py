"""verify-pairs' test sites: a templated bilingual content site, real translated sentences, a small lexicon, and
the docs/texts rows built from them."""
from __future__ import annotations

import random

import pandas as pd

from parascout.udfs.common.urls import url_host
from parascout.udfs.fetch.documents import DOC_COLUMNS, empty_doc, parse_record
from parascout.udfs.fetch.html_text import paragraph_hash
from parascout.udfs.lexicon.lexicon import Lexicon
from testkit.warc import ENGLISH, GERMAN, html_page, record_bytes

HOST = "www.example.com"


def text_of(base: str, length: int) -> str:
    """`length` characters of running text in the language of `base`."""
    return (base * (length // len(base) + 1))[:length].rsplit(" ", 1)[0]


def doc_row(url: str, paragraphs: list[str], images: tuple[str, ...] = ()) -> dict:
    page = html_page("Report", paragraphs, images=("logo.png", *images))
    doc = parse_record(record_bytes(url, page), url)
    return {**{c: None for c in DOC_COLUMNS}, **doc, "url": url, "host": url_host(url)}


def build_site(rng: random.Random, translations: int = 1) -> tuple[list[dict], list[dict], dict]:
    """docs rows of one host, its candidate pairs, and the expected outcome of each pair."""
    docs, expected = [], {}
    for k in range(translations):
        lengths = [rng.randint(60, 600) for _ in range(8)]
        docs += [doc_row(f"http://{HOST}/en/report-{k}", [text_of(ENGLISH, x) for x in lengths], (f"chart{k}.png",)),
                 doc_row(f"http://{HOST}/de/bericht-{k}", [text_of(GERMAN, int(x * 1.2)) for x in lengths],
                         (f"chart{k}.png",))]
        expected[(f"http://{HOST}/en/report-{k}", f"http://{HOST}/de/bericht-{k}")] = "ok"
    docs += [doc_row(f"http://{HOST}/de/andere", [text_of(GERMAN, rng.randint(60, 600)) for _ in range(8)]),
             doc_row(f"http://{HOST}/de/kurz", [text_of(GERMAN, 200)]),
             doc_row(f"http://{HOST}/en/copy", [text_of(ENGLISH, int(x * 1.1)) for x in lengths])]
    docs[-2]["structure"] = docs[-2]["structure"] + ["[START:table]", "[START:tr]", "[START:td]"] * 40
    docs.append({**{c: None for c in DOC_COLUMNS}, **empty_doc("truncated"), "url": f"http://{HOST}/en/broken",
                 "host": HOST})
    docs += [doc_row(f"http://{HOST}/misc/{i}", [text_of(ENGLISH, 100)]) for i in range(6)]
    src = f"http://{HOST}/en/report-0"
    for trg, outcome in ((f"http://{HOST}/de/andere", "p_too_high"), (f"http://{HOST}/de/kurz", "dp_too_high"),
                         (f"http://{HOST}/en/copy", "lang_mismatch"), (f"http://{HOST}/de/missing", "missing_trg_doc")):
        expected[(src, trg)] = outcome
    expected[(f"http://{HOST}/en/broken", f"http://{HOST}/de/bericht-0")] = "failed_src_doc"
    pairs = [{"host": HOST, "src_url": s, "trg_url": t, "src_lang": "eng", "trg_lang": "deu", "source": "handle"}
             for s, t in expected]
    return docs, pairs, expected


# ---- content: texts rows, a lexicon, the self-labelled decision, 1-1 --------------------------
ENGLISH_WORDS = [f"{a}{b}{c}" for a in "bdfgk" for b in "aeiou" for c in "lmnrst"][:120]
LEXICON = Lexicon("eng", "deu", {w: {w.upper()[::-1].lower() + "x": 0.9} for w in ENGLISH_WORDS})


def sentences(rng: random.Random, count: int) -> list[str]:
    return [" ".join(rng.choice(ENGLISH_WORDS) for _ in range(rng.randint(8, 20))) for _ in range(count)]


def translate(text: str) -> str:
    return " ".join(next(iter(LEXICON.translations(w))) for w in text.split())


def text_columns(lang: str, paragraphs: list[str], duplicate_of: str | None = None) -> dict:
    rows = [{"text": t, "type": "text", "lang": lang, "boilerplate": False, "hash": paragraph_hash(t)}
            for t in paragraphs]
    return {"text_paragraphs": rows, "main_text": "\n".join(paragraphs), "duplicate_of": duplicate_of}


def content_site(rng: random.Random, translations: int = 12) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Pages (docs + texts columns) of a templated host, its candidate pairs and the expected outcomes."""
    pages, pairs, expected = [], [], {}
    lengths = [300] * 8  # one template: every page has the same structure, only the words differ
    english = {k: sentences(rng, 8) for k in range(translations)}
    for k in range(translations):
        src, trg = f"http://{HOST}/en/p{k}", f"http://{HOST}/de/p{k}"
        pages += [{**doc_row(src, [text_of(ENGLISH, x) for x in lengths]), **text_columns("eng", english[k])},
                  {**doc_row(trg, [text_of(GERMAN, x) for x in lengths]),
                   **text_columns("deu", [translate(t) for t in english[k]])}]
        pairs.append({"host": HOST, "src_url": src, "trg_url": trg, "src_lang": "eng", "trg_lang": "deu",
                      "source": "link" if k % 2 else "handle"})
        expected[(src, trg)] = "ok"
        wrong = f"http://{HOST}/de/p{(k + 1) % translations}"  # same template, other words
        pairs.append({"host": HOST, "src_url": src, "trg_url": wrong, "src_lang": "eng", "trg_lang": "deu",
                      "source": "similar"})
        expected[(src, wrong)] = "content_rejected"
    copy = f"http://{HOST}/de/p0-copy"  # a near-duplicate of de/p0: the same page for the 1-1 alignment
    pages.append({**doc_row(copy, [text_of(GERMAN, x) for x in lengths]),
                  **text_columns("deu", [translate(t) for t in english[0]], duplicate_of=f"http://{HOST}/de/p0")})
    pairs.append({"host": HOST, "src_url": f"http://{HOST}/en/p0", "trg_url": copy, "src_lang": "eng",
                  "trg_lang": "deu", "source": "similar"})
    expected[(f"http://{HOST}/en/p0", copy)] = "not_one_to_one"
    return pd.DataFrame(pages), pd.DataFrame(pairs), expected


REAL_ENGLISH = [
    "The selection tools are designed to select regions from the active layer so you can work on them.",
    "Each tool has its own options, which appear in the dialog when you double-click on the tool icon.",
    "You can save the current settings of a tool and restore them later from the list of presets.",
    "When the image is larger than the window, the navigation dialog shows which part of it you see.",
    "Most filters can be applied to a selection only, leaving the rest of the layer as it was.",
    "The history of your changes is kept in memory until you close the image or clear it yourself."]
REAL_GERMAN = [
    "Die Auswahlwerkzeuge dienen dazu, Bereiche der aktiven Ebene auszuwählen, um daran zu arbeiten.",
    "Jedes Werkzeug hat eigene Einstellungen, die im Dialog erscheinen, wenn Sie doppelt auf das Symbol klicken.",
    "Sie können die aktuellen Einstellungen eines Werkzeugs speichern und später aus der Liste wiederherstellen.",
    "Wenn das Bild größer als das Fenster ist, zeigt der Navigationsdialog, welchen Teil Sie gerade sehen.",
    "Die meisten Filter lassen sich nur auf eine Auswahl anwenden, der Rest der Ebene bleibt unverändert.",
    "Der Verlauf Ihrer Änderungen bleibt im Speicher, bis Sie das Bild schließen oder ihn selbst leeren."]
