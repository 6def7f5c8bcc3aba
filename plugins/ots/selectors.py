"""The ``ots`` and ``random-sts`` example selectors (algorithms.md 4.1, 4.2), sharing one memoised search."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.api import ExampleSelectorBase
from toolkit.errors import CapabilityError, ParameterError

from toolkit.plugins.ots.bim import check_alpha, check_features, presence, resolve_threshold
from toolkit.plugins.ots.search import OTSResult, _check_stops, optimal_training_set, task_spec

__all__ = ["OTSSelector", "RandomSTSSelector"]

# ----------------------------------------------------------------------------- memo

_CACHE: OrderedDict[tuple[Any, ...], OTSResult] = OrderedDict()
_CACHE_SIZE = 32


def _fingerprint(B: sp.csr_matrix, positive: np.ndarray, negative: np.ndarray) -> str:
    """Digest of the presence pattern and the class masks (the OTS depends on nothing else)."""
    h = hashlib.blake2b(digest_size=20)
    h.update(np.asarray(B.shape, dtype=np.int64).tobytes())
    for arr in (B.indptr, B.indices, np.packbits(positive), np.packbits(negative)):
        h.update(np.ascontiguousarray(arr))  # the buffer itself: no copy of the corpus
    return h.hexdigest()


def _remember(key: tuple[Any, ...], result: OTSResult) -> None:
    _CACHE[key] = result
    _CACHE.move_to_end(key)
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)


def _cached_ots(X: Any, positive: np.ndarray, negative: np.ndarray, params: dict[str, Any]) -> OTSResult:
    """The OTS search, memoised on (data, parameters): OTS Bayes, random STS and OTS CMLS evaluated on
    the same training part share one search instead of three."""
    B = presence(X)
    key = (_fingerprint(B, positive, negative), tuple(sorted(params.items())))
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    result = optimal_training_set(B, positive, negative, **params)
    _remember(key, result)
    return result


# ----------------------------------------------------------------------------- selectors

def _masks(y: Any, positive: int, who: str) -> tuple[np.ndarray, np.ndarray]:
    codes = np.asarray(y)
    if codes.dtype.kind == "f":
        codes = np.where(np.isnan(codes), -1, codes)
    codes = codes.astype(np.int64)
    pos = codes == int(positive)
    if not pos.any():
        raise CapabilityError(f"{who}: the training part has no document of the positive class (code {positive}); "
                              f"the OTS starts from the positives")
    return pos, (codes >= 0) & ~pos


class _OTSParams(ExampleSelectorBase):
    """The OTS search's parameters, shared by the OTS and the random STS of its size."""

    def __init__(self, *, alpha: float = 1.0, threshold: float = 1.0, step: float = 0.01, init: str = "wts",
                 scorer: str = "sts", patience: int | None = None, max_size: int | None = None,
                 evaluate: str = "wts", features: str = "positive", positive: int = 1):
        self.evaluate = evaluate
        self.features = features
        self.alpha = alpha
        self.threshold = threshold
        self.step = step
        self.init = init
        self.scorer = scorer
        self.patience = patience
        self.max_size = max_size
        self.positive = positive

    _who = "ots"

    def _check_params(self) -> None:
        """Every parameter's range and choice, checked before any data (toolkit.api.validate_component):
        the search's own checks (``task_spec`` with one positive stands for any number of them)."""
        params = self._ots_params(self._who)
        try:
            task_spec(1, alpha=params["alpha"], threshold=params["threshold"], step=params["step"],
                      init=params["init"], scorer=params["scorer"], evaluate=params["evaluate"],
                      features=params["features"])
            _check_stops(params["patience"], params["max_size"])
        except ParameterError as exc:
            text = str(exc)
            raise ParameterError(text if text.startswith(self._who) else f"{self._who}: {text}") from None
        if isinstance(self.positive, bool) or not isinstance(self.positive, (int, np.integer)) or self.positive < 0:
            raise ParameterError(f"{self._who}: positive must be a class code >= 0, not {self.positive!r}")

    def _ots_params(self, who: str) -> dict[str, Any]:
        threshold = resolve_threshold(self.threshold, who)
        if threshold == "loo":
            raise ParameterError(f"{who}: threshold must be a number here (the OTS replaces the threshold search)")
        return {"alpha": check_alpha(self.alpha), "threshold": float(threshold), "step": self.step,
                "init": self.init, "scorer": self.scorer, "patience": self.patience, "max_size": self.max_size,
                "evaluate": self.evaluate, "features": check_features(self.features, who)}

    def _record(self, result: OTSResult) -> None:
        self.trace_ = result.trace()
        self.step_ = result.step
        self.ots_size_ = len(result.positives) + result.n_negatives
        self.ots_negatives_ = result.n_negatives
        self.added_ = result.added


class OTSSelector(_OTSParams):
    """All positives plus the negatives closest to them, chosen by leave-one-out AP (algorithms.md 4.1).

    ``step`` is M (a share of the positives below 1, else a count); ``init`` the first scorer ("wts":
    BIM on the whole training set, "sts": on the positives); ``scorer`` "sts" retrains on the STS each
    round, "wts_fixed" keeps the first; ``patience`` stops after that many rounds without a better AP;
    ``max_size`` caps the STS; ``evaluate`` "wts" (default, algorithms.md 4.1 step 3c, revision 2)
    scores a candidate STS by the AP of every training document (leave-one-out for STS members, the
    STS-trained BIM for the others), "sts" by the AP of the STS members alone (revision 1; it peaks at
    the first round when M is small against the positives, see docs/plugins.md); ``features`` the BIM
    feature set ("positive", default: the features of the positives; "all"). After ``select``:
    ``trace_`` (STS size and AP per round, the paper's Figure 3), ``ots_size_``, ``ots_negatives_``,
    ``added_`` (negatives in the order they were added).
    """

    def select(self, X: Any, y: Any, random_state: int | None = None) -> np.ndarray:
        params = self._ots_params("ots")
        pos, neg = _masks(y, self.positive, "ots")
        result = _cached_ots(X, pos, neg, params)
        self._record(result)
        return result.rows()

    def select_many(self, X: Any, y: Any = None, positives: Any = None, *, labels: Any = None,
                    n_jobs: int | None = None, backend: str = "threads") -> dict[Any, np.ndarray]:
        """One OTS per term over the same corpus: each class code in ``positives`` (default: every
        class in ``y``) against the other labelled rows, or each column of the multi-label indicator
        matrix ``labels`` against the rest. The searches share the corpus and its column index and run
        ``n_jobs`` at a time in ``backend`` ("threads" or "processes", see ``terms.search_terms``); each
        gives the OTS its term's ``select`` gives. Returns term -> OTS rows; ``traces_`` holds term ->
        trace, and the memo serves a later ``select`` of the same term."""
        from toolkit.plugins.ots.terms import search_terms, term_masks

        params = self._ots_params("ots")
        masks = term_masks(y, positives, labels)
        for term, (pos, _) in masks.items():
            if not pos.any():
                raise CapabilityError(f"ots: term {term!r} has no positive document; the OTS starts from the positives")
        results = search_terms(X, masks, n_jobs=n_jobs, backend=backend, **params)
        B = presence(X)
        key_params = tuple(sorted(params.items()))
        for term, result in results.items():
            _remember((_fingerprint(B, *masks[term]), key_params), result)
        self.traces_ = {term: r.trace() for term, r in results.items()}
        return {term: r.rows() for term, r in results.items()}


class RandomSTSSelector(_OTSParams):
    """All positives plus as many random negatives as the OTS holds (algorithms.md 4.2), drawn without
    replacement with ``default_rng(random_state)``; ``n_negatives`` fixes the number instead."""

    def __init__(self, *, n_negatives: int | None = None, random_state: int | None = None, alpha: float = 1.0,
                 threshold: float = 1.0, step: float = 0.01, init: str = "wts", scorer: str = "sts",
                 patience: int | None = None, max_size: int | None = None, evaluate: str = "wts",
                 features: str = "positive", positive: int = 1):
        super().__init__(alpha=alpha, threshold=threshold, step=step, init=init, scorer=scorer, patience=patience,
                         max_size=max_size, evaluate=evaluate, features=features, positive=positive)
        self.n_negatives = n_negatives
        self.random_state = random_state

    _who = "random-sts"

    def _check_params(self) -> None:
        super()._check_params()
        n = self.n_negatives
        if n is not None and (isinstance(n, bool) or not isinstance(n, (int, float, np.integer, np.floating))
                              or int(n) != n or n < 0):
            raise ParameterError(f"random-sts: n_negatives must be a whole number >= 0, not {n!r}")

    def select(self, X: Any, y: Any, random_state: int | None = None) -> np.ndarray:
        pos, neg = _masks(y, self.positive, "random-sts")
        negatives = np.flatnonzero(neg)
        if self.n_negatives is None:
            result = _cached_ots(X, pos, neg, self._ots_params("random-sts"))
            self._record(result)
            k = result.n_negatives
        else:
            if int(self.n_negatives) != self.n_negatives or self.n_negatives < 0:
                raise ParameterError(f"random-sts: n_negatives must be a whole number >= 0, not {self.n_negatives!r}")
            k = min(int(self.n_negatives), len(negatives))
        seed = self.random_state if self.random_state is not None else random_state
        rng = np.random.default_rng(0 if seed is None else int(seed))
        chosen = rng.choice(negatives, size=k, replace=False) if k else np.zeros(0, dtype=np.int64)
        self.n_negatives_ = int(k)
        return np.sort(np.concatenate([np.flatnonzero(pos), chosen]))
