"""Hyperparameters are checked on every path that builds a component, not only in a run: a value of the
wrong type used to fit (a string ``"False"`` reads as true) and could be saved in a model file that
``load_model`` then refused."""

from __future__ import annotations

import pytest

import toolkit
from toolkit.errors import ParameterError


@pytest.mark.parametrize("make", [
    lambda: toolkit.get_classifier("nb-weka", laplace="abc"),
    lambda: toolkit.get_classifier("bma-nb", H=-1.0),
    lambda: toolkit.get_feature_selector("kl", k="ten"),
    lambda: toolkit.get_evaluator("error", nonexistent=1),
])
def test_get_component_refuses_bad_values(make):
    with pytest.raises(ParameterError):
        make()


def test_pipeline_fit_checks_its_components_once_before_fitting(monkeypatch):
    ds = toolkit.load_arff("iris")
    with pytest.raises(ParameterError, match="bma-nb: parameter H must be a number, not 'x'"):
        toolkit.Pipeline('bma-nb:H="x"', tune=False).fit(ds)
    with pytest.raises(ParameterError, match="nb-weka: parameter laplace"):
        toolkit.Pipeline(("nb-weka", {"laplace": "abc"}), tune=False).fit(ds)
    # a good pipeline is checked once, not at every fit (the harness fits it thousands of times)
    from toolkit.models import pipeline as module

    calls = []
    original = module.Pipeline.validate_components
    monkeypatch.setattr(module.Pipeline, "validate_components", lambda self: (calls.append(1), original(self)))
    pipe = toolkit.Pipeline("nb-weka", tune=False)
    for _ in range(3):
        pipe.fit(ds)
    assert len(calls) == 1
