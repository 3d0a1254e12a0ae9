"""ReplayConfig: the numeric knobs of the replayed policies and the simulator, with today's values.

Set from replay-crawl's `--conf` section (`replay-crawl: {replay: {site_partner_weight: 1.0}}`) and recorded in its
report. A policy's class attributes hold the defaults; make_policy(..., config=) sets a policy's own from a config.
"""
from __future__ import annotations

from dataclasses import dataclass

from parascout.udfs.common.stage_config import StageConfig, knob


@dataclass(frozen=True)
class ReplayConfig(StageConfig):
    """replay-crawl's knobs: ilsp's bonus, smart's partner threshold and language focus, smart+site's naive Bayes,
    partner and cue weights and re-scoring schedule, and the yield curve's sampling."""

    ilsp_bonus: float = knob(1.0, "ilsp: ILSP-FC's bonus c for a link whose context names the other language of "
                                   "its page", low=0)
    partner_min_p: float = knob(0.5, "smart*: a linking page is named a page's predicted translation from this "
                                      "P(parallel) on (the pair model's decision)", low=0, high=1)
    language_focus: float = knob(0.05, "smart+lang, smart+site: weight of max(P(v in A), P(v in B)) added to every "
                                         "link's priority (smart has 0: the paper's formula)", low=0)
    site_first_rescore: int = knob(4, "smart+site: the first re-scoring of every link after this many fetches", low=1)
    site_rescore_growth: float = knob(1.05, "smart+site: then each time the fetched count grew by this factor", above=1)
    site_smoothing: float = knob(4.0, "smart+site: the naive Bayes' m-estimate weight s (site_class_posterior); "
                                       "searched on tuning archives, never on evaluation ones", above=0)
    site_prior_floor: float = knob(0.05, "smart+site: share of the prior spread evenly over the classes: the URL "
                                          "model is overruled by site evidence", low=0, high=1)
    site_missing_prior: float = knob(0.05, "smart+site: prior of \"missing from the archive\" (a wasted fetch)",
                                     low=0, high=1)
    site_partner_k: int = knob(5, "smart+site: each page is paired with its k most token-similar pages: a likely "
                                   "translation already found", low=0)
    site_partner_weight: float = knob(1.2, "smart+site: weight of the best P(parallel) x P(one in A, the other in "
                                            "B) with a page found so far", low=0)
    site_found_partner_share: float = knob(0.5, "smart+site: the bonus of a partner found but not fetched, relative "
                                                 "to a fetched one", low=0, high=1)
    site_link_slots: int = knob(16, "smart+site: the first this many links of a page (its header: logo, menu, "
                                     "language switcher) are also learned from by their position", low=0)
    site_size_smoothing: float = knob(5.0, "smart+site: pages added to each language's expected size when weighing "
                                            "the wanted languages by translation share", low=0)
    site_cue_weight: float = knob(0.5, "smart+site: bonus of a link whose context names the other language of its "
                                        "page (ILSP-FC's c, scaled to P values)", low=0)
    site_entry_cue_weight: float = knob(0.5, "smart+site: bonus of a link on a page in neither language whose cue "
                                              "names one of them (the way in from a third language)", low=0)
    site_third_cue_penalty: float = knob(0.05, "smart+site: penalty of a link whose cue names a language outside "
                                                "the pair: a switcher said it leads away from both", low=0)
    site_class_rate_smoothing: float = knob(2.0, "smart+site: the URL model's class probabilities are re-weighted "
                                                  "by this site's rates with this smoothing; negative: off")
    sample_every: float = knob(0.01, "the yield curve (replay_curves) is sampled every this share of the budget",
                               above=0, high=1)


DEFAULT = ReplayConfig()
