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
