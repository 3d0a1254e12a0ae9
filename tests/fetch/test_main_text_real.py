"""udfs.fetch.html_text's main text on the hand-labelled real pages of tests/data/main_text: template blocks out,
article blocks in with their types, and the word-level F1 over all fixtures above a floor."""
from __future__ import annotations

from pathlib import Path

from parascout.udfs.fetch.html_text import html_features
from testkit.main_text import fixtures, parascout_main_text, quality

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "main_text"
#: the measured figures (docs/main-text.md) less a small margin, so a regression fails
MIN_MEAN_F1, MIN_POOLED_F1 = 0.91, 0.96


def paragraphs(name: str) -> list[dict]:
    return html_features((FIXTURES / f"{name}.html").read_text(encoding="utf-8"), None)["page_paragraphs"]


def kept(name: str) -> dict[str, dict]:
    return {p["text"]: p for p in paragraphs(name) if not p["boilerplate"]}


def test_docbook_navigation_and_report_links_are_out_and_the_manual_text_in():
    main = kept("gimp_en_tool_crop")
    assert not any(text in main for text in ("4.5. Rotate", "4.3. Move", "4. Transform Tools",
                                              "Report a bug in GIMP Report a documentation error"))
    assert main["4.4. Crop"]["type"] == "title"
    assert main["Shrink Merged"]["type"] == "list_item"  # a definition list's term


def test_table_of_contents_is_out_and_the_chapter_intro_in():
    main = "\n".join(kept("debian_de_ch02"))
    assert "Inhaltsverzeichnis" not in main and "2.1.1. Unterstützte Architekturen" not in main
    assert "Dieser Abschnitt informiert über die benötigte Hardware" in main


def test_table_cells_and_screen_blocks_are_kept():
    main = kept("debian_en_ch02s01")
    assert {"Architecture", "Debian Designation", "armhf"} <= set(main)  # a table of short cells
    code = kept("debian_fr_apds03")
    assert "# mke2fs -j /dev/sda6" in code


def test_infobox_cells_breadcrumbs_and_footer_links():
    main = kept("cc_wikipedia_an_escopete")
    assert {"Superficie", "19,01 km²", "Población"} <= set(main)  # the infobox
    assert not any(text in main for text in ("Ir al contenido", "Menú principal", "Politica de privacidat"))
    garden = kept("cc_hovenier_nl_oosterbeek")
    assert "Home > Gelderland > Oosterbeek" not in garden and "Privacy Verklaring" not in garden
    assert "Hovenier in Oosterbeek" in garden


def test_kicad_headline_kept_and_its_table_of_contents_out():
    main = kept("kicad_en_pcb_calculator")
    assert "Calculator Tools" in main and "Table of Contents" not in main


def test_word_f1_over_all_fixtures_stays_above_the_floor():
    result = quality(parascout_main_text, fixtures())
    assert len(result["per_page"]) >= 20
    assert result["macro"][2] >= MIN_MEAN_F1 and result["micro"][2] >= MIN_POOLED_F1
