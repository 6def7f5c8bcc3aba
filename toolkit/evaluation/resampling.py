"""Seeded splits: the default random-resampling protocol and the thesis-compatibility protocol.

Default protocol (algorithms.md 5.1.2), for repetition r = 0..R-1 over instances 0..n-1 in file
order: ``perm = numpy.random.default_rng(seed + r).permutation(n)``; the first
``ceil(n * test_fraction)`` (integer arithmetic) are the test part, the rest the training part,
both in permutation order; the first ``ceil(len(train) * validation_fraction)`` of the training
part validate the hyperparameters, the rest fit them. With seed 1 and 10 % test, anyone can
recompute the splits from that sentence.

Thesis protocol (5.1.3): ``java.util.Random(10)``, WEKA's ``Instances.randomize``, WEKA's
10-fold arithmetic; fold 9 is the test part, fold 0 validates, the other 8 fit.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

import numpy as np

from toolkit.errors import ParameterError

__all__ = ["Split", "RandomSplits", "KFoldParts", "ceil_share", "random_splits", "kfold_parts", "thesis_split", "JavaRandom",
           "weka_randomize", "weka_fold", "check_seed", "MAX_REPETITIONS"]


@dataclass(frozen=True)
class Split:
    """One outer split: train = fit + validation parts (indices into the dataset)."""

    repetition: int
    seed: int
    train: np.ndarray
    test: np.ndarray
    fit: np.ndarray
    validation: np.ndarray
    inner: Sequence[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)  # (fit, val) folds

    @property
    def tuning_parts(self) -> Sequence[tuple[np.ndarray, np.ndarray]]:
        """(fit, validation) pairs used to choose hyperparameters."""
        return self.inner if self.inner else [(self.fit, self.validation)]


#: repetitions one run holds at most (runs x datasets x pipelines): each keeps its task and its record in
#: memory until the summary (about 3 kB, so about 3 GB here), and a larger count would exhaust memory or
#: build its task list for hours before the first result
MAX_REPETITIONS = 1_000_000


def ceil_share(n: int, fraction: float) -> int:
    """ceil(n * fraction) in exact arithmetic (0.1 -> (n + 9) // 10, never ceil(0.1 * n))."""
    if not 0 < fraction < 1:
        raise ParameterError(f"a fraction must lie strictly between 0 and 1, not {fraction}")
    f = _exact(fraction)
    return int(-((-n * f.numerator) // f.denominator))


@lru_cache(maxsize=64)
def _exact(fraction: float | Fraction) -> Fraction:
    """The fraction as written (0.1 is 1/10, not the binary double); a run asks for a few, many times."""
    return Fraction(str(fraction)) if isinstance(fraction, float) else Fraction(fraction)


def _stratified_head(order: np.ndarray, y: np.ndarray, count: int) -> np.ndarray:
    """``count`` indices taken from ``order`` so that each class keeps its share (largest remainder)."""
    classes, per_class = np.unique(y[order], return_counts=True)
    # the shares per_class * count / len(order) in integer arithmetic: whole parts and remainders (in units
    # of 1 / len(order)); float remainders ranked equal shares apart (28 * 16 / 48 - 9 > 4 * 16 / 48 - 1),
    # so a tie went to whichever class rounding favoured instead of the first (algorithms.md 0.2)
    scaled = per_class.astype(object) * count   # Python integers: no overflow
    take = np.array([int(v // len(order)) for v in scaled], dtype=np.int64)
    fractional = np.array([int(v % len(order)) for v in scaled], dtype=np.int64)
    remainder = count - int(take.sum())
    if remainder > 0:
        ranked = np.lexsort((np.arange(len(classes)), -fractional))
        take[ranked[:remainder]] += 1
    # the first take[c] of each class in ``order``: a position's rank among its class's positions (one stable
    # sort; a scan per class took K passes over the data, 45 s for 100,000 classes of a million instances)
    labels = y[order]
    code = np.searchsorted(classes, labels)
    by_class = np.argsort(code, kind="stable")
    starts = np.concatenate([[0], np.cumsum(per_class)[:-1]])
    rank = np.empty(len(order), dtype=np.int64)
    rank[by_class] = np.arange(len(order)) - np.repeat(starts, per_class)
    return order[rank < take[code]]


def _split_head(order: np.ndarray, count: int, y: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(head, rest) of ``order``; stratified by ``y`` when given, both kept in ``order``'s order."""
    if y is None:
        return order[:count], order[count:]
    head = _stratified_head(order, y, count)
    mask = np.isin(order, head)
    return order[mask], order[~mask]


class KFoldParts(Sequence[tuple[np.ndarray, np.ndarray]]):
    """k (fit, validation) folds that hold the instances once (the folds one after the other) and make a
    fold's fit part when it is asked for: k lists of n - n/k indices would take O(k n) memory and time,
    20 GB for leave-one-out on 50,000 instances."""

    def __init__(self, ordered: np.ndarray, bounds: np.ndarray):
        self._ordered, self._bounds = ordered, bounds

    def __len__(self) -> int:
        return len(self._bounds) - 1

    def __getitem__(self, f):  # type: ignore[no-untyped-def, override]
        if isinstance(f, slice):
            return [self[i] for i in range(*f.indices(len(self)))]
        f = int(f)
        if f < 0:
            f += len(self)
        if not 0 <= f < len(self):
            raise IndexError(f"fold {f} of {len(self)}")
        lo, hi = self._bounds[f], self._bounds[f + 1]
        return np.concatenate([self._ordered[:lo], self._ordered[hi:]]), self._ordered[lo:hi]


def kfold_parts(train: np.ndarray, k: int, y: np.ndarray | None = None) -> KFoldParts:
    """k (fit, validation) folds of ``train`` with WEKA's fold sizes; stratified when ``y`` is given. A fit
    part is the other folds in fold order."""
    if k < 2 or k > len(train):
        raise ParameterError(f"inner folds must be between 2 and the training size ({len(train)}), not {k}")
    n = len(train)
    if y is not None:
        # deal each class round-robin over the folds, keeping permutation order within a fold
        by_class = np.argsort(y[train], kind="stable")
        fold_of = np.empty(n, dtype=np.int64)
        fold_of[by_class] = np.arange(n) % k
        ordered = train[np.argsort(fold_of, kind="stable")]
        bounds = np.concatenate([[0], np.cumsum(np.bincount(fold_of, minlength=k))])
    else:
        # WEKA's folds are consecutive runs of the order: n // k each, the first n % k one more
        ordered = np.asarray(train)
        sizes = np.full(k, n // k, dtype=np.int64)
        sizes[: n % k] += 1
        bounds = np.concatenate([[0], np.cumsum(sizes)])
    return KFoldParts(ordered, bounds)


def check_validation_share(n_train: int, validation_fraction: float) -> None:
    """A validation part must leave data to fit on: with two or more training instances, a share that
    takes them all would tune on the very instances it fits (one instance is fitted and validated on
    itself, the only split there is)."""
    if n_train >= 2 and ceil_share(n_train, validation_fraction) >= n_train:
        raise ParameterError(f"validation fraction {validation_fraction} leaves no data to fit on for {n_train} "
                             f"training instances")


class RandomSplits(Sequence[Split]):
    """The default protocol's splits as a sequence that makes split r when asked for it (from seed + r),
    so that a run of many repetitions holds none of them beyond those in use (a run of 2,000,000 repetitions
    built 2.7 GB of index arrays before its first one). The checks that can fail are done here, once: every
    split of a protocol has the same sizes."""

    def __init__(self, n: int, repetitions: int, seed: int, test_fraction: float, validation_fraction: float,
                 y: np.ndarray | None = None, inner_folds: int | None = None):
        if n < 2:
            raise ParameterError(f"a dataset needs at least 2 instances for a train/test split, has {n}")
        if not 1 <= repetitions <= MAX_REPETITIONS:
            raise ParameterError(f"repetitions must be from 1 to {MAX_REPETITIONS:,}, not {repetitions:,}")
        self.n, self.repetitions, self.seed = int(n), int(repetitions), int(seed)
        self.test_fraction, self.validation_fraction = test_fraction, validation_fraction
        self.y, self.inner_folds = y, inner_folds
        self.n_test = ceil_share(n, test_fraction)
        if self.n_test >= n:
            raise ParameterError(f"test fraction {test_fraction} leaves no training data for {n} instances")
        check_validation_share(n - self.n_test, validation_fraction)
        self._last: tuple[int, Split] | None = None
        self._stratify = False   # set on a copy without its class vector (without_classes)
        self.make(0)   # what could fail (inner folds, stratification) fails now, before any repetition

    def __len__(self) -> int:
        return self.repetitions

    def __getitem__(self, r):  # type: ignore[no-untyped-def, override]
        if isinstance(r, slice):
            return [self.make(i) for i in range(*r.indices(self.repetitions))]
        r = int(r)
        if r < 0:
            r += self.repetitions
        if not 0 <= r < self.repetitions:
            raise IndexError(f"repetition {r} of {self.repetitions}")
        if self._last is not None and self._last[0] == r:  # a repetition's split is asked for by its task and
            return self._last[1]                            # by its record's header: made once for both
        split = self.make(r)
        self._last = (r, split)
        return split

    @property
    def train_size(self) -> int:
        return self.n - self.n_test

    def without_classes(self) -> RandomSplits:
        """A copy that leaves out the class vector it stratifies by (and the split made last), to travel to
        a Dask worker: that worker has the dataset, so :meth:`with_classes` puts ``ds.y`` back there. A task
        that carried the vector itself sent the whole class column with every repetition."""
        light = copy.copy(self)
        light._last = None
        light._stratify = self.y is not None or getattr(self, "_stratify", False)
        light.y = None
        return light

    def with_classes(self, y: np.ndarray) -> RandomSplits:
        """The splits of :meth:`without_classes` again, stratified by ``y`` when the original was."""
        if not getattr(self, "_stratify", False):
            return self
        full = copy.copy(self)
        full.y, full._stratify, full._last = np.asarray(y), False, None
        return full

    def make(self, r: int) -> Split:
        split_seed = self.seed + r
        perm = np.random.default_rng(split_seed).permutation(self.n)
        test, train = _split_head(perm, self.n_test, self.y)
        n_val = ceil_share(len(train), self.validation_fraction)
        validation, fit = _split_head(train, n_val, self.y) if n_val < len(train) else (train, train)
        inner = kfold_parts(train, self.inner_folds, self.y) if self.inner_folds else []
        return Split(r, split_seed, train, test, fit, validation, inner)


def random_splits(n: int, repetitions: int = 10, seed: int = 1, test_fraction: float = 0.1,
                  validation_fraction: float = 0.1, y: np.ndarray | None = None,
                  inner_folds: int | None = None) -> RandomSplits:
    """The default protocol's splits; ``y`` stratifies them, ``inner_folds`` replaces the fixed
    validation part by k-fold tuning inside the training part. Made when asked for (:class:`RandomSplits`)."""
    return RandomSplits(n, repetitions, seed, test_fraction, validation_fraction, y, inner_folds)


# ---------------------------------------------------------------------------- thesis protocol

class JavaRandom:
    """java.util.Random: the 48-bit linear congruential generator."""

    _MULT = 0x5DEECE66D
    _MASK = (1 << 48) - 1

    def __init__(self, seed: int):
        self.seed = (seed ^ self._MULT) & self._MASK

    def next(self, bits: int) -> int:
        self.seed = (self.seed * self._MULT + 0xB) & self._MASK
        value = self.seed >> (48 - bits)
        if value >= 1 << 31:  # Java's (int) cast: the low 32 bits, signed
            value -= 1 << 32
        return value

    def next_int(self, bound: int) -> int:
        if bound <= 0:
            raise ValueError("bound must be positive")
        if bound & -bound == bound:  # a power of two
            return (bound * self.next(31)) >> 31
        while True:
            bits = self.next(31)
            val = bits % bound
            if bits - val + (bound - 1) < 1 << 31:
                return val


def weka_randomize(n: int, seed: int) -> np.ndarray:
    """WEKA ``Instances.randomize(new Random(seed))``: swap(j, nextInt(j+1)) for j = n-1 .. 1."""
    order = list(range(n))
    rnd = JavaRandom(seed)
    for j in range(n - 1, 0, -1):
        k = rnd.next_int(j + 1)
        order[j], order[k] = order[k], order[j]
    return np.array(order, dtype=np.int64)


def weka_fold(n: int, folds: int, fold: int) -> slice:
    """WEKA ``testCV``: fold f has n//k + [f < n % k] instances, starting at f*(n//k) + min(f, n % k)."""
    size = n // folds + (1 if fold < n % folds else 0)
    start = fold * (n // folds) + min(fold, n % folds)
    return slice(start, start + size)


def thesis_split(n: int, seed: int = 10, folds: int = 10, fold: int = 9) -> Split:
    """The thesis's single reported split: test = fold 9, validation = fold 0, fit = the rest. Fewer
    instances than folds leave folds empty (fold 9 of 9 instances, the test part): WEKA's ``testCV`` refuses
    them ("Can't have more folds than instances!"), and so does this."""
    if n < folds:
        raise ParameterError(f"the thesis protocol's {folds} folds need at least {folds} instances, not {n} "
                             f"(its test fold would be empty); use the random protocol")
    order = weka_randomize(n, seed)
    test = order[weka_fold(n, folds, fold)]
    val_fold = (fold + 1) % folds
    validation = order[weka_fold(n, folds, val_fold)]
    fit = np.concatenate([order[weka_fold(n, folds, f)] for f in range(folds) if f not in (fold, val_fold)])
    train = np.concatenate([order[weka_fold(n, folds, f)] for f in range(folds) if f != fold])
    return Split(0, seed, train, test, fit, validation)


def check_seed(seed: object) -> None:
    """A seed of ``default_rng(seed + r)``: numpy takes non-negative whole numbers only."""
    from toolkit.errors import ParameterError

    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"seed must be a whole number >= 0, not {seed!r}")
