"""Component contracts and the base classes plugins build on.

The contracts follow scikit-learn's conventions without depending on scikit-learn: ``__init__``
only stores keyword hyperparameters, learned attributes end in ``_``, ``fit`` returns ``self``,
``classes_`` sets the column order of ``predict_proba``. The harness passes a :class:`Schema`
to ``fit`` when the method accepts one, so that a classifier knows which columns are nominal
(and how many values each has) and which classes exist even when a training part lacks some;
called without a schema (scikit-learn style), every column is numeric and the classes are the
sorted labels seen in ``y``.

:class:`ProbabilisticClassifier` is the one place where predictions are derived from a joint
log-likelihood (the role of scikit-learn's ``_BaseNB``); a variant only computes its sufficient
statistics and ``_joint_log_likelihood``.

**Scoring a grid from one fit** (optional; the harness's tuning uses it when present). A classifier
lists in ``grid_params`` the hyperparameters that :meth:`ClassifierBase.grid_decision_function` can
vary without refitting from scratch, and that method yields the validation scores of a list of
settings, each exactly what a fresh fit with that setting would give (a warm-started solver would
only meet the cold fit's stopping rule, and the validation errors then differ: LIBLINEAR refits cold
per C, see plugins/linear/liblinear.py). The harness groups the grid points that differ only in those
parameters, fits everything else once per group and calls the method once; a classifier without
``grid_params`` is refitted at every grid point. A :class:`ProbabilisticClassifier` gets the method
by splitting its ``fit`` into ``_fit_statistics`` (what the grid parameters leave unchanged) and
``_apply_params`` (what they set), see there.

**Fitting from shards** (optional; partitioned training on a cluster and ``partial_fit`` use it). A
classifier whose model is a function of statistics that add over shards of the training data offers

* ``statistics_passes()``: how many passes over the data the statistics take (1; 2 when a global
  quantity such as TW-L's document frequencies must come first); raises :class:`CapabilityError`,
  naming why, when this classifier with these parameters cannot be fitted from shards;
* ``shard_statistics(X, y, sample_weight=None, schema=None, previous=None)``: the
  :class:`SufficientStatistics` of one shard (``previous``: the merged statistics of the pass before);
* ``a.merge(b)``: the statistics of both shards (exact for integer counts, to rounding otherwise);
* ``fit_from_statistics(statistics)``: the model, as ``fit`` on the concatenated shards gives it.

The base class implements these around two hooks of the ``_fit_statistics`` / ``_apply_params`` shape:
``_shard_statistics(X, y, w, schema, previous)`` (validated data, returns the plugin's statistics) and
``_state_from_statistics(statistics)`` (sets what ``_fit_statistics`` sets and returns the state that
``_apply_params`` takes), so grid parameters still apply without another pass. ``partial_fit`` follows.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
import json
import math
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from toolkit.config import compute_threads
from toolkit.data.attributes import AttributeList
from toolkit.data.dataset import Dataset
from toolkit.errors import CapabilityError, ParameterError, ToolkitError
from toolkit.evaluation.ranking import rank_key

__all__ = [
    "Schema", "Predictions", "Classifier", "FeatureSelector", "ExampleSelector",
    "ClassifierBase", "ProbabilisticClassifier", "FeatureSelectorBase", "ExampleSelectorBase",
    "as_matrix", "refuse_infinite", "accepts_argument", "inherits_base_method", "validate_component", "check_state",
    "STATE_TYPES", "CLASSIFIER_STATE",
    "SufficientStatistics", "statistics_support", "schema_digest", "compute_threads",
]


@functools.lru_cache(maxsize=8)
def _numeric_features(n_features: int) -> AttributeList:
    """x0..x{n-1} as numeric attributes; cached because a text matrix has tens of thousands of
    columns and every fit without a schema would otherwise rebuild them (attribute lists are immutable)."""
    from toolkit.data.attributes import AttributeListBuilder

    builder = AttributeListBuilder()
    for i in range(n_features):
        builder.add(f"x{i}", "numeric")
    return builder.build()


@dataclass(frozen=True)
class Schema:
    """What a component needs to know about the columns of ``X`` and the class.

    ``features`` is an :class:`~toolkit.data.attributes.AttributeList` (any sequence of
    attributes is converted), compact even for a vocabulary of 100,000 words.
    """

    features: AttributeList
    classes: tuple[str, ...]
    class_name: str = "class"

    def __post_init__(self) -> None:
        if not isinstance(self.features, AttributeList):
            object.__setattr__(self, "features", AttributeList(self.features))
        object.__setattr__(self, "classes", tuple(self.classes))

    @classmethod
    def from_dataset(cls, ds: Dataset) -> Schema:
        return cls(ds.features, tuple(ds.require_nominal_class()),
                   ds.class_attribute.name if ds.class_attribute else "class")

    @classmethod
    def numeric(cls, n_features: int, classes: Sequence[str]) -> Schema:
        return cls(_numeric_features(int(n_features)), tuple(classes))

    def select(self, columns: Sequence[int] | np.ndarray) -> Schema:
        return Schema(self.features.take(np.asarray(columns, dtype=np.int64)), self.classes, self.class_name)

    def kinds(self) -> np.ndarray:
        """Kind code per column: 0 numeric, 1 nominal, 2 string, 3 date."""
        return self.features.kind_codes

    def columns_of_kind(self, *kinds: str) -> np.ndarray:
        """Indices of the columns whose kind is one of ``kinds``."""
        mask = np.zeros(len(self.features), dtype=bool)
        for kind in kinds:
            mask |= self.features.mask(kind)
        return np.flatnonzero(mask)

    @property
    def nominal_mask(self) -> np.ndarray:
        return self.features.mask("nominal")

    @property
    def n_values(self) -> np.ndarray:
        """Number of declared values per column (0 for non-nominal columns)."""
        return self.features.n_values()

    def to_json(self) -> dict[str, Any]:
        return {
            "features": self.features.to_records(),
            "classes": list(self.classes),
            "class_name": self.class_name,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Schema:
        feats = AttributeList.from_records(data["features"])
        return cls(feats, tuple(data["classes"]), data.get("class_name", "class"))


@dataclass
class Predictions:
    """Everything an evaluator may need about one test part."""

    y_true: np.ndarray                 # class codes 0..K-1
    y_pred: np.ndarray                 # predicted codes
    proba: np.ndarray | None           # (n, K) or None when the model gives no probabilities
    scores: np.ndarray | None          # (n, K) decision scores, larger = more likely
    classes: tuple[str, ...]
    weights: np.ndarray | None = None
    model: Any = None                  # the fitted model, for model-specific metrics
    X: Any = None                      # the test features as the model saw them
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Classifier(Protocol):
    classes_: np.ndarray

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> Classifier: ...

    def predict(self, X: Any) -> np.ndarray: ...

    def get_params(self, deep: bool = True) -> dict[str, Any]: ...


@runtime_checkable
class FeatureSelector(Protocol):
    support_: np.ndarray

    def fit(self, X: Any, y: Any) -> FeatureSelector: ...

    def transform(self, X: Any) -> Any: ...


@runtime_checkable
class ExampleSelector(Protocol):
    def select(self, X: Any, y: Any, random_state: int | None = None) -> Any: ...


def accepts_argument(method: Any, name: str) -> bool:
    """True when ``method`` takes a parameter called ``name`` (or ``**kwargs``)."""
    function = getattr(method, "__func__", method)   # a bound method: its function (one cache entry per class)
    try:
        return _accepts(function, name)
    except TypeError:  # not hashable
        return _accepts.__wrapped__(function, name)


@functools.lru_cache(maxsize=1024)
def _accepts(function: Any, name: str) -> bool:
    try:
        params = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


def as_matrix(X: Any) -> np.ndarray | sp.csr_matrix:
    """float64 ndarray or ``csr_matrix`` (``csr_array`` and other sparse types are converted)."""
    if isinstance(X, Dataset):
        X = X.X
    if sp.issparse(X):
        if not (type(X) is sp.csr_matrix and X.dtype == np.float64):
            X = sp.csr_matrix(X, dtype=np.float64)
        # the same object when it already is one: scipy caches has_canonical_format on it (an O(nnz) scan).
        # An entry stored twice means their sum (scipy's rule); every estimator counts it once so
        if not X.has_canonical_format:
            X.sum_duplicates()
        return X
    arr = np.asarray(X)
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise CapabilityError("X holds values that are not numbers; encode nominal values as codes "
                                  "(toolkit.load_arff does this)") from None
    arr = np.asarray(arr, dtype=np.float64)
    if arr.ndim == 1:
        raise CapabilityError(f"X must be 2-dimensional, got shape {arr.shape}; "
                              "use X.reshape(-1, 1) for a single feature")
    if arr.ndim != 2:
        raise CapabilityError(f"X must be 2-dimensional, got shape {arr.shape}")
    return arr


def refuse_infinite(X: np.ndarray | sp.csr_matrix, schema: Schema | None) -> None:
    """No model uses an infinite value (sums become inf or NaN; the pipeline refuses one up front, as no
    component declares ``infinite``): refused, naming the attribute. Missing values are NaN and pass."""
    data = X.data if sp.issparse(X) else np.asarray(X)
    if not data.size or np.isfinite(data).all() or not np.isinf(data).any():
        return
    flat = int(np.flatnonzero(np.isinf(data))[0])
    col = int(X.indices[flat]) if sp.issparse(X) else flat % X.shape[1]
    row = int(np.searchsorted(X.indptr, flat, side="right") - 1) if sp.issparse(X) else flat // X.shape[1]
    name = schema.features.name(col) if schema is not None and col < len(schema.features) else f"x{col}"
    raise CapabilityError(f"attribute '{name}' (column {col}) holds an infinite value ({data.flat[flat]:g}) in row "
                          f"{row + 1}; no model can use one: replace it with a finite number, or mark it missing (NaN)")


def _describe_type(tp: Any) -> str:
    if tp is type(None):
        return "none"
    if typing.get_origin(tp) is typing.Literal:
        return " or ".join(repr(a) for a in typing.get_args(tp))
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return " or ".join(_describe_type(a) for a in typing.get_args(tp))
    return {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}.get(tp, str(tp))


def _matches(value: Any, tp: Any) -> bool | None:
    """Whether ``value`` fits the annotation ``tp``; None when the annotation says nothing checkable."""
    if tp is Any:
        return None
    if tp is type(None):
        return value is None
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return value in typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        answers = [_matches(value, a) for a in typing.get_args(tp)]
        if any(a is True for a in answers):
            return True
        return None if any(a is None for a in answers) else False
    if tp is bool:
        return isinstance(value, (bool, np.bool_))
    if tp is int:
        return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if tp is float:
        return (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
                and not (isinstance(value, (float, np.floating)) and math.isnan(value)))
    if tp is str:
        return isinstance(value, str)
    return None


@functools.lru_cache(maxsize=256)
def _init_hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls.__init__)
    except Exception:  # an annotation that does not evaluate: nothing to check by type
        return {}


def validate_component(obj: Any, who: str | None = None) -> None:
    """Check a constructed component's hyperparameters once, before any data is seen: each value against
    its ``__init__`` annotation (``laplace: float`` refuses ``"abc"``), then the component's own
    ``_check_params()`` (ranges and choices) when it has one. Raises :class:`ParameterError` naming the
    component and the parameter."""
    name = who or type(obj).__name__
    hints = _init_hints(type(obj))
    params = obj.get_params() if hasattr(obj, "get_params") else {}
    for key, value in params.items():
        tp = hints.get(key)
        if tp is None:
            continue
        if _matches(value, tp) is False:
            if (tp is int or int in typing.get_args(tp)) and isinstance(value, float) and value.is_integer():
                raise ParameterError(f"{name}: parameter {key} must be a whole number written without a decimal "
                                     f"point or exponent: {int(value)}, not {value!r}")
            raise ParameterError(f"{name}: parameter {key} must be {_describe_type(tp)}, not {value!r}")
    check = getattr(obj, "_check_params", None)
    if callable(check):
        try:
            check()
        except ParameterError as exc:
            text = str(exc)
            raise ParameterError(text if text.startswith(name) else f"{name}: {text}") from None


def _known_labels(y: np.ndarray) -> np.ndarray:
    """Rows whose label is known: not NaN (float labels), not None or NaN (object labels)."""
    if y.dtype.kind == "f":
        return ~np.isnan(y)
    if y.dtype == object:
        return np.array([v is not None and v == v for v in y], dtype=bool)
    return np.ones(len(y), dtype=bool)


def _unique_labels(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(labels, return_inverse=True)``; small non-negative integer labels by counting (O(n), no sort)."""
    if labels.dtype.kind in "iu" and labels.size and labels.min() >= 0 and labels.max() < 4 * labels.size + 1024:
        seen = np.bincount(labels) > 0
        classes = np.flatnonzero(seen).astype(labels.dtype)
        codes = (np.cumsum(seen) - 1)[labels]
        return classes, codes.astype(np.int64)
    classes, codes = np.unique(labels, return_inverse=True)
    return classes, codes.reshape(-1).astype(np.int64)


@functools.lru_cache(maxsize=1024)
def _init_parameters(init: Any) -> tuple[str, ...]:
    """Keyword parameter names of an ``__init__`` (cached: get_params / set_params run in tight loops)."""
    sig = inspect.signature(init)
    return tuple(name for name, p in sig.parameters.items()
                 if name != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))


class _ParamsMixin:
    """get_params / set_params from the keyword parameters of ``__init__``; ``_check_params`` is the
    hook where a component checks ranges and choices of its hyperparameters (called before any fit
    by :func:`validate_component`; raise :class:`ParameterError`)."""

    @classmethod
    def _param_names(cls) -> list[str]:
        return list(_init_parameters(cls.__init__))

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> Any:
        valid = self._param_names()
        for key, value in params.items():
            if key not in valid:
                raise ParameterError(f"{type(self).__name__} has no parameter '{key}' "
                                     f"(its parameters: {', '.join(valid) or 'none'})")
            setattr(self, key, value)
        return self

    def _check_params(self) -> None:
        """Ranges and choices of the hyperparameters; nothing to check by default."""

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


#: Type codes of a declared model-file state (``_state_schema``): a learned attribute's kind. A code may
#: list alternatives (``"array:i1|objects"``) and start with ``?`` (the attribute may be absent).
STATE_TYPES = ("int", "float", "bool", "str", "list", "dict", "json", "schema", "csr", "objects", "array")


def _state_type(value: Any) -> str:
    """The type code of a restored attribute value (arrays as ``array:<kind><ndim>``)."""
    if isinstance(value, np.ndarray):
        return "objects" if value.dtype == object else f"array:{value.dtype.kind}{value.ndim}"
    if sp.issparse(value):
        return "csr"
    if isinstance(value, Schema):
        return "schema"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "dict"
    if value is None:
        return "none"
    return type(value).__name__


def _type_allowed(actual: str, declared: str) -> bool:
    for option in declared.lstrip("?").split("|"):
        if option == actual or option == "json" and actual in ("int", "float", "bool", "str", "list", "dict", "none"):
            return True
        if option == "float" and actual == "int":
            return True
        if option.startswith("array") and actual.startswith("array:"):
            want = option.partition(":")[2]
            have = actual.partition(":")[2]
            if not want or (want[0] in ("*", have[0]) and want[1:] in ("", have[1:])):
                return True
        if option == "none" and actual == "none":
            return True
    return False


def _init_parameter_names(cls: type) -> set[str]:
    try:
        return set(inspect.signature(cls.__init__).parameters) - {"self"}
    except (TypeError, ValueError):
        return set()


def check_state(cls: type, values: Mapping[str, Any]) -> None:
    """Refuse a restored state that does not match the class's declared ``_state_schema``: unknown
    attributes, missing required ones, or values of another type. Classes that declare none (third
    parties) may restore learned attributes (``name_``) that do not shadow anything of the class."""
    schema = getattr(cls, "_state_schema", None)
    who = cls.__name__
    for key in values:
        if not key.endswith("_") or key.startswith("_") or key.startswith("-"):
            raise ToolkitError(f"{who}: '{key}' is not a learned attribute")
        if schema is None and (hasattr(cls, key) or key in _init_parameter_names(cls)):
            raise ToolkitError(f"{who}: state attribute '{key}' would replace part of the class")
    if schema is None:
        return
    for key, value in values.items():
        declared = schema.get(key)
        if declared is None:
            raise ToolkitError(f"{who} has no learned attribute '{key}'")
        actual = _state_type(value)
        if not _type_allowed(actual, declared):
            raise ToolkitError(f"{who}.{key} must be {declared.lstrip('?')}, the file holds {actual}")
    missing = [k for k, d in schema.items() if not d.startswith("?") and k not in values]
    if missing:
        raise ToolkitError(f"{who}: the state lacks {', '.join(missing[:3])}")


class _StateMixin:
    """Model-file state: learned attributes (ending in ``_``) as JSON values and numpy arrays.

    Used by :mod:`toolkit.models.model_file`; a component whose state is not arrays or JSON values overrides
    ``get_state`` / ``_set_state``.
    """

    def get_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        meta: dict[str, Any] = {}
        arrays: dict[str, np.ndarray] = {}
        for key, value in vars(self).items():
            if not key.endswith("_") or key.startswith("_"):
                continue
            if isinstance(value, np.ndarray):
                if value.dtype == object:
                    meta[key] = {"__list__": value.tolist()}
                else:
                    arrays[key] = value
            elif sp.issparse(value):
                csr = sp.csr_matrix(value)
                arrays[key + ".data"] = csr.data
                arrays[key + ".indices"] = csr.indices
                arrays[key + ".indptr"] = csr.indptr
                meta[key] = {"__csr__": list(csr.shape)}
            elif isinstance(value, Schema):
                meta[key] = {"__schema__": value.to_json()}
            elif isinstance(value, (np.integer, np.floating, np.bool_)):
                meta[key] = value.item()
            else:
                try:
                    json.dumps(value, allow_nan=False)
                except (TypeError, ValueError):
                    raise ToolkitError(f"{type(self).__name__}.{key} cannot be stored in a model file; "
                                       f"override get_state") from None
                meta[key] = value
        return meta, arrays

    def _set_state(self, meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        """Restore what :meth:`get_state` wrote, only through the class's declared ``_state_schema``
        (:func:`check_state`): nothing is set unless every attribute is expected and of its type."""
        values: dict[str, Any] = {}
        for key, value in meta.items():
            if isinstance(value, dict) and "__list__" in value:
                values[key] = np.array(value["__list__"], dtype=object)
            elif isinstance(value, dict) and "__csr__" in value:
                shape = tuple(int(n) for n in value["__csr__"])
                values[key] = sp.csr_matrix((arrays[key + ".data"], arrays[key + ".indices"],
                                             arrays[key + ".indptr"]), shape=shape)
            elif isinstance(value, dict) and "__schema__" in value:
                values[key] = Schema.from_json(value["__schema__"])
            else:
                values[key] = value
        for key, value in arrays.items():
            if "." not in key:
                if key in values:
                    raise ToolkitError(f"{type(self).__name__}: '{key}' is stored twice (as JSON and as an array)")
                values[key] = value
            elif key.rpartition(".")[0] not in values:
                raise ToolkitError(f"{type(self).__name__}: array '{key}' belongs to no attribute")
        check_state(type(self), values)
        for key, value in values.items():
            setattr(self, key, value)

    @classmethod
    def from_state(cls, params: Mapping[str, Any], meta: Mapping[str, Any],
                   arrays: Mapping[str, np.ndarray]) -> Any:
        obj = cls(**params)
        obj._set_state(meta, arrays)
        return obj


def schema_digest(schema: Schema) -> str:
    """A short fingerprint of a schema (attribute names and kinds, declared values, classes): statistics
    computed under different schemas never merge, and a worker need not send the schema back."""
    h = hashlib.sha256()
    feats = schema.features
    h.update(str(len(feats)).encode())
    h.update(feats._blob.encode("utf-8", "surrogatepass"))
    h.update(np.asarray(feats._offsets, dtype=np.int64).tobytes())
    h.update(np.asarray(feats.kind_codes, dtype=np.uint8).tobytes())
    for i in sorted(feats._special):
        a = feats._special[i]
        h.update(repr((i, a.kind, tuple(a.values), a.date_format)).encode("utf-8", "surrogatepass"))
    h.update(repr((tuple(schema.classes), schema.class_name)).encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:32]


class SufficientStatistics:
    """What a classifier learns from one shard of its training data, in a form that merges over shards.

    The base holds what every model needs: the ``schema`` (None once :meth:`detached`, for sending back
    from a worker; ``schema_digest`` stays), the ``labels`` that become ``classes_``, ``n_rows`` (rows with
    a known class), ``class_weight`` (summed instance weights per class), ``settings`` (the statistics' kind and the parameters they depend on: statistics of
    other settings never merge) and which pass of how many they belong to. A subclass adds its arrays and
    implements :meth:`_merge`; arrays that are sparse in the data stay sparse here.
    """

    def __init__(self) -> None:
        self.schema: Schema | None = None
        self.schema_digest = ""
        self.labels = np.zeros(0)
        self.n_rows = 0
        self.class_weight = np.zeros(0)
        self.settings: tuple[Any, ...] = ()
        self.pass_index = 0
        self.passes = 1

    @property
    def final(self) -> bool:
        """True for the last pass (what ``fit_from_statistics`` takes)."""
        return self.pass_index == self.passes - 1

    def merge(self, other: SufficientStatistics) -> SufficientStatistics:
        """The statistics of this shard and ``other`` together (neither is modified)."""
        if type(other) is not type(self) or other.settings != self.settings:
            raise CapabilityError(f"cannot merge {type(self).__name__} {self.settings} with "
                                  f"{type(other).__name__} {getattr(other, 'settings', None)}: computed by "
                                  f"other models or settings")
        if not (len(self.labels) == len(other.labels) and np.all(self.labels == other.labels)):
            raise CapabilityError(f"cannot merge statistics of shards with different classes "
                                  f"({list(self.labels)[:5]} and {list(other.labels)[:5]}): give the schema "
                                  f"(declared classes), or classes= to partial_fit")
        if other.schema_digest != self.schema_digest:
            raise CapabilityError("cannot merge statistics of shards with different attributes or classes")
        if (other.pass_index, other.passes) != (self.pass_index, self.passes):
            raise CapabilityError(f"cannot merge statistics of pass {self.pass_index + 1} with pass "
                                  f"{other.pass_index + 1}")
        merged = self._merge(other)
        merged.schema = self.schema if self.schema is not None else other.schema
        merged.schema_digest = self.schema_digest
        merged.labels = self.labels
        merged.n_rows = self.n_rows + other.n_rows
        merged.class_weight = self.class_weight + other.class_weight
        merged.settings = self.settings
        merged.pass_index, merged.passes = self.pass_index, self.passes
        return merged

    def _merge(self, other: Any) -> SufficientStatistics:  # pragma: no cover - abstract
        raise NotImplementedError

    def detached(self) -> SufficientStatistics:
        """A shallow copy without the schema (small to send; :meth:`attached` puts it back)."""
        out = copy.copy(self)
        out.schema = None
        return out

    def attached(self, schema: Schema) -> SufficientStatistics:
        """A shallow copy with ``schema``, which must be the one the statistics were computed under."""
        if schema_digest(schema) != self.schema_digest:
            raise CapabilityError("these statistics were computed under another schema")
        out = copy.copy(self)
        out.schema = schema
        return out

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.settings}, rows={self.n_rows}, classes={len(self.labels)}, "
                f"pass {self.pass_index + 1}/{self.passes})")


def statistics_support(obj: Any) -> str | None:
    """None when ``obj`` can be fitted from shard statistics, else the reason it cannot (one line)."""
    passes = getattr(obj, "statistics_passes", None)
    if not callable(passes):
        return f"{type(obj).__name__} has no shard-statistics protocol (it is fitted on all the data at once)"
    try:
        passes()
    except ToolkitError as exc:
        return str(exc)
    return None


#: The learned attributes every classifier fitted by the pipeline has (merged into a class's
#: ``_state_schema``): ``classes_`` codes, the training ``schema_``, ``n_features_in_``.
CLASSIFIER_STATE: dict[str, str] = {"schema_": "schema", "n_features_in_": "int", "classes_": "array:i1|objects"}


class ClassifierBase(_ParamsMixin, _StateMixin):
    """Validation and bookkeeping shared by classifiers.

    ``fit`` implementations call :meth:`_validate_fit`, which returns float64 features, class
    codes 0..K-1 and weights (rows with a missing class dropped), and sets ``classes_``,
    ``n_features_in_`` and ``schema_``.
    """

    #: Hyperparameters that :meth:`grid_decision_function` varies over one fit (empty: the harness
    #: refits at every grid point).
    grid_params: ClassVar[tuple[str, ...]] = ()
    #: True when ``fit`` itself refuses (or safely reads) infinite values, in a pass it makes anyway (the
    #: word-count classifiers): :meth:`_validate_fit` then skips its own pass over the data
    checks_infinite_values: ClassVar[bool] = False

    def grid_decision_function(self, X: Any, y: Any, X_val: Any, settings: Sequence[Mapping[str, Any]], *,
                               sample_weight: Any = None, schema: Schema | None = None) -> Iterator[np.ndarray]:
        """Fit on ``(X, y)`` and yield ``decision_function(X_val)`` for each setting in turn.

        The i-th array is what ``set_params(**settings[i])``, ``fit(X, y, ...)`` and
        ``decision_function(X_val)`` give (``sample_weight`` and ``schema`` are passed to ``fit``
        as given); only keys of ``grid_params`` may appear in a setting. The classifier is left
        fitted with the last setting. This implementation refits for every setting; classifiers
        that can share work override it and list the parameters in ``grid_params``.
        """
        settings = self._grid_settings(settings)
        kwargs: dict[str, Any] = {}
        if sample_weight is not None:
            kwargs["sample_weight"] = sample_weight
        if schema is not None:
            kwargs["schema"] = schema
        for setting in settings:
            self.set_params(**setting)
            self.fit(X, y, **kwargs)  # type: ignore[attr-defined]
            yield self.decision_function(X_val)

    def _grid_settings(self, settings: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The settings as dicts; a key outside ``grid_params`` is a :class:`ParameterError`."""
        out = [dict(s) for s in settings]
        allowed = set(self.grid_params)
        unknown = sorted({k for s in out for k in s} - allowed)
        if unknown:
            raise ParameterError(f"{type(self).__name__} cannot score a grid over {', '.join(unknown)} from one fit "
                                 f"(it can over: {', '.join(self.grid_params) or 'nothing'}); refit instead")
        return out

    # ------------------------------------------------------------------ fitting from shards
    def statistics_passes(self) -> int:
        """Passes over the training data that :meth:`shard_statistics` takes; raises
        :class:`CapabilityError` (naming why) when this classifier cannot be fitted from shards."""
        raise CapabilityError(f"{type(self).__name__} has no shard-statistics protocol (it is fitted on all "
                              f"the data at once)")

    def _shard_statistics(self, X: Any, y: np.ndarray, w: np.ndarray, schema: Schema,
                          previous: SufficientStatistics | None) -> SufficientStatistics:
        raise NotImplementedError  # pragma: no cover - only called when statistics_passes() answers

    def _state_from_statistics(self, statistics: SufficientStatistics) -> Any:
        raise NotImplementedError  # pragma: no cover - only called when statistics_passes() answers

    def _apply_params(self, state: Any) -> None:
        raise NotImplementedError  # pragma: no cover - only called when grid_params or statistics are used

    def shard_statistics(self, X: Any, y: Any, sample_weight: Any = None, schema: Schema | None = None, *,
                         previous: SufficientStatistics | None = None) -> SufficientStatistics:
        """The :class:`SufficientStatistics` of one shard of the training data (the classifier itself is
        not changed). ``previous`` is the merge of every shard's statistics of the pass before, for a
        classifier that needs more than one pass; an empty shard gives empty statistics."""
        passes = self.statistics_passes()
        pass_index = 0 if previous is None else previous.pass_index + 1
        if pass_index >= passes:
            raise CapabilityError(f"{type(self).__name__} takes {passes} pass(es) over the data; these "
                                  f"'previous' statistics are already of the last")
        probe = copy.copy(self)   # validation sets classes_ and schema_: on a copy
        X, codes, w = probe._validate_fit(X, y, sample_weight, schema, allow_empty=True)
        digest = schema_digest(probe.schema_)
        if previous is not None and previous.schema_digest != digest:
            raise CapabilityError("the 'previous' statistics were computed under another schema")
        stats = self._shard_statistics(X, codes, w, probe.schema_, previous)
        stats.schema = probe.schema_
        stats.schema_digest = digest
        stats.labels = np.asarray(probe.classes_)
        stats.n_rows = int(X.shape[0])
        stats.class_weight = np.bincount(codes, weights=w, minlength=len(probe.classes_)).astype(np.float64)
        stats.pass_index, stats.passes = pass_index, passes
        return stats

    def fit_from_statistics(self, statistics: SufficientStatistics) -> Any:
        """Fit from the merged statistics of every shard: the model ``fit`` gives on all of them."""
        self._check_params()
        passes = self.statistics_passes()
        if statistics.passes != passes or not statistics.final:
            raise CapabilityError(f"{type(self).__name__} is fitted from the statistics of pass {passes} of "
                                  f"{passes}; these are of pass {statistics.pass_index + 1} of {statistics.passes} "
                                  f"(give them as previous= to shard_statistics)")
        if statistics.schema is None:
            raise CapabilityError("these statistics were detached from their schema; attach it first")
        if statistics.n_rows == 0:
            raise CapabilityError(f"{type(self).__name__}: no training instance with a known class")
        self.schema_ = statistics.schema
        self.classes_ = np.asarray(statistics.labels)
        self.n_features_in_ = len(statistics.schema.features)
        self._apply_params(self._state_from_statistics(statistics))
        return self

    def partial_fit(self, X: Any, y: Any, classes: Any = None, sample_weight: Any = None,
                    schema: Schema | None = None) -> Any:
        """Add a batch to what earlier ``partial_fit`` calls saw and refit from the statistics (the model
        equals ``fit`` on all batches together). Without ``schema``, the first call needs ``classes``:
        every label the batches may hold. A model fitted by ``fit`` keeps no statistics to add to, so
        partial_fit then refuses."""
        passes = self.statistics_passes()
        if passes != 1:
            raise CapabilityError(f"{type(self).__name__}: partial_fit needs statistics from one pass, these "
                                  f"settings take {passes} (a global quantity comes first); compute "
                                  f"shard_statistics pass by pass instead")
        previous = getattr(self, "_partial_statistics", None)
        if hasattr(self, "classes_") and (previous is None or getattr(self, "_partial_classes", None) is not self.classes_):
            raise CapabilityError(f"{type(self).__name__} was fitted by fit(), which keeps no statistics to add a "
                                  f"batch to; call partial_fit for every batch (on a new instance)")
        labels = None
        if schema is None:
            known = previous.labels if previous is not None else None
            if classes is not None:
                given = np.unique(np.asarray(classes))
                if known is not None and not (len(given) == len(known) and np.all(given == known)):
                    raise CapabilityError(f"classes {list(given)} differ from those of the first partial_fit call "
                                          f"({list(known)})")
                known = given
            if known is None:
                raise CapabilityError(f"{type(self).__name__}: give classes= (every label the data may hold) on "
                                      f"the first call to partial_fit")
            labels = known
            y = np.asarray(y)
            if y.ndim == 2 and 1 in y.shape:
                y = y.ravel()
            # a missing label (NaN, None) drops its row, as fit does (algorithms.md 0.2): code -1
            known_row = _known_labels(y)
            present = y[known_row]
            codes = np.searchsorted(labels, present) if len(present) else np.zeros(0, np.int64)
            codes = np.minimum(codes, len(labels) - 1)
            if len(present) and not np.all(labels[codes] == present):
                bad = present[labels[codes] != present][0]
                raise CapabilityError(f"label {bad!r} is not among the classes {list(labels)} of partial_fit")
            all_codes = np.full(len(y), -1, dtype=np.int64)
            all_codes[known_row] = codes
            y = all_codes
            schema = Schema.numeric(as_matrix(X).shape[1], [str(c) for c in labels])
        stats = self.shard_statistics(X, y, sample_weight, schema)
        if labels is not None:
            stats.labels = labels
        merged = stats if previous is None else previous.merge(stats)
        self.fit_from_statistics(merged)
        self._partial_statistics = merged
        self._partial_classes = self.classes_
        return self

    def _validate_fit(self, X: Any, y: Any, sample_weight: Any = None, schema: Schema | None = None,
                      allow_empty: bool = False) -> tuple[Any, np.ndarray, np.ndarray]:
        X = as_matrix(X)
        y = np.asarray(y)
        if y.ndim != 1:
            y = y.ravel() if y.ndim == 2 and 1 in y.shape else y
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise CapabilityError(f"y must be a vector with one label per row of X ({X.shape[0]}), "
                                  f"got shape {np.shape(y)}")
        if not self.checks_infinite_values:  # a direct fit took one and every prediction failed as 'rescale'
            refuse_infinite(X, schema)
        n = X.shape[0]
        w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64).ravel()
        if w.shape[0] != n:
            raise CapabilityError(f"sample_weight has {w.shape[0]} entries for {n} rows")
        bad = ~(np.isfinite(w) & (w >= 0))
        if bad.any():  # as the readers refuse an instance weight {w}; it ended in a misleading error later
            r = int(np.argmax(bad))
            raise CapabilityError(f"sample_weight must be finite and >= 0; row {r} has {w[r]!r}")
        if schema is not None:
            if len(schema.features) != X.shape[1]:
                raise CapabilityError(f"the schema describes {len(schema.features)} features, X has {X.shape[1]}")
            codes = np.asarray(y, dtype=np.float64)
            keep = ~np.isnan(codes) & (codes >= 0)
            codes = codes[keep].astype(np.int64)
            if codes.size and codes.max() >= len(schema.classes):
                raise CapabilityError(f"class code {codes.max()} is outside the {len(schema.classes)} "
                                      f"declared classes")
            self.classes_ = np.arange(len(schema.classes))
            self.schema_ = schema
        else:
            keep = _known_labels(y)
            labels = y[keep]
            try:
                self.classes_, codes = _unique_labels(labels)
            except TypeError:
                raise CapabilityError("class labels must be all numbers or all strings") from None
            self.schema_ = Schema.numeric(X.shape[1], [str(c) for c in self.classes_])
        if not keep.all():
            X = X[keep]
            w = w[keep]
        X = _nominal_in_domain(X, self.schema_)
        if X.shape[0] == 0 and not allow_empty:   # a shard may be empty (shard_statistics allows it)
            raise CapabilityError(f"{type(self).__name__}: no training instance with a known class")
        self.n_features_in_ = int(X.shape[1])
        return X, codes, w

    def _validate_predict(self, X: Any) -> Any:
        if not hasattr(self, "classes_"):
            raise ToolkitError(f"{type(self).__name__} is not fitted yet; call fit first")
        X = as_matrix(X)
        if X.shape[1] != self.n_features_in_:
            raise CapabilityError(f"{type(self).__name__} was fitted on {self.n_features_in_} features, "
                                  f"X has {X.shape[1]}")
        schema = getattr(self, "schema_", None)
        return X if schema is None else _nominal_in_domain(X, schema)

    def decision_function(self, X: Any) -> np.ndarray:
        """Scores (n, K), larger meaning more likely; by default the log-probabilities."""
        return np.log(np.clip(self.predict_proba(X), 1e-300, None))

    def predict_proba(self, X: Any) -> np.ndarray:  # pragma: no cover - overridden
        raise CapabilityError(f"{type(self).__name__} gives no probabilities")

    def predict(self, X: Any) -> np.ndarray:
        scores = self.decision_function(X)
        return self.classes_[np.argmax(scores, axis=1)]


def inherits_base_method(obj: Any, name: str) -> bool:
    """Whether ``obj`` (an instance or a class) is a ClassifierBase whose ``name`` (``predict_proba``,
    ``decision_function``) is the base class's: those stand for a method the subclass did not write
    (predict_proba refuses, and decision_function is the log of predict_proba)."""
    cls = obj if isinstance(obj, type) else type(obj)
    return issubclass(cls, ClassifierBase) and getattr(cls, name, None) is getattr(ClassifierBase, name)


def _nominal_in_domain(X: Any, schema: Schema) -> Any:
    """``X`` with every nominal value outside its attribute's declared domain (a code that is not a whole
    number in 0..J-1) as missing (algorithms.md 2.1: it counts as missing); the caller's array is never
    changed (a copy, only when some value is out). Data read from a file is always in the domain; this
    guards arrays handed to the API, where such a code would otherwise index another attribute's table."""
    n_values = schema.n_values
    nominal = np.flatnonzero(schema.nominal_mask)
    if len(nominal) == 0 or X.shape[0] == 0:
        return X
    if sp.issparse(X):
        X = X.tocsr()
        J = np.zeros(X.shape[1])
        J[nominal] = n_values[nominal]
        is_nominal = np.zeros(X.shape[1], dtype=bool)
        is_nominal[nominal] = True
        v, c = X.data, X.indices
        with np.errstate(invalid="ignore"):
            out = is_nominal[c] & ~np.isnan(v) & ((v < 0) | (v >= J[c]) | (v != np.floor(v)))
        if not out.any():
            return X
        X = X.copy()
        X.data = X.data.astype(np.float64, copy=False)
        X.data[out] = np.nan
        return X
    X = np.asarray(X)
    codes = X[:, nominal]
    J = n_values[nominal].astype(np.float64)
    with np.errstate(invalid="ignore"):
        out = ~np.isnan(codes) & ((codes < 0) | (codes >= J) | (codes != np.floor(codes)))
    if not out.any():
        return X
    X = np.array(X, dtype=np.float64)
    codes = X[:, nominal]
    codes[out] = np.nan
    X[:, nominal] = codes
    return X


class ProbabilisticClassifier(ClassifierBase):
    """Predictions derived from one joint log-likelihood ``log P(c) + log P(x | c)`` per class.

    A subclass whose ``fit`` is ``self._apply_params(self._fit_statistics(X, y, sample_weight,
    schema))`` scores a grid over ``grid_params`` from one call of ``_fit_statistics`` (which must
    not read them) and one ``_apply_params`` per setting (which sets everything they change).
    Prediction work that the settings share can move into ``_prepare_scoring`` (done once for
    ``X_val``), with ``_score_prepared`` finishing it per setting; by default the first validates
    and the second is ``_joint_log_likelihood``.
    """

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def decision_function(self, X: Any) -> np.ndarray:
        return self._score_prepared(self._prepare_scoring(X))

    def _fit_statistics(self, X: Any, y: Any, sample_weight: Any, schema: Schema | None) -> Any:
        raise NotImplementedError  # pragma: no cover - only called when grid_params is set

    def _prepare_scoring(self, X: Any) -> Any:
        return self._validate_predict(X)

    def _score_prepared(self, prepared: Any) -> np.ndarray:
        return self._joint_log_likelihood(prepared)

    def grid_decision_function(self, X: Any, y: Any, X_val: Any, settings: Sequence[Mapping[str, Any]], *,
                               sample_weight: Any = None, schema: Schema | None = None) -> Iterator[np.ndarray]:
        """As :meth:`ClassifierBase.grid_decision_function`, from one ``_fit_statistics`` when
        ``grid_params`` is set (bit-identical to refitting: the same code runs, minus the repeats)."""
        if not self.grid_params:
            yield from super().grid_decision_function(X, y, X_val, settings, sample_weight=sample_weight,
                                                      schema=schema)
            return
        settings = self._grid_settings(settings)
        if not settings:
            return
        self.set_params(**settings[0])
        state = self._fit_statistics(X, y, sample_weight, schema)
        prepared = None
        for setting in settings:
            self.set_params(**setting)
            self._apply_params(state)
            if prepared is None:
                prepared = self._prepare_scoring(X_val)
            yield self._score_prepared(prepared)

    def predict_log_proba(self, X: Any) -> np.ndarray:
        return self._log_normalise(self.decision_function(X))

    def _log_normalise(self, jll: np.ndarray) -> np.ndarray:
        """Log posteriors, normalised after subtracting each row's maximum: with log-likelihoods near
        1e300 the spacing of floats exceeds the differences between classes, and ``jll - logsumexp(jll)``
        would give every tied class probability 1. A NaN log-likelihood is a refusal, not a guess."""
        jll = np.asarray(jll, dtype=np.float64)
        self._refuse_undefined(jll)
        top = jll.max(axis=1, keepdims=True)
        with np.errstate(invalid="ignore"):
            shifted = np.where(np.isfinite(top), jll - top, 0.0)
        # rows where some class is +inf: those classes share the mass; rows all at -inf: uniform
        plus_inf = np.isposinf(top).ravel()
        if plus_inf.any():
            shifted[plus_inf] = np.where(np.isposinf(jll[plus_inf]), 0.0, -np.inf)
        minus_inf = np.isneginf(top).ravel()
        if minus_inf.any():
            shifted[minus_inf] = 0.0
        return shifted - logsumexp(shifted, axis=1, keepdims=True)

    def predict_proba(self, X: Any) -> np.ndarray:
        return np.exp(self.predict_log_proba(X))

    def decision_and_proba(self, X: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(decision_function(X), predict_proba(X))`` from one joint log-likelihood (both computed as
        asked when a subclass overrides how probabilities are derived)."""
        cls = type(self)
        if (cls.predict_proba is not ProbabilisticClassifier.predict_proba
                or cls.predict_log_proba is not ProbabilisticClassifier.predict_log_proba):
            return self.decision_function(X), self.predict_proba(X)
        jll = self.decision_function(X)
        return jll, np.exp(self._log_normalise(jll))

    def _refuse_undefined(self, jll: np.ndarray) -> None:
        if np.isnan(jll).any():
            raise CapabilityError(f"{type(self).__name__}: the log-likelihood of some instances is undefined "
                                  f"(values too large or too small for the model: rescale the data)")

    def predict(self, X: Any) -> np.ndarray:
        # as predict_proba: a NaN log-likelihood is a refusal (argmax would take it as the largest)
        jll = np.asarray(self.decision_function(X), dtype=np.float64)
        self._refuse_undefined(jll)
        return self.classes_[np.argmax(jll, axis=1)]


class FeatureSelectorBase(_ParamsMixin, _StateMixin):
    """A selector scores columns in ``fit`` (``scores_``) and keeps ``support_`` (sorted indices)."""

    def transform(self, X: Any) -> Any:
        if not hasattr(self, "support_"):
            raise ToolkitError(f"{type(self).__name__} is not fitted yet; call fit first")
        X = as_matrix(X)
        out = X[:, self.support_]
        return sp.csr_matrix(out) if sp.issparse(out) else out

    def fit_transform(self, X: Any, y: Any, **kw: Any) -> Any:
        return self.fit(X, y, **kw).transform(X)  # type: ignore[attr-defined]

    @staticmethod
    def top_k(scores: np.ndarray, k: int | float | None) -> np.ndarray:
        """Indices of the ``k`` best scores (a float in (0, 1] is a share), ties to the lower index;
        returned sorted ascending."""
        n = len(scores)
        if k is None:
            return np.arange(n)
        if isinstance(k, float) and 0 < k <= 1:
            k = max(1, int(round(k * n)))
        k = int(min(max(int(k), 0), n))
        s = np.asarray(scores, dtype=np.float64)
        # NaN ranks with -inf (np.nan_to_num would also turn -inf into -1.8e308, a finite score)
        order = np.lexsort((np.arange(n), rank_key(np.where(np.isnan(s), -np.inf, s))))
        return np.sort(order[:k])


class ExampleSelectorBase(_ParamsMixin, _StateMixin):
    """An example selector returns the indices (and optionally weights) of training rows to keep."""

    def select(self, X: Any, y: Any, random_state: int | None = None) -> Any:  # pragma: no cover
        raise NotImplementedError
