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


def test_table_counts_equal_a_counter_and_hold_words_not_tokens(monkeypatch):
    """Texts are tokenised a block at a time and summed per (text, word): the counts equal a Counter of
    each text's tokens, and memory follows the distinct words (all tokens as strings took ~60 bytes each)."""
    import collections
    import tracemalloc

    from toolkit.data import text as module

    rng = random.Random(0)
    vocab = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 6))) for _ in range(3000)]
    docs = [" ".join(rng.choice(vocab) for _ in range(50)) for _ in range(20000)] + ["", "Zeta zeta"]
    key = (True, "alpha", None, "keep", "keep")
    module._CACHE.clear()
    monkeypatch.setattr(module, "_TOKENISE_BLOCK", 1000)
    tracemalloc.start()
    entry = module.table_counts(docs, key)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 45e6, peak                         # 1M tokens, 0.94M entries: 107 MB before
    assert entry.words == sorted({w for d in docs for w in d.lower().split()})
    column = {w: j for j, w in enumerate(entry.words)}
    assert entry.counts.shape == (len(docs) + 1, len(entry.words)) and entry.counts.has_canonical_format
    for i in [0, 1, 999, 1000, 1001, 19999, 20000, 20001]:
        want = collections.Counter(docs[i].lower().split())
        row = entry.counts[i]
        got = {entry.words[j]: v for j, v in zip(row.indices, row.data)}
        assert got == want and all(column[w] in row.indices for w in want)
    assert entry.counts[len(docs)].nnz == 0          # the empty document of missing values
