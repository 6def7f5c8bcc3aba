"""Found by a review of the Python API as a library user (2026-12-07, late night): arguments the command
line refuses, or reads otherwise, that the API took silently."""

from __future__ import annotations

import math

import pytest

import toolkit
from toolkit.errors import DatasetError, ModelFileError, ParameterError


def test_a_grid_without_tuning_is_refused_not_dropped_for_the_default():
    """evaluate('bma-nb:H=0.5|3', tune=False) fitted H=1.0 (neither value) under the name 'bma-nb'."""
    for call in (lambda: toolkit.evaluate("iris", "bma-nb:H=0.5|3", tune=False, runs=2),
                 lambda: toolkit.train("iris", "liblinear-lr:C=1|2", tune=False)):
        with pytest.raises(ParameterError, match=r"grid for (H|C) \((0.5\|3|1\|2)\) but tuning is off"):
            call()
    one = toolkit.evaluate("iris", "bma-nb:H=0.5", tune=False, runs=2)   # one value: fitted as given
    assert one.records[0]["pipeline"]["name"] == "bma-nb:H=0.5"
    assert toolkit.evaluate("iris", "bma-nb", tune=False, runs=2).records   # the registered grid is not the user's


@pytest.mark.parametrize("seed", [None, -1, 1.5, True])
def test_train_refuses_a_seed_evaluate_refuses(seed):
    """seed=None tuned on an unseeded split (another model every call); -1 with a grid was reported as a
    bug in the component, and without a grid ignored."""
    with pytest.raises(ParameterError, match="seed must be a whole number >= 0"):
        toolkit.train("iris", "bma-nb", seed=seed)


def test_train_into_a_folder_is_one_clear_error_before_fitting(tmp_path):
    with pytest.raises(ModelFileError, match="is a folder; give the model file's path"):
        toolkit.train("iris", "nb-weka", out=tmp_path)


def test_one_metric_given_as_a_string_is_one_metric():
    """metrics='error' was iterated letter by letter: unknown evaluator 'e'."""
    assert toolkit.evaluate("iris", "nb-weka", runs=2, metrics="error").metrics() == ["error"]


@pytest.mark.parametrize("alpha", [-1, 0, 1, 2, math.nan])
def test_compare_refuses_a_significance_level_outside_0_1(alpha):
    results = toolkit.evaluate("iris", ["nb-weka", "nb-gaussian"], runs=2)
    with pytest.raises(ParameterError, match="alpha must lie between 0 and 1"):
        toolkit.compare(results, alpha=alpha)
    assert toolkit.compare(results, alpha=0.01).alpha == 0.01


def test_a_class_attribute_string_is_a_name_also_when_it_is_a_number(tmp_path):
    """'1' was read as the 0-based index 1 (sepalwidth), where the command line's --class 1 is the first
    attribute; a CSV whose header is a number could not name it. 1.5 and True were taken as index 1."""
    csv = tmp_path / "numbered.csv"
    csv.write_text("0,1,2\n1.5,a,x\n2.5,b,y\n3.5,a,x\n", encoding="utf-8")
    from toolkit.config import LoadOptions

    assert toolkit.load_dataset(csv, LoadOptions(class_attribute="1")).class_attribute.name == "1"
    with pytest.raises(DatasetError, match=r"no attribute named '1' for the class \(a position is an int here, "
                                           r"0-based: 0 for WEKA's -c 1\)"):
        toolkit.load_arff("iris", class_attribute="1")
    assert toolkit.load_arff("iris", class_attribute=1).class_attribute.name == "sepalwidth"
    assert toolkit.load_arff("iris", class_attribute="sepallength").class_attribute.name == "sepallength"
    for bad in (1.5, True):
        with pytest.raises(DatasetError, match="a name \\(str\\) or a 0-based index \\(int\\)"):
            toolkit.load_arff("iris", class_attribute=bad)


def test_save_model_names_what_is_wrong_with_its_arguments(tmp_path):
    """A bare classifier was an AttributeError ('pipeline'); a model saved with another dataset than its own
    was said to be a file 'altered or written by an incompatible plugin'."""
    from toolkit.models.model_file import save_model

    iris, vote = toolkit.load_arff("iris"), toolkit.load_arff("vote")
    fitted = toolkit.train(iris, "nb-weka")
    with pytest.raises(ParameterError, match="save_model takes a fitted pipeline .* not WekaNaiveBayes"):
        save_model(fitted.classifier, iris, tmp_path / "a.tkm")
    with pytest.raises(ModelFileError, match="fitted on the classes Iris-setosa, .* and vote has others"):
        save_model(fitted, vote, tmp_path / "b.tkm")
    assert not (tmp_path / "a.tkm").exists() and not (tmp_path / "b.tkm").exists()
    save_model(fitted, iris, tmp_path / "c.tkm")
    assert toolkit.load_model(tmp_path / "c.tkm") is not None


def test_arguments_of_the_wrong_kind_are_named_not_tracebacks():
    """evaluate('iris', 5) was "'int' object is not iterable", explain(ds, None) an AttributeError, and
    resume=True without out was ignored."""
    from toolkit.plugins.naive_bayes.bma import BMANaiveBayes

    for classifiers in (5, [None]):
        with pytest.raises(ParameterError, match="a classifier is a registered name .* not (5|None)"):
            toolkit.evaluate("iris", classifiers, runs=2)
    for bad in (None, BMANaiveBayes):
        with pytest.raises(ParameterError, match="explain takes a registered name"):
            toolkit.explain("iris", bad)
    with pytest.raises(ParameterError, match="resume=True continues the results file given as out"):
        toolkit.evaluate("iris", "nb-weka", runs=2, resume=True)
    assert toolkit.explain("iris", BMANaiveBayes())["H"] == toolkit.explain("iris", "bma-nb")["H"]
    assert len(toolkit.evaluate("iris", ("nb-weka", {}), runs=2).records) == 2
