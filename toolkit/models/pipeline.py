"""The one path from a training part to predictions: text -> examples -> features -> classifier.

A :class:`Pipeline` names its components (by registry name or as objects), their fixed
parameters and the grids the harness tunes. ``fit`` runs every selector on the training data it
is given, and only on that, so nothing is learned from a test part. Capabilities are checked
before the classifier sees the data; a mismatch is a :class:`toolkit.errors.CapabilityError` with
a remedy, never a crash halfway through.
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.api import Predictions, Schema, accepts_argument
from toolkit.plugin_host.capabilities import Capabilities
from toolkit.data.dataset import Dataset
from toolkit.errors import CapabilityError, ParameterError, ToolkitError
from toolkit.models.text_step import TEXT_STEP_NAME, text_step_spec
from toolkit.plugin_host.registry import ComponentSpec, JSONScalar, check_params, expand_grid, parse_component

__all__ = ["Step", "Pipeline", "FittedPipeline", "PreparedFit", "default_text_step"]

_ROLES = ("text", "example_selector", "feature_selector", "classifier")
_KIND_OF_ROLE = {"example_selector": "example-selector", "feature_selector": "feature-selector",
                 "classifier": "classifier"}
_SHORT = {"text": "text", "example_selector": "es", "feature_selector": "fs", "classifier": "clf"}


@dataclass
class Step:
    """One component of a pipeline: a registered name with fixed parameters and a grid, or an object."""

    role: str
    name: str
    params: dict[str, JSONScalar] = field(default_factory=dict)
    grid: dict[str, list[JSONScalar]] = field(default_factory=dict)
    obj: Any = None
    spec: ComponentSpec | None = None

    def describe(self) -> dict[str, Any]:
        """Name, fixed parameters and grid: what an experiment statement records so that a resumed run
        refuses another setting. An object's parameters are its ``get_params()`` (a value that is no JSON
        scalar by its repr), else resuming with ``k=1`` would reuse the records of ``k=8``."""
        params: dict[str, Any] = dict(self.params)
        if self.obj is not None and hasattr(self.obj, "get_params"):
            try:
                own = dict(self.obj.get_params())
            except Exception:  # noqa: BLE001 - a foreign object's get_params is not ours to trust
                own = {}
            for key, value in own.items():
                if isinstance(value, np.generic):
                    value = value.item()
                params.setdefault(str(key), value if value is None or isinstance(value, (bool, int, float, str))
                                  else repr(value))
        return {"name": self.name, "params": dict(sorted(params.items())),
                "grid": {k: list(v) for k, v in sorted(self.grid.items())}}

    @property
    def capabilities(self) -> Capabilities:
        if self.spec is not None:
            return self.spec.capabilities
        return getattr(self.obj, "capabilities", Capabilities(nominal=True, sparse=True, missing=True,
                                                              sample_weight=True))

    def build(self, tuned: Mapping[str, JSONScalar], seed: int | None = None) -> Any:
        """The component with its fixed and tuned parameters; a ``random_state`` parameter that the
        user did not fix receives the split's seed, so the same seed gives the same result. An object's own
        ``random_state`` other than its class's default is fixed by the user (it is what :meth:`describe`
        records)."""
        params = {**self.params, **tuned}
        if seed is not None and "random_state" not in params:
            if self.obj is not None:
                own = self.obj.get_params() if hasattr(self.obj, "get_params") else {}
                unset = "random_state" in own and own["random_state"] == _init_default(self.obj, "random_state")
            else:
                unset = self.spec is not None and "random_state" in self.spec.parameters()
            if unset:
                params["random_state"] = int(seed)
        if self.obj is not None:
            obj = copy.deepcopy(self.obj)
            if params and hasattr(obj, "set_params"):
                obj.set_params(**params)
            return obj
        assert self.spec is not None
        return self.spec.create(**params)


def _init_default(obj: Any, name: str) -> Any:
    """The default of ``name`` in the constructor of ``obj``'s class (None when it has none)."""
    try:
        parameter = inspect.signature(type(obj).__init__).parameters.get(name)
    except (TypeError, ValueError):
        return None
    return None if parameter is None or parameter.default is inspect.Parameter.empty else parameter.default


def default_text_step() -> Step:
    """The text step used when a dataset has string attributes and no text option is given."""
    return Step(role="text", name=TEXT_STEP_NAME, spec=text_step_spec())


def _make_step(role: str, value: Any, registry: Any) -> Step | None:
    if value is None:
        return None
    if isinstance(value, Step):
        return value
    kind = _KIND_OF_ROLE.get(role)
    if isinstance(value, str):
        name, grid = parse_component(value)
    elif isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        name = value[0]
        grid = {k: (list(v) if isinstance(v, (list, tuple)) else [v]) for k, v in dict(value[1]).items()}
    else:
        name = getattr(value, "name", None) or type(value).__name__
        # an instance of a registered class keeps that component's capabilities (what it handles)
        spec = None
        if kind is not None and registry is not None:
            spec = next((s for s in registry.specs(kind) if s.factory is type(value)), None)
        return Step(role, str(name), obj=value, spec=spec)
    if role == "text":
        spec = text_step_spec(name)
    else:
        spec = registry.get(kind, name)
    check_params(spec, grid)
    params = {k: v[0] for k, v in grid.items() if len(v) == 1}
    explicit_grid = {k: v for k, v in grid.items() if len(v) > 1}
    tuned_grid = {k: list(v) for k, v in spec.param_grid.items() if k not in grid}
    tuned_grid.update(explicit_grid)
    return Step(role, name, params=params, grid=tuned_grid, spec=spec)


def canonical_pipeline_name(text: str) -> str:
    """A pipeline name as :attr:`Pipeline.name` writes it: each ``" + "`` part's parameters sorted, values in
    JSON, grids as ``a|b`` (so ``--baseline liblinear-lr:C=1,B=1`` names ``liblinear-lr:B=1,C=1``). Text
    that does not parse is returned as it is."""
    try:
        parts = []
        for part in str(text).split(" + "):
            name, grid = parse_component(part.strip())
            items = {k: "|".join(json.dumps(v) for v in values) for k, values in grid.items()}
            parts.append(name + (":" + ",".join(f"{k}={items[k]}" for k in sorted(items)) if items else ""))
        return " + ".join(parts)
    except ToolkitError:
        return str(text)


def resolve_pipeline_name(text: str, names: Sequence[str]) -> str | None:
    """The name among ``names`` that ``text`` denotes: itself, or the same in canonical form; None if none."""
    if text in names:
        return text
    wanted = canonical_pipeline_name(text)
    found = next((n for n in names if canonical_pipeline_name(n) == wanted), None)
    if found is None and " + " not in str(text):
        # the classifier as -c wrote it, when a selector (--fs, --es) put its name in front of every pipeline
        by_classifier = [n for n in names if canonical_pipeline_name(n.rsplit(" + ", 1)[-1]) == wanted]
        if len(by_classifier) == 1:
            found = by_classifier[0]
    return found


class Pipeline:
    """Text vectoriser (for string attributes) -> example selector -> feature selector -> classifier.

    Each component is given as ``"name"``, ``"name:k=v,k2=v2"`` (a value ``a|b`` or ``[a,b]`` is a
    grid to tune), ``(name, {k: v})``, or an object with ``fit``. Registered grids are tuned unless
    a parameter is fixed; ``tune=False`` uses the defaults without tuning.
    """

    def __init__(self, classifier: Any, *, feature_selector: Any = None, example_selector: Any = None,
                 text: Any = "auto", tune: bool = True, name: str | None = None, registry: Any = None):
        if registry is None:
            from toolkit.plugin_host.components import get_registry

            registry = get_registry()
        self.classifier = _make_step("classifier", classifier, registry)
        self.feature_selector = _make_step("feature_selector", feature_selector, registry)
        self.example_selector = _make_step("example_selector", example_selector, registry)
        self._text_setting = text
        self.text = None if text in (None, "auto") else _make_step("text", text, registry)
        self.tune = tune
        self._name = name
        self._validated = False   # validate_components has passed (the harness calls it before a run)

    def check_untuned_grids(self) -> None:
        """Without tuning, a grid the user gave was dropped and the default fitted, under the plain name:
        refused (evaluate and train call this; fitting one grid point by hand, ``fit(ds, point)``, stays)."""
        if self.tune:
            return
        for step in self.steps:
            own = step.spec.param_grid if step.spec is not None else {}
            given = [k for k, values in step.grid.items() if list(own.get(k, ())) != list(values)]
            if given:
                raise ParameterError(f"'{step.name}' is given a grid for {given[0]} "
                                     f"({'|'.join(map(str, step.grid[given[0]]))}) but tuning is off "
                                     f"(--no-tune, tune=False): give {given[0]} one value, or tune")

    @property
    def steps(self) -> list[Step]:
        return [s for s in (self.text, self.example_selector, self.feature_selector, self.classifier) if s]

    @property
    def name(self) -> str:
        """Each step's name with its fixed parameters and, when tuning, a grid other than the component's
        own (``bma-nb:H=0.5|0.6``): two grids of one classifier are two pipelines."""
        if self._name:
            return self._name
        parts = []
        for step in self.steps:
            items = {k: json.dumps(v) for k, v in step.params.items()}
            if self.tune and step.spec is not None:
                own = step.spec.param_grid
                items.update({k: "|".join(json.dumps(v) for v in values) for k, values in step.grid.items()
                              if list(own.get(k, ())) != list(values)})
            parts.append(step.name + (":" + ",".join(f"{k}={items[k]}" for k in sorted(items)) if items else ""))
        return " + ".join(parts)

    def describe(self) -> dict[str, Any]:
        """Canonical description (stored in result files and used for resume keys)."""
        out: dict[str, Any] = {"name": self.name, "tune": self.tune}
        for step in self.steps:
            out[step.role] = step.describe()
        return out

    def grid(self) -> dict[str, list[JSONScalar]]:
        """The tuning grid, keys namespaced by role (``clf.C``), classifier keys first."""
        if not self.tune:
            return {}
        out: dict[str, list[JSONScalar]] = {}
        for step in (self.classifier, self.feature_selector, self.example_selector, self.text):
            if step is None:
                continue
            for key, values in step.grid.items():
                out[f"{_SHORT[step.role]}.{key}"] = list(values)
        return out

    def grid_points(self) -> list[dict[str, JSONScalar]]:
        return expand_grid(self.grid())

    def check_evaluators(self, evaluators: list[ComponentSpec]) -> None:
        caps = self.classifier.capabilities
        for ev in evaluators:
            if getattr(ev, "needs_proba", False) and not caps.probabilities:
                raise CapabilityError(f"{self.classifier.name} cannot give probabilities for --metric {ev.name}; "
                                      f"choose a probabilistic classifier or another metric")

    def validate_components(self) -> None:
        """Build every component at every grid point once and check its hyperparameters
        (:func:`toolkit.api.validate_component`), so that a bad value stops a run before any fit."""
        from toolkit.api import validate_component

        steps = [s for s in (self.text, self.example_selector, self.feature_selector, self.classifier) if s]
        for step in steps:
            grid = step.grid if self.tune else {}
            for point in expand_grid(grid):
                try:
                    obj = step.build(point)
                except TypeError as exc:
                    raise ParameterError(f"{step.name}: {exc}") from None
                validate_component(obj, step.name)
        self._validated = True

    def check_data(self, ds: Dataset) -> None:
        """Refuse, before any repetition, a dataset that a step cannot take: every step's capabilities
        against the data as it reaches that step (after the text step, when there is one). What a feature
        selector may drop (nominal, missing or negative columns) is left to the fit-time check."""
        ds.require_nominal_class()
        X: Any = ds.X
        schema = Schema.from_dataset(ds)
        text_step = self.text
        if text_step is None and self._text_setting == "auto" and self._needs_text(ds):
            text_step = default_text_step()
        if text_step is not None:
            X, schema = text_step.build({}).fit_transform_dataset(ds)
        y = np.asarray(ds.y)
        weights = np.asarray(ds.weights, dtype=np.float64)
        for step in (self.example_selector, self.feature_selector):
            if step is not None:
                _check_capabilities(step, X, y, weights, schema)
        if self.example_selector is not None:  # an example selector may weight rows: left to fit time
            weights = np.ones_like(weights)
        _check_capabilities(self.classifier, X, y, weights, schema,
                            column_kinds=self.feature_selector is None)

    def _needs_text(self, ds: Dataset) -> bool:
        return bool(ds.features.mask("string").any())

    def fit(self, ds: Dataset, params: Mapping[str, JSONScalar] | None = None, seed: int = 0) -> FittedPipeline:
        """Fit every step on ``ds`` (a training part) with the tuned ``params`` (namespaced)."""
        prepared = self.prepare(ds, params, seed)
        clf = self.classifier.build(prepared.classifier_params, seed)
        clf.fit(prepared.X, prepared.y, **prepared.fit_kwargs(clf))
        fitted = prepared.fitted
        fitted.classifier = clf
        return fitted

    def prepare(self, ds: Dataset, params: Mapping[str, JSONScalar] | None = None, seed: int = 0) -> PreparedFit:
        """Fit every step before the classifier on ``ds`` and return what the classifier would be fitted
        on (the harness scores several classifier settings on it; :meth:`fit` fits the classifier)."""
        if not getattr(self, "_validated", False):   # once per pipeline: a bad value stops before any fit
            self.validate_components()
        params = dict(params or {})
        by_role: dict[str, dict[str, JSONScalar]] = {role: {} for role in _ROLES}
        short_to_role = {v: k for k, v in _SHORT.items()}
        for key, value in params.items():
            prefix, _, name = key.partition(".")
            if prefix not in short_to_role or not name:
                raise ParameterError(f"tuned parameter '{key}' must look like clf.NAME, fs.NAME, es.NAME or text.NAME")
            by_role[short_to_role[prefix]][name] = value
        fitted = FittedPipeline(self, params)
        X: Any = ds.X
        ds.require_nominal_class()
        y = np.asarray(ds.y)
        schema = Schema.from_dataset(ds)
        fitted.input_schema = schema   # the data's own header (save_model checks the dataset it is given)
        weights = np.asarray(ds.weights, dtype=np.float64)
        # text: string attributes -> word counts, learned on this training part only
        text_step = self.text
        if text_step is None and self._text_setting == "auto" and self._needs_text(ds):
            text_step = default_text_step()
        fitted.text_step = text_step
        if text_step is not None:
            vectorizer = text_step.build(by_role["text"], seed)
            X, schema = vectorizer.fit_transform_dataset(ds)
            fitted.vectorizer = vectorizer
        # a row whose class is missing teaches no component anything (WEKA's classifiers skip it); it is
        # dropped here, once, so that no selector or classifier, built-in or third-party, sees a code -1
        labelled = np.flatnonzero(y >= 0)
        if len(labelled) < len(y):
            X, y, weights = X[labelled], y[labelled], weights[labelled]
            if sp.issparse(X):
                X = sp.csr_matrix(X)
        # example selection
        if self.example_selector is not None:
            _refuse_weights(self.example_selector, weights)
            selector = self.example_selector.build(by_role["example_selector"], seed)
            chosen = selector.select(X, y, random_state=seed)
            if isinstance(chosen, tuple):
                rows, sel_weights = chosen
                rows = np.asarray(rows, dtype=np.int64)
                weights = weights[rows] * np.asarray(sel_weights, dtype=np.float64)
            else:
                rows = np.asarray(chosen, dtype=np.int64)
                weights = weights[rows]
            X, y = X[rows], y[rows]
            fitted.example_selector = selector
            fitted.selected_rows = rows if len(labelled) == len(ds.y) else labelled[rows]  # rows of ``ds``
        # feature selection
        if self.feature_selector is not None:
            _refuse_weights(self.feature_selector, weights)
            selector = self.feature_selector.build(by_role["feature_selector"], seed)
            if accepts_argument(selector.fit, "schema"):
                selector.fit(X, y, schema=schema)
            else:
                selector.fit(X, y)
            support = np.asarray(selector.support_)
            if support.dtype == bool:
                support = np.flatnonzero(support)
            X = X[:, support]
            if sp.issparse(X):
                X = sp.csr_matrix(X)
            schema = schema.select(support)
            fitted.feature_selector = selector
            fitted.support = support
        _check_capabilities(self.classifier, X, y, weights, schema)
        fitted.schema = schema
        return PreparedFit(fitted, X, y, weights, schema, by_role["classifier"])


@dataclass
class PreparedFit:
    """A pipeline fitted up to its classifier: the classifier's training data and its parameters."""

    fitted: FittedPipeline          # every step but the classifier (``transform`` works)
    X: Any
    y: np.ndarray
    weights: np.ndarray
    schema: Schema
    classifier_params: dict[str, JSONScalar]

    def fit_kwargs(self, clf: Any) -> dict[str, Any]:
        """``schema`` when the classifier's ``fit`` takes one; ``sample_weight`` unless all weights are 1."""
        kwargs: dict[str, Any] = {}
        if accepts_argument(clf.fit, "schema"):
            kwargs["schema"] = self.schema
        if np.any(self.weights != 1.0):
            kwargs["sample_weight"] = self.weights
        return kwargs


def _refuse_weights(step: Step, weights: np.ndarray) -> None:
    """A selector is given no weights: on weighted rows it would choose as if every weight were 1 (the
    check a run makes up front, made again at fit for a pipeline fitted directly)."""
    if not step.capabilities.sample_weight and np.any(weights != 1.0):
        raise CapabilityError(f"{step.name} does not accept instance weights; use an example selector that returns "
                              f"indices only, or a classifier that accepts weights")


#: cells of a classifier's class x nominal-value tables (counts, log-probabilities, one-hot weights): 2^28
#: cells are 2 GiB of float64, each copy
MAX_TABLE_CELLS = 1 << 28


def _check_table_size(name: str, schema: Schema, nominal: np.ndarray) -> None:
    """Refuse up front a classifier's per-class tables of nominal values past :data:`MAX_TABLE_CELLS` (a
    100,000-value attribute with a 100,000-value class asked for 75 GiB in the first repetition)."""
    values = np.asarray(schema.n_values, dtype=np.int64)[nominal]
    cells = len(schema.classes) * int(values.sum())
    if cells > MAX_TABLE_CELLS:
        widest = int(nominal[int(np.argmax(values))])
        raise CapabilityError(f"{name}: {len(schema.classes):,} classes x {int(values.sum()):,} nominal values (the "
                              f"most in '{schema.features.name(widest)}': {int(values.max()):,}) make tables of "
                              f"{cells:,} cells, past the limit of {MAX_TABLE_CELLS:,}; merge rare values or classes")


def _check_capabilities(step: Step, X: Any, y: np.ndarray, weights: np.ndarray, schema: Schema,
                        column_kinds: bool = True, class_count: bool = True) -> None:
    """Refuse data the step cannot take; ``column_kinds=False`` skips what depends on which columns are
    there (nominal, missing, negative values), for a check made before a feature selector runs;
    ``class_count=False`` skips the number of classes present (a shard of the data may hold one)."""
    caps = step.capabilities
    name = step.name
    kind = {"classifier": "classifier", "feature_selector": "feature selector",
            "example_selector": "example selector"}.get(step.role, "component")
    bags = schema.columns_of_kind("relational")
    if len(bags) and not getattr(caps, "relational", False):
        attr = schema.features.name(int(bags[0]))
        raise CapabilityError(f"{name} cannot use relational (multi-instance) attribute '{attr}'; "
                              f"choose a multi-instance classifier or remove the attribute")
    strings = schema.columns_of_kind("string")
    if len(strings) and not caps.string:
        attr = schema.features.name(int(strings[0]))
        raise CapabilityError(f"{name} cannot use string attribute '{attr}'; it must become word counts first")
    if sp.issparse(X) and not caps.sparse:
        raise CapabilityError(f"{name} does not accept sparse data; load the dataset dense (--dense) "
                              f"or choose a {kind} that accepts sparse input")
    nominal = schema.columns_of_kind("nominal") if column_kinds else ()
    if len(nominal) and not caps.nominal:
        names = [schema.features.name(int(i)) for i in nominal[:3]]
        raise CapabilityError(f"{name} does not handle nominal attributes ({', '.join(names)}, ...); "
                              f"choose a {kind} that does")
    if len(nominal) and step.role == "classifier":
        _check_table_size(name, schema, nominal)
    data = X.data if sp.issparse(X) else np.asarray(X)
    # one pass for both checks: most data are all finite, and then neither looks further
    if column_kinds and data.size and not np.isfinite(data).all():
        if not caps.missing and np.isnan(data).any():
            if sp.issparse(X):
                cols = np.unique(X.indices[np.isnan(X.data)])
            else:
                cols = np.flatnonzero(np.isnan(X).any(axis=0))
            names = ", ".join(schema.features.name(int(c)) for c in cols[:3])
            raise CapabilityError(f"{name} does not handle missing values, found in {names}"
                                  f"{', ...' if len(cols) > 3 else ''}; choose a {kind} that does")
        if not getattr(caps, "infinite", False) and np.isinf(data).any():
            # a value of Infinity: every model's sums become inf or NaN
            flat = int(np.flatnonzero(np.isinf(data))[0])
            col = int(X.indices[flat]) if sp.issparse(X) else flat % X.shape[1]
            raise CapabilityError(f"{name} cannot use infinite values; attribute '{schema.features.name(col)}' "
                                  f"holds {data.flat[flat]:g} (replace it with a finite number or ?)")
    if caps.nonnegative and column_kinds:
        if data.size and np.nanmin(data) < 0:
            col = int(X.indices[np.nanargmin(data)]) if sp.issparse(X) else int(np.nanargmin(data) % X.shape[1])
            raise CapabilityError(f"{name} needs non-negative values such as word counts; attribute "
                                  f"'{schema.features.name(col)}' has negative ones")
    if caps.integer and column_kinds and not _allows_fractional(step):
        finite = data[np.isfinite(data)] if data.size else data
        fractional = finite != np.floor(finite)
        if fractional.any():
            value = float(finite[np.argmax(fractional)])
            raise CapabilityError(f"{name} needs whole-number counts and found {value:g}; pass "
                                  f"{name}:allow_fractional=true to score weighted values anyway")
    _refuse_weights(step, weights)
    n_classes = len(schema.classes)
    if n_classes > 2 and not caps.multiclass:
        raise CapabilityError(f"{name} handles two classes only; this dataset has {n_classes} (make binary tasks, "
                              f"one class against the rest, with --positive CLASS or --positive-below SHARE)")
    present = len(np.unique(y[y >= 0])) if class_count else caps.min_classes
    if present < caps.min_classes:
        held = f"{present} class" if present == 1 else f"{present} classes"
        raise CapabilityError(f"{name} needs training data of at least {caps.min_classes} "
                              f"{'class' if caps.min_classes == 1 else 'classes'}; this training part holds {held} "
                              f"({len(y)} instances)")
    # a component's own check of what its options cannot take in this data (e.g. a scaling that would make
    # sparse input dense), with its fixed parameters: a value from a grid is checked when it is fitted
    check = getattr(step.build({}), "check_data", None)
    if callable(check):
        check(X, schema)


def _allows_fractional(step: Step) -> bool:
    value = step.params.get("allow_fractional")
    if value is None and step.obj is not None:
        value = getattr(step.obj, "allow_fractional", None)
    return value is True


class FittedPipeline:
    """A pipeline after ``fit``: transforms a test part and predicts it."""

    def __init__(self, pipeline: Pipeline, params: Mapping[str, JSONScalar]):
        self.pipeline = pipeline
        self.params = dict(params)
        self.vectorizer: Any = None
        self.text_step: Step | None = None
        self.example_selector: Any = None
        self.selected_rows: np.ndarray | None = None
        self.feature_selector: Any = None
        self.support: np.ndarray | None = None
        self.classifier: Any = None
        self.schema: Schema | None = None   # what the classifier was fitted on (after text and selection)
        self.input_schema: Schema | None = None   # the training data's features and classes

    def transform(self, ds: Dataset) -> Any:
        X: Any = ds.X
        if self.vectorizer is not None:
            X = self.vectorizer.transform_dataset(ds)
        if self.support is not None:
            X = X[:, self.support]
            if sp.issparse(X):
                X = sp.csr_matrix(X)
        return X

    def predict(self, ds: Dataset, *, keep_model: bool = True) -> Predictions:
        X = self.transform(ds)
        clf = self.classifier
        proba = None
        caps = self.pipeline.classifier.capabilities
        if caps.probabilities and hasattr(clf, "decision_and_proba"):   # both from one pass (api.py)
            scores, proba = (np.asarray(a, dtype=np.float64) for a in clf.decision_and_proba(X))
        else:
            if caps.probabilities and hasattr(clf, "predict_proba"):
                proba = np.asarray(clf.predict_proba(X), dtype=np.float64)
            scores = (np.asarray(clf.decision_function(X), dtype=np.float64)
                      if gives_scores(clf, caps.probabilities) else None)
        if scores is not None and scores.ndim == 1:  # binary margin -> two columns
            scores = np.column_stack([-scores, scores])
        basis = scores if scores is not None else proba
        if basis is None:
            y_pred = np.asarray(clf.predict(X), dtype=np.int64)
        else:
            refuse_undefined_scores(clf, basis)
            y_pred = np.asarray(clf.classes_, dtype=np.int64)[np.argmax(basis, axis=1)]
        K = len(self.schema.classes) if self.schema is not None else len(clf.classes_)
        proba = _expand(proba, clf, K)
        scores = _expand(scores, clf, K, fill=-np.inf)
        y_true = np.asarray(ds.y, dtype=np.int64)
        return Predictions(y_true=y_true, y_pred=y_pred, proba=proba, scores=scores,
                           classes=tuple(self.schema.classes) if self.schema else tuple(map(str, clf.classes_)),
                           weights=np.asarray(ds.weights), model=clf if keep_model else None, X=X)


def refuse_undefined_scores(clf: Any, scores: np.ndarray) -> None:
    """A NaN score is a refusal, not a guess (argmax would take it as the largest): in the classifier's
    own words where it has them (toolkit.api's probabilistic classifiers), else a CapabilityError."""
    if not np.isnan(scores).any():
        return
    refuse = getattr(clf, "_refuse_undefined", None)
    if callable(refuse):
        refuse(scores)
    rows = np.flatnonzero(np.isnan(scores).any(axis=1)) if scores.ndim == 2 else np.flatnonzero(np.isnan(scores))
    raise CapabilityError(f"{type(clf).__name__}: the scores of {len(rows)} instance{'s' if len(rows) != 1 else ''} "
                          f"are undefined (NaN), the first in row {int(rows[0]) + 1}: values too large or too "
                          f"small for the model (rescale the data) or parameters out of range")


def gives_scores(clf: Any, probabilities: bool) -> bool:
    """Whether ``clf.decision_function`` gives scores: ClassifierBase's own is the log of predict_proba, so
    a subclass with neither (fit and predict only) is predicted by its predict (every repetition failed
    with 'gives no probabilities')."""
    from toolkit.api import inherits_base_method

    return hasattr(clf, "decision_function") and (probabilities or not inherits_base_method(clf, "decision_function"))


def _expand(values: np.ndarray | None, clf: Any, K: int, fill: float = 0.0) -> np.ndarray | None:
    """Columns follow ``clf.classes_`` (codes); place them at their code positions among K classes."""
    if values is None:
        return None
    classes = np.asarray(clf.classes_, dtype=np.int64)
    if len(classes) == K and np.array_equal(classes, np.arange(K)):
        return values
    out = np.full((values.shape[0], K), fill)
    out[:, classes] = values
    return out
