"""verify-pairs on URL-exact partners: a template sibling never displaces one, content still rejects two different
documents, and link agreement makes a neighbour pair one document."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from parascout.udfs.verify import verification
from parascout.udfs.verify.decision import (
    ContentModel,
    decide,
    one_to_one,
    url_exact_counts,
)
from parascout.udfs.verify.pages import HostPages
from parascout.udfs.verify.verification import (
    CONTENT_FEATURES,
)
from tests.support.verify_sites import (
    HOST,
)


def logit_model(floor: float | None = None) -> ContentModel:
    """A model whose p_parallel_content is sigmoid(tsim): the tests set each pair's content score through tsim."""
    features = len(CONTENT_FEATURES)
    weights = tuple(1.0 if name == "tsim" else 0.0 for name in CONTENT_FEATURES)
    return ContentModel(weights, 0.0, (0.0,) * features, (1.0,) * features, default_own_text_floor=floor)


def url_frame(rows: list[tuple[str, str, str, float, float]]) -> pd.DataFrame:
    """(src page, trg page, source, p_parallel_content, own_tsim_idf) rows of one host and language pair."""
    return pd.DataFrame([{"host": HOST, "src_url": f"http://{HOST}/en/{src}", "trg_url": f"http://{HOST}/de/{trg}",
                          "src_lang": "eng", "trg_lang": "deu", "source": source,
                          "tsim": math.log(p / (1 - p)), "own_tsim_idf": own, "reason": None, "parallel": False,
                          "structure_ok": True, "src_key": None, "trg_key": None} for src, trg, source, p, own in rows])


def decided(frame: pd.DataFrame, model: ContentModel) -> dict[tuple[str, str], pd.Series]:
    result = one_to_one(decide(frame, model))
    return {(row.src_url.rsplit("/", 1)[1], row.trg_url.rsplit("/", 1)[1]): row for row in result.itertuples()}


def test_a_sibling_of_one_template_does_not_displace_a_url_exact_partner():
    # reference pages 03030111 and 03030113 on one template with near-identical examples: by content alone each
    # English page prefers the other's German page; their URLs pair them exactly
    pages = [("03030111.html", "03030111.html", "handle,similar", 0.70, 0.5),
             ("03030113.html", "03030113.html", "handle,similar", 0.72, 0.5),
             ("03030111.html", "03030113.html", "similar", 0.90, 0.6),
             ("03030113.html", "03030111.html", "similar", 0.91, 0.6)]
    rows = decided(url_frame(pages), logit_model(floor=0.1))
    assert {key for key, row in rows.items() if row.parallel} == {("03030111.html", "03030111.html"),
                                                                  ("03030113.html", "03030113.html")}
    exact = rows[("03030111.html", "03030111.html")]
    assert exact.url_exact and exact.url_log_odds == pytest.approx(math.log(3)) and exact.evidence == "url+content"
    assert exact.p_parallel == pytest.approx(0.875) and exact.p_parallel_content == pytest.approx(0.7)
    assert rows[("03030111.html", "03030113.html")].reason == "not_one_to_one"
    # the same pairs without the URL evidence: content alone swaps them (what the URL evidence prevents)
    alone = decided(url_frame([(s, t, "similar", p, own) for s, t, _, p, own in pages]), logit_model(floor=0.1))
    assert {key for key, row in alone.items() if row.parallel} == {("03030111.html", "03030113.html"),
                                                                   ("03030113.html", "03030111.html")}


def test_a_page_whose_url_exact_partner_is_left_untranslated_pairs_with_no_sibling():
    frame = url_frame([("base2dec", "base2dec", "handle", 0.99, 0.8), ("dec2base", "dec2base", "handle", 0.9, 0.7),
                       ("base2dec", "dec2base", "similar", 0.9, 0.3)])
    frame.loc[0, "reason"] = "untranslated"  # the language check's verdict: the German page is the English text
    rows = decided(frame, logit_model(floor=0.1))
    assert rows[("base2dec", "base2dec")].reason == "untranslated" and not rows[("base2dec", "base2dec")].parallel
    sibling = rows[("base2dec", "dec2base")]
    assert not sibling.parallel and sibling.reason == "not_one_to_one" and sibling.evidence == "url+content"
    assert rows[("dec2base", "dec2base")].parallel


def test_content_still_rejects_a_url_exact_pair_of_two_different_documents():
    frame = url_frame([("a", "a", "handle", 0.95, 0.5), ("b", "b", "handle", 0.9, 0.5),
                       ("c", "c", "handle", 0.6, 0.05)])  # c: own text at the random pairs' level
    rows = decided(frame, logit_model(floor=0.1))
    assert rows[("a", "a")].parallel and rows[("b", "b")].parallel
    assert not rows[("c", "c")].parallel and rows[("c", "c")].reason == "content_rejected"


def test_url_exact_pairs_earn_no_prior_on_a_site_whose_language_slots_pair_other_documents():
    # most of the site's URL-exact pairs are different documents by their text: a doubtful one gets no help
    frame = url_frame([(k, k, "handle", 0.3, 0.05) for k in "abcd"] + [("e", "e", "handle", 0.3, 0.5)])
    rows = decided(frame, logit_model(floor=0.1))
    assert rows[("e", "e")].url_log_odds == pytest.approx(math.log(2 / 5)) and not rows[("e", "e")].parallel


def test_a_url_exact_pair_without_text_passes_on_its_languages_and_structure_unless_it_lists_other_pages():
    frame = url_frame([("a", "a", "handle", 0.9, 0.5), ("menu", "menu", "handle", 0.5, 0.0),
                       ("x", "toc2", "similar", 0.5, 0.0), ("toc3", "toc3", "handle", 0.5, 0.0),
                       ("page-2", "page-2", "handle", 0.5, 0.0), ("toc", "toc", "handle", 0.5, 0.0)])
    frame.loc[1:, "tsim"] = np.nan  # fewer words of main text than the check needs: no content features
    frame.loc[3, "structure_ok"] = False
    # a section's menu: every link is the site's navigation; page 2 of a listing: links of its own to other items
    # in each language; a manual's table of contents: links of its own to each other's counterparts
    frame["link_agreement"] = [np.nan, np.nan, np.nan, np.nan, 0.3, 1.0]
    rows = decided(frame, logit_model(floor=0.1))
    assert rows[("menu", "menu")].parallel and rows[("menu", "menu")].evidence == "url+structure"
    assert rows[("toc", "toc")].parallel and rows[("toc", "toc")].evidence == "url+structure"
    assert rows[("x", "toc2")].reason == "no_text" and rows[("toc3", "toc3")].reason == "no_text"
    assert rows[("page-2", "page-2")].reason == "no_text"


def test_a_site_with_no_url_exact_pair_to_judge_takes_what_the_archives_sites_earn():
    # a host whose one URL-exact pair has no main text (a quick reference of codes whose links go to pages the
    # archive lacks): no pair of its own says what its URLs are worth, the language pair's URL-exact pairs over every
    # host of the archive do (and only there: a site with pairs of its own to judge goes by them)
    frame = url_frame([("gcode.html", "gcode.html", "handle", 0.5, 0.0)])
    frame["tsim"] = np.nan
    key = ("gcode.html", "gcode.html")
    assert decided(frame, logit_model(floor=0.1))[key].reason == "no_text"  # no start: even odds
    hosts = [url_frame([(k, k, "handle", 0.9, 0.5) for k in "abc"] + [("d", "d", "handle", 0.9, 0.05)]),
             url_frame([("e", "e", "handle", 0.9, 0.5), ("f", "g", "similar", 0.9, 0.5)])]
    hosts[1].loc[0, "reason"] = "untranslated"  # not in its languages: no evidence about the URLs either way
    counts = pd.concat([url_exact_counts(host, logit_model(floor=0.1).to_dict()) for host in hosts])
    assert counts[["n", "k"]].sum().tolist() == [4, 3]
    model = ContentModel.from_dict(logit_model(floor=0.1).with_archive_url_odds(counts).to_dict())
    assert dict(model.archive_url_odds) == {"eng-deu": pytest.approx(math.log(2))}
    row = decided(frame, model)[key]
    assert row.parallel and row.evidence == "url+structure" and row.url_log_odds == pytest.approx(math.log(2))
    # where the language pair's URL-exact pairs are mostly other documents, the archive's odds are against the pair
    mostly_other = logit_model(floor=0.1).with_archive_url_odds(
        pd.DataFrame({"src_lang": ["eng"], "trg_lang": ["deu"], "n": [10], "k": [2]}))
    assert decided(frame, mostly_other)[key].reason == "no_text"
    # a host with URL-exact pairs of its own to judge goes by them alone
    own = url_frame([("a", "a", "handle", 0.9, 0.05), ("gcode.html", "gcode.html", "handle", 0.5, 0.0)])
    own.loc[1, "tsim"] = np.nan
    assert decided(own, model)[key].reason == "no_text" and decided(own, model)[key].url_log_odds == pytest.approx(
        math.log(1 / 2))


def test_a_neighbour_pair_whose_links_agree_is_one_document_whatever_its_own_text():
    # section pages named by a hash per language: rank-pairs paired them by the counterparts of what they link. A
    # section is its entries' titles (no own text of its own above the random pairs' level): links say it is one
    # document; a pair whose links mostly disagree, or that content rejects, stays out
    frame = url_frame([("a", "a", "handle", 0.9, 0.5), ("b", "b", "handle", 0.9, 0.5),
                       ("section_1", "section_9", "neighbours", 0.9, 0.0), ("section_2", "section_8", "neighbours", 0.9, 0.0),
                       ("section_3", "section_7", "neighbours", 0.05, 0.0), ("toc_1", "toc_9", "neighbours", 0.5, 0.0),
                       ("toc_2", "toc_8", "neighbours", 0.5, 0.0)])
    frame.loc[5:, "tsim"] = np.nan  # tables of contents: too few words of main prose to judge
    frame["link_agreement"] = [np.nan, np.nan, 1.0, 0.5, 1.0, 1.0, np.nan]
    rows = decided(frame, logit_model(floor=0.1))
    assert rows[("section_1", "section_9")].parallel and rows[("section_1", "section_9")].evidence == "links+content"
    assert rows[("section_2", "section_8")].reason == "content_rejected"
    assert rows[("section_3", "section_7")].reason == "content_rejected"
    assert rows[("toc_1", "toc_9")].parallel and rows[("toc_1", "toc_9")].evidence == "links+structure"
    assert rows[("toc_2", "toc_8")].reason == "no_text"
    assert rows[("section_1", "section_9")].url_log_odds == 0  # no URL evidence: the links carry it


def test_link_agreement_is_the_share_of_links_that_go_to_each_others_counterparts():
    links = {"en": [f"http://{HOST}/en/{k}" for k in "abcd"], "de": [f"http://{HOST}/de/{k}" for k in "abc"]}
    pages = pd.DataFrame([{"url": f"http://{HOST}/{lang}/{page}", "status": "ok", "cld2_lang": None,
                           "outlinks": links[lang] if page in ("toc", "list") else [],
                           "text_paragraphs": None, "main_text": None, "duplicate_of": None}
                          for lang in ("en", "de") for page in ("toc", "list", *"abcd")])
    pages.loc[pages["url"] == f"http://{HOST}/de/list", "outlinks"] = pd.Series(
        [[f"http://{HOST}/de/d", f"http://{HOST}/de/other"]], index=pages.index[pages["url"] == f"http://{HOST}/de/list"])
    pairs = pd.DataFrame([{"host": HOST, "src_url": f"http://{HOST}/en/{k}", "trg_url": f"http://{HOST}/de/{k}",
                           "role": "candidate", "source": "handle"} for k in ("toc", "list", *"abcd")])
    pairs["url_exact"] = True
    values = verification.link_agreements(pairs, HostPages(pages)).tolist()
    # toc: 3 of its 4 counterpart links agree; list: 1 of 4; a page without links: no evidence
    assert values[0] == pytest.approx(3 / 4) and values[1] == pytest.approx(1 / 4) and np.isnan(values[2])
    # links on most of the host's pages are its navigation, whatever they point to
    everywhere = pages.assign(outlinks=[links[url.split("/")[3]] for url in pages["url"]])
    assert np.isnan(verification.link_agreements(pairs, HostPages(everywhere)).iloc[0])


def test_a_url_exact_translation_of_an_older_shorter_version_is_kept_by_its_coverage():
    # LilyPond's German pages follow an older layout of their English originals: 38 German words against 500
    # English ones, every German word's counterpart on the English page. tsim over both whole texts rates the pair
    # low; the German page's coverage by the English one beats what random pairs reach (the coverage floor)
    frame = url_frame([(k, k, "handle", 0.9, 0.5) for k in "abcd"]
                      + [("point-and-click", "point-and-click", "handle", 0.004, 0.06),
                         ("other", "other", "handle", 0.004, 0.06),
                         ("point-and-click", "editor", "similar", 0.9, 0.3),
                         ("naming", "naming", "handle", 0.9, 0.06)])
    # "other": two documents, little of either covered; "editor": a sibling of one template, its content alike
    frame["own_coverage_idf"] = [0.8, 0.8, 0.8, 0.8, 0.85, 0.3, 0.6, 0.7]
    model = dataclasses.replace(logit_model(floor=0.1), coverage_floors=(("eng-deu", 0.5),))
    rows = decided(frame, model)
    kept = rows[("point-and-click", "point-and-click")]
    assert kept.parallel and kept.evidence == "url+containment" and kept.p_parallel < model.accept_p
    assert rows[("other", "other")].reason == "content_rejected"
    # a p the model accepts, own text under the floor: the coverage, not the content, carried it
    assert rows[("naming", "naming")].parallel and rows[("naming", "naming")].evidence == "url+containment"
    assert rows[("point-and-click", "editor")].reason == "not_one_to_one"  # the covered partner holds its page
    # without a coverage floor (no random pairs to set one) no pair is judged covered
    assert decided(frame, logit_model(floor=0.1))[("point-and-click", "point-and-click")].reason == "content_rejected"
    # on a site whose URL-exact pairs are mostly other documents the URLs do not vouch for it
    other_site = frame.assign(own_tsim_idf=[0.05, 0.05, 0.05, 0.05, 0.06, 0.06, 0.3, 0.06])
    assert not decided(other_site, model)[("point-and-click", "point-and-click")].parallel
    # the model's floors survive its round trip through the job's JSON
    assert ContentModel.from_dict(model.to_dict()).coverage_floors == (("eng-deu", 0.5),)
