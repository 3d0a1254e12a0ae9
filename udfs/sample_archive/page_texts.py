"""--text-corpus: give every page of a host a passage, and make the host's hard negatives.

Hard negatives (truth/pages.parquet `negative_kind`): a translation that holds only the
first part of its original (partial_translation), a translation whose menus are
translated but whose body is not (boilerplate_only), a single-language article with
another article's length and paragraphing but a different passage (same_template), a
single-language article translated from a language the host does not have
(third_language_source). Near-duplicates are captures (sites.py).
"""
from __future__ import annotations

import random
from dataclasses import replace

from parascout.udfs.sample_archive.corpus import TextCorpus
from parascout.udfs.sample_archive.texts import plan_text

TEXT_PAGE_KINDS = ("home", "section", "article")


def assign_texts(site, corpus: TextCorpus, conf: dict, seed: int) -> None:
    """Passages for the host's pages (home, sections, articles) and its hard negatives; deterministic per host."""
    rng = random.Random(f"texts:{site.spec.seed}")
    options = conf["text_corpus"]
    stream = corpus.stream(seed, site.spec.passage_share)
    articles = [page for page in site.pages.values() if page.kind == "article"]
    multilingual = len(site.languages) > 1
    translated = [page for page in articles if len(page.languages) > 1]
    single = [page for page in articles if len(page.languages) == 1]
    shares = options["negatives"]
    partial = _pick(rng, translated, shares["partial_translation"], multilingual)
    partial_keys = _keys(partial)
    untranslated = _pick(rng, [p for p in translated if p.key not in partial_keys], shares["boilerplate_only"],
                         multilingual)
    decoys = _pick(rng, single, shares["same_template"], True) if multilingual else []
    decoy_keys = _keys(decoys)
    foreign = sorted(set(corpus.languages) - set(site.languages))
    third = _pick(rng, [p for p in single if p.key not in decoy_keys], shares["third_language_source"],
                  multilingual) if foreign else []
    low, high = options["intro_ids"]
    for page in site.pages.values():
        if page.kind not in TEXT_PAGE_KINDS or page.key in decoy_keys:
            continue
        passage = stream.take(frozenset(page.languages))
        n_ids = rng.randint(low, high) if page.kind != "article" else len(passage.ids)
        page.text = plan_text(passage, n_ids, page.languages[0], page.seed)
    for page, kind in [(p, "partial_translation") for p in partial] + [(p, "boilerplate_only") for p in untranslated]:
        lang = rng.choice(page.languages[1:])
        page.text.kinds[lang] = kind
        page.text.negative_of[lang] = (page.key, page.languages[0])
    for page in third:
        page.text = replace(page.text, source_lang=rng.choice(foreign))
        page.text.kinds[page.languages[0]] = "third_language_source"
    with_text = [p for p in articles if p.text]
    for page in decoys:
        lang = page.languages[0]
        target = _imitated(rng, with_text, lang)
        length = len(target.text.ids) if target else 4
        passage = stream.take(frozenset(page.languages), length)
        page.text = plan_text(passage, length, lang, page.seed)
        if target:
            page.text = page.text.with_structure_of(target.text)
            page.text.kinds[lang] = "same_template"
            page.text.negative_of[lang] = (target.key, rng.choice([o for o in target.languages if o != lang]))
    site.passages_reused = stream.reused


def _pick(rng: random.Random, candidates: list, share: float, at_least_one: bool) -> list:
    """A share of the candidates, at least one where asked and possible."""
    n = max(1 if at_least_one else 0, round(float(share) * len(candidates)))
    return rng.sample(candidates, min(n, len(candidates)))


def _imitated(rng: random.Random, articles: list, lang: str):
    """An article with a version in another language than `lang` (drawn at random; None when there is none)."""
    for _ in range(20):
        candidate = articles[rng.randrange(len(articles))] if articles else None
        if candidate and any(other != lang for other in candidate.languages):
            return candidate
    fitting = [p for p in articles if any(other != lang for other in p.languages)]
    return rng.choice(fitting) if fitting else None


def _keys(pages: list) -> set[str]:
    return {page.key for page in pages}
