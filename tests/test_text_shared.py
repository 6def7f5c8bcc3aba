"""Text methods on shared word-count corpora (skipped where ../shared/datasets is absent): the
DCM's perplexity is below the multinomial's (algorithms.md 5.2.6, the chapter's 6.6.3 finding)."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from conftest import shared_path

pytestmark = pytest.mark.shared


@pytest.mark.parametrize("name", ["oh0.wc.arff", "tr11.wc.arff"])
def test_dcm_perplexity_below_multinomial(name):
    path = shared_path("text", name)
    res = toolkit.evaluate(path, ["nb-multinomial:epsilon=1", "nb-multinomial:epsilon=0.01", "dcm"], runs=2,
                           test_fraction=0.2, metrics=["accuracy", "perplexity"])
    pp: dict[str, list[float]] = {}
    for rec in res.ok():
        pp.setdefault(rec["pipeline"]["name"], []).append(rec["metrics"]["perplexity"])
        assert rec["metrics"]["accuracy"] > 0.7
    assert len(pp) == 3
    dcm = np.mean(pp["dcm"])
    for key, values in pp.items():
        if key != "dcm":
            assert dcm < np.mean(values)
