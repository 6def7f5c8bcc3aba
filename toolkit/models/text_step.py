"""The text step of a pipeline: string attributes -> sparse word counts (the role of WEKA's
``StringToWordVector``).

A :class:`WordCounts` step is fit on a training part only: its vocabulary is the set of words
that pass the filters (stop words, the ``remove_top`` most frequent words, ``min_df``) *in that
part*; test words outside it are dropped (algorithms.md 1.2). The output is a CSR matrix of
counts, one column per vocabulary word (sorted), followed by the dataset's other feature columns
unchanged.

Tokenising is the slow part of text preparation, and the harness fits one vectoriser per
pipeline and split. So every string *table* (``Dataset.strings[col]``, shared by all subsets of a
dataset) is tokenised once into a table-level count matrix over all its words, kept in a small
cache; fitting then only sums the rows of the training part and chooses columns. The words of the
whole table are only an index: which of them become the vocabulary is decided from the
training rows alone, so the result is the same as tokenising the training part by itself.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.api import Schema
from toolkit.data.attributes import AttributeListBuilder
from toolkit.data.dataset import Dataset
from toolkit.data.text import (
    ENGLISH_STOP_WORDS, compile_pattern, header_setting, remap_columns, table_counts, tokenize,
)
from toolkit.errors import DatasetError, ParameterError, ToolkitError, UnknownComponentError
from toolkit.plugin_host.registry import ComponentSpec

__all__ = ["WordCounts", "text_step_spec", "TEXT_STEP_NAME"]

TEXT_STEP_NAME = "word-counts"


class WordCounts:
    """Word counts from the string attributes of a dataset, learned on a training part.

    :param lowercase: lower-case the text before tokenising.
    :param tokenizer: ``alpha`` (runs of letters), ``alnum``, ``word`` (2+ word characters) or
        ``whitespace``; ``token_pattern`` (a regular expression) overrides it.
    :param numbers: ``keep`` (as the tokenizer finds them) or ``num`` (every number becomes the
        token ``NUM``, as Schneider 2004 does).
    :param header: ``keep``; ``drop`` (remove an e-mail/news header: the text before the first
        blank line); or the header fields whose values are kept, joined by ``+``, e.g.
        ``from+subject`` (the 20 Newsgroups "18828" version keeps these two).
    :param stop_words: ``none``, ``english`` (:data:`ENGLISH_STOP_WORDS`) or a path to a file
        with one word per line.
    :param remove_top: remove the n most frequent words of the training part (by total count,
        ties to the lexicographically smaller word); the DCM chapter removes 500.
    :param min_df: keep words that occur in at least this many training documents.
    :param min_length: keep words with at least this many characters.
    :param max_features: keep only the most frequent remaining words (None: all).
    """

    def __init__(self, *, lowercase: bool = True, tokenizer: str = "alpha", token_pattern: str | None = None,
                 numbers: str = "keep", header: str = "keep", stop_words: str = "none", remove_top: int = 0,
                 min_df: int = 1, min_length: int = 1, max_features: int | None = None):
        self.lowercase = lowercase
        self.tokenizer = tokenizer
        self.token_pattern = token_pattern
        self.numbers = numbers
        self.header = header
        self.stop_words = stop_words
        self.remove_top = remove_top
        self.min_df = min_df
        self.min_length = min_length
        self.max_features = max_features

    # ------------------------------------------------------------------ params
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("lowercase", "tokenizer", "token_pattern", "numbers", "header",
                                              "stop_words", "remove_top", "min_df", "min_length",
                                              "max_features")}

    def set_params(self, **params: Any) -> WordCounts:
        valid = self.get_params()
        for key, value in params.items():
            if key not in valid:
                raise ParameterError(f"word-counts has no parameter '{key}' (its parameters: {', '.join(valid)})")
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        return "WordCounts(" + ", ".join(f"{k}={v!r}" for k, v in self.get_params().items()) + ")"

    # ------------------------------------------------------------------ model files
    def get_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The learned vocabulary and header (JSON) and document frequencies (array), for model files."""
        meta = {"vocabulary_": list(self.vocabulary_), "other_columns_": [int(i) for i in self.other_columns_],
                "schema_": self.schema_.to_json()}
        return meta, {"document_frequency_": np.asarray(self.document_frequency_)}

    def _set_state(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        if set(meta) != {"vocabulary_", "other_columns_", "schema_"} or set(arrays) != {"document_frequency_"}:
            raise ToolkitError(f"word-counts: the state holds {sorted(set(meta) | set(arrays))}, expected the "
                               f"vocabulary, other columns, schema and document frequencies")
        vocabulary, other, df = meta["vocabulary_"], meta["other_columns_"], arrays["document_frequency_"]
        if (not isinstance(vocabulary, list) or not all(isinstance(w, str) for w in vocabulary)
                or not isinstance(other, list) or not all(isinstance(i, int) and i >= 0 for i in other)
                or not isinstance(meta["schema_"], dict) or df.dtype.kind not in "iu" or df.shape != (len(vocabulary),)):
            raise ToolkitError("word-counts: the state's vocabulary, columns or document frequencies are malformed")
        self.vocabulary_ = list(meta["vocabulary_"])
        self.vocabulary_index_ = dict(zip(self.vocabulary_, range(len(self.vocabulary_))))
        self.other_columns_ = list(meta["other_columns_"])
        self.schema_ = Schema.from_json(meta["schema_"])
        self.document_frequency_ = arrays["document_frequency_"]

    def _check(self) -> None:
        compile_pattern(self.tokenizer, self.token_pattern)
        header_setting(self.header)
        if self.numbers not in ("keep", "num"):
            raise ParameterError(f"word-counts: numbers must be 'keep' or 'num', not '{self.numbers}'")
        for name in ("remove_top", "min_df", "min_length"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ParameterError(f"word-counts: {name} must be a non-negative integer, not {value!r}")
        if self.max_features is not None and (not isinstance(self.max_features, (int, np.integer))
                                              or isinstance(self.max_features, bool) or self.max_features < 1):
            raise ParameterError(f"word-counts: max_features must be a positive integer or None, "
                                 f"not {self.max_features!r}")

    def _stop_set(self) -> frozenset[str]:
        """The stop words, and the tokens this tokeniser makes of them: ``don't`` is never a token of the
        alphabetic tokeniser, ``don`` and ``t`` are (as NLTK's English list holds them)."""
        sw = self.stop_words
        if sw is None or str(sw).lower() in ("none", ""):
            return frozenset()
        if str(sw).lower() == "english":
            words = ENGLISH_STOP_WORDS
        else:
            path = Path(str(sw))
            if not path.is_file():
                raise ParameterError(f"word-counts: stop_words must be 'none', 'english' or a file of words, "
                                     f"and '{sw}' is not a file")
            words = frozenset(w.strip() for w in path.read_text(encoding="utf-8").split() if w.strip())
        listed = sorted(words)
        pieces = tokenize(listed, lowercase=bool(self.lowercase), tokenizer=self.tokenizer,
                          token_pattern=self.token_pattern or None)
        return frozenset(words).union(*map(frozenset, pieces))

    # ------------------------------------------------------------------ counting
    def _key(self) -> tuple[Any, ...]:
        return (bool(self.lowercase), self.tokenizer, self.token_pattern or None, self.numbers, str(self.header))

    @staticmethod
    def _string_columns(ds: Dataset) -> list[int]:
        return [i for i, a in enumerate(ds.features) if a.kind == "string"]

    def _counts(self, ds: Dataset) -> tuple[sp.csr_matrix, list[str]]:
        """Counts of the dataset's rows over the words of its string tables (union, sorted)."""
        columns = self._string_columns(ds)
        if not columns:
            raise DatasetError(f"{ds.name}: word-counts needs a string attribute, and the dataset has none")
        parts = []
        for col in columns:
            table = ds.strings.get(col, [])
            entry = table_counts(table, self._key())
            raw = ds.X[:, col]
            codes = np.asarray(raw.toarray() if sp.issparse(raw) else raw, dtype=np.float64).ravel()
            rows = np.where(np.isnan(codes), entry.size, np.nan_to_num(codes, nan=0.0)).astype(np.int64)
            if rows.size and (rows.min() < 0 or rows.max() > entry.size):
                raise DatasetError(f"{ds.name}: string attribute '{ds.features[col].name}' holds a code "
                                   f"outside its table of {entry.size} values")
            parts.append((entry.counts[rows], entry.words))
        if len(parts) == 1:
            return parts[0]
        union = sorted(set().union(*(w for _, w in parts)))
        position = dict(zip(union, range(len(union))))
        total = None
        for counts, words in parts:
            new_index = np.fromiter(map(position.__getitem__, words), dtype=np.int64, count=len(words))
            mapped = remap_columns(counts, new_index, len(union))
            total = mapped if total is None else total + mapped
        return sp.csr_matrix(total), union

    def _other_columns(self, ds: Dataset) -> tuple[list[int], sp.csr_matrix | None]:
        other = [int(i) for i in np.flatnonzero(~ds.features.mask("string"))]
        if not other:
            return other, None
        block = ds.X[:, other]
        return other, sp.csr_matrix(block, dtype=np.float64)

    @staticmethod
    def _training_rows(ds: Dataset) -> np.ndarray | None:
        """The rows that train: a known class and a weight above 0 (a row of weight 0 counts in no model,
        as in the DCM's vocabulary and the linear scaling); None when that is every row."""
        known = np.asarray(ds.weights, dtype=np.float64) > 0
        if ds.y is not None and ds.class_attribute is not None:
            y = np.asarray(ds.y, dtype=np.float64)
            known &= ~np.isnan(y) & (y >= 0)
        return None if known.all() else np.flatnonzero(known)

    def fit_transform_dataset(self, ds: Dataset) -> tuple[sp.csr_matrix, Any]:
        """Learn the vocabulary on ``ds`` (a training part; its rows with a known class and a weight); return
        the counts of every row of ``ds`` and the new schema."""
        self._check()
        counts, words = self._counts(ds)
        V = counts.shape[1]
        # a row whose class is missing is dropped from training (algorithms.md 0.2; the pipeline drops it
        # right after this step): its words must not enter the vocabulary or the remove_top/min_df counts
        labelled = self._training_rows(ds)
        learn = counts if labelled is None else counts[labelled]
        df = np.bincount(learn.indices, minlength=V)
        total = np.asarray(learn.sum(axis=0)).ravel()
        keep = df >= max(int(self.min_df), 1)
        stop = self._stop_set()
        if stop or self.min_length > 1:
            bad = np.fromiter((w in stop or len(w) < self.min_length for w in words), dtype=bool, count=V)
            keep &= ~bad
        if self.remove_top:
            candidates = np.flatnonzero(keep)
            order = candidates[np.lexsort((candidates, -total[candidates]))]
            keep[order[: int(self.remove_top)]] = False
        if self.max_features is not None and keep.sum() > self.max_features:
            candidates = np.flatnonzero(keep)
            order = candidates[np.lexsort((candidates, -total[candidates]))]
            keep[:] = False
            keep[order[: int(self.max_features)]] = True
        chosen = np.flatnonzero(keep)
        self.vocabulary_ = [words[i] for i in chosen]
        self.vocabulary_index_ = dict(zip(self.vocabulary_, range(len(self.vocabulary_))))
        self.document_frequency_ = df[chosen]
        new_index = np.full(V, -1, dtype=np.int64)
        new_index[chosen] = np.arange(len(chosen))
        X = remap_columns(counts, new_index, len(chosen))
        other, block = self._other_columns(ds)
        self.other_columns_ = other
        if block is not None:
            X = sp.hstack([X, block], format="csr")
        feats = ds.features
        builder = AttributeListBuilder()
        for word in self.vocabulary_:
            builder.add(word, "numeric")
        features = builder.build() + feats.take(np.asarray(list(other), dtype=np.int64))
        classes = tuple(ds.require_nominal_class()) if ds.class_attribute is not None else ()
        schema = Schema(features, classes, ds.class_attribute.name if ds.class_attribute else "class")
        self.schema_ = schema
        return X, schema

    def transform_dataset(self, ds: Dataset) -> sp.csr_matrix:
        """Counts of ``ds`` over the learned vocabulary; unseen words are dropped."""
        if not hasattr(self, "vocabulary_"):
            raise ParameterError("word-counts is not fitted yet; call fit_transform_dataset on a training part")
        counts, words = self._counts(ds)
        new_index = np.fromiter(map(self.vocabulary_index_.get, words, itertools.repeat(-1)),
                                dtype=np.int64, count=len(words))
        X = remap_columns(counts, new_index, len(self.vocabulary_))
        other, block = self._other_columns(ds)
        if other != self.other_columns_:
            raise DatasetError(f"{ds.name}: its non-string columns differ from those word-counts was fitted on")
        if block is not None:
            X = sp.hstack([X, block], format="csr")
        return X

    def transform_texts(self, texts: Sequence[str]) -> sp.csr_matrix:
        """Counts of raw texts over the learned vocabulary (no other columns)."""
        if not hasattr(self, "vocabulary_"):
            raise ParameterError("word-counts is not fitted yet; call fit_transform_dataset on a training part")
        tokens = tokenize(texts, lowercase=self.lowercase, tokenizer=self.tokenizer,
                          token_pattern=self.token_pattern, numbers=self.numbers, header=self.header)
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        flat = list(itertools.chain.from_iterable(tokens))
        ids = np.fromiter(map(self.vocabulary_index_.get, flat, itertools.repeat(-1)), dtype=np.int64,
                          count=len(flat))
        rows = np.repeat(np.arange(len(tokens), dtype=np.int64), lengths)
        keep = ids >= 0
        X = sp.csr_matrix((np.ones(int(keep.sum())), (rows[keep], ids[keep])),
                          shape=(len(tokens), len(self.vocabulary_)))
        X.sum_duplicates()
        return X


def text_step_spec(name: str = TEXT_STEP_NAME) -> Any:
    """The registry entry of the text step (used to parse ``--text word-counts:k=v``)."""
    if name != TEXT_STEP_NAME:
        raise UnknownComponentError("text step", name, [TEXT_STEP_NAME], total=1)
    return ComponentSpec(kind="text", name=TEXT_STEP_NAME, factory=WordCounts,
                         description="String attributes to sparse word counts, vocabulary learned on the "
                                     "training part (WEKA StringToWordVector role)",
                         param_grid={})

