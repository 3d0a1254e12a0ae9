"""bench_fetch_verify's HTML stage (its section 0): udfs.fetch.html_text's parse, features and main text per
CPU-second against the html.parser baseline and, with --against, another version of the module; the C parts' ceiling;
main-text quality on sample archives beside trafilatura and justext. Run through bench_fetch_verify.py."""
from __future__ import annotations

import importlib.util
import os
import random
import tempfile
import time
from collections import Counter
from pathlib import Path

import pandas as pd

from parascout.udfs.common.urls import url_host
from testkit.html_reference import html_parser_features
from testkit.main_text import parascout_main_text
from testkit.warc import ENGLISH, GERMAN, http_responses


def site_page(rng: random.Random, i: int, pages: int, lengths: list[int] | None = None, english: bool = True) -> str:
    """A templated page like a real site's: navigation, sidebar, article paragraphs, images, footer."""
    text = ENGLISH if english else GERMAN
    lengths = lengths or [rng.randint(40, 400) for _ in range(rng.randint(5, 40))]
    nav = "".join(f'<li class="nav"><a href="/section-{k}/">Section {k}</a></li>' for k in range(40))
    side = "".join(f'<div class="teaser"><a href="/page-{rng.randint(0, pages)}.html"><img src="/thumbs/t{k}.jpg">'
                   f"<span>{text[:rng.randint(20, 60)]}</span></a></div>" for k in range(rng.randint(5, 15)))
    article = "".join(f"<p>{(text * 4)[:length]}</p>" + (f'<img src="/media/fig-{i}-{k}.png">' if k % 5 == 0 else "")
                      for k, length in enumerate(lengths))
    return (f'<!DOCTYPE html><html lang="{"en" if english else "de"}"><head><meta charset="utf-8">'
            f"<title>Page {i}</title><link rel=\"stylesheet\" href=\"/s.css\"><script>var x = {i};</script></head>"
            f'<body><header><img src="/logo.png"><nav><ul>{nav}</ul></nav></header><div class="main">'
            f'<article><h1>Page {i}</h1>{article}</article><aside>{side}</aside></div>'
            f"<footer><p>Contact</p><p>Imprint</p></footer></body></html>")


def shared_data_path() -> Path:
    return Path(os.environ.get("PARASCOUT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def time_pages(function, pages: list[tuple[str, str]], repeat: int) -> float:
    """Pages per CPU-second of function(html, url) over the pages, `repeat` times (best of the rounds)."""
    best = float("inf")
    for _ in range(repeat):
        cpu = time.process_time()
        for url, html in pages:
            function(html, url)
        best = min(best, time.process_time() - cpu)
    return len(pages) / best


def time_breakdown(pages: list[tuple[str, str]]) -> dict:
    """Share of the new path's CPU per step: Lexbor's parse, the tree walk, page CLD2, paragraphs."""
    from selectolax.lexbor import LexborDocumentOptions, LexborHTMLParser

    from parascout.udfs.common.language_id import cld2_detect
    from parascout.udfs.fetch import html_text

    spent = dict.fromkeys(("lexbor_parse", "tree_walk", "page_cld2", "paragraphs"), 0.0)
    for url, html in pages:
        cpu = time.process_time()
        first = LexborHTMLParser(html, options=LexborDocumentOptions.WO_EVENTS).root
        spent["lexbor_parse"] += time.process_time() - cpu
        cpu = time.process_time()
        page = html_text.PAGE(url)
        html_text.WALK([first], page, html_text.DEFAULT.max_text_chars)
        spent["tree_walk"] += time.process_time() - cpu
        cpu = time.process_time()
        lang, _, _, single = cld2_detect(page.text_input[0])
        spent["page_cld2"] += time.process_time() - cpu
        cpu = time.process_time()
        html_text.PAGE_PARAGRAPHS(page.blocks, None, lang, single)
        spent["paragraphs"] += time.process_time() - cpu
    total = sum(spent.values())
    return {"breakdown_walk": html_text.WALK_ENGINE, "breakdown_us_per_page": 1e6 * total / len(pages),
            **{f"share_{step}": seconds / total for step, seconds in spent.items()}}


def python_walk_features(html: str, url: str | None) -> dict:
    """html_features with the Python walk and paragraph step (the reference, udfs.fetch.page_walk as it is) in place
    of the compiled ones: the same-run baseline."""
    from parascout.udfs.fetch import html_text

    names = ("WALK", "PAGE_PARAGRAPHS")
    compiled = [getattr(html_text, name) for name in names]
    for name, reference in zip(names, (html_text.walk_page, html_text.page_paragraphs)):
        setattr(html_text, name, reference)
    try:
        return html_text.html_features(html, url)
    finally:
        for name, function in zip(names, compiled):
            setattr(html_text, name, function)


def walk_rates(pages: list[tuple[str, str]], repeat: int) -> dict:
    """Pages per CPU-second of the tree walk alone (trees parsed outside the timing), Python vs compiled."""
    from parascout.udfs.fetch import html_text

    trees = [(url, html_text.parse_tops(html)) for url, html in pages]
    walks = {"python": (html_text.walk_page, html_text.Page),
             "compiled": html_text.COMPILED and (html_text.COMPILED.walk_page, html_text.COMPILED.Page)}
    rates = dict.fromkeys((name for name, walk in walks.items() if walk), 0.0)
    for _ in range(repeat):  # interleaved rounds, the best counts
        for name in rates:
            cpu = time.process_time()
            for url, tops in trees:
                walk, page = walks[name]
                walk(tops, page(url), html_text.DEFAULT.max_text_chars)
            rates[name] = max(rates[name], len(trees) / (time.process_time() - cpu))
    result = {f"walk_only_{name}_us_per_page": 1e6 / rate for name, rate in rates.items()}
    if "compiled" in rates:
        result["walk_only_compiled_vs_python"] = rates["compiled"] / rates["python"]
    return result


def load_html_text(path: str | None):
    """Another version of udfs/fetch/html_text.py (--against), imported under its own name; None without a path."""
    if not path:
        return None
    spec = importlib.util.spec_from_file_location("html_text_against", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bench_html(pages: list[tuple[str, str]], label: str, repeat: int = 3, against=None) -> dict:
    """Pages per CPU-second, html.parser path vs html_text (and --against's version), on the same decoded pages."""
    if not pages:
        return {"skipped": f"no {label} pages"}
    from parascout.udfs.fetch.html_text import html_features

    for url, html in pages:  # warm both paths' caches (links repeat across a site, as in a real task)
        html_features(html, url)
        if against is not None:
            against.html_features(html, url)
    old = time_pages(html_parser_features, pages, repeat)
    new = time_pages(html_features, pages, repeat)
    result = {"pages": len(pages), "mean_html_kb": sum(len(h) for _, h in pages) / len(pages) / 1024,
              "html_parser_features_per_cpu_s": old, "lexbor_features_main_text_per_cpu_s": new,
              "speedup": new / old, **compiled_against_python_walk(pages, repeat)}
    if against is not None:  # interleaved rounds, so load changes hit both versions alike
        rounds = [(time_pages(against.html_features, pages, 1), time_pages(html_features, pages, 1))
                  for _ in range(repeat if len(pages) >= 100 else 4 * repeat)]
        before, after = max(r[0] for r in rounds), max(r[1] for r in rounds)
        result.update({"against_per_cpu_s": before, "current_per_cpu_s": after, "current_vs_against": after / before})
    return {**result, **time_breakdown(pages)}


def compiled_against_python_walk(pages: list[tuple[str, str]], repeat: int) -> dict:
    """The whole HTML stage with the compiled walk and with the Python walk (interleaved rounds, same pages)."""
    from parascout.udfs.fetch import html_text

    if html_text.COMPILED is None:
        return {"walk": html_text.WALK_ENGINE}
    rounds = [(time_pages(python_walk_features, pages, 1), time_pages(html_text.html_features, pages, 1))
              for _ in range(max(repeat, 3))]
    python, compiled = max(r[0] for r in rounds), max(r[1] for r in rounds)
    return {"walk": html_text.WALK_ENGINE, "python_walk_per_cpu_s": python, "compiled_walk_per_cpu_s": compiled,
            "compiled_vs_python_walk": compiled / python, **walk_rates(pages, max(repeat, 3))}


def page_texts(pages: list[tuple[str, str]]) -> dict[str, str]:
    """The text CLD2 reads for each page (the walk's whitespace-normalised text runs, the characters CLD2 cannot take
    as spaces), computed untimed."""
    from selectolax.lexbor import LexborDocumentOptions, LexborHTMLParser

    from parascout.udfs.fetch import html_text

    texts = {}
    for url, html in pages:
        page = html_text.Page(url)
        html_text.walk_page([LexborHTMLParser(html, options=LexborDocumentOptions.WO_EVENTS).root], page,
                            html_text.DEFAULT.max_text_chars)
        texts[url] = (page.text_input[0] or b"").decode("utf-8")
    return texts


def bench_ceiling(pages: list[tuple[str, str]], label: str, repeat: int = 3) -> dict:
    """Pages per CPU-second of the HTML stage's C parts alone (Lexbor's parse, page CLD2 on the page text, both;
    parse + Lexbor's own text() + CLD2: a compiled walk's floor), beside the full pipeline in the same run."""
    if not pages:
        return {"skipped": f"no {label} pages"}
    import pycld2
    from selectolax.lexbor import LexborDocumentOptions, LexborHTMLParser

    from parascout.udfs.common import language_id
    from parascout.udfs.fetch import html_text
    from parascout.udfs.fetch.html_text import html_features

    cld2_input = html_text.COMPILED.cld2_input if html_text.COMPILED else language_id.cld2_input

    def page_language(text):  # CLD2 on a page's text as html_text runs it (its CLD2 input engine included)
        return language_id.cld2_detect(cld2_input(text))

    options = LexborDocumentOptions.WO_EVENTS
    texts = page_texts(pages)
    encoded = {url: text.encode("utf-8") for url, text in texts.items()}

    def parse(html, url):
        LexborHTMLParser(html, options=options)

    def page_cld2(html, url):
        page_language(texts[url])

    def cld2_detect(html, url):
        pycld2.detect(encoded[url], isPlainText=True)

    def parse_and_cld2(html, url):
        LexborHTMLParser(html, options=options)
        page_language(texts[url])

    def parse_text_cld2(html, url):
        tree = LexborHTMLParser(html, options=options)
        body = tree.body
        page_language(body.text(separator=" ", strip=True) if body is not None else "")

    steps = {"lexbor_parse": parse, "page_cld2": page_cld2, "cld2_detect_only": cld2_detect,
             "parse_plus_page_cld2": parse_and_cld2, "parse_lexbor_text_cld2": parse_text_cld2,
             "full_pipeline": html_features, "full_pipeline_python_walk": python_walk_features}
    for url, html in pages:
        html_features(html, url)  # warm the link caches, as in bench_html
    rates = {name: 0.0 for name in steps}
    for _ in range(repeat):  # interleaved rounds: load changes hit every step alike; the best round counts
        for name, step in steps.items():
            rates[name] = max(rates[name], time_pages(step, pages, 1))
    result = {"pages": len(pages), "mean_html_kb": sum(len(h) for _, h in pages) / len(pages) / 1024,
              **{f"{name}_per_cpu_s": rate for name, rate in rates.items()}}
    result["full_pipeline_share_of_parse_plus_cld2"] = rates["full_pipeline"] / rates["parse_plus_page_cld2"]
    result["full_pipeline_compiled_vs_python_walk"] = rates["full_pipeline"] / rates["full_pipeline_python_walk"]
    from parascout.udfs.fetch.html_text import WALK_ENGINE

    return {"walk": WALK_ENGINE, **result, **walk_rates(pages, repeat), **time_breakdown(pages)}


def real_commoncrawl_pages() -> list[tuple[str, str]]:
    folder = shared_data_path() / "cc-sample"
    return http_responses(sorted(folder.glob("*.warc.gz"))) if folder.exists() else []


def sample_archive_pages(folder: Path, hosts: int, text_corpus: Path | None,
                         seed: int = 11) -> tuple[list, Path | None]:
    """Generate a sample archive (real texts when the corpus and --text-corpus support exist); its pages."""
    from parascout.udfs.sample_archive.archive import generate

    options = {"hosts": hosts, "seed": seed, "progress": False, "verbose": False}
    try:
        generate(str(folder), text_corpus=str(text_corpus) if text_corpus else None, **options)
    except TypeError:  # an archive generator without --text-corpus
        generate(str(folder), **options)
        text_corpus = None
    return http_responses(sorted(folder.rglob("*.warc.gz"))), (folder / "truth" / "pages.parquet"
                                                               if text_corpus else None)


def words(text: str) -> Counter:
    return Counter(text.casefold().split())


def main_text_quality(pages: list[tuple[str, str]], truth_path: Path | None) -> dict:
    """Against truth body_text: share of body paragraphs kept, share of the other (boilerplate) words removed."""
    if truth_path is None or not truth_path.exists():
        return {"skipped": "no real-text sample archive (make-sample-archive --text-corpus) to compare with"}
    from parascout.udfs.fetch.html_text import html_features
    from parascout.udfs.fetch.near_duplicates import SiteTextSettings, site_text_pass

    truth = pd.read_parquet(truth_path)
    if "body_text" not in truth.columns:
        return {"skipped": "truth/pages.parquet has no body_text"}
    body_of = {row.url: row.body_text for row in truth.itertuples() if isinstance(row.body_text, str)
               and row.body_text.strip()}
    docs = {url: html_features(html, url)["page_paragraphs"] for url, html in pages if url in body_of}
    frame = pd.DataFrame({"url": list(docs), "host": [url_host(u) for u in docs],
                          "hashes": [[p["hash"] for p in ps] for ps in docs.values()],
                          "boilerplate": [[p["boilerplate"] for p in ps] for ps in docs.values()],
                          "chars": [[len(p["text"]) for p in ps] for ps in docs.values()]})
    repeated, found = {}, {}
    for _, site in frame.groupby("host"):
        for row in site_text_pass(site, SiteTextSettings()).itertuples():
            repeated[row.url] = set(row.repeated_hashes)
            if row.duplicate_of:
                found[row.url] = row.duplicate_of
    result = {"pages_with_body_text": len(docs), **near_duplicate_agreement(truth, found, set(docs))}
    for label, use_site in (("page_rules", False), ("page_and_site_rules", True)):
        kept_body = total_body = kept_other = total_other = 0
        for url, paragraphs in docs.items():
            body = [" ".join(line.split()) for line in body_of[url].split("\n") if line.strip()]
            main = [p["text"] for p in paragraphs
                    if not p["boilerplate"] and not (use_site and p["hash"] in repeated.get(url, ()))]
            kept = set(main)
            kept_body += sum(line in kept for line in body)
            total_body += len(body)
            body_words = words(" ".join(body))
            other = words(" ".join(p["text"] for p in paragraphs)) - body_words
            kept_other += sum((words(" ".join(main)) - body_words).values())
            total_other += sum(other.values())
        result[f"{label}_body_paragraphs_kept"] = kept_body / max(total_body, 1)
        result[f"{label}_boilerplate_words_removed"] = 1 - kept_other / max(total_other, 1)
    return result


def near_duplicate_agreement(truth: pd.DataFrame, found: dict[str, str], pages: set[str]) -> dict:
    """Truth's near-duplicate pairs (duplicate_of) found by the site pass (either page kept), and extra ones."""
    if "duplicate_of" not in truth.columns:
        return {}
    expected = {(row.url, row.duplicate_of) for row in truth.itertuples()
                if isinstance(row.duplicate_of, str) and row.url in pages and row.duplicate_of in pages}
    kept_of = {url: found.get(url, url) for url in pages}
    matched = sum(kept_of[a] == kept_of[b] for a, b in expected)
    in_truth = {url for pair in expected for url in pair}
    extra = sum(1 for url in found if url not in in_truth)
    return {"truth_near_duplicates": len(expected), "truth_near_duplicates_found": matched,
            "near_duplicates_flagged": len(found), "flagged_outside_truth": extra}


def kept_table(pages: list[tuple[str, str]]) -> dict:
    """Per real page: paragraphs kept / all, characters kept / all, and the first kept paragraph."""
    from parascout.udfs.fetch.html_text import html_features

    table = {}
    for url, html in pages:
        paragraphs = html_features(html, url)["page_paragraphs"]
        kept = [p["text"] for p in paragraphs if not p["boilerplate"]]
        table[url[:60]] = (f"{len(kept)}/{len(paragraphs)} paragraphs, "
                           f"{sum(map(len, kept))}/{sum(len(p['text']) for p in paragraphs)} chars; "
                           f"first kept: {(kept[0] if kept else '-')[:60]!r}")
    return table


def justext_stoplist(lang: str | None) -> frozenset[str]:
    """justext's stop words for an ISO 639-3 language; empty (its language-independent mode) when it has none."""
    import justext

    from parascout.udfs.common.langs import load_languages

    language = load_languages().get(lang or "")
    return justext.get_stoplist(language.name) if language and language.name in justext.get_stoplists() \
        else frozenset()


def trafilatura_main_text(html: str, url: str, lang: str | None) -> str:
    import trafilatura

    return trafilatura.extract(html, url=url, include_comments=False, include_tables=True) or ""


def justext_main_text(html: str, url: str, lang: str | None) -> str:
    import justext

    stoplist = justext_stoplist(lang)
    options = {} if stoplist else {"stopwords_low": 0, "stopwords_high": 0}
    return "\n".join(p.text for p in justext.justext(html, stoplist, **options) if not p.is_boilerplate)


#: extractor -> main text of (html, url, language); parascout's: the page rules' (the site pass needs the site's other
#: pages), as fetch-docs stores it before that pass
EXTRACTORS = {"parascout": lambda html, url, lang: parascout_main_text(html, url), "trafilatura": trafilatura_main_text,
              "justext": justext_main_text}


def extractor_comparison(pages: list[tuple[str, str]], truth_path: Path | None = None) -> dict:
    """parascout's main text against trafilatura and justext on the same pages, all CPU-timed in this run; with a
    truth, the same two tests for all three: body lines found in the extracted text (whitespace-normalised
    substring) and words outside the body removed (of the words of all the page's text blocks)."""
    try:
        import justext  # noqa: F401
        import trafilatura  # noqa: F401
    except ImportError:
        return {"skipped": "trafilatura/justext not installed (comparison only: pip install trafilatura justext)"}
    from parascout.udfs.fetch.html_text import html_features

    lang_of = {url: html_features(html, url)["cld2_lang"] for url, html in pages}
    body_of: dict[str, str] = {}
    if truth_path is not None:
        truth = pd.read_parquet(truth_path)
        body_of = {row.url: row.body_text for row in truth.itertuples() if isinstance(row.body_text, str)
                   and row.body_text.strip()}
        lang_of.update(zip(truth["url"], truth["lang"]))
        pages = [(url, html) for url, html in pages if url in body_of]
    result: dict = {"pages": len(pages)}
    for name, extract in EXTRACTORS.items():
        for url, html in pages[:20]:  # warm caches and lazy imports
            extract(html, url, lang_of.get(url))
        cpu = time.process_time()
        texts = {url: extract(html, url, lang_of.get(url)) for url, html in pages}
        result[f"{name}_pages_per_cpu_s"] = len(pages) / (time.process_time() - cpu)
        if body_of:
            result.update({f"{name}_{key}": value for key, value in extracted_quality(pages, texts, body_of).items()})
    for name in ("trafilatura", "justext"):
        result[f"parascout_speed_vs_{name}"] = result["parascout_pages_per_cpu_s"] / result[f"{name}_pages_per_cpu_s"]
    return result


def extracted_quality(pages: list[tuple[str, str]], texts: dict[str, str], body_of: dict[str, str]) -> dict:
    from parascout.udfs.fetch.html_text import html_features

    found = total = kept_other = total_other = 0
    for url, html in pages:
        body = [" ".join(line.split()) for line in body_of[url].split("\n") if line.strip()]
        extracted = " ".join(texts[url].split())
        found += sum(line in extracted for line in body)
        total += len(body)
        body_words = words(" ".join(body))
        page_words = words(" ".join(p["text"] for p in html_features(html, url)["page_paragraphs"]))
        total_other += sum((page_words - body_words).values())
        kept_other += sum((words(extracted) - body_words).values())
    return {"body_lines_found": found / max(total, 1), "other_words_removed": 1 - kept_other / max(total_other, 1)}


def bench_html_ceiling(hosts: int, seed: int) -> dict:
    """--ceiling: the C parts' rates beside the full pipeline on the real pages and one seed's sample archive."""
    results = {"ceiling_real_commoncrawl": bench_ceiling(real_commoncrawl_pages(), "real CommonCrawl", repeat=20)}
    corpus = shared_data_path() / "parallel-text" / "bible"
    with tempfile.TemporaryDirectory() as folder:
        pages, _ = sample_archive_pages(Path(folder), hosts, corpus if corpus.exists() else None, seed)
        results[f"ceiling_sample_archive_seed_{seed}"] = bench_ceiling(pages, "sample-archive")
    return results


def bench_html_speed(hosts: int, seed: int, against=None) -> dict:
    """--speed-only: bench_html on the real pages and one seed's sample archive."""
    results = {"html_real_commoncrawl": bench_html(real_commoncrawl_pages(), "real CommonCrawl", 5, against)}
    corpus = shared_data_path() / "parallel-text" / "bible"
    with tempfile.TemporaryDirectory() as folder:
        pages, _ = sample_archive_pages(Path(folder), hosts, corpus if corpus.exists() else None, seed)
        results[f"html_sample_archive_seed_{seed}"] = bench_html(pages, "sample-archive", 3, against)
    return results


def bench_html_engine(hosts: int, seeds: list[int], against=None) -> dict:
    """Speed on the real pages and the first seed's archive; main-text quality on every seed's archive (held-out
    seeds by default: the rules were tuned on seed 42); the comparison with trafilatura and justext."""
    real = real_commoncrawl_pages()
    results = {"html_real_commoncrawl": bench_html(real, "real CommonCrawl", repeat=5, against=against)}
    corpus = shared_data_path() / "parallel-text" / "bible"
    for index, seed in enumerate(seeds):
        with tempfile.TemporaryDirectory() as folder:
            pages, truth = sample_archive_pages(Path(folder), hosts, corpus if corpus.exists() else None, seed)
            if index == 0:
                results[f"html_sample_archive_seed_{seed}"] = bench_html(pages, "sample-archive", against=against)
            results[f"main_text_quality_sample_archive_seed_{seed}"] = main_text_quality(pages, truth)
            results[f"extractors_sample_archive_seed_{seed}"] = extractor_comparison(pages, truth)
    results["extractors_real_commoncrawl_speed"] = extractor_comparison(real)
    results["main_text_kept_real_commoncrawl"] = kept_table(real)
    return results
