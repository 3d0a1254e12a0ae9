"""udfs.near_duplicates: site-wide repeated paragraphs and ILSP-FC near-duplicate groups."""
from __future__ import annotations

import pandas as pd

from parascout.udfs.near_duplicates import (
    SiteTextSettings,
    near_duplicate_groups,
    repeated_hashes,
    site_text_pass,
)

SETTINGS = SiteTextSettings()


def test_a_hash_on_enough_of_the_sites_pages_is_repeated():
    pages = [["menu", "footer", f"body{i}"] for i in range(9)] + [["menu", "rare", "rare"]]
    assert repeated_hashes(pages, SETTINGS) == {"menu", "footer"}
    assert repeated_hashes(pages[:2], SETTINGS) == set()  # two pages: fewer than min_pages
    assert repeated_hashes(pages, SiteTextSettings(min_share=0.95)) == {"menu"}


def test_near_duplicates_keep_the_page_with_most_text():
    urls = ["http://s/a", "http://s/a?print=1", "http://s/b", "http://s/c", "http://s/d"]
    hashes = [["p1", "p2", "p3", "p4", "p5"], ["p1", "p2", "p3", "p4"], ["q1", "q2"], ["p1", "x", "y", "z"], []]
    chars = [500, 400, 200, 400, 0]
    assert near_duplicate_groups(urls, hashes, chars, SETTINGS) == {"http://s/a?print=1": "http://s/a"}
    # 3 of 4 shared (0.75) is not a near-duplicate under ILSP-FC's 0.8; it is under 0.7
    hashes[1] = ["p1", "p2", "p3", "other"]
    assert near_duplicate_groups(urls, hashes, chars, SETTINGS) == {}
    assert near_duplicate_groups(urls, hashes, chars, SiteTextSettings(min_overlap=0.7)) == {
        "http://s/a?print=1": "http://s/a"}


def test_site_text_pass_marks_template_paragraphs_before_comparing_pages():
    template = ["nav", "footer"]
    pages = pd.DataFrame({
        "url": ["http://s/1", "http://s/2", "http://s/3", "http://s/3-copy"],
        "hashes": [template + ["a1", "a2"], template + ["b1", "b2"], template + ["c1", "c2"], template + ["c1", "c2"]],
        "boilerplate": [[False] * 4] * 4,
        "chars": [[10, 10, 100, 100]] * 3 + [[10, 10, 100, 90]],
    })
    out = site_text_pass(pages, SETTINGS)
    assert out["repeated_hashes"].map(list).tolist() == [["footer", "nav"]] * 4
    assert out["duplicate_of"].tolist() == [None, None, None, "http://s/3"]  # only the template is shared by 1-3
