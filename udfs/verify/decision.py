"""The verdict on a host's candidate pairs from all their evidence (content, URLs, links, structure), without labels.

The content model (`ContentModel`): a logistic model over CONTENT_FEATURES fitted on pairs the archive
itself labels (`self_labels`): positives are pairs a language-switcher link or a STRAND handle
proposed whose own_tsim_idf is above what nearly every random same-site pair reaches (by tsim_idf a
switcher-linked listing page passed as a translation); negatives are the random same-site pairs and the
spliced pairs; on a host and language pair where no switcher link or handle gave a positive, its candidate pairs
that are each other's best by their own text (`content_mutual_best`) above the random pairs' null are positives too.
One model per language pair (its features sit on the scale of its lexicon: an
English–Arabic translation links fewer words than an English–French one), the model of all pairs for a
language pair with too few labels; features are clipped to the range the labels showed. A self-labelled model
accepts a pair only if its own_tsim_idf also beats its language pair's random pairs' NULL_QUANTILE (all random
pairs' where the language pair has too few): a model fitted on few labels may take a page built on another
page's template, with other text, for its layout alone. `--learn-from`
labels replace the self labels. The URLs are evidence in the same decision (`decide`): a pair whose URLs differ only
in their language markers adds the log-odds its host's own such pairs earn (what the language pair's such pairs earn
over the whole archive where the host has none to judge: url_log_odds, url_exact_counts), so a URL-exact
translation the content model doubts is kept, and a sibling page built on the same template does not displace it;
content still rejects a URL-exact pair that is untranslated or two different documents. A neighbour pair (pages
without partners by URL that link each other's counterparts) whose own links agree is one node of the site's link
graph, as a URL-exact pair is one slot of its URL layout. `one_to_one` then keeps each
page (near-duplicates counted as one page) in at most one parallel pair per language pair, best p_parallel first;
`residual_pairs` then pairs the pages
it left without a partner whose own texts pick each other (method RESIDUAL_METHOD): a lexicon bootstrapped from the
archive knows the pairs it learned from far better than the rest, and the model it calibrates rejects a host's last
few translations.

The thresholds and shares are VerificationConfig's fields (udfs.verify.verification_config), passed down as `config`.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from parascout.udfs.verify.verification import (
    CONFIDENT_SOURCES,
    CONTENT_FEATURES,
    DOCUMENT_REASONS,
    HELD_OUT_COLUMNS,
    LANGUAGE_REASONS,
    LEXICON_FEATURES,
    MIN_SELF_LABELS,
    NEIGHBOUR_SOURCE,
    NO_OWN_TEXT_FLOOR,
    NO_PAIR_COVERED,
    RESIDUAL_METHOD,
    VERIFIED_COLUMNS,
    page_keys,
    proposed_by,
    url_exact,
)
from parascout.udfs.verify.verification_config import DEFAULT, VerificationConfig


def feature_matrix(frame: pd.DataFrame) -> np.ndarray:
    """CONTENT_FEATURES of a frame as floats, missing values filled."""
    columns = [pd.to_numeric(frame[name], errors="coerce").fillna(missing).to_numpy(dtype=float)
               if name in frame else np.full(len(frame), missing) for name, missing in CONTENT_FEATURES.items()]
    return np.column_stack(columns)


def self_labels(frame: pd.DataFrame, config: VerificationConfig = DEFAULT) -> tuple[pd.DataFrame, dict]:
    """(rows with a `label`, stats): confident pairs whose own text (list items left out) beats their language
    pair's random pairs' NULL_QUANTILE of own_tsim_idf (all random pairs' where it has too few) as positives — a listing page's shared teasers do not make it a translation, a
    section page's differing teasers do not make it none; random same-site pairs and spliced confident pairs as
    negatives. stats' lexicon_free_language_pairs: lexicon_free_pairs of the candidates."""
    judged = frame[frame["reason"].isna() | ~frame["reason"].isin(DOCUMENT_REASONS)]
    randoms = judged[judged["role"] == "random"]
    spliced = judged[(judged["role"] == "spliced") & judged["tsim"].notna()]
    nulls = {}
    for column in ("tsim_idf", "own_tsim_idf", "own_coverage_idf"):
        null = pd.to_numeric(randoms[column], errors="coerce").dropna() if column in randoms else pd.Series([])
        nulls[column] = float(null.quantile(config.null_quantile)) if len(null) else 1.0
    candidates = judged[(judged["role"] == "candidate") & judged["lang_ok"].astype(bool)]
    own = pd.to_numeric(candidates["own_tsim_idf"], errors="coerce").fillna(0)
    confident = candidates["source"].fillna("").str.contains("|".join(CONFIDENT_SOURCES))
    pair_nulls = language_pair_nulls(randoms, config)
    # each language pair against its own random pairs (all of them where it has too few): a pair's labels do not
    # depend on the other pairs verified in the same run
    keys = candidates["src_lang"].astype(str) + "-" + candidates["trg_lang"].astype(str)
    own_null = keys.map(pair_nulls).astype(float).fillna(nulls["own_tsim_idf"]).to_numpy()
    by_link = confident & (own > own_null)
    by_text = _mutual_best_positives(candidates, own, pair_nulls, own_null) & ~_taught(candidates, by_link)
    positives = candidates[by_link | by_text]
    labelled = pd.concat([positives.assign(label=True), randoms.assign(label=False), spliced.assign(label=False)],
                         ignore_index=True)
    return labelled, {"positives": len(positives), "confident_pairs": int(confident.sum()),
                      "mutual_best_positives": int(by_text.sum()),
                      "negatives": len(randoms) + len(spliced), "spliced_negatives": len(spliced),
                      "null_tsim_idf_quantile": round(nulls["tsim_idf"], 4),
                      "null_own_tsim_idf_quantile": round(nulls["own_tsim_idf"], 4),
                      "null_own_coverage_idf_quantile": round(nulls["own_coverage_idf"], 4),
                      "null_own_tsim_idf_by_language_pair": {key: round(value, 4) for key, value in pair_nulls.items()},
                      "lexicon_free_language_pairs": lexicon_free_pairs(candidates, pair_nulls, config)}


def with_held_out_scores(rows: pd.DataFrame) -> pd.DataFrame:
    """Self labels (self_labels' rows) and, in a language pair whose lexicon has held-out lexicons (HELD_OUT_COLUMNS
    scored), each row's twin as a lexicon that never learned from its pages scores it: its held-out scores as its
    LEXICON_FEATURES, or its own scores where the lexicon never learned from its pages either. A lexicon bootstrapped
    from the archive learned from most of its confident pairs and scores them far above the translations it never
    saw; fitted on both, the decision knows a translation's scores from pages the lexicon learned from and from pages
    it did not."""
    if HELD_OUT_COLUMNS[0] not in rows or rows.empty:
        return rows
    scored = pd.to_numeric(rows["held_out_tsim"], errors="coerce").notna()
    calibrated = scored.groupby([rows["src_lang"], rows["trg_lang"]]).transform("any").astype(bool)
    if not calibrated.any():
        return rows
    twins = rows[calibrated]
    held_out = scored[calibrated]
    twins = twins.assign(**{name: twins[f"held_out_{name}"].where(held_out, twins[name]) for name in LEXICON_FEATURES})
    return pd.concat([rows, twins], ignore_index=True)


def language_pair_nulls(randoms: pd.DataFrame, config: VerificationConfig = DEFAULT,
                        column: str = "own_tsim_idf") -> dict[str, float]:
    """"src-trg" -> the NULL_QUANTILE of that language pair's random same-site pairs' `column` (language pairs
    with MIN_NULL_PAIRS random pairs with text)."""
    if column not in randoms:
        return {}
    scores = pd.to_numeric(randoms[column], errors="coerce").dropna()
    if scores.empty:
        return {}
    groups = scores.groupby([randoms["src_lang"][scores.index], randoms["trg_lang"][scores.index]])
    return {f"{src}-{trg}": float(group.quantile(config.null_quantile)) for (src, trg), group in groups
            if len(group) >= config.min_null_pairs}


def lexicon_free_pairs(candidates: pd.DataFrame, pair_nulls: dict[str, float],
                       config: VerificationConfig = DEFAULT) -> list[str]:
    """"src-trg" of the language pairs with MIN_SELF_LABELS candidates (with text) whose median best_side_coverage_idf
    is below MIN_LEXICON_COVERAGE and whose mutual-best candidates' median own_tsim_idf is below
    MIN_LEXICON_SEPARATION times their null (`pair_nulls`, language_pair_nulls): own-text scores that do not tell
    translations from random pairs."""
    if not {"best_side_coverage_idf", "own_tsim_idf", "mutual_best", "src_lang", "trg_lang"} <= set(candidates.columns):
        return []
    weak = []
    for (src, trg), group in candidates.groupby(["src_lang", "trg_lang"]):
        coverage = pd.to_numeric(group["best_side_coverage_idf"], errors="coerce").dropna()
        best = pd.to_numeric(group["own_tsim_idf"][group["mutual_best"].fillna(False).astype(bool)], errors="coerce")
        null = pair_nulls.get(f"{src}-{trg}")
        if (len(coverage) >= config.min_self_labels and coverage.median() < config.min_lexicon_coverage
                and null is not None and best.notna().any() and best.median() < config.min_lexicon_separation * null):
            weak.append(f"{src}-{trg}")
    return sorted(weak)


def _without_lexicon(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its LEXICON_FEATURES at 0 (a model fitted on it ignores them: its ranges clip them to 0)."""
    return frame.assign(**{name: 0.0 for name in LEXICON_FEATURES})


def _taught(candidates: pd.DataFrame, positives: pd.Series) -> pd.Series:
    """Candidates of a host and language pair that has a positive among `positives`."""
    keys = [candidates["host"], candidates["src_lang"], candidates["trg_lang"]]
    return positives.groupby(keys).transform("any").fillna(False).astype(bool)


def _mutual_best_positives(candidates: pd.DataFrame, own: pd.Series, pair_nulls: dict[str, float],
                           null: np.ndarray) -> pd.Series:
    """Candidates that are their pages' content_mutual_best with an own_tsim_idf above both the random pairs' null
    (`null`, per candidate) and their language pair's own random pairs' NULL_QUANTILE (`pair_nulls`, language_pair_nulls; self_labels takes
    them on a host and language pair that no switcher link or handle taught anything: its translations still label
    the model's scale)."""
    if "mutual_best" not in candidates or candidates.empty:
        return pd.Series(False, index=candidates.index)
    thresholds = np.maximum(null, [pair_nulls.get(f"{src}-{trg}", 1.0)
                                   for src, trg in zip(candidates["src_lang"], candidates["trg_lang"])])
    return candidates["mutual_best"].fillna(False).astype(bool) & (own > thresholds)


@dataclass(frozen=True)
class ContentModel:
    """Logistic regression over CONTENT_FEATURES (standardised); a null-threshold rule when labels are few.
    `language_pairs`: ("src-trg", model) of the language pairs with their own model (fit_per_language_pair);
    the other pairs get this one."""

    weights: tuple[float, ...] | None
    bias: float
    means: tuple[float, ...]
    scales: tuple[float, ...]
    null_threshold: float | None = None
    method: str = "self-labelled-logistic"
    language_pairs: tuple[tuple[str, ContentModel], ...] = ()
    #: (lowest, highest) value of each feature in the training rows: a feature is clipped to them before scoring,
    #: so a value the labels never showed (a p-value far above a language pair's tiny spread) cannot decide alone
    ranges: tuple[tuple[float, float], ...] = ()
    #: ("src-trg", own_tsim_idf) a pair of that language pair must exceed to be parallel: its random same-site pairs'
    #: NULL_QUANTILE (language_pair_nulls). A model fitted on a few dozen self labels may score a pair high by its
    #: layout alone (a same-template page with other text: paragraph lengths correlated, tsim_idf at the null)
    own_text_floors: tuple[tuple[str, float], ...] = ()
    #: ... and the floor of a language pair without its own null (too few random pairs): all random pairs' quantile
    default_own_text_floor: float | None = None
    #: ("src-trg", url_log_odds) of the language pair's URL-exact pairs over every host of the archive together
    #: (url_exact_counts, with_archive_url_odds): what a host with none of its own to judge takes; 0 where not listed
    archive_url_odds: tuple[tuple[str, float], ...] = ()
    #: ("src-trg", own_coverage_idf) above which one page's own text is covered by the other's: its random same-site
    #: pairs' NULL_QUANTILE (language_pair_nulls). A URL-exact pair so covered is one document at two extents (decide)
    coverage_floors: tuple[tuple[str, float], ...] = ()
    #: ... and the floor of a language pair without its own null; None: no pair is judged covered (no random pairs)
    default_coverage_floor: float | None = None

    @classmethod
    def fit_per_language_pair(cls, frame: pd.DataFrame, labels, null_threshold: float | None = None,
                              l2: float | None = None, floors: dict[str, float] | None = None,
                              default_floor: float | None = None, lexicon_free: tuple[str, ...] = (),
                              config: VerificationConfig = DEFAULT, coverage_floors: dict[str, float] | None = None,
                              default_coverage_floor: float | None = None) -> ContentModel:
        """One model over all rows, and one per (src_lang, trg_lang) with MIN_SELF_LABELS of each class; `floors`
        and `default_floor`: own_text_floors and default_own_text_floor (coverage_floors and default_coverage_floor
        the same of coverage). `lexicon_free` ("src-trg", self_labels' lexicon_free_language_pairs): language pairs
        judged by one model over all rows without the LEXICON_FEATURES, with no own-text floor and no pair judged
        covered (their coverage is a weak lexicon's)."""
        l2 = config.self_label_l2 if l2 is None else l2
        least = config.min_self_labels
        labels = pd.Series(np.asarray(labels, dtype=bool), index=frame.index)
        model = cls.fit(frame, labels, null_threshold=null_threshold, l2=l2, min_labels=least)
        pairs = []
        if "src_lang" in frame and "trg_lang" in frame:
            for (src_lang, trg_lang), group in frame.groupby(["src_lang", "trg_lang"], sort=True):
                own = labels[group.index]
                if own.sum() >= least and (~own).sum() >= least:
                    pairs.append((f"{src_lang}-{trg_lang}", cls.fit(group, own, model.method, null_threshold, l2, least)))
        floors, coverage_floors = dict(floors or {}), dict(coverage_floors or {})
        if lexicon_free:
            free = cls.fit(_without_lexicon(frame), labels, model.method, null_threshold, l2, least)
            pairs = [(key, pair_model) for key, pair_model in pairs if key not in lexicon_free]
            pairs += [(key, free) for key in lexicon_free]
            floors.update({key: NO_OWN_TEXT_FLOOR for key in lexicon_free})
            coverage_floors.update({key: NO_PAIR_COVERED for key in lexicon_free})
        return dataclasses.replace(model, language_pairs=tuple(pairs), own_text_floors=tuple(sorted(floors.items())),
                                   default_own_text_floor=default_floor,
                                   coverage_floors=tuple(sorted(coverage_floors.items())),
                                   default_coverage_floor=default_coverage_floor)

    @classmethod
    def fit(cls, frame: pd.DataFrame, labels, method: str = "self-labelled-logistic",
            null_threshold: float | None = None, l2: float = 1.0, min_labels: int = MIN_SELF_LABELS) -> ContentModel:
        """Class-balanced, L2-regularised logistic regression (scipy L-BFGS)."""
        from scipy.optimize import minimize

        y = np.asarray(labels, dtype=float)
        x = feature_matrix(frame)
        if y.sum() < min_labels or (1 - y).sum() < min_labels:
            return cls(None, 0.0, (), (), 1.0 if null_threshold is None else null_threshold, "null-threshold")
        means, scales = x.mean(axis=0), x.std(axis=0) + 1e-6
        z = (x - means) / scales
        weight = np.where(y == 1, 0.5 / y.mean(), 0.5 / (1 - y.mean()))

        def loss(theta):
            logits = z @ theta[:-1] + theta[-1]
            p = 1 / (1 + np.exp(-logits))
            value = np.sum(weight * (np.logaddexp(0, logits) - y * logits)) + l2 * theta[:-1] @ theta[:-1] / 2
            gradient = np.append(z.T @ (weight * (p - y)) + l2 * theta[:-1], np.sum(weight * (p - y)))
            return value, gradient

        theta = minimize(loss, np.zeros(z.shape[1] + 1), jac=True, method="L-BFGS-B").x
        return cls(tuple(map(float, theta[:-1])), float(theta[-1]), tuple(map(float, means)),
                   tuple(map(float, scales)), null_threshold, method,
                   ranges=tuple(zip(map(float, x.min(axis=0)), map(float, x.max(axis=0)))))

    @property
    def accept_p(self) -> float:
        """The p from which a pair is parallel under the default config (accept_p_under)."""
        return self.accept_p_under(DEFAULT)

    def accept_p_under(self, config: VerificationConfig) -> float:
        """The p from which a pair is parallel: config.self_label_accept_p for a self-labelled model, else 0.5."""
        return config.self_label_accept_p if self.method == "self-labelled-logistic" else 0.5

    def own_text_floor(self, frame: pd.DataFrame) -> np.ndarray:
        """The own_tsim_idf each row must exceed (its language pair's floor, else the default; -inf without)."""
        return _per_language_pair(frame, self.own_text_floors,
                                  -np.inf if self.default_own_text_floor is None else self.default_own_text_floor)

    def coverage_floor(self, frame: pd.DataFrame) -> np.ndarray:
        """The own_coverage_idf above which a row's one page is covered by the other (its language pair's floor,
        else the default; inf without: none is)."""
        return _per_language_pair(frame, self.coverage_floors,
                                  np.inf if self.default_coverage_floor is None else self.default_coverage_floor)

    def archive_url_log_odds(self, frame: pd.DataFrame) -> float:
        """archive_url_odds of the frame's language pair (its first row's; a decision's frame holds one), else 0."""
        if not self.archive_url_odds or frame.empty or "src_lang" not in frame or "trg_lang" not in frame:
            return 0.0
        return dict(self.archive_url_odds).get(f"{frame['src_lang'].iloc[0]}-{frame['trg_lang'].iloc[0]}", 0.0)

    def with_archive_url_odds(self, counts: pd.DataFrame) -> ContentModel:
        """This model with archive_url_odds from url_exact_counts' rows of every host: per language pair, the
        url_log_odds of all its hosts' URL-exact pairs together, log((k + 1) / (n - k + 1))."""
        totals = counts.groupby(["src_lang", "trg_lang"], sort=True)[["n", "k"]].sum()
        return dataclasses.replace(self, archive_url_odds=tuple(
            (f"{src_lang}-{trg_lang}", url_exact_log_odds(int(row.n), int(row.k)))
            for (src_lang, trg_lang), row in totals.iterrows()))

    def predict(self, frame: pd.DataFrame) -> np.ndarray:
        """P(parallel) of each row (by its language pair's model where it has one)."""
        if self.language_pairs and "src_lang" in frame and "trg_lang" in frame:
            keys = (frame["src_lang"].astype(str) + "-" + frame["trg_lang"].astype(str)).to_numpy()
            own = dict(self.language_pairs)
            p = dataclasses.replace(self, language_pairs=()).predict(frame)
            for key in set(keys) & own.keys():
                rows = keys == key
                p[rows] = own[key].predict(frame[rows])
            return p
        if self.weights is None:
            return (_scores(frame, "tsim_idf") > self.null_threshold).astype(float)
        x = feature_matrix(frame)
        if self.ranges:
            x = np.clip(x, *np.asarray(self.ranges).T)
        z = (x - np.asarray(self.means)) / np.asarray(self.scales)
        return 1 / (1 + np.exp(-(z @ np.asarray(self.weights) + self.bias)))

    def to_dict(self) -> dict:
        return {"method": self.method, "features": list(CONTENT_FEATURES), "weights": self.weights,
                "bias": self.bias, "means": self.means, "scales": self.scales, "null_threshold": self.null_threshold,
                "language_pairs": {key: model.to_dict() for key, model in self.language_pairs},
                "ranges": self.ranges, "own_text_floors": dict(self.own_text_floors),
                "archive_url_odds": dict(self.archive_url_odds),
                "default_own_text_floor": self.default_own_text_floor, "coverage_floors": dict(self.coverage_floors),
                "default_coverage_floor": self.default_coverage_floor}

    @classmethod
    def from_dict(cls, data: dict) -> ContentModel:
        pairs = tuple((key, cls.from_dict(model)) for key, model in (data.get("language_pairs") or {}).items())
        return cls(None if data["weights"] is None else tuple(data["weights"]), data["bias"], tuple(data["means"]),
                   tuple(data["scales"]), data["null_threshold"], data["method"], pairs,
                   tuple(map(tuple, data.get("ranges") or ())), tuple(sorted((data.get("own_text_floors") or {}).items())),
                   data.get("default_own_text_floor"), tuple(sorted((data.get("archive_url_odds") or {}).items())),
                   tuple(sorted((data.get("coverage_floors") or {}).items())), data.get("default_coverage_floor"))


def _per_language_pair(frame: pd.DataFrame, values: tuple[tuple[str, float], ...], default: float) -> np.ndarray:
    """Each row's value of its language pair ("src-trg" in `values`), else `default`."""
    if not values or "src_lang" not in frame or "trg_lang" not in frame:
        return np.full(len(frame), default, dtype=float)
    keys = frame["src_lang"].astype(str) + "-" + frame["trg_lang"].astype(str)
    return keys.map(dict(values)).fillna(default).to_numpy(dtype=float)


def url_log_odds(exact: pd.Series, same_document: pd.Series, archive: float = 0.0) -> float:
    """The log-odds a URL-exact pair of one host and language pair adds to its content's: how often the host's own
    URL-exact pairs (with text, in their languages) are the same document by their text (`same_document`: above the
    random pairs' null), url_exact_log_odds. A site whose URLs pair its translations exactly earns a strong prior;
    one whose language slots pair unrelated pages earns none; a site with no such pair of its own to judge takes
    `archive`, what the language pair's URL-exact pairs earn over every host (ContentModel.archive_url_log_odds)."""
    n, k = int(exact.sum()), int((exact & same_document).sum())
    return url_exact_log_odds(n, k) if n else archive


def url_exact_log_odds(n: int, k: int) -> float:
    """log((k + 1) / (n - k + 1)): k of n URL-exact pairs the same document, one pseudo-count each way (0 for none)."""
    return math.log((k + 1) / (n - k + 1))


def judged_rows(frame: pd.DataFrame) -> pd.Series:
    """Rows the decision judges: no document or language reason (both sides are pages in their languages)."""
    return frame["reason"].isna() | ~frame["reason"].isin(DOCUMENT_REASONS + LANGUAGE_REASONS)


def text_evidence(frame: pd.DataFrame, model: ContentModel) -> tuple[pd.Series, pd.Series]:
    """(with text to judge; the same document by its own text, own_tsim_idf above its language pair's floor) of each
    row: what decide and url_exact_counts read."""
    has_text = frame["tsim"].notna() | (model.method == "learned-logistic")  # labels may come without texts
    own = _scores(frame, "own_tsim_idf")
    return has_text, pd.Series(own > model.own_text_floor(frame), index=frame.index)


def url_exact_counts(frame: pd.DataFrame, model: dict) -> pd.DataFrame:
    """applyInPandas body (one host and language pair): its URL-exact pairs with text, in their languages (n), and
    how many of them are the same document by their own text (k): ContentModel.with_archive_url_odds sums them."""
    has_text, same_document = text_evidence(frame, ContentModel.from_dict(model))
    counted = url_exact(frame) & judged_rows(frame) & has_text
    return pd.DataFrame({"src_lang": frame["src_lang"].iloc[:1], "trg_lang": frame["trg_lang"].iloc[:1],
                         "n": [int(counted.sum())], "k": [int((counted & same_document).sum())]})


#: url_exact_counts' rows
URL_EXACT_COUNTS_SCHEMA = "src_lang string, trg_lang string, n long, k long"


def _scores(frame: pd.DataFrame, column: str) -> np.ndarray:
    """A score column as floats, 0 where missing (all 0 where the frame has no such column)."""
    if column not in frame:
        return np.zeros(len(frame))
    return pd.to_numeric(frame[column], errors="coerce").fillna(0).to_numpy(dtype=float)


def _logit(p: np.ndarray) -> np.ndarray:
    clipped = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(clipped / (1 - clipped))


def decide(frame: pd.DataFrame, model: ContentModel | None, config: VerificationConfig = DEFAULT) -> pd.DataFrame:
    """Add the verdict from all the evidence of one host and language pair: p_parallel_content (the content model),
    url_log_odds (url_log_odds, on URL-exact pairs) and p_parallel = sigmoid(logit(p_parallel_content) +
    url_log_odds). A judged pair (both sides in their languages) is parallel when p_parallel >= the model's accept_p
    and its own text beats the random pairs' null (content may reject a URL-exact pair: two different documents), or
    when it is URL-exact on a site whose URL-exact pairs are its translations and one page's own text is covered by
    the other's beyond the random pairs' null (own_coverage_idf over coverage_floor: one document at two extents); a
    URL-exact pair without text to judge when its whole pages are in their languages, the structural rule holds and
    its own links (link_agreements: besides the site's navigation) are none or go to the counterparts of the other
    page's: a section's menu is the template in two languages, a table of contents links the translations of what
    its original links, a paginated listing of other pages lists other items in each language. A page
    whose URL-exact pair is the same document by its text, translated or not, is in no other pair (not_one_to_one):
    a sibling of its template is no translation of it. `evidence` says what carried the verdict.
    With no model (no texts table) the structural rule's verdict stands."""
    frame = frame.copy()
    judged = judged_rows(frame)
    frame["url_exact"] = exact = url_exact(frame)
    frame["evidence"] = np.where(frame["reason"].isin(DOCUMENT_REASONS), "document",
                                 np.where(frame["reason"].isin(LANGUAGE_REASONS), "language", "structure"))
    if model is None:
        frame["p_parallel_content"] = frame["url_log_odds"] = frame["p_parallel"] = np.nan
        return frame
    has_text, same_document = text_evidence(frame, model)
    p = model.predict(frame)
    frame["p_parallel_content"] = np.where(has_text, p, np.nan)
    frame["method"] = model.method
    odds = url_log_odds(exact & judged & has_text, same_document, model.archive_url_log_odds(frame))
    frame["url_log_odds"] = np.where(exact, odds, 0.0)
    combined = 1 / (1 + np.exp(-(np.where(has_text, _logit(p), 0.0) + frame["url_log_odds"].to_numpy())))
    frame["p_parallel"] = combined
    agreement = pd.to_numeric(frame["link_agreement"], errors="coerce") if "link_agreement" in frame \
        else pd.Series(np.nan, index=frame.index)
    # a neighbour pair whose own links agree is one node of the site's link graph in two languages, as a URL-exact
    # pair is one slot of its URL layout: its links say what the own text says of other pairs (a section page is its
    # entries' titles, none of them its own)
    linked = proposed_by(frame, NEIGHBOUR_SOURCE) & (agreement >= config.min_link_agreement)
    coverage = _scores(frame, "own_coverage_idf")
    # a URL-exact pair of a site whose such pairs are its translations, one page's own text covered by the other's
    # beyond what random pairs of the language pair reach, is one document at two extents: a translation of an older
    # or newer version of the page (translations lag their original), which tsim, over both whole texts, rates low
    contained = exact & (odds > 0) & has_text & (coverage > model.coverage_floor(frame))
    by_content = (combined >= model.accept_p_under(config)) & (same_document | linked)
    by_text = has_text & (by_content | contained)
    same_document = same_document | contained
    structure_ok = frame["structure_ok"].fillna(False).astype(bool) if "structure_ok" in frame else False
    # no text, and no links of its own (a section's menu: the site's template in the two languages) or links that
    # go where the other page's go (a table of contents links the translations of what its original links); a
    # listing of other pages links other items in each language, and is no translation (self_labels)
    links_agree = agreement.isna() | (agreement >= config.min_link_agreement)
    by_structure = ~has_text & (exact & (odds > 0) & links_agree | linked) & structure_ok
    accepted = judged & (by_text | by_structure)
    # a page whose URL-exact partner is its same document (translated or left untranslated) has that partner: a
    # sibling page of the same template is not its translation, however alike their texts
    holds = exact & same_document & (odds > 0)
    displaced = accepted & ~exact & pd.concat(
        [frame[column].isin(set(frame[column][holds])) for column in ("src_url", "trg_url") if column in frame]
        + [pd.Series(False, index=frame.index)], axis=1).any(axis=1)
    accepted &= ~displaced
    frame.loc[judged, "parallel"] = accepted[judged]
    frame.loc[judged, "reason"] = np.where(accepted[judged], None, np.where(
        displaced[judged], "not_one_to_one", np.where(has_text[judged], "content_rejected", "no_text")))
    url_carried = exact & (odds > 0) | displaced
    frame.loc[judged, "evidence"] = np.where(
        by_structure[judged], np.where(linked[judged], "links+structure", "url+structure"),
        np.where(has_text[judged], np.where(
            url_carried[judged], np.where((contained & ~by_content)[judged], "url+containment", "url+content"),
            np.where(linked[judged], "links+content", "content")), "structure"))
    return frame


def one_to_one(frame: pd.DataFrame) -> pd.DataFrame:
    """Keep each page (URL) in at most one parallel pair, best p_parallel first (content and URL evidence: a sibling
    page whose text scores a little higher does not displace a URL-exact partner); a near-duplicate's pair
    (src_key / trg_key: a copy of another page) loses to its kept page's pair with the same partner whatever their
    p. Two pairs of four different URLs both stay, near-duplicates or not: a site's alias or print version and
    its translation are a pair of their own (export-bitext counts their repeated sentences once). The other
    parallel pairs become reason not_one_to_one."""
    from parascout.udfs.rank.alignment import greedy_one_to_one

    frame = frame.copy()
    parallel = frame[frame["parallel"].fillna(False).astype(bool)]
    if parallel.empty:
        return frame
    copies = (parallel["src_key"].notna() & (parallel["src_key"] != parallel["src_url"])) | (
        parallel["trg_key"].notna() & (parallel["trg_key"] != parallel["trg_url"]))
    pages = page_keys(parallel)
    keys = list(zip(pages["src"], pages["trg"]))
    by_key: dict[tuple, list[tuple[str, str]]] = {}
    for key, src, trg, copy in zip(keys, parallel["src_url"], parallel["trg_url"], copies):
        if not copy:
            by_key.setdefault(key, []).append((src, trg))
    # a copy's pair that shares a URL with its original's pair of the same pages
    beaten = copies & pd.Series([any(src == kept_src or trg == kept_trg for kept_src, kept_trg in by_key.get(key, ()))
                                 for key, src, trg in zip(keys, parallel["src_url"], parallel["trg_url"])],
                                index=parallel.index)
    urls = pd.DataFrame({"src_url": parallel["src_url"], "trg_url": parallel["trg_url"],
                         "score": parallel["p_parallel"].fillna(parallel["p_parallel_content"]).fillna(1.0),
                         "row": parallel.index})
    urls = pd.concat([urls[~copies], urls[copies & ~beaten]])  # a tie goes to the kept page, not its copy
    kept = set(greedy_one_to_one(urls)["row"])
    losers = [index for index in parallel.index if index not in kept]
    frame.loc[losers, "parallel"] = False
    frame.loc[losers, "reason"] = "not_one_to_one"
    return frame


def residual_pairs(frame: pd.DataFrame, model: ContentModel | None,
                   config: VerificationConfig = DEFAULT) -> pd.DataFrame:
    """After one_to_one: the content-rejected pairs that are their pages' content_mutual_best, on pages no parallel
    pair holds, that pass RESIDUAL_FLOOR_SHARE of their own-text floor (a floor above 0 only: none without a
    self-labelled model, none for a lexicon-free language pair), MIN_RESIDUAL_LENGTH_R and
    MIN_RESIDUAL_IMAGE_JACCARD, become parallel."""
    if model is None or "mutual_best" not in frame or frame.empty:
        return frame
    rejected_best = (frame["reason"] == "content_rejected") & frame["mutual_best"].fillna(False).astype(bool)
    if not rejected_best.any():
        return frame
    frame = frame.copy()
    parallel = frame["parallel"].fillna(False).astype(bool)
    pages = page_keys(frame)
    free = ~pages["src"].isin(pages["src"][parallel]) & ~pages["trg"].isin(pages["trg"][parallel])
    floor = model.own_text_floor(frame)
    own = _scores(frame, "own_tsim_idf")
    agreeing = pd.to_numeric(frame["paragraph_length_r"], errors="coerce").fillna(-1) >= config.min_residual_length_r
    images = pd.to_numeric(frame["image_jaccard"], errors="coerce")
    residual = (rejected_best & free & (floor > 0) & (own > config.residual_floor_share * floor) & agreeing
                & (images.isna() | (images >= config.min_residual_image_jaccard)))
    frame.loc[residual, "parallel"] = True
    frame.loc[residual, "reason"] = None
    frame.loc[residual, "method"] = RESIDUAL_METHOD
    frame.loc[residual, "evidence"] = "content"
    return frame


def decide_host(frame: pd.DataFrame, model: dict | None, config: VerificationConfig = DEFAULT) -> pd.DataFrame:
    """applyInPandas body (one host and language pair): the decision, the 1-1 alignment, then the residual pairs."""
    content = ContentModel.from_dict(model) if model else None
    return residual_pairs(one_to_one(decide(frame, content, config)), content, config)[VERIFIED_COLUMNS]
