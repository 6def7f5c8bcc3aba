"""The registry of components that plugins register, and its validation.

The host owns the registry and hands each plugin a ``register`` callable bound to that plugin,
so every entry is credited to the plugin (and distribution) that made it. Each call is validated
at once; a problem raises :class:`toolkit.errors.PluginError` naming the plugin.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
import itertools
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolkit.plugin_host.capabilities import Capabilities
from toolkit.errors import ParameterError, PluginError, UnknownComponentError

#: the methods the harness calls on what a factory of each kind makes
_METHODS = {"classifier": (("fit",), ("predict", "predict_proba", "decision_function")),
            "feature-selector": (("fit",),), "example-selector": (("select",),)}


def _gives_probabilities(obj: Any) -> bool:
    """Whether a classifier has a predict_proba (on the object: a wrapper may forward it through
    __getattr__) that is not ClassifierBase's, which refuses."""
    from toolkit.api import inherits_base_method

    return callable(getattr(obj, "predict_proba", None)) and not inherits_base_method(obj, "predict_proba")

__all__ = [
    "ComponentSpec", "ClassifierSpec", "FeatureSelectorSpec", "ExampleSelectorSpec", "EvaluatorSpec",
    "Registry", "Register", "KINDS", "JSONScalar", "expand_grid", "parse_component",
]

JSONScalar = str | int | float | bool | None
_NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")

#: kind -> (hook name, human name, plural used on the CLI)
KINDS: dict[str, tuple[str, str, str]] = {
    "classifier": ("register_classifiers", "classifier", "classifiers"),
    "feature-selector": ("register_feature_selectors", "feature selector", "feature-selectors"),
    "example-selector": ("register_example_selectors", "example selector", "example-selectors"),
    "evaluator": ("register_evaluators", "evaluator", "evaluators"),
}


@dataclass(frozen=True)
class ComponentSpec:
    """One registered component."""

    kind: str
    name: str
    factory: Callable[..., Any]
    description: str
    param_grid: Mapping[str, tuple[JSONScalar, ...]] = field(default_factory=dict)
    capabilities: Capabilities = Capabilities()
    references: tuple[str, ...] = ()
    plugin: str = ""
    distribution: str | None = None

    def create(self, **params: Any) -> Any:
        """Build the component with ``params`` checked against its parameters."""
        check_params(self, params)
        return self.factory(**params)

    def parameters(self) -> dict[str, Any]:
        """Keyword parameters of the factory and their defaults."""
        return factory_parameters(self.factory)

    def parameter_types(self) -> dict[str, tuple[str, Any]]:
        """{parameter: (its type as annotated, its default)}, for ``toolkit list``."""
        import typing

        if not inspect.isclass(self.factory):  # an evaluator function: its argument is the predictions
            return {}
        try:
            hints = typing.get_type_hints(self.factory.__init__ if inspect.isclass(self.factory) else self.factory)
        except Exception:
            hints = {}
        out = {}
        for name, default in self.parameters().items():
            tp = hints.get(name)
            text = "any" if tp is None else getattr(tp, "__name__", None) or str(tp).replace("typing.", "")
            shown = default if _is_json_scalar(default) else repr(default)
            out[name] = (text, None if default is inspect.Parameter.empty else shown)
        return out

    def as_dict(self) -> dict[str, Any]:
        out = {
            "kind": self.kind,
            "name": self.name,
            "description": self.description,
            "param_grid": {k: list(v) for k, v in self.param_grid.items()},
            "parameters": {k: (v if _is_json_scalar(v) else repr(v)) for k, v in self.parameters().items()},
            "parameter_types": {k: t for k, (t, _d) in self.parameter_types().items()},
            "capabilities": self.capabilities.as_dict(),
            "references": list(self.references),
            "plugin": self.plugin,
            "distribution": self.distribution,
        }
        return out


@dataclass(frozen=True)
class ClassifierSpec(ComponentSpec):
    pass


@dataclass(frozen=True)
class FeatureSelectorSpec(ComponentSpec):
    pass


@dataclass(frozen=True)
class ExampleSelectorSpec(ComponentSpec):
    pass


@dataclass(frozen=True)
class EvaluatorSpec(ComponentSpec):
    greater_is_better: bool = True
    needs_proba: bool = False
    #: False for an evaluator whose value is a table (a confusion matrix, per-class figures, curve points):
    #: it has no better or worse, and the statistics leave it out
    scalar: bool = True
    #: the most classes the evaluator takes (a value of K x K cells: the confusion matrix); a dataset with
    #: more is refused before the first repetition. None: any number
    max_classes: int | None = None

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        out["greater_is_better"] = self.greater_is_better
        out["needs_proba"] = self.needs_proba
        out["scalar"] = self.scalar
        out["max_classes"] = self.max_classes
        return out

    def create(self, **params: Any) -> Any:
        if inspect.isclass(self.factory):
            return super().create(**params)
        if params:
            raise ParameterError(f"evaluator '{self.name}' takes no parameters")
        return self.factory


_SPEC_CLASSES = {
    "classifier": ClassifierSpec,
    "feature-selector": FeatureSelectorSpec,
    "example-selector": ExampleSelectorSpec,
    "evaluator": EvaluatorSpec,
}


def _is_json_scalar(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (str, int, bool))


def factory_parameters(factory: Callable[..., Any]) -> dict[str, Any]:
    """Keyword parameters a factory accepts, with their defaults (``inspect.Parameter.empty`` if none);
    a new dict each call, the signature read once per factory (the harness asks for every task)."""
    try:
        return dict(_factory_parameters(factory))
    except TypeError:  # not hashable
        return dict(_factory_parameters.__wrapped__(factory))


@functools.lru_cache(maxsize=1024)
def _factory_parameters(factory: Callable[..., Any]) -> tuple[tuple[str, Any], ...]:
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):
        return ()
    return tuple((name, p.default) for name, p in sig.parameters.items()
                 if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and name != "self")


def check_params(spec: ComponentSpec, params: Mapping[str, Any]) -> None:
    """Refuse parameter names the component does not have, suggesting a close match."""
    valid = spec.parameters()
    for key in params:
        if key not in valid:
            close = difflib.get_close_matches(key, list(valid), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            listing = ", ".join(valid) if valid else "none"
            raise ParameterError(f"{spec.kind} '{spec.name}' has no parameter '{key}'{hint} "
                                 f"(its parameters: {listing})")


class Register(Protocol):
    def __call__(self, name: str, factory: Callable[..., Any], *, description: str,
                 param_grid: Mapping[str, Sequence[JSONScalar]] | None = None,
                 capabilities: Capabilities | None = None, references: Sequence[str] = (),
                 **extra: Any) -> None: ...


class Registry:
    """Registered components of every kind, by name."""

    def __init__(self) -> None:
        self._specs: dict[str, dict[str, ComponentSpec]] = {kind: {} for kind in KINDS}

    # ------------------------------------------------------------------ registration
    def register_callable(self, kind: str, plugin: str, distribution: str | None) -> Register:
        """A ``register`` function bound to one plugin, for one kind."""

        def register(name: str, factory: Callable[..., Any], *, description: str = "",
                     param_grid: Mapping[str, Sequence[JSONScalar]] | None = None,
                     capabilities: Capabilities | None = None, references: Sequence[str] = (),
                     **extra: Any) -> None:
            self.add(kind, name, factory, description=description, param_grid=param_grid,
                     capabilities=capabilities, references=references, plugin=plugin,
                     distribution=distribution, **extra)

        return register

    def add(self, kind: str, name: str, factory: Callable[..., Any], *, description: str,
            param_grid: Mapping[str, Sequence[JSONScalar]] | None = None,
            capabilities: Capabilities | None = None, references: Sequence[str] = (),
            plugin: str = "", distribution: str | None = None, **extra: Any) -> ComponentSpec:
        who = f"plugin '{plugin}'" + (f" ({distribution})" if distribution else "")
        human = KINDS[kind][1]

        def fail(problem: str) -> PluginError:
            return PluginError(f"{who} registers {human} '{name}': {problem}")

        if not isinstance(name, str) or not _NAME.match(name):
            raise fail("the name must be kebab-case (lower-case letters, digits and single hyphens, "
                       "starting with a letter)")
        if not callable(factory):
            raise fail("the factory is not callable")
        if not isinstance(description, str) or not description.strip() or "\n" in description.strip():
            raise fail("the description must be one non-empty line")
        if capabilities is not None and not isinstance(capabilities, Capabilities):
            raise fail("capabilities must be a toolkit.Capabilities")
        allowed_extra = {"greater_is_better", "needs_proba", "scalar", "max_classes"} if kind == "evaluator" else set()
        unknown = set(extra) - allowed_extra
        if unknown:
            raise fail(f"unknown registration field(s): {', '.join(sorted(unknown))}")
        for key in set(extra) & allowed_extra - {"max_classes"}:
            if not isinstance(extra[key], bool):
                raise fail(f"{key} must be True or False, not {extra[key]!r}")
        limit = extra.get("max_classes")
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 2):
            raise fail(f"max_classes must be None or a whole number >= 2, not {limit!r}")
        if kind == "evaluator" and extra.get("scalar", True) and "greater_is_better" not in extra:
            # defaulting to True turned round the v / * marks of a metric where lower is better
            raise fail("say whether a larger value is better: greater_is_better=True or False")
        grid: dict[str, tuple[JSONScalar, ...]] = {}
        params = factory_parameters(factory)
        for key, values in (param_grid or {}).items():
            if key not in params:
                raise fail(f"grid key '{key}' is not a keyword parameter of the factory "
                           f"(it takes: {', '.join(params) or 'nothing'})")
            if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
                raise fail(f"grid values for '{key}' must be a non-empty list")
            for value in values:
                if not _is_json_scalar(value):
                    raise fail(f"grid value {value!r} for '{key}' is not a JSON scalar")
            grid[key] = tuple(values)
        needs_instance = kind != "evaluator" or inspect.isclass(factory)
        caps = capabilities or Capabilities()
        if needs_instance:
            try:
                made = factory()
            except Exception as exc:  # the plugin's own bug, reported as its problem
                raise fail(f"calling the factory with its defaults failed ({type(exc).__name__}: {exc})") from None
            # what each kind is called with: a factory of another kind passed every check and failed at the
            # first repetition (and train still wrote its model)
            lacking = [" or ".join(m) for m in _METHODS.get(kind, ())
                       if not any(callable(getattr(made, one, None)) for one in m)]
            if lacking:
                raise fail(f"what the factory makes ({type(made).__name__}) has no {' and no '.join(lacking)} "
                           f"method, which {KINDS[kind][2]} need")
            if kind == "classifier" and caps.probabilities and not _gives_probabilities(made):
                # a classifier with scores only, registered without probabilities=False, failed every
                # repetition ("gives no probabilities"), whatever the metric
                caps = dataclasses.replace(caps, probabilities=False)
        existing = self._specs[kind].get(name)
        if existing is not None:
            if existing.plugin == plugin:
                raise PluginError(f"{who} registers {human} '{name}' twice")
            other = f"plugin '{existing.plugin}'" + (f" ({existing.distribution})" if existing.distribution else "")
            raise PluginError(f"{human} name '{name}' is registered twice: by {other} and by {who}; "
                              f"uninstall one or block it with TOOLKIT_BLOCK_PLUGINS")
        spec_cls = _SPEC_CLASSES[kind]
        spec = spec_cls(kind=kind, name=name, factory=factory, description=description.strip(),
                        param_grid=grid, capabilities=caps,
                        references=tuple(references), plugin=plugin, distribution=distribution,
                        **extra)
        self._specs[kind][name] = spec
        return spec

    # ------------------------------------------------------------------ lookup
    def remove_plugin(self, plugin: str) -> None:
        """Forget every component ``plugin`` registered (it failed part-way: none of it is used)."""
        for kind in self._specs:
            self._specs[kind] = {n: s for n, s in self._specs[kind].items() if s.plugin != plugin}

    def names(self, kind: str) -> list[str]:
        return sorted(self._specs[kind])

    def specs(self, kind: str) -> list[ComponentSpec]:
        return [self._specs[kind][n] for n in self.names(kind)]

    def __iter__(self) -> Iterator[ComponentSpec]:
        for kind in KINDS:
            yield from self.specs(kind)

    def get(self, kind: str, name: str) -> ComponentSpec:
        try:
            return self._specs[kind][name]
        except KeyError:
            pass
        names = self.names(kind)
        close = difflib.get_close_matches(name, names, n=2, cutoff=0.6)
        raise UnknownComponentError(KINDS[kind][1], name, close, total=len(names))

    def by_plugin(self, plugin: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for kind in KINDS:
            names = [s.name for s in self.specs(kind) if s.plugin == plugin]
            if names:
                out[KINDS[kind][2]] = names
        return out


def expand_grid(grid: Mapping[str, Sequence[JSONScalar]]) -> list[dict[str, JSONScalar]]:
    """Every grid point, first key outermost, values in the order given (algorithms.md 0.2)."""
    if not grid:
        return [{}]
    keys = list(grid)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(grid[k] for k in keys))]


def _parse_scalar(text: str) -> JSONScalar:
    import json

    try:
        value = json.loads(text)
    except ValueError:
        return text  # bare words are strings: variant=weka
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        raise ParameterError(f"parameter value '{text}' is too large for a number (it overflows to infinity)")
    if isinstance(value, float) and value == 0.0 and any(c in "123456789" for c in text.lower().partition("e")[0]):
        # 1e-400 reads as 0.0: the component would be told "not 0.0" about a value the user did not write
        raise ParameterError(f"parameter value '{text}' is too small for a number (it underflows to 0)")
    if not _is_json_scalar(value):
        raise ParameterError(f"parameter value '{text}' is not a JSON scalar")
    return value


def parse_component(text: str) -> tuple[str, dict[str, list[JSONScalar]]]:
    """Parse ``name:k=v,k2=v2`` (the CLI form). A value list ``k=[1,2]`` or ``k=1|2`` gives a grid."""
    name, _, rest = text.partition(":")
    name = name.strip()
    params: dict[str, list[JSONScalar]] = {}
    if not name:
        raise ParameterError(f"'{text}': expected NAME or NAME:key=value,...")
    if rest.strip():
        for part in _split_params(rest):
            key, eq, value = part.partition("=")
            key = key.strip()
            if not eq or not key:
                raise ParameterError(f"'{text}': expected key=value, found '{part}'")
            if key in params:
                raise ParameterError(f"'{text}': '{key}' is given twice; give one value, or a grid {key}=a|b")
            value = value.strip()
            if value.startswith("[") and value.endswith("]"):
                import json

                try:
                    values = json.loads(value)
                except ValueError:
                    raise ParameterError(f"'{text}': {value} is not a JSON list") from None
                if not values or not all(_is_json_scalar(v) for v in values):
                    raise ParameterError(f"'{text}': {value} must be a non-empty list of JSON scalars")
                params[key] = list(values)
            elif "|" in value:
                params[key] = [_parse_scalar(v.strip()) for v in value.split("|")]
            else:
                params[key] = [_parse_scalar(value)]
    return name, params


def _split_params(text: str) -> list[str]:
    """Split on commas that are not inside [...]."""
    parts, depth, current = [], 0, []
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    if current:
        parts.append("".join(current))
    return [p for p in parts if p.strip()]
