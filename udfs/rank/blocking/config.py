"""BlockingConfig: the knobs rank-pairs' blockers pair candidate URLs with (udfs.rank.blocking), with today's values.

Set from rank-pairs' `--conf` section (`rank-pairs: {blocking: {lsh_bands: 32}}`) and recorded in its report. The
sizes the job's options already set (--top-k, --max-group-urls, --lsh-min-pairs, --image-max-share,
--image-max-pages ...) stay options; memory chunk sizes stay constants of udfs.rank.blocking.similarity.
"""
from __future__ import annotations

from dataclasses import dataclass

from parascout.udfs.common.stage_config import StageConfig, knob


@dataclass(frozen=True)
class BlockingConfig(StageConfig):
    """rank-pairs' blocking knobs: URL features, MinHash/LSH banding, rare shared images and links, paragraph
    profiles."""

    char_ngram: int = knob(
        3, "URL words longer than this add their character n-grams of this length to the compared features, so "
           "'philosophy' meets 'philosophie'", low=1)
    minhash_permutations: int = knob(
        64, "MinHash signature length of a URL in groups blocked by LSH (more: finer Jaccard estimates, more memory)",
        low=1)
    lsh_bands: int = knob(
        16, "LSH bands the signature is cut into: more bands of fewer rows pair URLs of lower Jaccard", low=1)
    max_bucket_pairs: int = knob(
        20_000, "an LSH bucket pairing more URLs than this is skipped: a token every URL shares is no evidence", low=1)
    image_max_share: float = knob(
        0.1, "image names on more than this share of a site's fetched pages (logos, icons) pair nothing (names on at "
             "most image_rare_pages pages always may)", option=True, low=0, high=1)
    image_max_pages: int = knob(
        20, "image names on more pages than this pair nothing (counted as image_pairs_capped; bounds one name's "
            "src x trg pairs); 0 disables image blocking", option=True, low=0)
    image_rare_pages: int = knob(
        4, "an image name on at most this many pages is rare however small the site (a page and its translations)",
        low=1)
    profile_paragraphs: int = knob(
        8, "paragraphs (<p>, in page order) whose text lengths make a page's structure profile", low=1)
    link_rare_pages: int = knob(
        8, "a link target more pages cue-link to than this is a site-wide switcher target, not shared-alternate "
           "evidence", low=1)
    neighbour_min_links: int = knob(
        3, "a page without a partner by URL is paired by what it links (neighbour pairs) only when at least this many "
           "of its links reach pages that have one", low=1)
    neighbour_min_jaccard: float = knob(
        0.5, "two pages without partners by URL pair when at least this share of the pages their links reach "
             "(counterparts mapped) is shared, and each is the other's one best", above=0, high=1)
    navigation_share: float = knob(
        0.1, "a page more than this share of a site's pages of one language link is the site's navigation: no "
             "evidence for neighbour pairs", above=0, high=1)
    neighbour_max_pages: int = knob(
        50, "a page more pages of one language link than this is no evidence for neighbour pairs however large the "
            "site (bounds the pairs one linked page can propose)", low=1)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.lsh_bands > self.minhash_permutations:
            raise ValueError(f"BlockingConfig.lsh_bands must be between 1 and minhash_permutations "
                             f"({self.minhash_permutations}), got {self.lsh_bands}")

DEFAULT = BlockingConfig()
