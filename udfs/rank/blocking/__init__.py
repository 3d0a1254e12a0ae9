"""Candidate blocking within a web host: token-Jaccard top-k pairs and bounded sub-groups.

A host with 10^5 pages has 10^10 URL pairs, so pairs are never enumerated. For every
URL of one language we keep the k URLs of the other language whose URL tokens are
most similar (Jaccard over token sets, language markers removed), in both directions.
Small groups are scored exactly with sparse matrix products in bounded chunks; big
groups go through MinHash/LSH banding, then exact Jaccard on the colliding pairs (and
an exact pass for the URLs no bucket paired). Huge hosts are first split into bounded
groups by language-neutral path prefix, then by a hash of the language-neutral URL
(the "handle"), so that URLs differing only by their language marker stay together.

Content blocking (ILSP-FC): fetched pages (`docs.images`) of the two languages that show the same
rare image file name are paired; names on many of a site's pages (logos, icons) are ignored and
names on more than a bounded number of pages are skipped and counted, so no site can blow up.
Structure blocking (STRAND's length correlation as a blocker): within a bounded group, each page's
k nearest pages of the other language by the log text lengths of their first paragraphs.

The package, in the order the data flows: `tokens` (URL token sets, language-neutral keys),
`similarity` (exact and MinHash/LSH top-k Jaccard), `plans` (per-group functions and Spark plans),
`content` (shared images, paragraph profiles); `config` holds their knobs (BlockingConfig). Sites are
`parascout.udfs.common.sites`.
"""
from parascout.udfs.rank.blocking.config import BlockingConfig  # noqa: F401
from parascout.udfs.rank.blocking.content import (  # noqa: F401
    IMAGE_STATUSES,
    MISSING_PARAGRAPH,
    STRUCTURE_SCHEMA,
    image_pairs,
    image_status,
    nearest_profiles,
    paragraph_profile,
    paragraph_profiles,
    profile_matrix,
    shared_image_pairs,
    structure_pairs,
    structure_pairs_for_group,
    structure_pairs_for_group_frame,
)
from parascout.udfs.rank.blocking.plans import (  # noqa: F401
    LANG_PAIR_COLUMNS,
    SIMILAR_SCHEMA,
    bounded_groups,
    cap_group,
    link_evidence,
    link_pairs,
    neighbour_pairs,
    orient_pairs,
    page_links,
    shared_alternates,
    similar_pairs_for_group,
    similar_pairs_for_group_frame,
    split_keys,
    split_keys_schema,
    surt_of_links,
    with_pair,
    with_split_keys,
)
from parascout.udfs.rank.blocking.similarity import (  # noqa: F401
    EMPTY_PAIRS,
    EXACT_CHUNK_CELLS,
    MINHASH_CHUNK_TOKENS,
    PAIR_COLUMNS,
    _top_k_by,
    _top_k_rows,
    _union_pairs,
    all_pairs,
    band_keys,
    exact_similar_pairs,
    exact_top_k,
    lsh_candidate_pairs,
    lsh_similar_pairs,
    minhash_signatures,
    pairwise_jaccard,
    similar_pairs,
    token_matrices,
)
from parascout.udfs.rank.blocking.tokens import (  # noqa: F401
    EMPTY_URL_FEATURES,
    URL_NOISE_TOKENS,
    _marker_pattern,
    neutral_directories,
    neutral_handle,
    neutral_prefixes,
    similarity_features,
    similarity_tokens,
    url_features,
)
