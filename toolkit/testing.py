"""Conformance checks for classifiers, runnable by plugin authors on their own components.

Modelled on scikit-learn's ``check_estimator`` and WEKA's ``AbstractClassifierTest``::

    from toolkit.testing import parametrize_with_checks

    @parametrize_with_checks(["my-classifier"])
    def test_conformance(name, check):
        check(name)

or ``toolkit.testing.check_classifier("my-classifier")`` to run them all at once. Each check builds
small synthetic data that fits the component's declared capabilities, and runs the component
through the same :class:`toolkit.Pipeline` the harness uses.
"""

from __future__ import annotations

import copy
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.api import Schema
from toolkit.data.dataset import Attribute, Dataset
from toolkit.errors import CapabilityError, ParameterError, ToolkitError

__all__ = ["CHECKS", "SELECTOR_CHECKS", "EXAMPLE_SELECTOR_CHECKS", "check_classifier", "parametrize_with_checks",
           "make_dataset"]


def _spec(name: str) -> Any:
    from toolkit.plugin_host.components import get_spec

    return get_spec("classifier", name)


def make_dataset(n: int = 60, *, nominal: bool = True, missing: bool = False, sparse: bool = False, n_classes: int = 3,
                 seed: int = 0, labels: tuple[str, ...] | None = None) -> Dataset:
    """A small dataset whose classes depend on the features: non-negative count-like numeric columns
    (so multinomial models accept them), optional nominal columns and missing values."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    rng.shuffle(y)
    rates = 0.5 + 2.0 * (np.arange(n_classes)[:, None] == np.arange(6)[None, :] % n_classes)
    numeric = rng.poisson(rates[y]).astype(float)
    attrs = [Attribute(f"w{j}", "numeric") for j in range(6)]
    columns = [numeric]
    if nominal:
        nom = np.column_stack([(y + (rng.random(n) < 0.2)) % 3, rng.integers(0, 2, n)]).astype(float)
        columns.append(nom)
        attrs += [Attribute("colour", "nominal", ("red", "green", "blue")), Attribute("flag", "nominal", ("no", "yes"))]
    X = np.hstack(columns)
    if missing:
        X[rng.random(X.shape) < 0.1] = np.nan
    labels = labels or tuple(f"c{k}" for k in range(n_classes))
    attrs.append(Attribute("class", "nominal", labels))
    if sparse:
        rows, cols = np.nonzero((X != 0) | np.isnan(X))
        X = sp.csr_matrix((X[rows, cols], (rows, cols)), shape=X.shape)
    return Dataset(relation="conformance", attributes=tuple(attrs), X=X, y=y.astype(np.int64),
                   class_index=len(attrs) - 1, weights=np.ones(n))


def _data_for(name: str, **kw: Any) -> Dataset:
    caps = _spec(name).capabilities
    kw.setdefault("nominal", caps.nominal)
    kw.setdefault("n_classes", 3 if caps.multiclass else 2)
    return make_dataset(**kw)


def _fit(name: str, ds: Dataset, **params: Any) -> Any:
    from toolkit.models.pipeline import Pipeline

    spec_params = ",".join(f"{k}={v}" for k, v in params.items())
    return Pipeline(name + (":" + spec_params if spec_params else ""), tune=False).fit(ds, seed=0)


def _outputs(fitted: Any, ds: Dataset) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    pred = fitted.predict(ds)
    return pred.y_pred, pred.proba, pred.scores


# ----------------------------------------------------------------------------- the checks

def check_fit_returns_self_and_keeps_inputs(name: str) -> None:
    ds = _data_for(name)
    clf = _spec(name).create()
    X, y = ds.X.copy(), ds.y.copy()
    kwargs = {"schema": Schema.from_dataset(ds)} if "schema" in _fit_params(clf) else {}
    assert clf.fit(X, y, **kwargs) is clf, "fit must return self"
    assert np.array_equal(X, ds.X, equal_nan=True) and np.array_equal(y, ds.y), "fit must not modify X or y"
    assert hasattr(clf, "classes_"), "fit must set classes_"


def _fit_params(clf: Any) -> set[str]:
    import inspect

    return set(inspect.signature(clf.fit).parameters)


def check_refit_is_identical(name: str) -> None:
    ds = _data_for(name)
    a = _outputs(_fit(name, ds), ds)
    b = _outputs(_fit(name, ds), ds)
    for u, v in zip(a, b):
        assert (u is None and v is None) or np.array_equal(u, v), "refitting on the same data must give the same model"


def check_probabilities_are_valid(name: str) -> None:
    ds = _data_for(name)
    fitted = _fit(name, ds)
    y_pred, proba, scores = _outputs(fitted, ds)
    K = len(ds.classes)
    if _spec(name).capabilities.probabilities:
        assert proba is not None and proba.shape == (ds.n_instances, K)
        assert np.all(np.isfinite(proba)) and np.all(proba >= 0)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    basis = scores if scores is not None else proba
    assert basis is not None, "a classifier needs predict_proba or decision_function"
    classes = np.asarray(fitted.classifier.classes_)
    direct = np.asarray(fitted.classifier.predict(fitted.transform(ds)))
    assert np.array_equal(direct.astype(np.int64), classes[np.argmax(scores if scores is not None else proba,
                                                                     axis=1)]), \
        "predict must equal classes_[argmax] of the scores (ties to the lowest index)"


def check_label_types(name: str) -> None:
    """String labels and non-contiguous integer labels work without a schema, or raise CapabilityError."""
    ds = _data_for(name, nominal=False)
    X = ds.X if not sp.issparse(ds.X) else ds.X.toarray()
    for labels in (np.array(["b", "a", "c"])[ds.y], np.array([7, 2, 11])[ds.y]):
        clf = _spec(name).create()
        try:
            clf.fit(X, labels)
        except CapabilityError:
            continue
        pred = clf.predict(X)
        assert set(np.unique(pred)) <= set(np.unique(labels)), "predictions must be among the training labels"
        assert list(clf.classes_) == sorted(set(labels.tolist())), "classes_ must be the sorted labels"


def check_single_class(name: str) -> None:
    ds = _data_for(name)
    single = ds.subset(np.flatnonzero(ds.y == 0))
    try:
        fitted = _fit(name, single)
    except CapabilityError:
        return
    except IndexError as exc:  # scikit-learn#17926
        raise AssertionError(f"single-class training raised IndexError: {exc}") from exc
    y_pred, proba, _ = _outputs(fitted, ds)
    assert len(y_pred) == ds.n_instances
    if proba is not None:
        assert np.all(np.isfinite(proba))


def check_unseen_nominal_value(name: str) -> None:
    if not _spec(name).capabilities.nominal:
        return
    ds = _data_for(name, nominal=True)
    col = [a.name for a in ds.features].index("colour")
    train = ds.subset(np.flatnonzero(ds.X[:, col] != 2))  # "blue" never seen in training
    fitted = _fit(name, train)
    y_pred, proba, _ = _outputs(fitted, ds)
    assert len(y_pred) == ds.n_instances
    if proba is not None:
        assert np.all(np.isfinite(proba))


def check_capabilities_hold(name: str) -> None:
    """Declared inputs work; undeclared ones are refused with CapabilityError before fitting."""
    caps = _spec(name).capabilities
    dense = _data_for(name)
    sparse = _data_for(name, sparse=True)
    if caps.sparse:
        a, b = _outputs(_fit(name, dense), dense), _outputs(_fit(name, sparse), sparse)
        assert np.array_equal(a[0], b[0]), "sparse and dense input must give the same predictions"
        if a[1] is not None:
            np.testing.assert_allclose(a[1], b[1], rtol=1e-7, atol=1e-9)
    else:
        _expect_refusal(name, sparse, "sparse")
    with_missing = _data_for(name, missing=True)
    if caps.missing:
        y_pred, proba, _ = _outputs(_fit(name, with_missing), with_missing)
        assert proba is None or np.all(np.isfinite(proba))
    else:
        _expect_refusal(name, with_missing, "missing")
    if not caps.nominal:
        _expect_refusal(name, make_dataset(nominal=True, n_classes=3 if caps.multiclass else 2), "nominal")


def _expect_refusal(name: str, ds: Dataset, what: str) -> None:
    try:
        _fit(name, ds)
    except CapabilityError:
        return
    raise AssertionError(f"{name} does not declare '{what}' but did not refuse such data with CapabilityError")


def check_weights_equal_duplicates(name: str) -> None:
    if not _spec(name).capabilities.sample_weight:
        return
    ds = _data_for(name)
    counts = (np.arange(ds.n_instances) % 3) + 1
    weighted = copy.copy(ds)
    weighted.weights = counts.astype(float)
    duplicated = ds.subset(np.repeat(np.arange(ds.n_instances), counts))
    a = _outputs(_fit(name, weighted), ds)
    b = _outputs(_fit(name, duplicated), ds)
    if a[1] is not None:
        np.testing.assert_allclose(a[1], b[1], rtol=1e-6, atol=1e-9)
    else:
        np.testing.assert_allclose(a[2], b[2], rtol=1e-6, atol=1e-9)


def check_params_roundtrip(name: str) -> None:
    spec = _spec(name)
    clf = spec.create()
    params = clf.get_params()
    assert set(params) == set(spec.parameters()), "get_params must return exactly the constructor's parameters"
    assert clf.set_params(**params) is clf, "set_params must return self"
    ds = _data_for(name)
    rebuilt = spec.factory(**params)
    kwargs = {"schema": Schema.from_dataset(ds)} if "schema" in _fit_params(clf) else {}
    a = clf.fit(ds.X, ds.y, **kwargs).predict(ds.X)
    b = rebuilt.fit(ds.X, ds.y, **kwargs).predict(ds.X)
    assert np.array_equal(a, b), "factory(**get_params()) must predict the same"
    try:
        clf.set_params(no_such_parameter=1)
    except (ParameterError, ValueError, TypeError):
        pass
    else:
        raise AssertionError("set_params must refuse an unknown parameter")


def check_model_file_roundtrip(name: str) -> None:
    from toolkit.models.model_file import load_model, save_model

    ds = _data_for(name)
    fitted = _fit(name, ds)
    y_pred, proba, scores = _outputs(fitted, ds)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "m.tkm"
        save_model(fitted, ds, path)
        pred = load_model(path).predict(ds)
    assert np.array_equal(pred.y_pred, y_pred)
    for before, after in ((proba, pred.proba), (scores, pred.scores)):
        assert (before is None and after is None) or np.array_equal(before, after), \
            "a model read back from its file must predict bit-identically"


def check_test_labels_are_not_used(name: str) -> None:
    ds = _data_for(name)
    fitted = _fit(name, ds)
    scrambled = copy.copy(ds)
    scrambled.y = np.random.default_rng(5).permutation(ds.y)
    a, b = _outputs(fitted, ds), _outputs(fitted, scrambled)
    for u, v in zip(a, b):
        assert (u is None and v is None) or np.array_equal(u, v), "predictions must not depend on test labels"


def check_random_state_reproduces(name: str) -> None:
    if "random_state" not in _spec(name).parameters():
        return
    ds = _data_for(name)
    a = _outputs(_fit(name, ds, random_state=3), ds)
    b = _outputs(_fit(name, ds, random_state=3), ds)
    for u, v in zip(a, b):
        assert (u is None and v is None) or np.array_equal(u, v), "the same random_state must give the same model"


def check_numeric_extremes(name: str) -> None:
    """Constant columns, an all-missing column (if missing values are declared), and values near 1e300
    or 1e-300 (in one column, and in every numeric column) give finite probabilities that sum to 1
    within 1e-9 and finite-or-infinite (never NaN) scores; or a clear refusal (a ToolkitError)."""
    caps = _spec(name).capabilities
    base = _data_for(name)
    numeric = [j for j, a in enumerate(base.features) if a.kind == "numeric"]
    cases = []
    X = base.X.astype(float).copy()
    X[:, numeric[0]] = 3.0  # a constant column
    if caps.missing:
        X[:, numeric[1]] = np.nan
    for scale in (1.0, 1e300, 1e-300):
        one = X.copy()
        one[:, numeric[2]] *= scale
        cases.append((f"one column scaled by {scale:g}", one))
        every = base.X.astype(float).copy()
        every[:, numeric] *= scale
        cases.append((f"every numeric column scaled by {scale:g}", every))
    for what, values in cases:
        data = copy.copy(base)
        data.X = values
        try:
            _, proba, scores = _outputs(_fit(name, data), data)
        except ToolkitError:
            continue  # a clear refusal is acceptable; a silent NaN or rows that do not sum to 1 are not
        if proba is not None:
            assert np.all(np.isfinite(proba)) and np.all(proba >= 0), f"non-finite or negative probabilities ({what})"
            assert np.allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-9), f"probabilities do not sum to 1 ({what})"
        if scores is not None:
            assert not np.any(np.isnan(scores)), f"NaN in scores ({what})"


CHECKS: tuple[Callable[[str], None], ...] = (
    check_fit_returns_self_and_keeps_inputs,
    check_refit_is_identical,
    check_probabilities_are_valid,
    check_label_types,
    check_single_class,
    check_unseen_nominal_value,
    check_capabilities_hold,
    check_weights_equal_duplicates,
    check_params_roundtrip,
    check_model_file_roundtrip,
    check_test_labels_are_not_used,
    check_random_state_reproduces,
    check_numeric_extremes,
)


# ----------------------------------------------------------------------------- feature selectors

def _fs_spec(name: str) -> Any:
    from toolkit.plugin_host.components import get_spec

    return get_spec("feature-selector", name)


def _fs_data(name: str, **kw: Any) -> Dataset:
    caps = _fs_spec(name).capabilities
    kw.setdefault("nominal", caps.nominal)
    kw.setdefault("n_classes", 3 if caps.multiclass else 2)
    return make_dataset(n=80, **kw)


def _fs_fit(name: str, ds: Dataset) -> Any:
    selector = _fs_spec(name).create()
    kwargs = {"schema": Schema.from_dataset(ds)} if "schema" in _fit_params(selector) else {}
    return selector.fit(ds.X, ds.y, **kwargs), kwargs


def check_selector_support(name: str) -> None:
    ds = _fs_data(name)
    X, y = (ds.X.copy() if not sp.issparse(ds.X) else ds.X.copy()), ds.y.copy()
    selector, _ = _fs_fit(name, ds)
    support = np.asarray(selector.support_)
    if support.dtype == bool:
        support = np.flatnonzero(support)
    assert support.ndim == 1 and np.all(np.diff(support) > 0), "support_ must be sorted, distinct column indices"
    assert support.size == 0 or (support.min() >= 0 and support.max() < ds.n_features)
    if hasattr(selector, "scores_"):
        assert len(selector.scores_) == ds.n_features, "scores_ must have one score per column"
    out = selector.transform(ds.X)
    assert out.shape == (ds.n_instances, len(support))
    assert (np.array_equal(ds.X, X, equal_nan=True) if not sp.issparse(X) else (ds.X != X).nnz == 0) \
        and np.array_equal(ds.y, y), "fit must not modify its inputs"


def check_selector_is_deterministic_and_state_roundtrips(name: str) -> None:
    ds = _fs_data(name)
    a, _ = _fs_fit(name, ds)
    b, _ = _fs_fit(name, ds)
    assert np.array_equal(np.asarray(a.support_), np.asarray(b.support_)), "refitting must select the same columns"
    if hasattr(a, "get_state"):
        meta, arrays = a.get_state()
        rebuilt = _fs_spec(name).factory(**a.get_params())
        rebuilt._set_state(meta, arrays)
        assert np.array_equal(np.asarray(rebuilt.support_), np.asarray(a.support_))


def check_selector_sparse_equals_dense(name: str) -> None:
    if not _fs_spec(name).capabilities.sparse:
        return
    dense, _ = _fs_fit(name, _fs_data(name))
    sparse, _ = _fs_fit(name, _fs_data(name, sparse=True))
    assert np.array_equal(np.asarray(dense.support_), np.asarray(sparse.support_)), \
        "sparse and dense input must select the same columns"


SELECTOR_CHECKS: tuple[Callable[[str], None], ...] = (
    check_selector_support,
    check_selector_is_deterministic_and_state_roundtrips,
    check_selector_sparse_equals_dense,
)


# ----------------------------------------------------------------------------- example selectors

def _es_spec(name: str) -> Any:
    from toolkit.plugin_host.components import get_spec

    return get_spec("example-selector", name)


def check_example_selection(name: str) -> None:
    """Indices into the training part (distinct), non-negative weights, same result for the same seed."""
    spec = _es_spec(name)
    ds = make_dataset(n=120, nominal=spec.capabilities.nominal, n_classes=2 if not spec.capabilities.multiclass else 3,
                      seed=4)
    if not spec.capabilities.sparse:
        X = ds.X
    else:
        X = sp.csr_matrix(np.nan_to_num(ds.X))
    first = spec.create().select(X, ds.y, random_state=7)
    again = spec.create().select(X, ds.y, random_state=7)
    rows, weights = first if isinstance(first, tuple) else (first, None)
    rows2 = again[0] if isinstance(again, tuple) else again
    rows = np.asarray(rows)
    assert rows.ndim == 1 and rows.size > 0, "an example selector keeps at least one example"
    assert rows.min() >= 0 and rows.max() < ds.n_instances, "indices must point into the training part"
    assert len(np.unique(rows)) == len(rows), "indices must be distinct"
    assert np.array_equal(rows, np.asarray(rows2)), "the same random_state must select the same examples"
    if weights is not None:
        assert len(weights) == len(rows) and np.all(np.asarray(weights) >= 0)


EXAMPLE_SELECTOR_CHECKS: tuple[Callable[[str], None], ...] = (check_example_selection,)


def check_classifier(name: str, checks: Iterable[Callable[[str], None]] = CHECKS) -> None:
    """Run every check on the registered classifier ``name``; the first failure raises AssertionError."""
    for check in checks:
        try:
            check(name)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {check.__name__}: {exc}") from exc


def parametrize_with_checks(names: Iterable[str], checks: Iterable[Callable[[str], None]] = CHECKS) -> Any:
    """A ``pytest.mark.parametrize`` over (name, check) for every registered name and check
    (``checks=SELECTOR_CHECKS`` or ``EXAMPLE_SELECTOR_CHECKS`` for the other component kinds)."""
    import pytest

    checks = tuple(checks)
    cases = [(name, check) for name in names for check in checks]
    ids = [f"{name}-{check.__name__.removeprefix('check_')}" for name, check in cases]
    return pytest.mark.parametrize("name, check", cases, ids=ids)
