"""Thesis Table 3 under the thesis-compatibility protocol (algorithms.md 5.1.3 and 6.1).

The expected error counts are the thesis's published percentages turned back into counts
(algorithms.md 6.1 lists them); they come from the thesis, not from this code.
"""

from __future__ import annotations

import pytest

import toolkit
from conftest import shared_path

# dataset -> (n, n_test, BMA errors, NB errors) from algorithms.md 6.1
TABLE3 = {
    "anneal": (898, 89, 7, 7), "autos": (205, 20, 6, 8), "vote": (435, 43, 2, 5), "sick": (3772, 377, 24, 29),
    "credit-a": (690, 69, 16, 16), "mushroom": (8124, 812, 11, 31), "heart-statlog": (270, 27, 2, 2),
    "segment": (2310, 231, 55, 55), "labor": (57, 5, 0, 0), "vowel": (990, 99, 33, 42),
    "audiology": (226, 22, 5, 6), "iris": (150, 15, 1, 2), "zoo": (101, 10, 0, 0), "lymph": (148, 14, 1, 1),
    "soybean": (683, 68, 8, 8), "balance-scale": (625, 62, 6, 6), "glass": (214, 21, 11, 11),
    "letter": (20000, 2000, 681, 705), "hepatitis": (155, 15, 4, 4), "haberman": (306, 30, 10, 10),
}


@pytest.fixture(scope="module")
def nb_thesis_results():
    paths = [shared_path("uci", f"{name}.arff") for name in TABLE3]
    return toolkit.evaluate(paths, ["nb-weka"], protocol="thesis", metrics=["error"])


@pytest.mark.parametrize("name", sorted(TABLE3))
def test_nb_column_exactly(nb_thesis_results, name):
    n, n_test, _bma, nb = TABLE3[name]
    (rec,) = nb_thesis_results.cell(name, "nb-weka")
    assert rec["dataset"]["n_instances"] == n
    assert rec["n_test"] == n_test
    assert rec["metrics"]["errors"] == nb


@pytest.fixture(scope="module")
def bma_thesis_results():
    paths = [shared_path("uci", f"{name}.arff") for name in TABLE3]
    return toolkit.evaluate(paths, ["bma-nb"], protocol="thesis", metrics=["error"])


def test_bma_column_at_least_18_of_20_and_the_rest_are_validation_ties(bma_thesis_results):
    """algorithms.md 6.1: ascending-H tie-breaking reproduces 18 of 20 BMA cells; for autos and iris
    every H in the validation-tie set is optimal and the published count is reachable within it."""
    from toolkit.data import arff
    from toolkit.evaluation.resampling import thesis_split
    from toolkit.models.pipeline import Pipeline

    exact, misses = 0, []
    for name, (_n, _n_test, bma, _nb) in TABLE3.items():
        (rec,) = bma_thesis_results.cell(name, "bma-nb")
        if rec["metrics"]["errors"] == bma:
            exact += 1
        else:
            misses.append(name)
            errors = [t["validation_errors"] for t in rec["tuning"]]
            ties = [t["params"]["clf.H"] for t in rec["tuning"] if t["validation_errors"] == min(errors)]
            ds = arff.read(shared_path("uci", f"{name}.arff"))
            split = thesis_split(ds.n_instances)
            reachable = set()
            for h in ties:
                fitted = Pipeline(f"bma-nb:H={h}", tune=False).fit(ds.subset(split.train))
                pred = fitted.predict(ds.subset(split.test))
                reachable.add(int((pred.y_pred != pred.y_true).sum()))
            assert bma in reachable, (name, ties, reachable)
    assert exact >= 18, misses
    assert set(misses) <= {"autos", "iris"}


def test_vote_bma_validation_errors_by_h(bma_thesis_results):
    """algorithms.md 7.10: validation errors for H = 0.5..1.5 are (3,3,3,3,3,3,3,2,2,1,1) -> H* = 1.4."""
    (rec,) = bma_thesis_results.cell("vote", "bma-nb")
    assert [t["validation_errors"] for t in rec["tuning"]] == [3, 3, 3, 3, 3, 3, 3, 2, 2, 1, 1]
    assert rec["chosen_params"] == {"clf.H": 1.4}
    assert rec["metrics"]["errors"] == 2
