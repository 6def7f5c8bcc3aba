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


def get_classifier(name: str, **params: Any) -> Any:
    """A new classifier; unknown names and parameters raise with a close match suggested."""
    return get_spec("classifier", name).create(**params)


def get_feature_selector(name: str, **params: Any) -> Any:
    return get_spec("feature-selector", name).create(**params)


def get_example_selector(name: str, **params: Any) -> Any:
    return get_spec("example-selector", name).create(**params)


def get_evaluator(name: str, **params: Any) -> Any:
    return get_spec("evaluator", name).create(**params)
