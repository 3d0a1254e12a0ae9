"""Sentence splitting: rules for spaced and unspaced scripts, abbreviations, bounded work on huge pages."""
from __future__ import annotations

import time

from parascout.udfs.bitext.sentences import (
    BAD_REASONS,
    EMPTY_TEXT,
    TOO_MANY_SENTENCES,
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
    assert split_sentences(["One sentence", "Another one"]) == (["One sentence", "Another one"], None)
    assert split_sentences(["", "  "]) == ([], EMPTY_TEXT)
    assert split_sentences([]) == ([], EMPTY_TEXT)


def test_a_100k_sentence_document_gives_a_reason_quickly():
    huge = [f"Short sentence number {i}." for i in range(100_000)]
    started = time.process_time()
    sentences, reason = split_sentences([" ".join(huge[:50_000])] + huge[50_000:])
    assert (sentences, reason) == ([], TOO_MANY_SENTENCES)
    assert time.process_time() - started < 5
    assert {EMPTY_TEXT, TOO_MANY_SENTENCES} == BAD_REASONS
