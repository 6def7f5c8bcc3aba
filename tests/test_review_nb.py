"""Review of the naive Bayes family (nb-weka, nb-gaussian, bma-nb): regressions for the bugs found, with
expected values from WEKA 3.6.14 (tests/golden/*.json, written by scripts/weka/*.py) or from the contract
the docs state, never from the code under test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import toolkit as tk
from toolkit.api import Schema
from toolkit.data import arff
from toolkit.errors import ParameterError
from toolkit.models.pipeline import Pipeline

GOLDEN = Path(__file__).parent / "golden"


def _weather():
    return arff.read(Path(__file__).resolve().parents[1] / "datasets" / "weather.nominal.arff")


# ----------------------------------------------------------------------------------------------- replay flag

@pytest.mark.parametrize("name", ["nb-weka", "nb-gaussian"])
@pytest.mark.parametrize("value", ["False", "True", "no", 0, 1.0])
def test_replay_must_be_a_flag_not_any_truthy_value(name, value):
    """``nb-weka:replay=False`` on the command line or in a spec string gives the bare word "False" (spec values
    are JSON: only false/true are flags). Before, fit took any truthy value as True, so "False" switched the replay
    on (and for nb-gaussian refused with "replay=True ... needs variant='weka'"), and a model saved with it could
    not be loaded ("parameter replay must be true or false"). Now fit refuses it, as load_model does."""
    ds = _weather()
    with pytest.raises(ParameterError, match="replay must be true or false"):
        tk.get_classifier(name, replay=value).fit(ds.X, ds.y, schema=Schema.from_dataset(ds))
    if value == "False":
        with pytest.raises(ParameterError, match="replay must be true or false"):
            Pipeline(f"{name}:replay={value}", tune=False).fit(ds)


@pytest.mark.parametrize("param, value", [("laplace", "1"), ("var_smoothing", "1e-3"), ("laplace", True)])
def test_smoothing_parameters_must_be_numbers(param, value):
    """A string or a bool for laplace / var_smoothing is refused with ParameterError (before: a numpy TypeError from
    the comparison, or True taken as 1)."""
    ds = _weather()
    with pytest.raises(ParameterError, match=f"{param} must be a number"):
        tk.get_classifier("nb-weka", **{param: value}).fit(ds.X, ds.y, schema=Schema.from_dataset(ds))
