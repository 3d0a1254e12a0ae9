"""Sentence alignment: a hand-made pair with a 2-1 bead, deletions with a lexicon, paragraph structure (headings
kept apart), degenerate inputs."""
from __future__ import annotations

from typing import ClassVar

from parascout.udfs.export.bitext.align import Bead, align_segments, align_sentences, layout
from parascout.udfs.export.bitext.sentences import Segment
from tests.support.bitext import SRC, TRG, TinyLexicon, tokenize


def shape(beads: list[Bead]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    return [(bead.src, bead.trg) for bead in beads]


EXPECTED = [((0,), (0,)), ((1,), (1, 2)), ((2,), (3,)), ((3,), (4,))]


def test_a_1_2_bead_is_found_by_lengths_alone_and_with_the_lexicon():
    assert shape(align_sentences(SRC, TRG)) == EXPECTED
    beads = align_sentences(SRC, TRG, "eng", "fra", TinyLexicon(), tokenize)
    assert shape(beads) == EXPECTED
    assert [bead.kind for bead in beads] == ["1-1", "1-2", "1-1", "1-1"]
    assert all(0 < bead.score <= 1 for bead in beads)


def test_a_2_1_bead_the_other_way_round():
    beads = align_sentences(TRG, SRC)
    assert shape(beads) == [(trg, src) for src, trg in EXPECTED]
    assert beads[1].kind == "2-1"


def test_the_lexicon_finds_an_untranslated_sentence():
    extra = "Nobody translated this sentence, which is about something else entirely and goes on and on."
    src = ["The cat sleeps in the garden.", "The house is red.", extra, "My father built it in 1950.", "We love it.",
           "The cat sleeps.", "The garden is very old.", "The river is red."]
    trg = ["Le chat dort dans le jardin.", "La maison est rouge.", "Mon père l'a construite en 1950.",
           "Nous l'aimons.", "Le chat dort.", "Le jardin est très vieux.", "La rivière est rouge."]
    beads = align_sentences(src, trg, "eng", "fra", TinyLexicon(), tokenize)
    assert shape(beads) == [((0,), (0,)), ((1,), (1,)), ((2,), ())] + [((i,), (i - 1,)) for i in range(3, 8)]
    assert beads[2].kind == "1-0"
    assert "1-0" not in [bead.kind for bead in align_sentences(src, trg)]  # lengths alone shift instead


def test_one_empty_side_leaves_every_sentence_unaligned():
    assert shape(align_sentences(["A.", "B."], [])) == [((0,), ()), ((1,), ())]
    assert shape(align_sentences([], ["A."])) == [((), (0,))]
    assert align_sentences([], []) == []


HEADED_SRC = [Segment("The red house", 0, "title"), Segment("The house is red.", 1),
              Segment("It stands by the very old river.", 1), Segment("The cat sleeps", 2, "heading"),
              Segment("The cat sleeps in the garden.", 3)]
HEADED_TRG = [Segment("La maison rouge", 0, "title"), Segment("La maison est rouge.", 1),
              Segment("Elle se trouve au bord de la très vieille rivière.", 1),
              Segment("Le chat dort dans le jardin.", 2)]


def test_structure_keeps_headings_apart_and_pairs_titles():
    texts = ([s.text for s in HEADED_SRC], [t.text for t in HEADED_TRG])
    assert ((2, 3), (2,)) in shape(align_sentences(*texts))  # lengths alone glue the heading to a sentence
    expected = [((0,), (0,)), ((1,), (1,)), ((2,), (2,)), ((3,), ()), ((4,), (3,))]
    assert shape(align_segments(HEADED_SRC, HEADED_TRG)) == expected
    assert shape(align_segments(HEADED_SRC, HEADED_TRG, "eng", "fra", TinyLexicon(), tokenize)) == expected
    assert layout(HEADED_SRC).starts.tolist() == [True, True, False, True, True]
    assert layout(HEADED_SRC).standalone.tolist() == [True, False, False, True, False]


class TinyChineseLexicon(TinyLexicon):
    """English words to the Chinese characters (parascout's tokenize reads Han one character a token)."""

    table: ClassVar[dict] = {
        "people": {"百": 0.6, "姓": 0.6}, "sang": {"唱": 0.9}, "river": {"河": 0.9}, "king": {"王": 0.9},
        "city": {"城": 0.9}, "saw": {"看": 0.7, "见": 0.6}, "temple": {"殿": 0.8, "圣": 0.3}, "prayed": {"祷": 0.8, "告": 0.7},
        "night": {"夜": 0.9}, "slept": {"睡": 0.9}, "morning": {"早": 0.8, "晨": 0.8}, "ate": {"吃": 0.9},
        "bread": {"饼": 0.9}, "he": {"他": 0.8}, "they": {"他": 0.6, "们": 0.5}, "boat": {"船": 0.9}, "sea": {"海": 0.9}}


def test_a_sentence_cut_in_four_in_chinese_is_one_1_4_bead_and_a_note_stays_alone():
    """The DP's largest shape is 1-3: it left the fourth clause (然后睡了 'and slept') unaligned; the absorbing pass
    merges it into its pair (its words raise the pair's similarity), the untranslated note would dilute it."""
    from parascout.udfs.common.language_id import tokenize as parascout_tokenize
    from parascout.udfs.export.bitext.sentences import split_sentences

    src, _ = split_sentences([("The people sang by the river. The king went into the city, saw the temple, prayed "
                               "there all night and slept. In the morning he ate bread. Then they took a boat to the sea.")])
    trg, _ = split_sentences([("百姓在河边唱歌。王进了城。看见圣殿。就在那里祷告了一夜。然后睡了。早晨他吃了饼。"
                               "然后他们坐船到海边去。译者注：原文为英语。")])
    assert (len(src), len(trg)) == (4, 8)
    beads = align_segments(src, trg, "eng", "zho", TinyChineseLexicon(), parascout_tokenize)
    assert shape(beads) == [((0,), (0,)), ((1,), (1, 2, 3, 4)), ((2,), (5,)), ((3,), (6,)), ((), (7,))]
    assert [bead.kind for bead in beads] == ["1-1", "1-4", "1-1", "1-1", "0-1"]
    assert 0 < beads[1].score <= 1


def test_an_untranslated_sentence_sharing_its_neighbours_words_stays_alone():
    """The Chinese page adds a verse the English one lacks, made of the words of its translated neighbour (王, 看见,
    城, 吃, 饼): the DP glued it into a 1-2 bead; it links to nothing the neighbour does not, so it leaves the bead,
    and the neighbour, not the verse, keeps the pair."""
    from parascout.udfs.common.language_id import tokenize as parascout_tokenize
    from parascout.udfs.export.bitext.sentences import split_sentences

    src, _ = split_sentences([("The people sang by the river. The king saw the city and ate bread. They took a boat "
                               "to the sea.")])
    trg, _ = split_sentences(["百姓在河边唱歌。王看见了城，吃了饼。王吃了饼，又看见了城。他们坐船到海边去。"])
    assert (len(src), len(trg)) == (3, 4)
    beads = align_segments(src, trg, "eng", "zho", TinyChineseLexicon(), parascout_tokenize)
    assert shape(beads) == [((0,), (0,)), ((1,), (1,)), ((), (2,)), ((2,), (3,))]
    assert [bead.kind for bead in beads] == ["1-1", "1-1", "0-1", "1-1"]
    assert 0 < beads[1].score <= 1 and beads[2].score == 0.0


def test_a_pair_with_no_link_either_way_is_two_unaligned_sentences():
    from parascout.udfs.export.bitext.align import LexicalSimilarity, detach_untranslated

    src, trg = [["the", "king"], ["note", "german"]], [["王"], ["译", "注"]]
    lexical = LexicalSimilarity(src, trg, TinyChineseLexicon())
    beads = [Bead((0,), (0,), 0.9), Bead((1,), (1,), 0.5)]
    assert shape(detach_untranslated(beads, lexical, ([9, 12], [1, 2], 0.3))) == [((0,), (0,)), ((1,), ()), ((), (1,))]
