"""Blocking: URL tokens, language-neutral keys, exact vs LSH top-k Jaccard, recall on synthetic and real pairs."""
from __future__ import annotations

import random
from urllib.parse import urlsplit

import numpy as np
import pandas as pd
import pytest

from parascout.udfs.common.langs import language_markers
from parascout.udfs.common.sites import site_of
from parascout.udfs.rank import blocking
from parascout.udfs.rank.blocking import BlockingConfig
from testkit.sites import CONVENTIONS, image_pages, linearised, prose_pages, synthetic_sites

MARKERS = language_markers(("eng", "isl"))


def block_sites(urls: pd.DataFrame, k: int = 5, lsh_min_pairs: int = 2_000_000) -> pd.DataFrame:
    """similar_pairs_for_group over every site (as one group each)."""
    frames = []
    for site, group in urls.groupby("site"):
        group = group.assign(host=site)
        frames.append(blocking.similar_pairs_for_group(group, "eng", "isl", k, 10_000, lsh_min_pairs))
    return pd.concat(frames, ignore_index=True)


def true_pairs(urls: pd.DataFrame) -> set[tuple[str, str]]:
    paired = urls.dropna(subset=["pair_id"])
    src = paired[paired["lang"] == "eng"].set_index("pair_id")["url"]
    trg = paired[paired["lang"] == "isl"].set_index("pair_id")["url"]
    return set(zip(src, trg.loc[src.index]))


def test_url_tokens_drop_host_markers_and_scheme():
    tokens = blocking.similarity_tokens("https://www.example.is/en/News/Bernal15EN.htm?lang=en&id=7", MARKERS,
                                 "www.example.is")
    assert tokens == {"news", "bernal", "15", "htm", "lang", "id", "7"}
    assert blocking.similarity_tokens("https://en.example.is/a", MARKERS, "example.is") == {"a"}
    assert blocking.similarity_tokens(None, MARKERS) == frozenset()


def test_sites_by_each_grouping_and_by_name_in_spark_as_in_python(spark):
    from parascout.udfs.common.sites import with_site
    from parascout.udfs.common.urls import registered_domain

    hosts = ["en.example.co.uk", "www.example.is", "example.is", "blog.example.is", "10.0.0.1", "localhost"]
    expected = {"site": ["example.co.uk", "example.is", "example.is", "blog.example.is", "10.0.0.1", "localhost"],
                "domain": ["example.co.uk", "example.is", "example.is", "example.is", "10.0.0.1", "localhost"],
                "name": ["example.*", "example.*", "example.*", "example.*", "10.0.0.1", "localhost"],
                "host": hosts}
    frame = spark.createDataFrame([(h, registered_domain(h)) for h in hosts], "host string, domain string")
    for grouped_by, sites in expected.items():
        assert [site_of(h, registered_domain(h), MARKERS, grouped_by) for h in hosts] == sites, grouped_by
        spark_sites = dict(with_site(frame, ("eng", "isl"), grouped_by).select("host", "site").collect())
        assert [spark_sites[h] for h in hosts] == sites, grouped_by


def test_sites_of_several_language_pairs_strip_each_rows_own_language_labels(spark):
    from parascout.udfs.common.sites import with_site

    frame = spark.createDataFrame([("fr.example.com", "eng", "fra", 1), ("fr.example.com", "eng", "deu", 2),
                                   ("de.example.com", "eng", "deu", 3)],
                                  "host string, src_lang string, trg_lang string, n int")
    sited = with_site(frame, None)
    assert sited.columns == ["host", "src_lang", "trg_lang", "n", "site"]
    assert sorted((row["n"], row["site"]) for row in sited.collect()) == [
        (1, "example.com"), (2, "fr.example.com"), (3, "example.com")]


def test_similarity_features_add_character_ngrams_of_words_only():
    features = blocking.similarity_features(frozenset({"philosophy", "2019"}))
    assert {"philosophy", "2019", "<ph", "hy>"} <= features
    assert not any(f.startswith("<2") for f in features)


def test_language_neutral_keys():
    assert site_of("en.example.is", "example.is", MARKERS) == "example.is"
    assert site_of("www.example.is", "example.is", MARKERS) == "example.is"
    assert site_of("shop.is.example.is", "example.is", MARKERS) == "shop.example.is"
    assert blocking.neutral_prefixes("https://x.is/en-gb/news/2019/a.html", MARKERS) == ["news", "news/2019",
                                                                                          "news/2019"]
    english, icelandic = "https://x.is/en/news/a.html?lang=en", "https://x.is/is/news/a.html?lang=is"
    assert blocking.neutral_handle(english, MARKERS) == blocking.neutral_handle(icelandic, MARKERS)
    assert blocking.neutral_handle("https://x.is/energy/", MARKERS) == "/energy/?"
    keys = blocking.split_keys([english, icelandic, "https://x.is/other"], ("eng", "isl"))
    assert keys["handle_hash"][0] == keys["handle_hash"][1] != keys["handle_hash"][2]
    assert (keys["handle_hash"] >= 0).all() and keys["prefix_1"].tolist() == ["news", "news", ""]


def test_exact_top_k_is_the_brute_force_top_k():
    rng = random.Random(3)
    vocabulary = [f"t{i}" for i in range(30)]
    src = [frozenset(rng.sample(vocabulary, rng.randint(1, 6))) for _ in range(40)]
    trg = [frozenset(rng.sample(vocabulary, rng.randint(1, 6))) for _ in range(35)]
    pairs, stats = blocking.similar_pairs(src, trg, k=3)
    assert stats == {"groups_exact": 1}
    jaccard = np.array([[len(a & b) / len(a | b) for b in trg] for a in src])
    for i, row in enumerate(jaccard):
        found = pairs[pairs["src_index"] == i]
        best = np.sort(row[row > 0])[::-1][:3]
        assert np.allclose(np.sort(found["jaccard"])[::-1][:len(best)], best)
    for _, pair in pairs.iterrows():
        assert pair["jaccard"] == pytest.approx(jaccard[int(pair["src_index"]), int(pair["trg_index"])])


def test_blocking_keeps_true_pairs_of_every_convention_and_prunes_the_product():
    urls = synthetic_sites()
    truth = true_pairs(urls)
    pairs = block_sites(urls)
    found = set(zip(pairs["src_url"], pairs["trg_url"]))
    sizes = urls.groupby(["site", "lang"]).size().unstack()
    cartesian = int((sizes["eng"] * sizes["isl"]).sum())
    assert len(truth & found) / len(truth) >= 0.98
    assert len(found) / cartesian < 0.1
    urls["convention"] = [CONVENTIONS[int(site[4:-3]) % len(CONVENTIONS)] for site in urls["site"]]
    for convention, group in urls.groupby("convention"):
        kept = len(true_pairs(group) & found) / len(true_pairs(group))
        assert kept >= 0.95, (convention, kept)


def test_lsh_path_agrees_with_exact_jaccard_on_small_groups():
    urls = synthetic_sites(n_sites=8, pages=150, seed=11)
    exact = block_sites(urls, k=3)
    lsh = block_sites(urls, k=3, lsh_min_pairs=0)
    best = exact.groupby("src_url")["jaccard"].max().to_frame("exact").join(
        lsh.groupby("src_url")["jaccard"].max().rename("lsh"))
    agree = np.isclose(best["exact"], best["lsh"].fillna(0))
    similar = (best["exact"] >= 0.7).to_numpy()  # well above the 16x4 banding threshold (~0.5)
    assert similar.sum() > 300 and agree[similar].mean() >= 0.99
    assert agree.mean() >= 0.9
    lsh_pairs = set(zip(lsh["src_url"], lsh["trg_url"]))
    assert len(lsh_pairs) <= len(exact)
    merged = lsh.merge(exact, on=["host", "src_url", "trg_url"], suffixes=("_lsh", "_exact"))
    assert np.allclose(merged["jaccard_lsh"], merged["jaccard_exact"])
    truth = true_pairs(urls)
    assert len(truth & lsh_pairs) / len(truth) >= 0.98


def test_lsh_reports_buckets_and_falls_back_for_lonely_urls():
    src = [frozenset({"a", "b", "c"}), frozenset({"x1"}), frozenset()]
    trg = [frozenset({"a", "b", "c"}), frozenset({"x1", "y", "z", "w", "v", "u", "q"})]
    pairs, stats = blocking.similar_pairs(src, trg, k=1, lsh_min_pairs=0)
    assert stats["groups_lsh"] == 1 and stats["lsh_exact_fallback_urls"] >= 1
    assert set(zip(pairs["src_index"], pairs["trg_index"])) == {(0, 0), (1, 1)}


def test_minhash_signatures_estimate_jaccard():
    rng = random.Random(5)
    base = [f"w{i}" for i in range(40)]
    a = frozenset(base[:30])
    b = frozenset(base[10:40])
    src, trg, vocabulary = blocking.token_matrices([a], [b])
    from scipy import sparse

    signatures = blocking.minhash_signatures(sparse.vstack([src, trg]).tocsr(),
                                             pd.util.hash_array(vocabulary), permutations=256)
    estimate = np.mean(signatures[0] == signatures[1])
    assert abs(estimate - 20 / 40) < 0.1
    assert rng is not None


def test_cap_group_keeps_the_first_urls_by_url_order():
    group = pd.DataFrame({"url": [f"u{i:03d}" for i in range(10, 0, -1)], "lang": "eng"})
    capped = blocking.cap_group(group, 4)
    assert capped["url"].tolist() == ["u001", "u002", "u003", "u004"]
    assert blocking.cap_group(group, 20) is group


def test_group_without_both_languages_gives_no_pairs():
    group = pd.DataFrame({"host": "x.is", "url": ["https://x.is/en/a", "https://x.is/en/b"], "lang": "eng"})
    assert blocking.similar_pairs_for_group(group, "eng", "isl", 5, 100, 10).empty


def test_real_wmt16_pairs_are_found_by_token_similarity(shared_data):
    rows = [line.split() for line in (shared_data / "wmt16" / "train.pairs").read_text().splitlines() if line]
    gold = pd.DataFrame(rows, columns=["src_url", "trg_url"])
    gold["host"] = [urlsplit(u).hostname for u in gold["src_url"]]
    urls = pd.concat([gold[["host", "src_url"]].rename(columns={"src_url": "url"}).assign(lang="eng"),
                      gold[["host", "trg_url"]].rename(columns={"trg_url": "url"}).assign(lang="fra")])
    urls = urls.drop_duplicates("url")
    found = pd.concat([blocking.similar_pairs_for_group(group, "eng", "fra", 5, 10_000, 2_000_000)
                       for _, group in urls.groupby("host")])
    kept = gold.merge(found, on=["src_url", "trg_url"])
    cartesian = int(urls.groupby(["host", "lang"]).size().unstack().prod(axis=1).sum())
    assert len(kept) / len(gold) >= 0.96
    assert len(found) / cartesian < 0.12


def test_shared_image_pairs_pair_translations_by_rare_image_names_only():
    pages = image_pages()
    pairs, names = blocking.shared_image_pairs(pages, ("eng", "isl"))
    expected = {(f"https://x.is/en/article/{100 + i}", f"https://x.is/is/grein/{900 + 7 * i}") for i in range(12)}
    assert set(zip(pairs["src_url"], pairs["trg_url"])) == expected
    assert (pairs["host"] == "x.is").all() and not pairs.duplicated().any()
    status = names.set_index("image")["image_status"]
    assert status["logo.png"] == status["flag-en.png"] == status["banner.jpg"] == "common"  # 24, 12, 6 of 25 pages
    assert status["only-en.jpg"] == "one_language" and status["photo-0.jpg"] == "ok"
    assert names.set_index("image").loc["photo-0.jpg", "n_pages"] == 2  # the German page is not counted
    assert (names["site_pages"] == 25).all()


def test_shared_image_pairs_cap_names_on_many_pages():
    pairs, names = blocking.shared_image_pairs(image_pages(), ("eng", "isl"),
                                               BlockingConfig(image_max_share=0.5, image_max_pages=5))
    status = names.set_index("image")["image_status"]
    assert status["banner.jpg"] == "capped" and status["flag-en.png"] == "one_language"  # 12 pages <= 0.5 x 25
    assert status["logo.png"] == "common"  # 24 pages > 0.5 x 25
    assert len(pairs) == 12
    capped = names[names["image_status"] == "capped"]
    assert int((capped["n_src"] * capped["n_trg"]).sum()) == 9


def test_image_status_keeps_names_rare_on_small_sites_and_bounds_them_on_huge_ones():
    statuses = blocking.image_status(n_pages=[4, 5, 30, 30, 2], n_src=[2, 3, 15, 15, 2], n_trg=[2, 2, 15, 15, 0],
                                     site_pages=[10, 10, 1000, 10**6, 10])
    assert statuses.tolist() == ["ok", "common", "capped", "capped", "one_language"]


def test_paragraph_profile_takes_the_first_paragraphs_text_lengths():
    structure = ["[START:p]", "[Chunk:9]", "[START:a]", "[Chunk:10]", "[END:a]", "[END:p]", "[Chunk:500]",
                 "[START:p]", "[END:p]", "[START:p]", "[Chunk:99]", "[END:p]"]
    assert blocking.paragraph_profile(structure, paragraphs=2) == pytest.approx([np.log(20), 0.0])
    assert blocking.paragraph_profile(structure) == pytest.approx([np.log(20), 0.0, np.log(100)])
    assert blocking.paragraph_profile(None) == [] == blocking.paragraph_profile(linearised([]))


def test_structure_pairs_pair_translations_by_paragraph_lengths_alone():
    pages = prose_pages()
    assert blocking.similar_pairs_for_group(pages, "eng", "isl", 5, 100, 10).empty  # no shared URL token
    pairs = blocking.structure_pairs_for_group(pages, "eng", "isl", k=1, max_urls=100)
    truth = {(f"https://x.is/en/story/{200 + i}", f"https://x.is/is/saga/{700 + 13 * i}") for i in range(14)}
    found = set(zip(pairs["src_url"], pairs["trg_url"]))
    assert truth <= found and len(found) <= 2 * 14
    assert "https://x.is/is/" not in set(pairs["trg_url"])  # no paragraph: no profile, no pair
    wider = blocking.structure_pairs_for_group(pages, "eng", "isl", k=3, max_urls=100)
    assert len(wider) <= 2 * 3 * 14 and not wider.duplicated(["src_url", "trg_url"]).any()
    assert blocking.structure_pairs_for_group(pages[pages["lang"] == "eng"], "eng", "isl", 1, 100).empty


def generated_image_docs(seed: int = 5, n_sites: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fetched docs (url, images, status) and kept URLs (url, site, lang) of a few generated sites: translations
    sharing a photo, a logo on every page, English-only flags and pictures, gallery images on many pages of both
    languages, repeated names, pages without images, a German page (docs only) and a failed fetch."""
    rng = random.Random(seed)
    docs, kept = [], []
    for number in range(n_sites):
        site = f"s{number}.is"
        for i in range(rng.randint(14, 24)):
            gallery = [f"gallery-{i % 3}.jpg"] if rng.random() < 0.8 else []
            english = ["logo.png", "flag-en.png", f"photo-{i}.jpg", *gallery] + [f"only-en-{i}.jpg"] * (i % 4 == 0)
            pages = [(f"https://{site}/en/article/{100 + i}", "eng", english)]
            if rng.random() < 0.7:
                icelandic = ["logo.png", f"photo-{i}.jpg", f"photo-{i}.jpg", *gallery] if i % 5 else []
                pages.append((f"https://{site}/is/grein/{900 + 7 * i}", "isl", icelandic))
            for url, lang, images in pages:
                docs.append((url, rng.sample(images, len(images)), "ok"))
                kept.append((url, site, lang))
        docs.append((f"https://{site}/de/artikel/1", ["photo-0.jpg", "logo.png"], "ok"))
        docs.append((f"https://{site}/is/grein/900", ["gallery-0.jpg", "photo-1.jpg"], "ok"))  # fetched twice
        docs.append((f"https://{site}/is/grein/907", ["photo-3.jpg"], "fetch_failed"))
    return (pd.DataFrame(docs, columns=["url", "images", "status"]),
            pd.DataFrame(kept, columns=["url", "site", "lang"]).drop_duplicates("url"))


def test_image_pairs_spark_plan_matches_the_pandas_twin(spark):
    docs, kept = generated_image_docs()
    languages, config = ("eng", "isl"), BlockingConfig(image_max_share=0.3, image_max_pages=6)
    fetched = docs[docs["status"] == "ok"].merge(kept, on="url")
    expected_pairs, expected_names = blocking.shared_image_pairs(fetched, languages, config)
    assert set(expected_names["image_status"]) == set(blocking.IMAGE_STATUSES)  # the input exercises every status
    assert len(expected_pairs) > 0

    docs_frame = spark.createDataFrame(docs, "url string, images array<string>, status string")
    kept_frame = spark.createDataFrame(kept, "url string, site string, lang string")
    pairs, names = blocking.image_pairs(docs_frame, blocking.with_pair(kept_frame, languages), config)
    got_pairs = pairs.toPandas()
    assert not got_pairs.duplicated().any()
    assert (sorted(got_pairs[["host", "src_url", "trg_url"]].itertuples(index=False, name=None))
            == sorted(expected_pairs[["host", "src_url", "trg_url"]].itertuples(index=False, name=None)))
    columns = ["site", "image", "n_pages", "n_src", "n_trg", "site_pages", "image_status"]

    def rows(frame: pd.DataFrame) -> list[tuple]:
        return sorted((s, i, int(p), int(a), int(b), int(n), str(t)) for s, i, p, a, b, n, t in
                      frame[columns].itertuples(index=False, name=None))

    assert rows(names.toPandas()) == rows(expected_names)


def switcher_site() -> tuple[pd.DataFrame, pd.DataFrame]:
    """docs and kept URLs of a French-English site with German translations (not kept: en,fr are ranked):
    article 1 (en, fr, de) links both ways through a switcher naming the language and lists hreflang alternates;
    article 2 has no French version, so its 'Français' link goes to the French home page, as every article 3..9's
    does; article 3's French page links to it without a cue (a 'related' link); a failed fetch links too."""
    en, fr, de = "https://x.fr/en/", "https://x.fr/fr/", "https://x.fr/de/"
    docs = [(f"{en}article-1", [f"{fr}article-1", f"{de}artikel-1", f"{en}article-2"], ["fra", "deu", None], "ok"),
            (f"{fr}article-1", [f"{en}article-1", f"{de}artikel-1"], ["eng", "deu"], "ok"),
            (f"{fr}article-3", [f"{en}article-2"], [None], "ok"),
            (f"{fr}article-4", [f"{en}article-1"], ["eng"], "fetch_failed")]
    docs += [(f"{en}article-{i}", [fr], ["fra"]) + ("ok",) for i in range(2, 10)]
    kept = [(f"{en}article-{i}", "x.fr", "eng") for i in range(1, 10)]
    kept += [(f"{fr}article-1", "x.fr", "fra"), (f"{fr}article-3", "x.fr", "fra"), (fr, "x.fr", "fra")]
    kept = pd.DataFrame(kept, columns=["url", "site", "lang"])
    kept["surt"] = [urls_surt(u) for u in kept["url"]]
    return pd.DataFrame(docs, columns=["url", "outlinks", "outlink_cues", "status"]), kept


def urls_surt(url: str) -> str:
    from parascout.udfs.common.urls import surt

    return surt(url)


def test_link_evidence_tells_switchers_from_site_wide_and_uncued_links(spark):
    docs, kept = switcher_site()
    docs_frame = spark.createDataFrame(docs, "url string, outlinks array<string>, outlink_cues array<string>, "
                                             "status string")
    kept_frame = spark.createDataFrame(kept, "url string, site string, lang string, surt string")
    evidence = blocking.link_evidence(blocking.page_links(docs_frame), blocking.with_pair(kept_frame, ("eng", "fra"))
                                      ).toPandas()
    evidence = evidence.set_index(evidence["src_url"].str[16:] + " " + evidence["trg_url"].str[16:])
    assert set(evidence.index) == {"article-1 article-1", "article-2 article-3"} | {
        f"article-{i} " for i in range(2, 10)}
    switcher = evidence.loc["article-1 article-1"]
    assert switcher["link_src_to_trg"] and switcher["link_trg_to_src"] and switcher["cue_links"] == 2
    assert switcher["cue_exclusive"] and switcher["shared_alternates"] == 1  # both list the German article
    home = evidence.loc["article-2 "]  # 'Français' on a page without a French version: the French home page
    assert home["link_src_to_trg"] and not home["link_trg_to_src"] and home["cue_links"] == 1
    assert not home["cue_exclusive"] and home["shared_alternates"] == 0
    related = evidence.loc["article-2 article-3"]  # an uncued link one way
    assert not related["link_src_to_trg"] and related["link_trg_to_src"] and related["cue_links"] == 0
    assert not related["cue_exclusive"]


def help_site() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """docs, kept URLs and URL-exact pairs of a help site whose function pages pair by URL (en/abs.html =
    fr/abs.html) and whose section pages do not (a hash per language): each section lists its functions in both
    languages; every page links the index (navigation); an English page without a translation lists two of one
    section's functions and one of another's; a French page ties two English sections."""
    en, fr = "https://help.x.org/en/", "https://help.x.org/fr/"
    functions = {"a": ["abs", "cos", "sin", "tan"], "b": ["floor", "ceil", "round", "fix"], "c": ["max", "min", "sum"]}
    names = [name for group in functions.values() for name in group]
    docs = [(f"{side}{name}.html", [f"{side}index.html"]) for side in (en, fr) for name in names]
    docs += [(f"{en}section_{group}1.html", [f"{en}index.html"] + [f"{en}{n}.html" for n in functions[group]])
             for group in functions]
    docs += [(f"{fr}section_{group}9.html", [f"{fr}index.html"] + [f"{fr}{n}.html" for n in functions[group]])
             for group in ("a", "b")]
    docs += [(f"{en}notes.html", [f"{en}index.html", f"{en}max.html", f"{en}min.html", f"{en}abs.html"]),
             (f"{fr}index.html", [f"{fr}{n}.html" for n in names]), (f"{en}index.html", [f"{en}{n}.html" for n in names]),
             (f"{fr}liste.html", [f"{fr}max.html", f"{fr}min.html"])]  # two links: too few to pair
    kept = pd.DataFrame([(url, "help.x.org", "eng" if url.startswith(en) else "fra") for url, _ in docs],
                        columns=["url", "site", "lang"])
    kept["surt"] = [urls_surt(u) for u in kept["url"]]
    exact = pd.DataFrame([("eng-fra", f"{en}{name}.html", f"{fr}{name}.html") for name in names + ["index"]],
                         columns=["lang_pair", "src_url", "trg_url"])
    docs = pd.DataFrame([(url, links, "ok") for url, links in docs], columns=["url", "outlinks", "status"])
    return docs, kept, exact


def test_pages_without_partners_by_url_pair_by_the_counterparts_of_what_they_link(spark):
    docs, kept, exact = help_site()
    pages = blocking.page_links(spark.createDataFrame(docs, "url string, outlinks array<string>, status string"))
    kept_frame = blocking.with_pair(spark.createDataFrame(kept, "url string, site string, lang string, surt string"),
                                    ("eng", "fra"))
    found = blocking.neighbour_pairs(pages, kept_frame, spark.createDataFrame(exact)).toPandas()
    pairs = {(src[22:], trg[22:]): jaccard for src, trg, jaccard in zip(found["src_url"], found["trg_url"],
                                                                       found["neighbour_jaccard"])}
    # the sections pair whatever their names; the index every page links is navigation, not evidence; the English
    # page listing functions of two sections is no one's best; section c has no French version
    assert pairs == {("section_a1.html", "section_a9.html"): 1.0, ("section_b1.html", "section_b9.html"): 1.0}
    assert set(found["host"]) == {"help.x.org"} and set(found["lang_pair"]) == {"eng-fra"}

    # a page with a partner by URL is never proposed again; one French section equally good for two English ones
    # pairs with neither
    section_c = docs.index[docs["url"] == "https://help.x.org/en/section_c1.html"][0]
    docs.at[section_c, "outlinks"] = [f"https://help.x.org/en/{name}.html" for name in ("abs", "cos", "sin", "tan")]
    exact = pd.concat([exact, pd.DataFrame([("eng-fra", "https://help.x.org/en/section_b1.html",
                                             "https://help.x.org/fr/section_b9.html")], columns=exact.columns)])
    pages = blocking.page_links(spark.createDataFrame(docs, "url string, outlinks array<string>, status string"))
    found = blocking.neighbour_pairs(pages, kept_frame, spark.createDataFrame(exact)).toPandas()
    assert found.empty
