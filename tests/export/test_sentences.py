"""Sentence splitting: rules for spaced and unspaced scripts, abbreviations, bounded work on huge pages."""
from __future__ import annotations

import time

from parascout.udfs.export.bitext.sentences import (
    BAD_REASONS,
    EMPTY_TEXT,
    TOO_MANY_SENTENCES,
    Segment,
    split_paragraph,
    split_sentences,
)


def test_spaced_scripts_split_at_terminators_not_at_abbreviations_or_initials():
    text = "Mr. Smith met J. R. Tolkien in 1950. He said: «Why?» Then they left! The end"
    assert split_paragraph(text) == ["Mr. Smith met J. R. Tolkien in 1950.", "He said: «Why?»", "Then they left!",
                                     "The end"]


def test_a_period_before_a_lower_case_word_is_not_an_end():
    assert split_paragraph("Il est 3 h. à Paris. Voilà.") == ["Il est 3 h. à Paris.", "Voilà."]


def test_chinese_splits_without_spaces_and_keeps_closing_quotes_with_the_sentence():
    assert split_paragraph("神说：「要有光。」就有了光。他说：「好吗？」，我说好。") == [
        "神说：「要有光。」", "就有了光。", "他说：「好吗？」，我说好。"]


def test_arabic_question_mark_and_period():
    assert split_paragraph("هل أنت هنا؟ نعم أنا هنا. شكرا") == ["هل أنت هنا؟", "نعم أنا هنا.", "شكرا"]


def test_paragraphs_are_boundaries_and_empty_documents_are_bad_input():
    assert split_sentences(["One sentence", "Another one"]) == ([Segment("One sentence", 0), Segment("Another one", 1)],
                                                              None)
    assert split_sentences(["", "  "]) == ([], EMPTY_TEXT)
    assert split_sentences([]) == ([], EMPTY_TEXT)


def test_a_100k_sentence_document_gives_a_reason_quickly():
    huge = [f"Short sentence number {i}." for i in range(100_000)]
    started = time.process_time()
    sentences, reason = split_sentences([" ".join(huge[:50_000])] + huge[50_000:])
    assert (sentences, reason) == ([], TOO_MANY_SENTENCES)
    assert time.process_time() - started < 30  # a quadratic split of 100,000 sentences takes minutes
    assert {EMPTY_TEXT, TOO_MANY_SENTENCES} == BAD_REASONS


def test_titles_and_headings_are_one_segment_and_every_segment_knows_its_paragraph():
    segments, reason = split_sentences([("A title. With a period", "title"), ("", "text"),
                                        ("First one. Second one.", "text"), ("A heading! Yes", "heading"),
                                        ("Item one. Item two.", "list_item")])
    assert reason is None
    assert segments == [Segment("A title. With a period", 0, "title"), Segment("First one.", 2, "text"),
                        Segment("Second one.", 2, "text"), Segment("A heading! Yes", 3, "heading"),
                        Segment("Item one.", 4, "list_item"), Segment("Item two.", 4, "list_item")]


def test_a_lone_dash_after_the_period_stays_with_its_sentence():
    assert split_paragraph("Sie wälzen sich heran. - Und dann? «") == [
        "Sie wälzen sich heran.", "- Und dann? «"]
    assert split_paragraph("Sie wälzen sich heran. -") == ["Sie wälzen sich heran. -"]
