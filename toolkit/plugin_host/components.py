"""Looking up registered components by name (``get_classifier("nb-weka", variant="weka")``)."""

from __future__ import annotations

from typing import Any

from toolkit.plugin_host.manager import default_manager
from toolkit.plugin_host.registry import ComponentSpec, Registry

__all__ = ["get_registry", "get_spec", "get_classifier", "get_feature_selector", "get_example_selector",
           "get_evaluator"]


def get_registry() -> Registry:
    """The registry of the process-wide plugin manager."""
    return default_manager().registry


def get_spec(kind: str, name: str) -> ComponentSpec:
    return get_registry().get(kind, name)


def _create(kind: str, name: str, params: dict[str, Any]) -> Any:
    """The component with its hyperparameters checked (types and ranges) before any data is seen, as a
    run checks them: a value of the wrong type would otherwise fit and fail later, or be saved in a
    model file that cannot be loaded."""
    from toolkit.api import validate_component
    from toolkit.errors import ParameterError
    from toolkit.plugin_host.registry import parse_component

    if isinstance(name, str) and ":" in name:   # "bma-nb:H=1.1", as -c, Pipeline and train take it
        name, grid = parse_component(name)
        several = [k for k, values in grid.items() if len(values) != 1]
        if several:
            raise ParameterError(f"'{several[0]}' is given several values (a grid); one component takes one")
        clash = sorted(set(grid) & set(params))
        if clash:
            raise ParameterError(f"'{clash[0]}' is given in the name and as a keyword; give it once")
        params = {**{k: values[0] for k, values in grid.items()}, **params}
    obj = get_spec(kind, name).create(**params)
    validate_component(obj, name)
    return obj


def get_classifier(name: str, **params: Any) -> Any:
    """A new classifier; unknown names and parameters raise with a close match suggested."""
    return _create("classifier", name, params)


def get_feature_selector(name: str, **params: Any) -> Any:
    return _create("feature-selector", name, params)


def get_example_selector(name: str, **params: Any) -> Any:
    return _create("example-selector", name, params)


def get_evaluator(name: str, **params: Any) -> Any:
    return _create("evaluator", name, params)
