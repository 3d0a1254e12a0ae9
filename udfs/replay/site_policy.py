"""The smart+site crawl policy: smart+lang whose language guesses learn the site's URL conventions as it crawls.

Besides the policy, the naive Bayes it refits on the fetched pages: each URL's site-local features
(host, path segments by position, query, path words) and the class posterior over the site's
languages, 'no language' and 'missing'.

Why a module of its own: it is the one policy that rescores (`rescores = True`), with most of the
knobs (ReplayConfig's site_* fields), and its site model is tested and tuned on its own.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from scipy import sparse

from parascout.udfs.replay.config import DEFAULT
from parascout.udfs.replay.graph import SiteGraph, TruthIndex, url_key
from parascout.udfs.replay.link_policies import SmartLang, _names_other_language, edge_cues, link_positions


class SmartSite(SmartLang):
    """smart+lang whose P(v in A), P(v in B) also learn this site's URL conventions from the pages fetched.

    A crawler knows the language of every page it has fetched (CLD2 on the content). Each URL is
    described by site-local features: its host, its first path segments by position, its query,
    its path words, and the languages of the fetched pages linking to it. A naive Bayes over those
    features, fitted on the fetched pages (one class per language of the site, one for documents
    without a language, one for pages missing from the archive), multiplies the URL model's
    probabilities; features not yet seen on a fetched page say nothing. So once `/fi/...` or `?l=3`
    pages turned out Finnish or French, the URL model's guess for the rest of them is overruled,
    which a model trained on other sites cannot know. The URL model's probabilities are also calibrated
    to the site: a class it expected on 40 of the fetched pages and that none of them had (often "a
    language the site lacks" for URLs of a kind it has not seen) is down-weighted on every page,
    even on pages with no feature seen yet, which the feature likelihoods alone cannot do (a class
    with no fetched page falls back on each feature's overall rate). A link's context includes its position in the
    header of the page it is on: a site's template puts its language switcher in the same slots on every
    page, so once slot 3 of German pages led to Spanish ones, it does on the next German page too, even
    where URLs carry no language at all (`?p=123`).

    A link whose context names the other language of its page (ILSP-FC's cue: anchor "Deutsch", a flag,
    an `hreflang`; `graph.link_cues`) gets `cue_weight` more: the site's switcher said where it leads. A link on a
    page in neither language whose cue names one of them gets `entry_cue_weight` (the way into the pair from a
    third-language home), and a link whose cue names a language outside the pair scores `-third_cue_penalty` and
    nothing else (`third_cue_overrides`): before the naive Bayes has seen a page of that language, the switcher
    already says it is not wanted, whatever the URL models guess (the pair model takes /english/ for the translation
    of /malti/ as readily as /francais/). Once a fetched
    page's switcher names its translation (or sends it to the other language's home: it has none), the URL model's
    partner guesses for that page give no bonus (`switchers_override`).

    The language focus term weighs A and B by the share of their pages expected to have a translation
    in the other language (see `_translation_shares`): on a site whose German pages outnumber its
    Spanish ones three to one, a Spanish page is three times as likely to be half of a pair, so the
    smaller language's lists are walked first and the larger's pages are reached by their translations'
    links. The crawl re-scores every link after `first_rescore` fetches and then each time the fetched
    count grew by `rescore_growth`.
    """

    name = "smart+site"
    rescores = True
    #: the numeric knobs: ReplayConfig's site_* fields
    first_rescore = DEFAULT.site_first_rescore
    rescore_growth = DEFAULT.site_rescore_growth
    smoothing = DEFAULT.site_smoothing
    prior_floor = DEFAULT.site_prior_floor
    missing_prior = DEFAULT.site_missing_prior
    partner_k = DEFAULT.site_partner_k
    partner_weight = DEFAULT.site_partner_weight
    found_partner_share = DEFAULT.site_found_partner_share
    link_slots = DEFAULT.site_link_slots
    size_smoothing = DEFAULT.site_size_smoothing
    cue_weight = DEFAULT.site_cue_weight
    entry_cue_weight = DEFAULT.site_entry_cue_weight
    third_cue_penalty = DEFAULT.site_third_cue_penalty
    class_rate_smoothing = DEFAULT.site_class_rate_smoothing
    knobs = (*SmartLang.knobs, *((attribute, f"site_{attribute}") for attribute in (
        "first_rescore", "rescore_growth", "smoothing", "prior_floor", "missing_prior", "partner_k", "partner_weight",
        "found_partner_share", "link_slots", "size_smoothing", "cue_weight", "entry_cue_weight", "third_cue_penalty",
        "class_rate_smoothing")))
    #: also learn from the languages of the fetched pages linking to a page (and, for the first `link_slots` links
    #: of a page, from the link's position there: slot 3 of a German page may be its Spanish translation on every
    #: page of a site)
    link_context = True
    #: a fetched page whose switcher (a link cued with the pair's other language) leads elsewhere gives no partner bonus
    #: to the pages the URL model pairs it with: the switcher, not URL similarity, says where its translation is
    switchers_override = True
    #: a link whose cue names a language outside the pair scores `-third_cue_penalty` alone: the URL models' guess
    #: that it leads into the pair is overruled
    third_cue_overrides = True
    #: also learn from the languages links' contexts name ("linked from a fetched page with a cue for X"): once
    #: cued links turned out to lead to their cue's language, a cue for a third language says "not wanted"
    cue_features = True

    def prepare(self, graph: SiteGraph, truth: TruthIndex) -> None:
        super().prepare(graph, truth)
        first, second = self.langs
        others = sorted({lang for lang in graph.langs[: graph.n_docs] if lang and lang not in self.langs})
        self._class_langs = [first, second, *others]
        index = {lang: k for k, lang in enumerate(self._class_langs)}
        n_langs = len(self._class_langs)
        self._classes = np.array([index.get(lang, n_langs) for lang in graph.langs], dtype=np.int64)
        self._classes[graph.n_docs:] = n_langs + 1
        self._features = site_feature_matrix(graph.urls)
        self._edges: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._focus_weights = (1.0, 1.0)
        self._prior: np.ndarray | None = None

    def next_rescore(self, fetched: int) -> int:
        return self.first_rescore if fetched < self.first_rescore else int(np.ceil(fetched * self.rescore_growth))

    def priority(self, graph: SiteGraph, sources: np.ndarray | None, targets: np.ndarray) -> np.ndarray:
        n_classes = len(self._class_langs) + 2
        self._prior = np.full((graph.n_nodes, n_classes), 1.0 / n_classes)
        if len(targets) == 0:
            self._edges = (sources, targets, np.zeros(0))
            return np.zeros(0)
        urls = np.array(graph.urls, dtype=object)
        linked = np.zeros(graph.n_nodes, dtype=bool)
        linked[targets] = True
        unique = np.flatnonzero(linked)
        self._prior[unique] = self._class_prior(urls[unique].tolist())
        self._p_langs = (self._prior[:, 0], self._prior[:, 1])
        p_parallel = self._pair_probabilities(urls[sources].tolist(), urls[targets].tolist())
        self._edges = (sources, targets, p_parallel)
        self._slots = link_positions(graph, sources, targets)
        cues = edge_cues(graph, sources, targets)
        self._cue_bonus = self._cue_scores(self._page_lang[sources], cues)
        self._third_cued = self._names_third_language(cues)
        index = {lang: k for k, lang in enumerate(self._class_langs)}
        self._cue_classes = np.array([index.get(cue, -1) for cue in cues.tolist()], dtype=np.int64)
        self._candidates = self._candidate_pairs(urls, unique)
        self._bonus = np.zeros(graph.n_nodes)
        return self._combine(self._prior[:, 0], self._prior[:, 1])

    def rescore(self, graph: SiteGraph, fetched: np.ndarray, discovered: np.ndarray) -> np.ndarray:
        """Link priorities with the language probabilities refitted on the pages fetched so far."""
        if len(self._edges[1]) == 0:
            return np.zeros(0)
        features = (sparse.hstack([self._features, self._linked_from(fetched)], format="csr") if self.link_context
                    else self._features)
        posterior = site_class_posterior(features, self._classes, fetched, self._prior, self.smoothing,
                                         self.class_rate_smoothing if self.class_rate_smoothing >= 0 else None)
        p_first, p_second = posterior[:, 0], posterior[:, 1]
        self._p_langs = (p_first, p_second)
        self._focus_weights = self._translation_shares(posterior, discovered)
        left, right, p_pair = self._candidates
        value = p_pair * (p_first[left] * p_second[right] + p_second[left] * p_first[right])
        self._bonus = np.zeros(graph.n_nodes)
        switched, switcher_links = self._switcher_links(fetched)
        for node, partner in ((left, right), (right, left)):  # a fetched partner: this page completes a pair
            found = discovered[partner]
            weight = np.where(fetched[partner[found]], 1.0, self.found_partner_share)
            if self.switchers_override:  # a fetched partner whose switcher leads elsewhere has another translation
                elsewhere = switched[partner[found]] & ~np.isin(partner[found] * graph.n_nodes + node[found],
                                                                 switcher_links)
                weight = np.where(elsewhere, 0.0, weight)
            np.maximum.at(self._bonus, node[found], value[found] * weight)
        return self._combine(p_first, p_second)

    def _switcher_links(self, fetched: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(per node: fetched, in one language of the pair, with a link whose cue names the other; those links as
        source x n_nodes + target): where a fetched page's language switcher says its translation is."""
        sources, targets, _ = self._edges
        source_classes = self._classes[sources]
        switcher = fetched[sources] & (source_classes < 2) & (self._cue_classes == 1 - source_classes)
        switched = np.zeros(len(fetched), dtype=bool)
        switched[sources[switcher]] = True
        return switched, np.unique(sources[switcher] * len(fetched) + targets[switcher])

    def _candidate_pairs(self, urls: np.ndarray, nodes: np.ndarray):
        """(left, right, P(parallel)) for each linked page and its `partner_k` most token-similar linked pages."""
        from parascout.udfs.common.langs import language_markers
        from parascout.udfs.rank.blocking import similar_pairs, url_features

        markers = language_markers(self.langs)
        tokens = [url_features(url, markers) for url in urls[nodes].tolist()]
        pairs, _ = similar_pairs(tokens, tokens, self.partner_k)
        pairs = pairs[pairs["src_index"] < pairs["trg_index"]]
        left, right = nodes[pairs["src_index"].to_numpy()], nodes[pairs["trg_index"].to_numpy()]
        p_pair = (self._pair_probabilities(urls[left].tolist(), urls[right].tolist()) if len(left)
                  else np.zeros(0))
        return left, right, p_pair

    def _class_prior(self, urls: list[str]) -> np.ndarray:
        """URLs x classes: the URL model's P(language) over the site's languages, 'no language' and 'missing'."""
        n_langs = len(self._class_langs)
        prior = np.zeros((len(urls), n_langs + 2))
        prior[:, :n_langs] = np.stack(self._lang_columns(urls, self._class_langs), axis=1)
        prior[:, n_langs] = np.clip(1.0 - prior[:, :n_langs].sum(axis=1), 0.0, 1.0)  # languages the site lacks
        prior[:, : n_langs + 1] *= 1.0 - self.missing_prior
        prior[:, n_langs + 1] = self.missing_prior
        prior /= np.maximum(prior.sum(axis=1, keepdims=True), 1e-12)
        return (1.0 - self.prior_floor) * prior + self.prior_floor / prior.shape[1]

    def _linked_from(self, fetched: np.ndarray):
        """Nodes x (classes + classes x slots + classes), binary: linked from a fetched page of that class, from
        that slot of a fetched page of that class (a link's context), and by a link whose cue names that class."""
        sources, targets, _ = self._edges
        found = fetched[sources]
        n_classes = len(self._class_langs) + 2
        source_classes, slots, linked = self._classes[sources[found]], self._slots[found], targets[found]
        header = slots < self.link_slots
        cue_classes = self._cue_classes[found] if self.cue_features else np.full(len(linked), -1)
        cued = cue_classes >= 0
        rows = np.concatenate([linked, linked[header], linked[cued]])
        columns = np.concatenate([source_classes, n_classes + source_classes[header] * self.link_slots + slots[header],
                                  n_classes * (1 + self.link_slots) + cue_classes[cued]])
        matrix = sparse.csr_matrix((np.ones(len(rows)), (rows, columns)),
                                   shape=(len(fetched), n_classes * (2 + self.link_slots)))
        matrix.sum_duplicates()
        matrix.data[:] = 1.0
        return matrix

    def _cue_scores(self, page_lang: np.ndarray, cues: np.ndarray) -> np.ndarray:
        """Per link: `cue_weight` when its cue names the other language of its page, `entry_cue_weight` when its page
        is in neither language and the cue names one of them, minus `third_cue_penalty` when it names another."""
        names_pair = (cues == self.langs[0]) | (cues == self.langs[1])
        return (self.cue_weight * _names_other_language(page_lang, cues, self.langs)
                + self.entry_cue_weight * ((page_lang == 2) & names_pair)
                - self.third_cue_penalty * self._names_third_language(cues))

    def _names_third_language(self, cues: np.ndarray) -> np.ndarray:
        """Per link: does its cue name a language outside the pair?"""
        named = np.array([cue is not None for cue in cues.tolist()], dtype=bool)
        return named & (cues != self.langs[0]) & (cues != self.langs[1])

    def _combine(self, p_first: np.ndarray, p_second: np.ndarray) -> np.ndarray:
        sources, targets, p_parallel = self._edges
        scores = (self._link_scores(self._page_lang[sources], p_first[targets], p_second[targets], p_parallel,
                                    self._focus_weights)
                  + self.partner_weight * self._bonus[targets] + self._cue_bonus)
        return np.where(self._third_cued, -self.third_cue_penalty, scores) if self.third_cue_overrides else scores

    def _translation_shares(self, posterior: np.ndarray, discovered: np.ndarray) -> tuple[float, float]:
        """(A, B): the share of a language's pages expected to have a translation in the other language.

        A site's languages are taken as independent subsets of its content, the largest language as all
        of it: a page in A has a translation in B with probability size(B) / size(largest). Sizes are the
        expected counts of the pages found so far (their posterior mass), smoothed by `size_smoothing` pages.
        """
        sizes = posterior[discovered, : len(self._class_langs)].sum(axis=0) + self.size_smoothing
        return min(1.0, sizes[1] / sizes.max()), min(1.0, sizes[0] / sizes.max())


_SITE_TOKEN = re.compile(r"[^\W_]+")


def site_url_features(url: str) -> list[str]:
    """A URL's site-local features: host, path depth, first three path segments by position, the query
    (whole, each parameter, each key; 'Q:' when there is none) and the path's words."""
    key = url_key(url).lower()
    path_start = key.find("/", 2)
    host, rest = (key[2:], "/") if path_start < 0 else (key[2:path_start], key[path_start:])
    path, _, query = rest.partition("#")[0].partition("?")
    segments = [part for part in path.split("/") if part]
    params = sorted(part for part in query.split("&") if part)
    features = [f"h:{host}", f"n:{min(len(segments), 4)}", f"Q:{'&'.join(params)}"]
    features += [f"p{i}:{segment}" for i, segment in enumerate(segments[:3])]
    features += [f"q:{param}" for param in params] + [f"k:{param.partition('=')[0]}" for param in params]
    features += {f"w:{word}" for word in _SITE_TOKEN.findall(path)}
    return features


def site_feature_matrix(urls: Sequence[str]):
    """A binary CSR matrix, URLs x site features."""
    vocabulary: dict[str, int] = {}
    indices, indptr = [], [0]
    for url in urls:
        row = {vocabulary.setdefault(feature, len(vocabulary)) for feature in site_url_features(url)}
        indices.extend(sorted(row))
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.float64)
    return sparse.csr_matrix((data, np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
                             shape=(len(urls), max(1, len(vocabulary))))


def site_class_posterior(features, classes: np.ndarray, fetched: np.ndarray, prior: np.ndarray,
                         smoothing: float = SmartSite.smoothing, rate_smoothing: float | None = None) -> np.ndarray:
    """Nodes x classes: `prior` times a naive Bayes over binary features fitted on the fetched nodes.

    A feature's likelihood in class c is an m-estimate, (fetched nodes of c with it + s × r) / (fetched
    nodes of c + s), where r is its rate over all fetched nodes: a class with few fetched nodes
    falls back on r, so it is neither favoured nor penalised by features it has not been seen
    with yet. Features on no fetched node say nothing; fetched nodes keep their known class.
    With `rate_smoothing` s', every node's class c is also weighed by (fetched nodes of c + s') / (the prior's
    mass of c over the fetched nodes + s'): the site's own rate of c against the prior's.
    """
    known = np.flatnonzero(fetched)
    if len(known) == 0:
        return prior
    onehot = np.zeros((len(known), prior.shape[1]))
    onehot[np.arange(len(known)), classes[known]] = 1.0
    counts = np.asarray(features[known].T @ onehot)          # features x classes
    totals = counts.sum(axis=1, keepdims=True)
    pooled = (totals + 0.5) / (len(known) + 1.0)              # the feature's rate over all fetched nodes
    log_likelihood = np.log((counts + smoothing * pooled) / (onehot.sum(axis=0) + smoothing))
    log_likelihood[totals[:, 0] == 0] = 0.0
    scores = np.log(prior) + np.asarray(features @ log_likelihood)
    if rate_smoothing is not None:
        expected = prior[known].sum(axis=0)
        scores += np.log((onehot.sum(axis=0) + rate_smoothing) / (expected + rate_smoothing))
    scores -= scores.max(axis=1, keepdims=True)
    posterior = np.exp(scores)
    posterior /= posterior.sum(axis=1, keepdims=True)
    posterior[known] = np.eye(prior.shape[1])[classes[known]]
    return posterior
