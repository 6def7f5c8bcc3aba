"""The conformance suite (toolkit.testing) on every registered built-in classifier."""

from __future__ import annotations

from toolkit.manager import get_plugin_manager
from toolkit.testing import parametrize_with_checks

BUILTIN_CLASSIFIERS = [s.name for s in get_plugin_manager(autoload=False).registry.specs("classifier")]


@parametrize_with_checks(BUILTIN_CLASSIFIERS)
def test_builtin_classifier_conforms(name, check):
    check(name)
