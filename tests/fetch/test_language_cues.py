"""Language cues of links: codes, names, endonyms, flags, hreflang, and the false cues they must not give."""
from __future__ import annotations

import pytest

from parascout.udfs.fetch.language_cues import CUE_KINDS_ANCHOR, LinkCue, flag_language, link_cue, text_language


@pytest.mark.parametrize("text, lang", [
    ("de", "deu"), ("DE", "deu"), ("[FR]", "fra"), ("fr |", "fra"), ("pt-BR", "por"), ("de_AT", "deu"),
    ("ENG", "eng"), ("IS", "isl"),
])
def test_whole_anchor_codes(text, lang):
    assert link_cue(text) == LinkCue(lang, "anchor_code")


@pytest.mark.parametrize("text, lang", [
    ("Deutsch", "deu"), ("English", "eng"), ("Français", "fra"), ("FRANCAIS", "fra"), ("English version", "eng"),
    ("Lire en français", "fra"), ("Íslenska", "isl"), ("中文", "zho"), ("Ελληνικά", "ell"), ("Español »", "spa"),
    ("Norsk bokmål", "nob"), ("Suomeksi? suomi", "fin"),
])
def test_names_and_endonyms(text, lang):
    assert link_cue(text) == LinkCue(lang, "anchor_name")


@pytest.mark.parametrize("text", [
    "de", "Read more", "la casa de papel", "It is what it is", "fin", "Fin de la liste", "est", "UK",
    "ice", "May", "spa", "Deu", "it-services", "German cars are reliable and they sell very well abroad",
    "English or Français", "", None, "   ", "2019",
])
def test_false_cues_in_text(text):
    expected = {"de": "deu"}  # only the whole-anchor 'de' is a cue
    found = link_cue(text)
    assert (found.lang if found else None) == expected.get(text)


@pytest.mark.parametrize("name, lang", [
    ("flag-de.png", "deu"), ("/flags/fr.gif", "fra"), ("de.svg", "deu"), ("gb.png", "eng"), ("flag_uk.png", "eng"),
    ("/img/flags/pt-br.png", "por"), ("english.gif", "eng"), ("icons/lang/dk.png", "dan"), ("lang-es.jpg", "spa"),
])
def test_flag_images(name, lang):
    assert flag_language(name) == lang
    assert link_cue(image=name) == LinkCue(lang, "flag")


@pytest.mark.parametrize("name", ["logo.png", "banner-de-luxe.png", "cat.png", "fin.png", "/photos/2019/de.txt",
                                  "header_bg.jpg", None, ""])
def test_images_that_are_not_flags(name):
    assert flag_language(name) is None


def test_attributes():
    assert link_cue("Read more", hreflang="de-AT") == LinkCue("deu", "hreflang")
    assert link_cue(hreflang="x-default") is None
    assert link_cue(lang="fr") == LinkCue("fra", "lang")
    assert link_cue(title="Passer en français") == LinkCue("fra", "title")
    assert link_cue(title="ES") == LinkCue("spa", "title")
    assert link_cue(image_alt="Deutsch", image="logo.png") == LinkCue("deu", "alt")


def test_strongest_evidence_first_and_kinds_restrict():
    assert link_cue("Deutsch", hreflang="fr").kind == "hreflang"
    assert link_cue("Deutsch", hreflang="fr", kinds=CUE_KINDS_ANCHOR) == LinkCue("deu", "anchor_name")
    assert link_cue(hreflang="fr", image="flag-de.png", kinds=CUE_KINDS_ANCHOR) is None


def test_text_language_kind():
    assert text_language("DE") == ("deu", "code")
    assert text_language("Deutsch") == ("deu", "name")


def wat_envelope(links: list[dict], head_links: list[dict] | None = None) -> dict:
    return {"WARC-Header-Metadata": {"WARC-Type": "response", "WARC-Target-URI": "https://a.com/en/page"},
            "Payload-Metadata": {"HTTP-Response-Metadata": {
                "Response-Message": {"Status": "200"}, "Headers": {"Content-Type": "text/html"},
                "HTML-Metadata": {"Head": {"Link": head_links or []}, "Links": links}}}}


def test_wat_outlink_cues_aligned_with_outlinks():
    from parascout.udfs.index.wat import wat_document

    links = [{"path": "A@/href", "url": "/en/about", "text": "About us"},
             {"path": "A@/href", "url": "/de/page", "text": "Deutsch"},
             {"path": "A@/href", "url": "/fr/page", "text": ""},
             {"path": "IMG@/src", "url": "/static/flags/fr.png", "alt": ""},
             {"path": "A@/href", "url": "/de/page", "text": "read on"},   # a repeat keeps its first cue
             {"path": "A@/href", "url": "/it/page", "text": "IT", "title": "Italiano"},
             {"path": "A@/href", "url": "/es/casa", "text": "de"}]         # a whole-anchor code is a cue
    head = [{"path": "LINK@/href", "url": "https://a.com/is/page", "rel": "alternate", "hreflang": "is"}]
    doc = wat_document(wat_envelope(links, head))
    cues = dict(zip(doc["outlinks"], doc["outlink_cues"]))
    assert len(doc["outlink_cues"]) == len(doc["outlinks"]) == 6
    assert cues == {"https://a.com/en/about": None, "https://a.com/de/page": "deu", "https://a.com/fr/page": "fra",
                    "https://a.com/it/page": "ita", "https://a.com/es/casa": "deu", "https://a.com/is/page": "isl"}
    anchor_only = wat_document(wat_envelope(links, head), cue_kinds=CUE_KINDS_ANCHOR)
    assert dict(zip(anchor_only["outlinks"], anchor_only["outlink_cues"])) == {
        **cues, "https://a.com/fr/page": None, "https://a.com/is/page": None}


def test_html_outlink_cues_aligned_with_outlinks():
    from parascout.udfs.fetch.html_text import html_features

    page = ('<html><head><link rel="alternate" hreflang="fr" href="/fr/x"></head><body>'
            '<a href="/de/x">Deutsch</a><a href="/a">Read more</a><a href="/es/x"><img src="/flags/es.png" alt=""></a>'
            '<a href="/it/x" hreflang="it">more</a><a href="/a">de</a><a href="/de/x">again</a>'
            '<a href="/pt/x" title="Português"><span>PT</span></a></body></html>')
    doc = html_features(page, "http://a.com/en/x")
    assert len(doc["outlink_cues"]) == len(doc["outlinks"]) == 6
    assert dict(zip(doc["outlinks"], doc["outlink_cues"])) == {
        "http://a.com/fr/x": "fra", "http://a.com/de/x": "deu", "http://a.com/a": "deu",  # 'de' as a whole anchor
        "http://a.com/es/x": "spa", "http://a.com/it/x": "ita", "http://a.com/pt/x": "por"}


def test_the_longest_label_a_language_name_counts_in_is_the_extraction_configs():
    from parascout.udfs.fetch.config import ExtractionConfig
    from parascout.udfs.fetch.html_text import html_features
    from parascout.udfs.index.wat import wat_document

    label = "Read this page in English"  # five words: a switcher's label under the default, a sentence under 4
    assert text_language(label) == ("eng", "name") and text_language(label, None, 4) is None
    page = f'<html><body><a href="/en/x">{label}</a><a href="/de/x">Deutsch</a></body></html>'
    for words, english in ((5, "eng"), (4, None)):
        doc = html_features(page, "http://a.com/fr/x", ExtractionConfig(max_label_words=words))
        assert doc["outlink_cues"] == [english, "deu"]  # the walk's memo of anchor cues is per rule
        wat = wat_document(wat_envelope([{"path": "A@/href", "url": "/en/x", "text": label}]), max_label_words=words)
        assert wat["outlink_cues"] == [english]
