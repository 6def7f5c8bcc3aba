"""Every registered toolkit classifier as a scikit-learn estimator (scikit-learn is an optional extra).

    from toolkit.models.sklearn_adapter import estimator
    from sklearn.model_selection import GridSearchCV

    BMA = estimator("bma-nb")                  # a scikit-learn estimator class
    search = GridSearchCV(BMA(), {"H": [0.8, 1.0, 1.2]}).fit(X, y)

Each class gets an ``__init__`` whose keyword parameters are the component's own, so ``get_params``,
``set_params``, ``clone`` and grid searches work. Data go through scikit-learn's validation; the
toolkit component sees a numeric matrix without a schema (all columns numeric, classes = the sorted
labels). A component with the shard-statistics protocol (toolkit.api: nb-multinomial, nb-bim, nb-weka,
nb-gaussian, bma-nb) also gets ``partial_fit(X, y, classes=None, sample_weight=None)``: ``classes`` on the
first call, each batch added to its statistics. Classes are created on first use and registered in this module under ``Toolkit_<name>``, so
fitted estimators pickle and unpickle like any other.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.utils.multiclass import check_classification_targets, type_of_target
    from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("toolkit.models.sklearn_adapter needs scikit-learn: pip install 'arff-toolkit[sklearn]'") from exc

from toolkit.api import statistics_support
from toolkit.errors import ToolkitError

__all__ = ["ToolkitClassifier", "estimator", "class_name"]


def class_name(name: str) -> str:
    return "Toolkit_" + name.replace("-", "_")


class ToolkitClassifier(ClassifierMixin, BaseEstimator):
    """Base of the generated adapters; ``_toolkit_name`` names the registered classifier."""

    _toolkit_name: str = ""

    def _spec(self) -> Any:
        from toolkit.plugin_host.components import get_spec

        return get_spec("classifier", self._toolkit_name)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        caps = self._spec().capabilities
        tags.input_tags.allow_nan = caps.missing
        tags.input_tags.sparse = caps.sparse
        tags.input_tags.positive_only = getattr(caps, "nonnegative", False)
        tags.classifier_tags.multi_class = caps.multiclass
        tags.classifier_tags.poor_score = True
        return tags

    def _validate(self, X: Any, y: Any = None, reset: bool = True) -> Any:
        caps = self._spec().capabilities
        kwargs = dict(accept_sparse="csr" if caps.sparse else False,
                      ensure_all_finite="allow-nan" if caps.missing else True, dtype=np.float64, reset=reset)
        if y is None:
            return validate_data(self, X, **kwargs)
        return validate_data(self, X, y, **kwargs)

    def _fit(self, X: Any, y: Any, sample_weight: Any = None) -> ToolkitClassifier:
        caps = self._spec().capabilities
        X, y = validate_data(self, X, y, accept_sparse="csr" if caps.sparse else False,
                             ensure_all_finite="allow-nan" if caps.missing else True, dtype=np.float64)
        check_classification_targets(y)
        if not caps.multiclass:
            y_type = type_of_target(y, input_name="y")
            if y_type != "binary":
                raise ValueError(f"Only binary classification is supported. The type of the target is {y_type} "
                                 f"({self._toolkit_name} handles two classes)")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
            if not np.any(sample_weight > 0):
                raise ValueError("sample_weight is zero for every sample; nothing to learn from")
        if getattr(self._spec().capabilities, "nonnegative", False):
            data = X.data if hasattr(X, "data") and not isinstance(X, np.ndarray) else X
            if np.nanmin(data, initial=0.0) < 0:
                raise ValueError(f"Negative values in data passed to {self._toolkit_name}: it needs "
                                 f"non-negative counts")
        model = self._spec().factory(**self.get_params())
        if sample_weight is not None:
            model.fit(X, y, sample_weight=np.asarray(sample_weight, dtype=np.float64))
        else:
            model.fit(X, y)
        self.model_ = model
        self.classes_ = np.asarray(model.classes_)
        if hasattr(model, "n_iter_"):  # iterative solvers report their iterations, as scikit-learn expects
            self.n_iter_ = model.n_iter_
        return self

    def _partial_fit(self, X: Any, y: Any, classes: Any = None, sample_weight: Any = None) -> ToolkitClassifier:
        """scikit-learn's ``partial_fit``: ``classes`` on the first call; each call adds a batch to the
        component's shard statistics and refits from them (the model equals ``fit`` on all batches)."""
        caps = self._spec().capabilities
        first = not hasattr(self, "model_")
        if not first and getattr(self, "_partial_model", None) is not self.model_:
            raise ValueError(f"{self._toolkit_name} was fitted by fit(), which keeps no statistics to add a batch "
                             f"to; call partial_fit for every batch (on a clone)")
        X, y = validate_data(self, X, y, accept_sparse="csr" if caps.sparse else False,
                             ensure_all_finite="allow-nan" if caps.missing else True, dtype=np.float64, reset=first)
        check_classification_targets(y)
        if first:
            if classes is None:
                raise ValueError("classes must be passed on the first call to partial_fit")
            model = self._spec().factory(**self.get_params())
        else:
            model = self.model_
            if classes is not None and not np.array_equal(np.unique(classes), self.classes_):
                raise ValueError(f"classes={list(classes)} differs from the first call's {list(self.classes_)}")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        if getattr(caps, "nonnegative", False):
            data = X.data if hasattr(X, "data") and not isinstance(X, np.ndarray) else X
            if np.nanmin(data, initial=0.0) < 0:
                raise ValueError(f"Negative values in data passed to {self._toolkit_name}: it needs "
                                 f"non-negative counts")
        try:
            model.partial_fit(X, y, classes=None if not first else classes, sample_weight=sample_weight)
        except ToolkitError as exc:
            raise ValueError(str(exc)) from None
        self.model_ = self._partial_model = model
        self.classes_ = np.asarray(model.classes_)
        return self

    def predict_proba(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        if not self._spec().capabilities.probabilities:
            raise AttributeError(f"{self._toolkit_name} gives no probabilities")
        return np.asarray(self.model_.predict_proba(self._validate(X, reset=False)))

    def decision_function(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        scores = np.asarray(self.model_.decision_function(self._validate(X, reset=False)))
        if scores.ndim == 2 and scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]  # scikit-learn's binary convention: positive class = classes_[1]
        return scores

    def predict(self, X: Any) -> np.ndarray:
        check_is_fitted(self)
        return np.asarray(self.model_.predict(self._validate(X, reset=False)))


def _make(name: str) -> type:
    from toolkit.plugin_host.components import get_spec

    spec = get_spec("classifier", name)
    params = spec.parameters()

    def __init__(self: Any, **kwargs: Any) -> None:
        unknown = sorted(set(kwargs) - set(params))
        if unknown:  # as a written-out __init__ would: BMA(h=5) must not silently mean H=1
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument '{unknown[0]}' "
                            f"({name} takes: {', '.join(params) or 'no parameters'})")
        for key, default in params.items():
            setattr(self, key, kwargs.get(key, default))

    __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=d) for k, d in params.items()])
    namespace: dict[str, Any] = {"__init__": __init__, "_toolkit_name": name, "__module__": __name__,
                                 "__doc__": f"scikit-learn estimator for the toolkit classifier '{name}': {spec.description}"}
    if spec.capabilities.sample_weight:
        def fit(self: Any, X: Any, y: Any, sample_weight: Any = None) -> Any:
            return self._fit(X, y, sample_weight)
    else:
        def fit(self: Any, X: Any, y: Any) -> Any:  # no weights: scikit-learn then does not try them
            return self._fit(X, y)
    namespace["fit"] = fit
    if statistics_support(spec.factory()) is None:   # the shard-statistics protocol (toolkit.api)
        def partial_fit(self: Any, X: Any, y: Any, classes: Any = None, sample_weight: Any = None) -> Any:
            return self._partial_fit(X, y, classes, sample_weight)
        namespace["partial_fit"] = partial_fit
    if not spec.capabilities.probabilities:
        namespace["predict_proba"] = property(lambda self: (_ for _ in ()).throw(
            AttributeError(f"{name} gives no probabilities")))
    cls = type(class_name(name), (ToolkitClassifier,), namespace)
    cls.__qualname__ = cls.__name__
    globals()[cls.__name__] = cls
    return cls


def estimator(name: str) -> type:
    """The scikit-learn estimator class for the registered classifier ``name``."""
    existing = globals().get(class_name(name))
    return existing if existing is not None else _make(name)


def __getattr__(attr: str) -> Any:  # lets pickle find a class in a fresh process
    if attr.startswith("Toolkit_"):
        from toolkit.plugin_host.components import get_registry

        for name in get_registry().names("classifier"):
            if class_name(name) == attr:
                return estimator(name)
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
