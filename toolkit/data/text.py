"""Tokenising string attributes into word counts (the text half of WEKA's ``StringToWordVector``).

Tokenising is the slow part of text preparation, and the harness fits one vectoriser per pipeline
and split. So every string *table* (``Dataset.strings[col]``, shared by all subsets of a dataset) is
tokenised once into a table-level count matrix over all its words, kept in a small cache
(:func:`table_counts`); the pipeline's text step (:mod:`toolkit.models.text_step`) then only sums the
rows of a training part and chooses columns.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.data._unicode_marks import MARKS
from toolkit.errors import ParameterError

__all__ = ["tokenize", "compile_pattern", "header_setting", "table_counts", "TableCounts", "remap_columns",
           "ENGLISH_STOP_WORDS", "TOKENIZERS"]

_LETTER, _LETTER_OR_DIGIT = r"[^\W\d_]", r"[^\W_]"


def _with_marks(char: str) -> str:
    """Runs of ``char`` that may hold combining marks after their first character."""
    return char + r"+(?:[" + MARKS + r"]+" + char + r"*)*"


#: token patterns by name; ``alpha`` is Schneider's "alphabetic tokens" (any script's letters, with the
#: combining marks inside a word: Python's ``\w`` leaves them out, and हिन्दी or a lower-cased Turkish İ
#: fell apart into pieces)
TOKENIZERS: dict[str, str] = {
    "alpha": _with_marks(_LETTER),
    "alnum": _with_marks(_LETTER_OR_DIGIT),
    "word": r"\b\w\w+\b",   # scikit-learn's default: runs of 2+ word characters (as scikit-learn, marks split)
    "whitespace": r"\S+",
}


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


#: A common English stop-word list (function words, pronouns, auxiliaries), used by
#: ``stop_words="english"``.
ENGLISH_STOP_WORDS = frozenset("""
a about above after again against all almost also am among an and any are aren't as at be because
been before being below between both but by can cannot could couldn't did didn't do does doesn't
doing don't down during each either else ever every few for from further had hadn't has hasn't have
haven't having he he'd he'll he's her here here's hers herself him himself his how how's however i
i'd i'll i'm i've if in into is isn't it it's its itself just least less let's like may me might
more most must mustn't my myself neither no nor not now of off often on once only or other ought
our ours ourselves out over own rather same shall shan't she she'd she'll she's should shouldn't
since so some such than that that's the their theirs them themselves then there there's these they
they'd they'll they're they've this those though through thus to too under until up upon us very
was wasn't we we'd we'll we're we've were weren't what what's when when's where where's whether
which while who who's whom whose why why's will with within without won't would wouldn't yet you
you'd you'll you're you've your yours yourself yourselves
""".split())


_HEADER_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*):(.*)$")


def _strip_header(text: str, keep: frozenset[str] | None) -> str:
    """Drop an e-mail/news header (everything before the first blank line); keep the values of
    the header fields named in ``keep`` (lower-case names), e.g. ``{"subject"}``."""
    if "\r" in text:   # CRLF (or CR) line ends: the blank line is "\r\n\r\n"
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    head, sep, body = text.partition("\n\n")
    if not sep:
        return text
    if not keep:
        return body
    kept = []
    for line in head.split("\n"):
        m = _HEADER_LINE.match(line)
        if m and m.group(1).lower() in keep:
            kept.append(m.group(2))
    return "\n".join(kept) + "\n" + body


def header_setting(header: str) -> tuple[bool, frozenset[str] | None]:
    """(strip?, fields kept) from ``header``: "keep", "drop" or "field+field" (also , or ;)."""
    h = str(header).strip().lower()
    if h == "keep":
        return False, None
    if h == "drop":
        return True, None
    fields = frozenset(f.strip() for f in re.split(r"[+;, ]", h) if f.strip())
    if not fields or not all(re.fullmatch(r"[a-z][a-z0-9-]*", f) for f in fields):
        raise ParameterError(f"word-counts: header must be 'keep', 'drop' or the header fields to keep joined "
                             f"by '+' (e.g. 'from+subject'), not '{header}'")
    return True, fields


def tokenize(texts: Sequence[str], *, lowercase: bool = True, tokenizer: str = "alpha",
             token_pattern: str | None = None, numbers: str = "keep", header: str = "keep") -> list[list[str]]:
    """The tokens of every text (the same rules the vectoriser uses)."""
    pattern = compile_pattern(tokenizer, token_pattern)
    strip, fields = header_setting(header)
    if numbers not in ("keep", "num"):
        raise ParameterError(f"word-counts: numbers must be 'keep' or 'num', not '{numbers}'")
    docs: Any = texts
    # one form per word: a decomposed é (e + U+0301) and the composed one are the same word
    docs = [s if s.isascii() else unicodedata.normalize("NFC", s) for s in docs]
    if strip:
        docs = [_strip_header(s, fields) for s in docs]
    if lowercase:
        docs = [s.lower() for s in docs]
    if numbers == "num":  # after lower-casing, so that the token NUM differs from the word "num"
        docs = [_NUMBER.sub(" NUM ", s) for s in docs]
    ascii_pattern = _ASCII_PATTERNS.get(tokenizer) if not token_pattern else None
    if ascii_pattern is None:
        return [pattern.findall(s) for s in docs]
    # no combining mark in an ASCII text: the plain pattern finds the same tokens, faster
    return [(ascii_pattern if s.isascii() else pattern).findall(s) for s in docs]


#: the named tokenisers on texts without combining marks (ASCII): the same tokens
_ASCII_PATTERNS = {"alpha": re.compile(_LETTER + "+"), "alnum": re.compile(_LETTER_OR_DIGIT + "+")}


def compile_pattern(tokenizer: str, token_pattern: str | None) -> re.Pattern[str]:
    if token_pattern:
        try:
            return re.compile(token_pattern)
        except re.error as exc:
            raise ParameterError(f"word-counts: token_pattern '{token_pattern}' is not a valid regular "
                                 f"expression ({exc})") from None
    if tokenizer not in TOKENIZERS:
        raise ParameterError(f"word-counts: tokenizer must be one of {', '.join(TOKENIZERS)}, not '{tokenizer}' "
                             f"(or give token_pattern=REGEX)")
    return re.compile(TOKENIZERS[tokenizer])


class TableCounts:
    """One string table tokenised: counts (n_strings + 1 rows; the last row is the empty document
    used for missing values) over the table's words, sorted."""

    def __init__(self, table: list[str], counts: sp.csr_matrix, words: list[str]):
        self.table = table
        self.size = len(table)
        self.counts = counts
        self.words = words


_CACHE: OrderedDict[tuple[Any, ...], TableCounts] = OrderedDict()


_CACHE_SIZE = 4

#: texts tokenised at a time by :func:`table_counts`
_TOKENISE_BLOCK = 2048


def table_counts(table: list[str], key: tuple[Any, ...]) -> TableCounts:
    full_key = (id(table),) + key
    hit = _CACHE.get(full_key)
    if hit is not None and hit.table is table and hit.size == len(table):
        _CACHE.move_to_end(full_key)
        return hit
    lowercase, tokenizer, token_pattern, numbers, header = key
    n = len(table)
    # a block of texts at a time, each block's tokens summed per (text, word) before the next: memory grows
    # with the distinct words of the texts, not with their tokens (all tokens as Python strings took about
    # 116 bytes a token, 16 times the text)
    word_id: dict[str, int] = {}
    ends, index_parts, data_parts = [np.zeros(1, dtype=np.int64)], [], []
    for start in range(0, n, _TOKENISE_BLOCK):
        tokens = tokenize(table[start:start + _TOKENISE_BLOCK], lowercase=lowercase, tokenizer=tokenizer,
                          token_pattern=token_pattern, numbers=numbers, header=header)
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        flat = list(itertools.chain.from_iterable(tokens))
        del tokens
        for word in set(flat).difference(word_id):
            word_id[word] = len(word_id)
        ids = np.fromiter(map(word_id.__getitem__, flat), dtype=np.int64, count=len(flat))
        del flat
        rows = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
        block = sp.csr_matrix((np.ones(len(ids)), (rows, ids)), shape=(len(lengths), len(word_id)))
        block.sum_duplicates()
        ends.append(block.indptr[1:].astype(np.int64) + ends[-1][-1])
        index_parts.append(block.indices)
        data_parts.append(block.data)
    ends.append(ends[-1][-1:])                      # the empty last row: missing values
    words = sorted(word_id)
    position = np.empty(len(words), dtype=np.int64)
    position[np.fromiter(map(word_id.__getitem__, words), dtype=np.int64, count=len(words))] = np.arange(len(words))
    indices = position[np.concatenate(index_parts)] if index_parts else np.zeros(0, dtype=np.int64)
    del index_parts
    data = np.concatenate(data_parts) if data_parts else np.zeros(0)
    counts = sp.csr_matrix((data, indices, np.concatenate(ends)), shape=(n + 1, len(words)))
    counts.sort_indices()                           # words renumbered in sorted order; no duplicates left
    counts.sum_duplicates()
    entry = TableCounts(table, counts, words)
    _CACHE[full_key] = entry
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return entry


def remap_columns(X: sp.csr_matrix, new_index: np.ndarray, n_columns: int) -> sp.csr_matrix:
    """Columns renumbered by ``new_index`` (-1 = dropped), without densifying."""
    cols = new_index[X.indices]
    keep = cols >= 0
    row_of = np.repeat(np.arange(X.shape[0], dtype=np.int64), np.diff(X.indptr))
    out = sp.csr_matrix((X.data[keep], (row_of[keep], cols[keep])), shape=(X.shape[0], n_columns))
    out.sum_duplicates()
    return out
