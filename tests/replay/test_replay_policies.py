"""Crawl policies on tiny graphs and synthetic bilingual sites, with deterministic URL scorers."""
import math
import zlib

import numpy as np
import pandas as pd
import pytest

from parascout.udfs.replay import POLICY_NAMES, build_graph, build_truth, lss_handles, make_policy, simulate
from parascout.udfs.replay.site_policy import SmartSite
from parascout.udfs.replay.synthetic import handle_pair_scorer, marker_lang_scorer, multilingual_site, random_site
from tests.support.replay import HOST, LANGS, NO_PAIRS, pairs, site, train_tiny_url_models, urls

LANG_SCORER = marker_lang_scorer({"eng": "/en/", "isl": "/is/"})
PAIR_SCORER = handle_pair_scorer(LANGS)


def table_pair_scorer(table: dict[tuple[str, str], float], default: float = 0.0):
    """P(u, v parallel) looked up by (u path, v path)."""
    def score(src_urls, trg_urls):
        cut = len(f"https://{HOST}")
        return np.array([table.get((s[cut:], t[cut:]), default) for s, t in zip(src_urls, trg_urls)])
    return score


def constant_lang_scorer(urls):
    return pd.DataFrame({"eng": np.ones(len(urls)), "isl": np.ones(len(urls))})


def smart(table: dict, **kwargs):
    return make_policy("smart", langs=LANGS, lang_scorer=constant_lang_scorer,
                       pair_scorer=table_pair_scorer(table, **kwargs))


def all_policies(seed: int = 0) -> list:
    return [make_policy(name, langs=LANGS, lang_scorer=LANG_SCORER, pair_scorer=PAIR_SCORER, random_seed=seed)
            for name in POLICY_NAMES]


def test_bfs_cld2_discards_links_of_pages_in_other_languages():
    docs = site({"/": ["/de/", "/a"], "/de/": ["/de/x"], "/de/x": [], "/a": ["/b"], "/b": []},
                lang={"/de/": "deu", "/de/x": "deu"})
    graph = build_graph(docs)
    assert simulate(graph, "bfs", NO_PAIRS).fetched_urls() == urls("/", "/de/", "/a", "/de/x", "/b")
    cld2 = simulate(graph, make_policy("bfs+cld2", langs=LANGS), NO_PAIRS)
    assert cld2.fetched_urls() == urls("/", "/de/", "/a", "/b") and cld2.stopped == "frontier_exhausted"


def test_smart_orders_by_priority_and_reprioritises_only_upward():
    graph = build_graph(site({"/": ["/a", "/b", "/c", "/d"], "/a": [], "/b": ["/a", "/c", "/d"], "/c": [], "/d": []}))
    table = {("/", "/a"): 0.6, ("/", "/b"): 0.9, ("/", "/c"): 0.3, ("/", "/d"): 0.2,
             ("/b", "/a"): 0.1, ("/b", "/c"): 0.2, ("/b", "/d"): 0.95}
    result = simulate(graph, smart(table), NO_PAIRS)
    # /d is raised from 0.2 to 0.95 by /b's link; /a and /c keep 0.6 and 0.3 although /b offers less
    assert result.fetched_urls() == urls("/", "/b", "/d", "/a", "/c")
    assert len(set(result.order)) == len(result.order)  # stale heap entries are never fetched twice


def test_smart_ties_are_broken_in_discovery_order():
    graph = build_graph(site({"/": ["/c", "/a", "/b"], "/a": [], "/b": [], "/c": []}))
    assert simulate(graph, smart({}, default=0.5), NO_PAIRS).fetched_urls() == urls("/", "/c", "/a", "/b")


def test_seeds_come_first_whatever_their_priority():
    graph = build_graph(site({"/": ["/hot"], "/hot": [], "/cold-1": [], "/cold-2": []}))
    policy = smart({("/", "/hot"): 1.0})
    result = simulate(graph, policy, NO_PAIRS, seeds=urls("/cold-2", "/", "/cold-1"))
    assert result.fetched_urls() == urls("/cold-2", "/", "/cold-1", "/hot")


def test_smart_asks_for_the_other_language_of_the_linking_page():
    docs = site({"/": ["/is/x", "/en/x"], "/is/x": [], "/en/x": []}, lang={"/": "isl"})
    graph = build_graph(docs)
    assert simulate(graph, make_policy("smart", langs=LANGS, lang_scorer=LANG_SCORER, pair_scorer=lambda s, t: np.ones(len(s))),
                    NO_PAIRS).fetched_urls() == urls("/", "/en/x", "/is/x")
    docs.loc[0, "cld2_lang"] = "eng"
    graph = build_graph(docs)
    assert simulate(graph, make_policy("smart", langs=LANGS, lang_scorer=LANG_SCORER, pair_scorer=lambda s, t: np.ones(len(s))),
                    NO_PAIRS).fetched_urls() == urls("/", "/is/x", "/en/x")


def test_smart_lang_explores_the_wanted_languages_before_others_but_keeps_likely_translations_first():
    # from the Icelandic home: /en/x is its likely translation; /is/a and /de/a are plain navigation
    docs = site({"/": ["/de/a", "/is/a", "/en/x"], "/de/a": [], "/is/a": [], "/en/x": []}, lang={"/": "isl"})
    graph = build_graph(docs)
    table = {("/", "/en/x"): 0.9}

    def lang_scorer(urls):
        english = np.array(["/en/" in u for u in urls], dtype=float)
        icelandic = np.array(["/is/" in u for u in urls], dtype=float)
        return pd.DataFrame({"eng": 0.05 + 0.9 * english, "isl": 0.05 + 0.9 * icelandic})

    def policy(name):
        return make_policy(name, langs=LANGS, lang_scorer=lang_scorer, pair_scorer=table_pair_scorer(table))
    # the paper's score: both navigation links score 0, discovery order decides
    assert simulate(graph, policy("smart"), NO_PAIRS).fetched_urls() == urls("/", "/en/x", "/de/a", "/is/a")
    assert simulate(graph, policy("smart+lang"), NO_PAIRS).fetched_urls() == urls("/", "/en/x", "/is/a", "/de/a")


def test_smart_scores_each_host_in_batched_vectorised_calls():
    calls = []

    def counting_lang_scorer(batch):
        calls.append(len(batch))
        return LANG_SCORER(batch)
    docs, truth = multilingual_site(n_articles=50)
    policy = make_policy("smart", langs=LANGS, lang_scorer=counting_lang_scorer, pair_scorer=PAIR_SCORER)
    simulate(build_graph(docs), policy, truth)
    assert len(calls) == 1 and calls[0] > 100


def test_smart_scores_every_reachable_link_once_with_its_own_source():
    # '/0-island' is unreachable and sorts before the other pages: its links are neither scored nor used
    graph = build_graph(site({"/": ["/a", "/b"], "/0-island": ["/c", "/b"], "/a": ["/c", "/b"], "/b": ["/c"], "/c": []}))
    pages, links = [], []
    table = {("/", "/a"): 0.2, ("/", "/b"): 0.1, ("/a", "/c"): 0.05, ("/a", "/b"): 0.3, ("/b", "/c"): 0.9,
             ("/0-island", "/c"): 1.0, ("/0-island", "/b"): 1.0}

    def lang_scorer(batch):
        pages.extend(batch)
        return constant_lang_scorer(batch)

    def pair_scorer(src_urls, trg_urls):
        links.extend(zip(src_urls, trg_urls))
        return table_pair_scorer(table)(src_urls, trg_urls)
    result = simulate(graph, make_policy("smart", langs=LANGS, lang_scorer=lang_scorer, pair_scorer=pair_scorer),
                      NO_PAIRS, budget=0.8)
    assert sorted(pages) == urls("/a", "/b", "/c")
    assert sorted(links) == sorted(zip(urls("/", "/", "/a", "/a", "/b"), urls("/a", "/b", "/c", "/b", "/c")))
    assert result.fetched_urls() == urls("/", "/a", "/b", "/c")  # /b raised to 0.3 by /a; /c to 0.9 by /b


def test_smart_fetches_in_the_order_of_a_naive_best_first_crawl():
    """The heap loop (lazy deletion, upward-only re-prioritising, discovery-order ties) against a plain re-scan."""
    def coarse_pair_scorer(src_urls, trg_urls):  # four levels: plenty of ties and of raised pages
        return np.array([zlib.crc32(f"{s} {t}".encode()) % 4 / 4 for s, t in zip(src_urls, trg_urls)])

    for seed in range(3):
        rng = np.random.default_rng(seed)  # 200 pages, 6 random links each, a tenth of them to pages not archived
        paths = ["/"] + [f"/p{i}" for i in range(1, 200)]
        graph = build_graph(site({path: [f"/p{j}" if j < 200 else f"/gone{j}" for j in rng.integers(1, 220, 6)]
                                  for path in paths}))
        result = simulate(graph, make_policy("smart", langs=LANGS, lang_scorer=constant_lang_scorer,
                                             pair_scorer=coarse_pair_scorer), NO_PAIRS)
        queued, fetched, discoveries = {graph.home(): (math.inf, 0)}, [], 1  # page -> (priority, discovery)
        while queued and len(fetched) < result.budget_fetches:
            page = min(queued, key=lambda v: (-queued[v][0], queued[v][1]))
            del queued[page]
            fetched.append(page)
            for target in graph.links[page]:
                offered = coarse_pair_scorer([graph.urls[page]], [graph.urls[target]])[0]
                if target not in fetched and (target not in queued or offered > queued[target][0]):
                    queued[target], discoveries = (offered, discoveries), discoveries + 1
        assert result.order == fetched


class RescoringPolicy:
    """A per-edge policy whose link priorities are redrawn at fixed fetch counts (they may go down)."""

    name, fifo, per_edge, dynamic, rescores = "rescoring", False, True, False, True

    def __init__(self, at: tuple[int, ...]):
        self.at, self.draws = at, 0

    def prepare(self, graph, truth):
        pass

    def follows_links(self, graph):
        return None

    def value(self, source: str, target: str) -> float:
        return zlib.crc32(f"{self.draws} {source} {target}".encode()) % 5 / 5

    def priority(self, graph, sources, targets):
        self.edges = [(graph.urls[s], graph.urls[t]) for s, t in zip(sources.tolist(), targets.tolist())]
        return np.array([self.value(s, t) for s, t in self.edges])

    def next_rescore(self, fetched: int) -> int:
        return next((count for count in self.at if count > fetched), 10**9)

    def rescore(self, graph, fetched, discovered):
        self.draws += 1
        return np.array([self.value(s, t) for s, t in self.edges])


def test_rescoring_re_keys_the_queue_as_a_naive_re_scan_would():
    """After a rescore every queued page takes the best new priority of the links found to it, up or down,
    keeping its place among ties; between rescores the loop is the plain best-first one."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        paths = ["/"] + [f"/p{i}" for i in range(1, 150)]
        graph = build_graph(site({path: [f"/p{j}" if j < 150 else f"/gone{j}" for j in rng.integers(1, 165, 5)]
                                  for path in paths}))
        at = (3, 10, 25, 60)
        result = simulate(graph, RescoringPolicy(at), NO_PAIRS)
        reference = RescoringPolicy(at)
        queued, fetched, discoveries = {graph.home(): (math.inf, 0)}, [], 1  # page -> (priority, discovery)
        while queued and len(fetched) < result.budget_fetches:
            if len(fetched) in at:
                reference.draws += 1
                for page in queued:
                    offers = [reference.value(graph.urls[u], graph.urls[page]) for u in fetched
                              if page in graph.links[u]]
                    if offers:
                        queued[page] = (max(offers), queued[page][1])
            page = min(queued, key=lambda v: (-queued[v][0], queued[v][1]))
            del queued[page]
            fetched.append(page)
            for target in graph.links[page]:
                offered = reference.value(graph.urls[page], graph.urls[target])
                if target not in fetched and (target not in queued or offered > queued[target][0]):
                    queued[target], discoveries = (offered, discoveries), discoveries + 1
        assert result.order == fetched


def query_language_site(n_articles: int = 40) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Articles in English (/a1), Icelandic (/a1?l=2) and German (/a1?l=3), all listed on the home page in mixed
    order, each linking to its other versions; English-Icelandic pairs are the truth."""
    versions = {"eng": "", "isl": "?l=2", "deu": "?l=3"}
    rng = np.random.default_rng(5)
    pages = {f"/a{i}{suffix}": [f"/a{i}{other}" for other in versions.values() if other != suffix]
             for i in range(n_articles) for suffix in versions.values()}
    listed = list(pages)
    rng.shuffle(listed)
    docs = site({"/": listed, **pages},
                lang={path: next(lang for lang, suffix in versions.items() if suffix and path.endswith(suffix))
                      for path in pages if "?" in path})
    return docs, pairs(*[(f"/a{i}", f"/a{i}?l=2") for i in range(n_articles)])


def test_smart_site_learns_a_query_parameter_language_the_url_model_cannot_read():
    docs, truth = query_language_site()
    graph = build_graph(docs)
    truth_index = build_truth(graph, truth)

    def clueless_lang_scorer(batch):  # a model trained elsewhere: ?l=3 means nothing to it
        return pd.DataFrame({"eng": np.full(len(batch), 0.4), "isl": np.full(len(batch), 0.4),
                             "deu": np.full(len(batch), 0.2)})

    def same_article(src_urls, trg_urls):
        return np.array([0.9 if s.split("?")[0] == t.split("?")[0] else 0.05 for s, t in zip(src_urls, trg_urls)])
    german = {}
    for name in ("smart+lang", "smart+site"):
        policy = make_policy(name, langs=LANGS, lang_scorer=clueless_lang_scorer, pair_scorer=same_article)
        result = simulate(graph, policy, truth_index)
        until = result.summary()["fetches_to_80"]
        german[name] = sum(graph.langs[node] == "deu" for node in result.order[:until])
    # smart+lang cannot tell ?l=3 from ?l=2; smart+site has learnt it after its first German fetches
    assert german["smart+site"] <= 6 and german["smart+lang"] >= 3 * german["smart+site"], german


def test_site_class_posterior_learns_only_from_features_seen_on_fetched_pages():
    from scipy import sparse

    from parascout.udfs.replay.site_policy import site_class_posterior

    # features: 0 = 'q:l=3' (German pages), 1 = shared by everything, 2 = on no fetched page
    features = sparse.csr_matrix(np.array([[1, 1, 0], [1, 1, 0], [0, 1, 0], [1, 1, 0], [0, 1, 1], [0, 0, 1]],
                                          dtype=float))
    classes = np.array([2, 2, 0, 0, 0, 0])
    fetched = np.array([True, True, True, False, False, False])
    prior = np.full((6, 4), 0.25)
    posterior = site_class_posterior(features, classes, fetched, prior)
    assert np.allclose(posterior[:3], np.eye(4)[[2, 2, 0]])          # fetched pages keep their known class
    assert posterior[3].argmax() == 2 and posterior[3, 0] < 0.25 < posterior[3, 2]  # 'q:l=3': German pages only
    sharper = site_class_posterior(features, classes, fetched, prior, smoothing=0.5)
    assert sharper[3, 2] > posterior[3, 2]                            # less smoothing: evidence weighs more
    assert np.allclose(posterior[5], prior[5])                         # only an unseen feature: the prior stands
    assert posterior[4, 1] == pytest.approx(posterior[4, 3])           # classes never fetched stay tied


def test_site_class_posterior_learns_the_site_rate_of_a_class_the_url_model_overrates():
    from scipy import sparse

    from parascout.udfs.replay.site_policy import site_class_posterior

    # classes 0 (Icelandic), 1 (no language); the URL model says 'no language' at 0.8 for every page, but the
    # four fetched pages were all Icelandic; no features, so only the class rates can move the prior
    features = sparse.csr_matrix((6, 1))
    classes = np.array([0, 0, 0, 0, 1, 1])
    fetched = np.array([True, True, True, True, False, False])
    prior = np.tile([0.2, 0.8], (6, 1))
    assert np.allclose(site_class_posterior(features, classes, fetched, prior)[4:], prior[4:])
    calibrated = site_class_posterior(features, classes, fetched, prior, rate_smoothing=2.0)
    # observed / expected counts, smoothed: Icelandic (4 + 2) / (0.8 + 2), no language (0 + 2) / (3.2 + 2)
    odds = 0.2 / 0.8 * (6 / 2.8) / (2 / 5.2)
    assert calibrated[4, 0] == pytest.approx(odds / (1 + odds)) and calibrated[4, 0] > 0.5
    assert np.allclose(calibrated[:4], np.eye(2)[[0, 0, 0, 0]])       # fetched pages keep their known class


def test_smart_site_overrules_a_url_model_that_keeps_misreading_the_sites_pages():
    def misreading_lang_scorer(batch):  # '/is/' pages read as a language the site lacks; '/de/' half Icelandic
        rows = [(0.05, 0.25, 0.0) if "/is/" in url else (0.0, 0.35, 0.65) if "/de/" in url else (0.9, 0.02, 0.0)
                for url in batch]
        return pd.DataFrame(rows, columns=["eng", "isl", "deu"])
    linked, more, german = [f"/is/a{k}" for k in range(4)], [f"/is/b{k}" for k in range(6)], [f"/de/{k}" for k in range(6)]
    pages = {"/": linked + german, **{path: more for path in linked}, **{path: [] for path in more + german}}
    graph = build_graph(site(pages, lang={**{path: "isl" for path in linked + more}, **{path: "deu" for path in german}}))
    scorer = table_pair_scorer({("/", path): 1.0 for path in linked})  # the home page's links to /is/a* are likely pairs
    first_german = {}
    for rate in (-1.0, SmartSite.class_rate_smoothing):
        policy = type("Calibrated", (SmartSite,), {"class_rate_smoothing": rate})(LANGS, misreading_lang_scorer, scorer)
        first_german[rate] = simulate(graph, policy, NO_PAIRS).fetched_urls().index(urls("/de/0")[0])
    # four '/is/' pages the URL model called 'no language' turned out Icelandic: its 'no language' is overrated on
    # this site, so the other six '/is/' pages are Icelandic enough to come before the German page that looked it
    assert first_german == {-1.0: 5, SmartSite.class_rate_smoothing: 11}


def language_switcher_site(n_articles: int = 30) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every page in English, Icelandic and German under a language-free URL ('/?p=123'); a page's first links
    are its home, then its other languages in site order (the switcher), then related pages in its language."""
    rng = np.random.default_rng(3)
    langs, pages_of = ("eng", "isl", "deu"), ["home", *range(n_articles)]
    ids = iter(rng.permutation(np.arange(100, 1000)).tolist())
    path = {(page, lang): f"/?p={next(ids)}" for page in pages_of for lang in langs} | {("home", "eng"): "/"}
    pages, lang_of = {}, {}
    for page in pages_of:
        for lang in langs:
            others = [path[(page, other)] for other in langs if other != lang]
            if page == "home":
                links = others + [path[(int(k), lang)] for k in rng.permutation(n_articles)[:8]]
            else:
                related = [path[(int(k), lang)] for k in rng.choice(n_articles, 3, replace=False) if k != page]
                links = [path[("home", lang)], *others, *related]
            pages[path[(page, lang)]], lang_of[path[(page, lang)]] = links, lang
    return site(pages, lang=lang_of), pairs(*[(path[(page, "eng")], path[(page, "isl")]) for page in pages_of])


def test_smart_site_learns_which_header_slot_leads_to_which_language():
    docs, truth = language_switcher_site()
    graph = build_graph(docs)
    truth_index = build_truth(graph, truth)

    def clueless_lang_scorer(batch):  # '/?p=123' says nothing about a language
        return pd.DataFrame({lang: np.full(len(batch), 0.3) for lang in ("eng", "isl", "deu")})

    def clueless_pair_scorer(src_urls, trg_urls):
        return np.full(len(src_urls), 0.5)
    german = {}
    for slots in (16, 0):
        policy = type("SmartSiteSlots", (SmartSite,), {"link_slots": slots})(LANGS, clueless_lang_scorer,
                                                                             clueless_pair_scorer)
        result = simulate(graph, policy, truth_index)
        german[slots] = sum(graph.langs[node] == "deu" for node in result.order[:result.summary()["fetches_to_80"]])
    # every page links English, Icelandic and German pages: only the slot tells slot 2's German from slot 1's
    assert german[16] <= 8 and german[0] >= 3 * german[16], german


def test_smart_site_walks_the_smaller_language_first():
    english = [f"/en/{name}" for name in "abcdefgh"]
    graph = build_graph(site({"/": [*english, "/is/x"], **{path: [] for path in english}, "/is/x": []},
                             lang={"/is/x": "isl"}))

    class EvenFocus(SmartSite):
        def _translation_shares(self, posterior, discovered):
            return 1.0, 1.0
    position = {}
    for policy in (SmartSite, EvenFocus):
        result = simulate(graph, policy(LANGS, LANG_SCORER, lambda s, t: np.zeros(len(s))), NO_PAIRS)
        position[policy.__name__] = result.fetched_urls().index(urls("/is/x")[0])
    # nine English pages found and one Icelandic: an Icelandic page is the likelier half of a pair, so it is
    # fetched at the first rescore (after 4 fetches), not after every English page
    assert position == {"SmartSite": 4, "EvenFocus": 9}


def test_strand_fetches_the_other_language_twin_first():
    graph = build_graph(site({"/": ["/en/a", "/n1", "/n2", "/is/a"], "/en/a": [], "/n1": ["/m1"], "/n2": ["/is/b"],
                              "/is/a": [], "/m1": [], "/en/b": [], "/is/b": []}, lang={"/is/a": "isl"}))
    result = simulate(graph, make_policy("strand", langs=LANGS, handle_function=lss_handles), NO_PAIRS,
                      seeds=urls("/", "/en/b"))
    # /is/a is queued when /en/a is fetched; /is/b is not yet known, and jumps the queue once found
    assert result.fetched_urls()[:8] == urls("/", "/en/b", "/en/a", "/is/a", "/n1", "/n2", "/is/b", "/m1")


def test_lss_handles_and_url_languages():
    handles, langs = lss_handles(urls("/en/about", "/is/about", "/about?lang=is", "/de/about", "/is-it"), LANGS)
    assert handles[0] == handles[1] == handles[2]  # the `lang=` query key is an LSS whatever its value
    assert handles[3] != handles[0]
    # a language named in the path; `lang=is` names none here (the stripper drops the key whatever its value)
    assert langs == ["eng", "isl", None, None, "isl"]


def test_strand_uses_udfs_handles_when_installed():
    pytest.importorskip("parascout.udfs.rank.handles", reason="udfs.rank.handles (the STRAND helper) is not installed")
    from parascout.udfs.replay.page_policies import default_handle_function, lss_handles

    assert default_handle_function() is lss_handles
    handles, langs = lss_handles(urls("/en/about.html", "/is/about.html", "/de/about.html"), LANGS)
    assert handles[0] == handles[1] != handles[2] and langs == ["eng", "isl", None]


def test_random_is_deterministic_for_a_seed():
    graph = build_graph(random_site(n_pages=300, seed=1)[0])
    first = simulate(graph, make_policy("random", random_seed=7), NO_PAIRS).order
    assert simulate(graph, make_policy("random", random_seed=7), NO_PAIRS).order == first
    assert simulate(graph, make_policy("random", random_seed=8), NO_PAIRS).order != first


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_oracle_is_an_upper_bound_of_every_policy(seed):
    for docs, truth in (multilingual_site(n_articles=80, seed=seed), random_site(n_pages=400, out_degree=4, seed=seed)):
        graph = build_graph(docs)
        truth_index = build_truth(graph, truth)
        aucs = {p.name: simulate(graph, p, truth_index).summary()["auc"] for p in all_policies(seed)}
        assert aucs["oracle"] == max(aucs.values()), aucs


def test_smart_reaches_80_percent_with_at_most_half_the_fetches_of_bfs():
    """The target on a site whose translations hang off a language switcher deep in the graph."""
    for seed in range(3):
        docs, truth = multilingual_site(n_articles=150, seed=seed)
        graph = build_graph(docs)
        truth_index = build_truth(graph, truth)
        smart_80 = simulate(graph, make_policy("smart", langs=LANGS, lang_scorer=LANG_SCORER, pair_scorer=PAIR_SCORER),
                            truth_index).summary()["fetches_to_80"]
        bfs_80 = simulate(graph, "bfs", truth_index).summary()["fetches_to_80"]
        assert smart_80 <= 0.5 * bfs_80, (smart_80, bfs_80)


@pytest.fixture(scope="session")
def tiny_url_models(tmp_path_factory) -> tuple[str, str]:
    """(lang model dir, pair model dir), trained once per test session."""
    return train_tiny_url_models(tmp_path_factory.getbasetemp() / "replay-url-models")


def test_smart_with_the_real_url_models(tiny_url_models):
    """smart driven by udfs.rank.url_models (tiny models trained here) instead of marker scorers, on a held-out site."""
    from parascout.udfs.rank.url_models import load_model

    lang_dir, pair_dir = tiny_url_models
    policy = make_policy("smart", langs=LANGS, lang_scorer=load_model(lang_dir).predict_lang,
                         pair_scorer=load_model(pair_dir).predict_parallel)
    docs, truth = multilingual_site(n_articles=150, host="www.heldout.is", seed=99)
    graph = build_graph(docs)
    truth_index = build_truth(graph, truth)
    smart_row = simulate(graph, policy, truth_index).summary()
    bfs_row = simulate(graph, "bfs", truth_index).summary()
    assert smart_row["recall"] > 0.95 and smart_row["auc"] > bfs_row["auc"] + 0.2, (smart_row, bfs_row)
    assert smart_row["fetches_to_80"] <= 0.5 * bfs_row["fetches_to_80"]


def cued_site(pages: dict, cues: dict, lang: dict) -> pd.DataFrame:
    """site() plus outlink_cues: cues[(page, link)] is the language the link's context names."""
    docs = site(pages, lang=lang)
    docs["outlink_cues"] = [[cues.get((path, link)) for link in links] for path, links in pages.items()]
    return docs


CUED_PAGES = {"/": ["/a", "/b", "/c", "/is/"], "/a": [], "/b": [], "/c": [], "/is/": ["/is/x", "/x"],
              "/is/x": ["/x"], "/x": ["/is/x"]}
CUED_LANGS = {"/is/": "isl", "/is/x": "isl"}
CUES = {("/", "/is/"): "isl", ("/", "/b"): "deu", ("/is/", "/x"): "eng", ("/x", "/is/x"): "isl",
        ("/is/x", "/x"): "eng"}


def test_graph_keeps_link_cues_aligned_and_first_cue_of_a_repeated_link():
    docs = cued_site({"/": ["/a", "/b", "/a"], "/a": [], "/b": []}, {}, {})
    docs.at[0, "outlink_cues"] = [None, None, "isl"]  # /a linked twice: the second link's cue counts
    graph = build_graph(docs)
    assert graph.link_cues[graph.node(urls("/")[0])] == ["isl", None]
    misaligned = docs.copy()
    misaligned.at[0, "outlink_cues"] = ["isl"]  # not aligned with outlinks: no cues for the row, no crash
    assert build_graph(misaligned).link_cues[0] == [None, None]
    assert build_graph(site({"/": ["/a"], "/a": []})).link_cues is None


def test_ilsp_gives_the_bonus_to_links_cued_with_the_other_language_only():
    graph = build_graph(cued_site(CUED_PAGES, CUES, CUED_LANGS))
    result = simulate(graph, make_policy("ilsp", langs=LANGS), pairs(("/", "/is/"), ("/x", "/is/x")))
    # from English /: /is/ (cued isl) jumps ahead; /b's cue names German, not the pair's other language: no bonus;
    # from Icelandic /is/: /x cued eng jumps ahead of the queued /a, /b, /c
    assert result.fetched_urls() == urls("/", "/is/", "/x", "/is/x", "/a", "/b", "/c")
    bfs = simulate(graph, "bfs", NO_PAIRS)
    assert bfs.fetched_urls() == urls("/", "/a", "/b", "/c", "/is/", "/is/x", "/x")
    uncued = build_graph(site(CUED_PAGES, lang=CUED_LANGS))  # no outlink_cues column: ilsp is bfs
    assert simulate(uncued, make_policy("ilsp", langs=LANGS), NO_PAIRS).fetched_urls() == bfs.fetched_urls()


def prepared_smart_site():
    """smart+site prepared on the cued site, with every link of its graph as (sources, targets)."""
    graph = build_graph(cued_site(CUED_PAGES, CUES, CUED_LANGS))
    policy = make_policy("smart+site", langs=LANGS, lang_scorer=constant_lang_scorer,
                         pair_scorer=table_pair_scorer({}))
    policy.prepare(graph, build_truth(graph, NO_PAIRS))
    offsets, targets = graph.csr()
    return graph, policy, np.repeat(np.arange(graph.n_nodes), np.diff(offsets)), targets


def test_smart_site_adds_the_cue_bonus_to_cued_links():
    graph, policy, sources, targets = prepared_smart_site()
    scores = policy.priority(graph, sources, targets)
    cued = {(graph.urls[s], graph.urls[t]): score for s, t, score in zip(sources, targets, scores)}
    home, icelandic, german, uncued = urls("/")[0], urls("/is/")[0], urls("/b")[0], urls("/a")[0]
    assert cued[(home, icelandic)] - cued[(home, uncued)] == pytest.approx(SmartSite.cue_weight)
    # /b's cue names German, outside the pair: the switcher says it leads away from both languages
    assert cued[(home, german)] == pytest.approx(-SmartSite.third_cue_penalty)
    policy.third_cue_overrides = False
    scores = policy.priority(graph, sources, targets)
    cued = {(graph.urls[s], graph.urls[t]): score for s, t, score in zip(sources, targets, scores)}
    assert cued[(home, uncued)] - cued[(home, german)] == pytest.approx(SmartSite.third_cue_penalty)


def test_smart_site_learns_from_the_languages_cues_name():
    graph, policy, sources, targets = prepared_smart_site()
    policy.priority(graph, sources, targets)
    fetched = np.zeros(graph.n_nodes, dtype=bool)
    fetched[graph.node(urls("/")[0])] = True
    matrix = policy._linked_from(fetched).toarray()
    n_classes = len(policy._class_langs) + 2
    cue_columns = matrix[:, n_classes * (1 + policy.link_slots):]
    icelandic, german = graph.node(urls("/is/")[0]), graph.node(urls("/b")[0])
    assert cue_columns[icelandic, policy._class_langs.index("isl")] == 1
    assert cue_columns[german].sum() == 0  # /b's cue names German, a language the site has no page in: no class
    assert cue_columns.sum() == 1
    policy.cue_features = False
    assert policy._linked_from(fetched).toarray()[:, n_classes * (1 + policy.link_slots):].sum() == 0


def test_smart_site_follows_cues_into_the_pair_and_away_from_third_languages():
    # a German home page: its switcher names French, Icelandic and English; URLs and the URL models say nothing
    pages = {"/": ["/l1", "/l2", "/l3"], "/l1": [], "/l2": [], "/l3": []}
    cues = {("/", "/l1"): "fra", ("/", "/l2"): "isl", ("/", "/l3"): "eng"}
    graph = build_graph(cued_site(pages, cues, {"/": "deu", "/l1": "fra", "/l2": "isl"}))
    policy = make_policy("smart+site", langs=LANGS, lang_scorer=constant_lang_scorer,
                         pair_scorer=lambda s, t: np.full(len(s), 0.5))
    # without the cue terms every link scores alike and the French home, found first, is fetched first
    assert simulate(graph, policy, pairs(("/l2", "/l3"))).fetched_urls() == urls("/", "/l2", "/l3", "/l1")


def test_smart_site_trusts_a_fetched_pages_switcher_over_the_url_models_partner():
    # /is/news-1's switcher (cued English) says its translation is /en/other; the URL model pairs it with /en/news-2
    fillers = [f"/en/f{k}" for k in range(1, 5)]
    pages = {"/": ["/is/news-1", *fillers, "/en/news-2"], "/is/news-1": ["/en/other"], "/en/other": [],
             "/en/news-2": [], **{path: [] for path in fillers}}
    cues = {("/", "/is/news-1"): "isl", ("/is/news-1", "/en/other"): "eng"}
    graph = build_graph(cued_site(pages, cues, {"/is/news-1": "isl"}))
    scorer = table_pair_scorer({("/is/news-1", "/en/news-2"): 0.9, ("/en/news-2", "/is/news-1"): 0.9})
    position = {}
    for override in (False, True):
        policy = type("Switchers", (SmartSite,), {"switchers_override": override})(LANGS, LANG_SCORER, scorer)
        result = simulate(graph, policy, pairs(("/is/news-1", "/en/other")))
        position[override] = result.fetched_urls().index(urls("/en/news-2")[0])
    # without the override /en/news-2 takes the partner bonus at the first rescore (after 4 fetches); with it, the
    # switcher already named /is/news-1's translation, and /en/news-2 waits its turn behind the other English pages
    assert position == {False: 4, True: 7}


def test_smart_site_lets_a_third_language_cue_overrule_the_url_models():
    # the URL models take /b for /'s translation; its switcher entry names German, a language outside the pair
    graph = build_graph(cued_site(CUED_PAGES, CUES, CUED_LANGS))
    order = {}
    for overrides in (False, True):
        policy = type("ThirdCue", (SmartSite,), {"third_cue_overrides": overrides})(
            LANGS, constant_lang_scorer, table_pair_scorer({("/", "/b"): 0.9}))
        order[overrides] = simulate(graph, policy, pairs(("/", "/is/"))).fetched_urls()
    # switchers first either way; then the URL models' /b goes ahead of the uncued /a, /c, unless its cue overrules them
    assert order[False] == urls("/", "/is/", "/x", "/is/x", "/b", "/a", "/c")
    assert order[True] == urls("/", "/is/", "/x", "/is/x", "/a", "/c", "/b")


def test_a_sites_urls_and_links_are_scored_once_for_all_its_model_policies(tmp_path_factory, monkeypatch):
    """smart, smart+lang and smart+site (and its rescoring passes) score the same links: replay_host asks the URL
    models once per URL and link of a site, and every policy gets the scores it would have computed itself."""
    from parascout.udfs.replay import batch

    lang_dir, pair_dir = train_tiny_url_models(tmp_path_factory.getbasetemp() / "replay-url-models")
    lang_scorer, pair_scorer = batch.model_scorers(lang_dir, pair_dir)
    scored_urls, scored_links = [], []

    def counting_lang_scorer(batch_urls):
        scored_urls.extend(batch_urls)
        return lang_scorer(batch_urls)

    def counting_pair_scorer(src_urls, trg_urls):
        scored_links.extend(zip(src_urls, trg_urls))
        return pair_scorer(src_urls, trg_urls)
    monkeypatch.setattr(batch, "model_scorers", lambda *models: (counting_lang_scorer, counting_pair_scorer))
    docs, truth = multilingual_site(n_articles=40, seed=3)
    policies = ("smart", "smart+lang", "smart+site")
    rows = batch.replay_host(docs, truth, batch.ReplayRun(langs=LANGS, policies=policies, lang_model=lang_dir,
                                                          pair_model=pair_dir)).set_index("policy")
    assert scored_links and len(scored_links) == len(set(scored_links))
    assert scored_urls and len(scored_urls) == len(set(scored_urls))
    graph = build_graph(docs)
    sample_every = batch.DEFAULT.sample_every
    for name in policies:  # each policy on its own, with the models' own scorers: the same crawl
        alone = simulate(graph, make_policy(name, langs=LANGS, lang_scorer=lang_scorer, pair_scorer=pair_scorer),
                         build_truth(graph, truth), sample_every=sample_every)
        assert list(rows.loc[name, "curve_pairs_found"]) == alone.curve()["pairs_found"].tolist(), name
        assert list(rows.loc[name, "curve_fetched"]) == alone.curve()["fetched"].tolist(), name
    # a site too large to keep its scores: every policy scores for itself, with the same crawls
    monkeypatch.setattr(batch.SiteScores, "max_entries", 10)
    scored_links.clear()
    uncached = batch.replay_host(docs, truth, batch.ReplayRun(langs=LANGS, policies=policies, lang_model=lang_dir,
                                                              pair_model=pair_dir)).set_index("policy")
    assert len(scored_links) > len(set(scored_links))
    assert uncached["curve_pairs_found"].map(list).tolist() == rows["curve_pairs_found"].map(list).tolist()
