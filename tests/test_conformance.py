"""The conformance suite (toolkit.testing) on every registered built-in component."""

from __future__ import annotations

from toolkit.plugin_host.manager import get_plugin_manager
from toolkit.testing import EXAMPLE_SELECTOR_CHECKS, SELECTOR_CHECKS, parametrize_with_checks

_REGISTRY = get_plugin_manager(autoload=False).registry
CLASSIFIERS = [s.name for s in _REGISTRY.specs("classifier")]
FEATURE_SELECTORS = [s.name for s in _REGISTRY.specs("feature-selector")]
EXAMPLE_SELECTORS = [s.name for s in _REGISTRY.specs("example-selector")]


@parametrize_with_checks(CLASSIFIERS)
def test_builtin_classifier_conforms(name, check):
    check(name)


@parametrize_with_checks(FEATURE_SELECTORS, SELECTOR_CHECKS)
def test_builtin_feature_selector_conforms(name, check):
    check(name)


if EXAMPLE_SELECTORS:
    @parametrize_with_checks(EXAMPLE_SELECTORS, EXAMPLE_SELECTOR_CHECKS)
    def test_builtin_example_selector_conforms(name, check):
        check(name)
