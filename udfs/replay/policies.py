"""Crawl policies for the replay simulator by name: the names the CLI offers and make_policy, which builds one.

The policies live by family: policy_base holds the interface (Policy) every policy implements;
page_policies the policies that order pages (bfs, bfs+cld2, strand, random, oracle);
link_policies those that score each link (ilsp, smart, smart+lang); site_policy smart+site.
MODEL_POLICIES names those that need the URL models (a replay without models skips them).

Why a module of its own: the registry is the one place that knows every family; the simulator
and the families import the interface only, so no family imports another's registry.
"""
from __future__ import annotations

from parascout.udfs.replay.config import ReplayConfig
from parascout.udfs.replay.link_policies import Ilsp, Smart, SmartLang
from parascout.udfs.replay.page_policies import Bfs, BfsCld2, Oracle, RandomOrder, Strand
from parascout.udfs.replay.policy_base import HandleFunction, LangScorer, PairScorer, Policy
from parascout.udfs.replay.site_policy import SmartSite

POLICY_NAMES = ("bfs", "bfs+cld2", "ilsp", "smart", "smart+lang", "smart+site", "strand", "random", "oracle")
#: policies that score links with the URL models
MODEL_POLICIES = frozenset({"smart", "smart+lang", "smart+site"})


def make_policy(name: str, langs: tuple[str, str] | None = None, lang_scorer: LangScorer | None = None,
                pair_scorer: PairScorer | None = None, random_seed: int = 0,
                handle_function: HandleFunction | None = None, config: ReplayConfig | None = None) -> Policy:
    """A policy by its CLI name (one of POLICY_NAMES), its knobs set from `config` (None: the defaults)."""
    policy = _new_policy(name, langs, lang_scorer, pair_scorer, random_seed, handle_function)
    return policy if config is None else policy.configure(config)


def _new_policy(name: str, langs: tuple[str, str] | None, lang_scorer: LangScorer | None,
                pair_scorer: PairScorer | None, random_seed: int, handle_function: HandleFunction | None) -> Policy:
    if (name in MODEL_POLICIES or name in ("bfs+cld2", "ilsp", "strand")) and not langs:
        raise ValueError(f"policy {name!r} needs the language pair (langs=('eng', 'isl'))")
    if name == "bfs":
        return Bfs()
    if name == "bfs+cld2":
        return BfsCld2(langs)
    if name == "ilsp":
        return Ilsp(langs)
    if name in MODEL_POLICIES:
        if lang_scorer is None or pair_scorer is None:
            raise ValueError(f"policy {name!r} needs a lang_scorer and a pair_scorer (the URL models)")
        return {"smart": Smart, "smart+lang": SmartLang, "smart+site": SmartSite}[name](langs, lang_scorer, pair_scorer)
    if name == "strand":
        return Strand(langs, handle_function)
    if name == "random":
        return RandomOrder(random_seed)
    if name == "oracle":
        return Oracle()
    raise ValueError(f"unknown policy {name!r}; known: {', '.join(POLICY_NAMES)}")
