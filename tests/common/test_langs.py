"""udfs.common.langs: ISO 639 normalisation and the --langs forms (one pair, a pivot list, a list of pairs)."""
import pytest

from parascout.udfs.common.langs import UnknownLanguage, pair_label, parse_lang_pair, parse_lang_pairs, to_iso639_3


def test_codes_and_names_normalise_to_iso639_3():
    assert [to_iso639_3(code) for code in ("is", "isl", "ice", "Icelandic", "en-GB")] == ["isl"] * 4 + ["eng"]


@pytest.mark.parametrize("text, pairs", [
    ("en,fr", [("eng", "fra")]),
    ("eng,fra", [("eng", "fra")]),
    (" en , is ", [("eng", "isl")]),
    ("en:fr,de,is,eu", [("eng", "fra"), ("eng", "deu"), ("eng", "isl"), ("eng", "eus")]),
    ("eng:fra", [("eng", "fra")]),
    ("en-fr,de-fr", [("eng", "fra"), ("deu", "fra")]),
    ("en-fr", [("eng", "fra")]),
    ("eng-isl,mlt-eng", [("eng", "isl"), ("mlt", "eng")]),
])
def test_every_form_of_langs(text, pairs):
    assert parse_lang_pairs(text) == pairs


@pytest.mark.parametrize("text, says", [
    ("", "--langs is empty"),
    ("en", "exactly two languages"),
    ("en,fr,de", "'en:fr,de' (a pivot against each)"),
    ("en,en", "two different languages"),
    ("en:fr,en", "two different languages in each pair; got eng-eng"),
    ("en:fr,fr", "names the pair eng-fra twice"),
    ("en-fr,fr-en", "names the pair fra-eng twice"),
    ("en:", "a pivot list is one language, ':', then languages"),
    (":fr,de", "a pivot list is one language"),
    ("en:fr:de", "a pivot list is one language"),
    ("en:fr-de", "a pivot list is one language"),
    ("en-fr,de", "'de' is not a pair"),
    ("en-fr-de", "'en-fr-de' is not a pair"),
    ("en-", "'en-' is not a pair"),
])
def test_langs_errors_say_what_to_fix(text, says):
    with pytest.raises(ValueError) as error:
        parse_lang_pairs(text)
    assert says in str(error.value)
    assert "\n" not in str(error.value)


def test_an_unknown_code_is_named():
    with pytest.raises(UnknownLanguage, match="unknown language 'xx'"):
        parse_lang_pairs("en:fr,xx")


def test_one_pair_parser_refuses_several():
    assert parse_lang_pair("en,is") == ("eng", "isl")
    assert parse_lang_pair("en-is") == ("eng", "isl")
    with pytest.raises(ValueError, match="takes one language pair.*got 2 pairs"):
        parse_lang_pair("en:fr,de")


def test_pair_label_is_src_first():
    assert pair_label(("eng", "fra")) == "eng-fra"
