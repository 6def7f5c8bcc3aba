"""Data and comparisons shared by the shard-statistics tests (tests/test_shard_statistics.py) and the
cluster tests (tests/test_cluster.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from toolkit.api import SufficientStatistics
from toolkit.data import arff
from toolkit.data.attributes import AttributeListBuilder
from toolkit.data.dataset import Attribute, Dataset

#: every model of the shard protocol, as pipeline strings (nb-bim on a binary task)
MULTINOMIAL = ["nb-multinomial:variant=" + v for v in ("M", "L-M", "TW-L-M", "C-M", "C-L-M", "C-TW-L-M")]
NB_FAMILY = ["nb-weka", "nb-gaussian", "bma-nb"]
COUNT_MODELS = MULTINOMIAL + NB_FAMILY + ["nb-bim"]
#: statistics that hold sums of whole numbers when the data are counts and the weights 1: exactly equal
EXACT_WITH_COUNTS = {"nb-multinomial:variant=M", "nb-multinomial:variant=C-M", "nb-weka", "bma-nb", "nb-bim"}


def word_count_arff(path: Path, n_docs: int = 700, n_words: int = 400, n_classes: int = 3, seed: int = 7,
                    weights: bool = False) -> Path:
    """A sparse word-count ARFF file written here (Zipf-like words, each class boosting its own), with
    instance weights in {0.5, 1, 2.25} when ``weights``."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n_docs)
    base = 1.0 / np.arange(1, n_words + 1) ** 1.1
    boost = rng.random((n_classes, n_words)) < 0.05
    rows, cols = [], []
    for k in range(n_classes):   # a loop over the classes, each drawn at once
        docs = np.flatnonzero(y == k)
        p = base * np.where(boost[k], 8.0, 1.0)
        lengths = rng.poisson(30, len(docs)) + 1
        rows.append(np.repeat(docs, lengths))
        cols.append(rng.choice(n_words, int(lengths.sum()), p=p / p.sum()))
    X = sp.csr_matrix((np.ones(sum(map(len, rows))), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(n_docs, n_words))
    X.sum_duplicates()
    builder = AttributeListBuilder()
    for j in range(n_words):
        builder.add(f"w{j}", "numeric")
    builder.add_attribute(Attribute("class", "nominal", tuple(f"c{k}" for k in range(n_classes))))
    w = rng.choice([0.5, 1.0, 2.25], n_docs) if weights else np.ones(n_docs)
    arff.write(Dataset("generated-counts", builder.build(), X, y, n_words, w), path)
    return path


def ranges(path: Path, parts: int = 7) -> list[Dataset]:
    """The file read back as ``parts`` byte ranges."""
    return [arff.read_range(path, a, b) for a, b in arff.split_ranges(path, parts)]


def _compare(a: object, b: object, exact: bool, where: str) -> None:
    if isinstance(a, SufficientStatistics) or dataclasses.is_dataclass(a):
        assert type(a) is type(b), where
        names = sorted(vars(a)) if not dataclasses.is_dataclass(a) else [f.name for f in dataclasses.fields(a)]
        for name in names:
            if name in ("schema", "_partial_statistics"):
                continue
            _compare(getattr(a, name), getattr(b, name), exact, f"{where}.{name}")
        return
    if sp.issparse(a):
        assert sp.issparse(b) and a.shape == b.shape, where
        a, b = a.toarray(), b.toarray()
    if isinstance(a, np.ndarray):
        b = np.asarray(b)
        assert a.shape == b.shape, f"{where}: shapes {a.shape} and {b.shape}"
        if exact or a.dtype.kind not in "fc":
            assert np.array_equal(a, b), f"{where}: not equal"
        else:   # 1e-12 relative to the statistic's largest magnitude (a sum near 0 has no relative digits)
            scale = float(np.max(np.abs(b))) if b.size else 0.0
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * scale, err_msg=where)
        return
    if isinstance(a, float) and not exact:
        assert abs(a - b) <= 1e-12 * max(abs(a), abs(b)), where
        return
    assert a == b, f"{where}: {a!r} != {b!r}"


def assert_statistics_equal(merged: SufficientStatistics, single: SufficientStatistics, exact: bool) -> None:
    """Every array of two statistics equal (``exact``) or within 1e-12 of each other."""
    _compare(merged, single, exact, type(single).__name__)
