"""Code, identifiers and commands recognised by their tokens whatever the markup around them (udfs.common.code_text),
and what verify-pairs and export-bitext do with them: a fully translated reference page whose English example is
marked up in <div>/<span> runs, a table or <pre> is a translation, not an untranslated copy; a code line is no
sentence pair."""
import pandas as pd
import pytest

from parascout.udfs.common.code_text import code_flags, code_share, is_code
from parascout.udfs.export.bitext.filters import filter_reason
from parascout.udfs.fetch.html_text import html_features
from parascout.udfs.lexicon.lexicon import Lexicon
from parascout.udfs.verify.pages import HostPages
from parascout.udfs.verify.structure import ThresholdRule
from parascout.udfs.verify.verification import verify_host

HOST = "help.example.org"

CODE = [
    ("Sub ExampleRandomSelect Dim iVar As Integer iVar = Int((15 * Rnd) -2) Select Case iVar Case 1 To 5 "
    "Print \"Number from 1 to 5\" Case Else Print \"Out of range\" End Select End Sub"),
    "x=[1 2 -2 sqrt(2) -sqrt(2) 2/sqrt(3) -2/sqrt(3) -1]; asec(x)/%pi",
    "SopranoMusic = \\relative g' { g1 | c2 b | a1 | \\bar \"||\" a1 | d2 c | c b | c1 | \\bar \"||\" }",
    "$ sudo apt install freedombox && sudo systemctl restart plinth",
    "G0 X10 Y5 Z-2 F300",
    "'chantquarterbar",
    "set_fftw_wisdom",
    "[Q,R,rk,E] = qr(X ,tol)",
    "for (int i = 0; i < n; i++) { total += values[i]; }",
    "cout << total << endl;",
    "std::cout << x",
    "a < b",
    # Scilab's getos example: the words of its string literals (`"Scilab on Windows"`) are data, not sentences
    ('if (getos() == "Windows") then disp("Scilab on Windows"); end if (getos() == "Linux") then '
     'disp("Scilab on Linux"); end if (getos() == "Darwin") then disp("Scilab on MacOs"); end'),
]
PROSE = [
    "The function returns the absolute value of its argument, element by element, for real and complex arrays.",
    "La fonction renvoie la valeur absolue de son argument, élément par élément, pour les tableaux réels et complexes.",
    "Die Funktion gibt den Betrag ihres Arguments zurück, Element für Element, für reelle und komplexe Felder.",
    "Use abs(x) when you need the magnitude of x; for complex numbers it is the modulus.",
    "Note: Magnification only works if a font name is explicitly selected. Use \\fontsize otherwise.",
    "LilyPond 2.13.24 released! June 14, 2010",
    "Elementary Functions",
    "Introduction",
    "Tondauern (Rhythmen)",
    "既灭了迦南地七族的人，就把那地分给他们为业；此后给他们设立士师 约有四百五十年 直到先知撒母耳的时候。",
    "E.4. Anerkennung der Warenzeichen",
    "Alle Warenzeichen sind Eigentum der jeweiligen Markeninhaber.",
    "Notes (see above) [optional]",
    'To print a greeting, call disp("Hello world") and the message is written to the console.',
    'Set the option to value="yes and then keep reading this paragraph, which never closes its quote.',
    "Scilab Help >> Fonctions Elémentaires > Trigonométrie > asech",
    "Accueil › Documentation › Référence",
    "<< asecd",
    "Функция возвращает абсолютное значение x_i для каждого элемента массива.",
    "تعيد الدالة القيمة المطلقة x_i لكل عنصر من عناصر المصفوفة.",
]


@pytest.mark.parametrize("text", CODE)
def test_code_is_recognised_by_its_tokens(text):
    assert is_code(text), code_share(text)


@pytest.mark.parametrize("text", PROSE)
def test_prose_with_inline_code_names_and_headings_is_not_code(text):
    assert not is_code(text), code_share(text)


def test_a_run_of_lines_is_code_when_most_of_its_text_is_code_by_itself():
    # an example one line per row: its keyword lines (Case 1 To 5, End Select) read alone as titles
    example = ["Sub ExampleRandomSelect", "Dim iVar As Integer", "iVar = Int((15 * Rnd) -2)", "Select Case iVar",
               "Case 1 To 5", "Print \"Number from 1 to 5\"", "End Select", "End Sub"]
    prose = ENGLISH_PROSE[0]
    flags = code_flags([(prose, "text")] + [(line, "text") for line in example] + [(prose, "text")])
    assert flags == [False] + [True] * len(example) + [False]
    # a manual's table of contents (list items that are no sentences) with one entry that quotes a command
    contents = ["2.1 Eine Quelldatei übersetzen", "2.2 Wie werden Eingabe-Dateien geschrieben", "Tonhöhen",
                "Pausen", "2.2.2 Arbeiten an Eingabe-Dateien", "Der \\relative-Befehl", "2.3 Fehlerbehandlung",
                "2.3.1 Allgemeine Fehlerbehandlungstipps", "2.3.2 Einige häufige Fehler", "Alles zusammen"]
    flags = code_flags([(line, "list_item") for line in contents])
    assert flags == [is_code(line) for line in contents] and sum(flags) <= 1
    # a reference table, a cell a line (LinuxCNC's German G-code quick reference): the codes and their parameters
    # are code, the descriptions beside them are the page's prose, though over a third of the lines are codes
    table = ["G0", "Rapid Move", "G2, G3", "I J K oder R P", "Bogenbewegung", "G4", "P", "Verweilen (engl. dwell)",
             "G5", "I J P Q", "Kubischer Spline", "G5.1", "I J", "Quadratischer Spline", "G33", "K ($)",
             "Spindelsynchronisierte Bewegung", "G80", "Festzyklus abbrechen"]
    flags = code_flags([(line, "text") for line in table])
    assert flags == [is_code(line) for line in table]
    assert not any(flag for line, flag in zip(table, flags) if line in ("Bogenbewegung", "Quadratischer Spline"))
    assert sum(flags) >= 0.3 * len(table)  # the codes themselves are code
    # a help page's navigation: previous / next links and a breadcrumb are no operators, and take no title with them
    navigation = ["<< asecd", "Trigonométrie", "asin >>", "Scilab Help >> Fonctions Elémentaires > Trigonométrie > asech"]
    assert code_flags([(line, "text") for line in navigation]) == [False] * 4


# one reference page in several markups a real help system uses for its example: highlighted <div>/<span> runs
# with <br> (no <pre>), one table row per line, <pre> with a <span> per token, and inline <code> inside prose
EXAMPLES = {
    "div-span": ("<div class=\"bascode\"><span class=\"kw\">Sub</span> ExampleRandomSelect<br>"
                 "<span class=\"kw\">Dim</span> iVar <span class=\"kw\">As</span> Integer<br>"
                 "iVar = Int((15 * Rnd) -2)<br><span class=\"kw\">Select Case</span> iVar<br>"
                 "<span class=\"kw\">Case</span> 1 <span class=\"kw\">To</span> 5<br>"
                 "Print \"Number from 1 to 5\"<br><span class=\"kw\">End Select</span><br>"
                 "<span class=\"kw\">End Sub</span></div>"),
    "table": ("<table class=\"code\"><tr><td>Sub ExampleRandomSelect</td></tr><tr><td>Dim iVar As Integer</td></tr>"
              "<tr><td>iVar = Int((15 * Rnd) -2)</td></tr><tr><td>Select Case iVar</td></tr>"
              "<tr><td>Case 1 To 5: Print \"Number from 1 to 5\"</td></tr><tr><td>End Select</td></tr>"
              "<tr><td>End Sub</td></tr></table>"),
    "pre-spans": ("<pre class=\"scilabcode\"><span class=\"scilabid\">x</span> <span class=\"scilaboperator\">=</span>"
                  " <span class=\"scilabopenclose\">[</span>1 2 -2 <span class=\"scilabcommand\">sqrt</span>(2)"
                  "<span class=\"scilabopenclose\">]</span>; <span class=\"scilabcommand\">asec</span>(x)/%pi</pre>"),
}
ENGLISH_PROSE = [
    ("Returns a random integer from a range and prints which range it falls into, using the Select Case statement "
    "to compare the value against several lists of values in turn."),
    ("The Select Case statement evaluates an expression once and then runs the block of the first case whose "
    "condition is true; when no case matches, the block of Case Else runs, and when there is none, nothing runs."),
]
FRENCH_PROSE = [
    ("Renvoie un entier aléatoire dans un intervalle et affiche l'intervalle auquel il appartient, à l'aide de "
    "l'instruction Select Case qui compare la valeur à plusieurs listes de valeurs tour à tour."),
    ("L'instruction Select Case évalue une expression une seule fois puis exécute le bloc du premier cas dont la "
    "condition est vraie ; si aucun cas ne convient, le bloc de Case Else s'exécute, et s'il n'y en a pas, rien ne "
    "s'exécute."),
]


def page(url: str, lang: str, prose: list[str], example: str, navigation: str) -> dict:
    """A page row as verify-pairs reads it (docs features and texts paragraphs), parsed from its HTML."""
    html = (f"<html lang='{lang}'><head><title>Select Case</title></head><body><nav><ul><li><a href='/'>"
            f"{navigation}</a></li></ul></nav><main><h1>Select Case</h1><p>{prose[0]}</p><h2>Example</h2>{example}"
            f"<p>{prose[1]}</p></main></body></html>")
    doc = html_features(html, url)
    paragraphs = doc.pop("page_paragraphs")
    return {**doc, "url": url, "host": HOST, "text_paragraphs": paragraphs, "duplicate_of": None,
            "main_text": "\n".join(p["text"] for p in paragraphs if not p["boilerplate"])}


@pytest.mark.parametrize("markup", sorted(EXAMPLES))
def test_an_example_in_any_markup_is_code_and_the_prose_around_it_is_not(markup):
    row = page(f"https://{HOST}/en/select.html", "en", ENGLISH_PROSE, EXAMPLES[markup], "Home")
    main = [p["text"] for p in row["text_paragraphs"] if not p["boilerplate"]]
    code = [text for text in main if is_code(text)]
    assert code and all(any(token in text for token in ("iVar", "asec", "Sub")) for text in code), main
    assert not any(is_code(text) for text in ENGLISH_PROSE)
    prose = HostPages(pd.DataFrame([row])).prose(row["url"])
    assert [p["text"] for p in prose] == ENGLISH_PROSE  # the example left out of the page's prose, nothing else


def judge(pages: list[dict]) -> pd.Series:
    pairs = pd.DataFrame([{"host": HOST, "src_url": pages[0]["url"], "trg_url": pages[1]["url"], "src_lang": "eng",
                           "trg_lang": "fra", "source": "handle"}])
    rows = verify_host(pairs, pd.DataFrame(pages), ThresholdRule().to_dict(), [Lexicon("eng", "fra", {})])
    return rows[rows["role"] == "candidate"].iloc[0]


@pytest.mark.parametrize("markup", sorted(EXAMPLES))
def test_a_translated_page_with_an_english_example_is_in_its_language(markup):
    english = page(f"https://{HOST}/en/select.html", "en", ENGLISH_PROSE, EXAMPLES[markup], "Home")
    french = page(f"https://{HOST}/fr/select.html", "fr", FRENCH_PROSE, EXAMPLES[markup], "Accueil")
    row = judge([english, french])
    assert row["lang_ok"] and row["reason"] != "untranslated", (row["src_lang_share"], row["trg_lang_share"])
    assert row["trg_lang_share"] == pytest.approx(1.0)


def test_an_untranslated_page_with_an_example_is_still_untranslated():
    english = page(f"https://{HOST}/en/select.html", "en", ENGLISH_PROSE, EXAMPLES["div-span"], "Home")
    copy = page(f"https://{HOST}/fr/select.html", "fr", ENGLISH_PROSE, EXAMPLES["div-span"], "Accueil")
    row = judge([english, copy])
    assert row["reason"] == "untranslated" and not row["lang_ok"]


def test_a_code_line_is_no_sentence_pair_and_prose_around_code_is():
    assert filter_reason("iVar = Int((15 * Rnd) -2)", "iVar = Int((15 * Rnd) - 2)", "eng", "fra") == "code"
    assert filter_reason("x = asec(x) / %pi", "x = asec(x)/%pi", "eng", "fra") == "code"
    assert filter_reason("Use abs(x) for the magnitude of x.", "Utilisez abs(x) pour le module de x.",
                         "eng", "fra") is None
