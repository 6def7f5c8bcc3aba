"""Tokens of any script: combining marks stay inside a word, one Unicode form per word, e-mail headers
with CRLF line ends, and stop words as the tokeniser splits them (found by the text-selection review)."""

from __future__ import annotations

import random
import re
import unicodedata

import pytest

from toolkit.data.text import TOKENIZERS, tokenize
from toolkit.models.text_step import WordCounts


def test_words_with_combining_marks_stay_whole():
    # Devanagari vowel signs and virama are combining marks (Mc, Mn), not word characters to Python's re
    assert tokenize(["हिन्दी भाषा"]) == [["हिन्दी", "भाषा"]]
    # a lower-cased Turkish capital dotted I is i + U+0307
    assert tokenize(["İstanbul"]) == [["i\u0307stanbul"]]
    assert tokenize(["İstanbul"], tokenizer="alnum") == [["i\u0307stanbul"]]


def test_composed_and_decomposed_forms_are_one_word():
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    assert tokenize([composed, decomposed]) == [[composed], [composed]]


@pytest.mark.parametrize("end", ["\r\n", "\r", "\n"])
def test_a_header_is_dropped_whatever_the_line_ends(end):
    text = end.join(["From: x", "Subject: s", "", "body here"])
    assert tokenize([text], header="drop") == [["body", "here"]]
    assert tokenize([text], header="subject") == [["s", "body", "here"]]


def test_english_stop_words_include_the_pieces_the_tokeniser_makes():
    stop = WordCounts(stop_words="english")._stop_set()
    for word in ("don", "t", "isn", "ll", "don't", "the"):
        assert word in stop
    assert "house" not in stop


def test_ascii_texts_tokenise_as_the_full_patterns_do():
    """The ASCII fast path: the same tokens as the mark-aware pattern on random ASCII text."""
    rng = random.Random(3)
    alphabet = "abcXYZ019_-' .,\t\n"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(500)]
    for name in ("alpha", "alnum"):
        full = re.compile(TOKENIZERS[name])
        want = [full.findall(t.lower()) for t in texts]
        assert tokenize(texts, tokenizer=name) == want


def test_every_combining_mark_joins_the_word_before_it():
    """Against the Unicode database: any mark (Mn, Mc, Me) after a letter stays in the token."""
    marks = [chr(c) for c in range(0x300, 0x2000) if unicodedata.category(chr(c)) in ("Mn", "Mc", "Me")]
    assert len(marks) > 300
    pattern = re.compile(TOKENIZERS["alpha"])
    for m in marks:
        assert pattern.findall("a" + m + "b c") == ["a" + m + "b", "c"], hex(ord(m))
