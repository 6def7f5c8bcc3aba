"""Tuning that scores a grid from one fit (issue 19): the harness's choices and test predictions must be
those of refitting the whole pipeline at every grid point.

The reference here is a brute-force loop written in this file: for every grid point, every tuning part,
``Pipeline.fit`` on the fit part and ``FittedPipeline.predict`` on the validation part (the path that never
calls ``grid_decision_function``), the first point with the fewest errors, a refit on the training part and
its test predictions. The harness runs with its own machinery (``harness.run``), on several datasets per
component, dense and sparse, with missing values, text and a feature selector.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import toolkit
from conftest import shared_path
from toolkit.api import Schema
from toolkit.errors import ParameterError
from toolkit.evaluation import harness
from toolkit.evaluation.harness import Protocol
from toolkit.models.pipeline import Pipeline


def brute_force(pipeline: Pipeline, ds, split) -> tuple[dict, list[int], list[int]]:
    """(chosen point, validation errors per point, test predictions) by refitting at every point."""
    points = pipeline.grid_points()
    errors = []
    for params in points:
        total = 0
        for fit_rows, val_rows in split.tuning_parts:
            pred = pipeline.fit(ds.subset(fit_rows), params, seed=split.seed).predict(ds.subset(val_rows))
            known = pred.y_true >= 0
            total += int(np.sum(pred.y_pred[known] != pred.y_true[known]))
        errors.append(total)
    chosen = points[errors.index(min(errors))] if len(points) > 1 else (points[0] if points else {})
    test = pipeline.fit(ds.subset(split.train), chosen, seed=split.seed).predict(ds.subset(split.test))
    return dict(chosen), errors, test.y_pred.tolist()


def check_against_brute_force(pipeline: Pipeline, ds, protocol: Protocol) -> list[dict]:
    records = harness.run([ds], [pipeline], protocol, []).records
    splits = {s.repetition: s for s in protocol.splits(ds)}
    assert len(records) == len(splits)
    for record in records:
        assert record["status"] == "ok", record.get("error")
        chosen, errors, test_pred = brute_force(pipeline, ds, splits[record["repetition"]])
        assert record["chosen_params"] == chosen
        assert [t["validation_errors"] for t in record["tuning"]] == errors
        assert record["predictions"]["y_pred"] == test_pred
    return records


def bundled(name: str):
    return toolkit.load_arff(name)


# (component, datasets): every component that declares grid_params, on several datasets each
CASES = [
    ("bma-nb", ["vote", "glass", "diabetes", "soybean"]),           # nominal + missing, numeric, both
    ("bma-nb-zh", ["labor", "breast-cancer", "iris"]),
    ("nb-gaussian", ["iris", "ionosphere", "glass", "diabetes"]),
    ("nb-weka:laplace=0.5|1|2", ["vote", "soybean", "labor"]),
    ("nb-gaussian:var_smoothing=1e-9|1e-3|1e-1,prior=mle|uniform", ["iris", "glass"]),
    ("liblinear-lr", ["iris", "vote", "glass"]),
    ("liblinear-svm:C=10|0.1|1,B=1|10", ["ionosphere", "labor"]),   # C not ascending: grid order kept
    ("cmls", ["ionosphere", "diabetes"]),                            # no grid_params: refitted (fallback)
]


@pytest.mark.parametrize("component,datasets", CASES, ids=[c for c, _ in CASES])
def test_grid_tuning_equals_refitting_every_point(component, datasets):
    for name in datasets:
        check_against_brute_force(Pipeline(component), bundled(name), Protocol(repetitions=3))


def test_bma_with_inner_folds_equals_refitting():
    """Tuning on k inner folds sums the errors over the folds, for the grouped path too."""
    check_against_brute_force(Pipeline("bma-nb"), bundled("vote"), Protocol(repetitions=2, inner_folds=3))
    check_against_brute_force(Pipeline("nb-gaussian"), bundled("glass"),
                              Protocol(repetitions=2, inner_folds=3, stratified=True))


def test_text_classifiers_with_the_text_step_equal_refitting():
    """Raw text (a string attribute): the vectoriser is fitted on every fit part, once per group."""
    ds = bundled("ReutersGrain-train").subset(np.arange(600))
    check_against_brute_force(Pipeline("nb-multinomial"), ds, Protocol(repetitions=2))
    check_against_brute_force(Pipeline("nb-multinomial:variant=C-TW-L-M,prior=uniform|mle"), ds,
                              Protocol(repetitions=2))
    check_against_brute_force(Pipeline("dcm:smoothing=0.001|0.01|0.1"), ds, Protocol(repetitions=2))


@pytest.mark.shared
def test_word_count_classifiers_on_shared_text_equal_refitting():
    """Sparse word-count files, many classes, with a feature selector whose grid splits the groups."""
    for name in ("tr11.wc.arff", "oh5.wc.arff"):
        ds = toolkit.load_arff(shared_path("text", name))
        check_against_brute_force(Pipeline("nb-multinomial:variant=TW-L-M"), ds, Protocol(repetitions=2))
        check_against_brute_force(Pipeline("c-dcm:smoothing=0.01|1"), ds, Protocol(repetitions=1))
        check_against_brute_force(Pipeline("nb-multinomial", feature_selector="kl:k=100|1000"), ds,
                                  Protocol(repetitions=1))


@pytest.mark.shared
def test_bma_on_shared_uci_sets_equals_refitting():
    for name in ("anneal", "sick", "vowel", "hepatitis"):
        ds = toolkit.load_arff(shared_path("uci", f"{name}.arff"))
        check_against_brute_force(Pipeline("bma-nb"), ds, Protocol(repetitions=2))


# ---------------------------------------------------------------- the classifiers' grid method itself

def _fresh_scores(cls, fixed, setting, X, y, X_val, **fit_kwargs):
    return cls(**{**fixed, **setting}).fit(X, y, **fit_kwargs).decision_function(X_val)


def _grid_cases():
    from toolkit.plugins.naive_bayes.bma import BMANaiveBayes, zh_bases
    from toolkit.plugins.naive_bayes.classifiers import GaussianNaiveBayes, WekaNaiveBayes
    from toolkit.plugins.text.dcm import DCM, ComplementDCM
    from toolkit.plugins.text.multinomial import MultinomialNB

    return [
        (BMANaiveBayes, {}, [{"H": h} for h in zh_bases()[::5]]),
        (WekaNaiveBayes, {}, [{"laplace": a, "prior": p} for a in (0.1, 1.0, 3.0) for p in ("laplace", "mle")]),
        (GaussianNaiveBayes, {}, [{"var_smoothing": v} for v in (1e-9, 1e-4, 0.1, 1.0)]),
        (MultinomialNB, {"variant": "M"}, [{"epsilon": e, "prior": p} for e in (1.0, 0.01) for p in ("uniform", "mle")]),
        (MultinomialNB, {"variant": "C-L-M"}, [{"epsilon": e} for e in (1.0, 0.1, 0.001)]),
        (DCM, {"prior": "mle"}, [{"smoothing": s} for s in (0.0, 0.01, 1.0)]),
        (ComplementDCM, {}, [{"smoothing": s} for s in (0.01, 0.5)]),
    ]


def _counts(seed: int, n: int = 120, V: int = 40, K: int = 3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, n)
    rates = rng.gamma(0.5, 1.0, (K, V))
    X = rng.poisson(rates[y] * 2).astype(np.float64)
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("case", range(7))
def test_grid_decision_function_is_bit_identical_to_fresh_fits(case, seed):
    cls, fixed, settings = _grid_cases()[case]
    rng = np.random.default_rng(seed)
    if cls.__name__ in ("MultinomialNB", "DCM", "ComplementDCM"):
        X, y = _counts(seed)
        inputs = [(X, {})]
        weights = rng.integers(1, 4, X.shape[0]).astype(np.float64)
        inputs.append((X, {"sample_weight": weights}))
    else:
        ds = bundled(["vote", "glass", "soybean"][seed])
        X, y = ds.X, ds.y
        schema = Schema.from_dataset(ds)
        inputs = [(X, {"schema": schema}), (sp.csr_matrix(np.nan_to_num(X, nan=0.0)), {"schema": schema}),
                  (X, {"schema": schema, "sample_weight": rng.random(len(y)) + 0.5})]
    for X_in, kwargs in inputs:
        rows = rng.permutation(X_in.shape[0])
        fit, val = rows[: 2 * len(rows) // 3], rows[2 * len(rows) // 3:]
        fit_kwargs = dict(kwargs)
        if "sample_weight" in fit_kwargs:
            fit_kwargs["sample_weight"] = fit_kwargs["sample_weight"][fit]
        clf = cls(**fixed)
        got = list(clf.grid_decision_function(X_in[fit], y[fit], X_in[val], settings, **fit_kwargs))
        assert len(got) == len(settings)
        for setting, scores in zip(settings, got):
            want = _fresh_scores(cls, fixed, setting, X_in[fit], y[fit], X_in[val], **fit_kwargs)
            np.testing.assert_array_equal(scores, want, err_msg=f"{cls.__name__} {setting}")
        # left fitted with the last setting, like a fresh fit with it
        np.testing.assert_array_equal(clf.decision_function(X_in[val]), got[-1])


def test_grid_decision_function_refuses_parameters_that_change_the_statistics():
    from toolkit.plugins.text.multinomial import MultinomialNB

    X, y = _counts(0)
    with pytest.raises(ParameterError, match="variant"):
        list(MultinomialNB().grid_decision_function(X, y, X, [{"epsilon": 1.0, "variant": "C-M"}]))


def test_a_bad_grid_value_is_the_same_error_as_refitting():
    """A setting that a fit would refuse is refused before the run (issue 13), at every grid point."""
    from toolkit.errors import ParameterError

    ds = bundled("iris")
    with pytest.raises(ParameterError, match="bma-nb: H must be a number > 0, not -1"):
        toolkit.evaluate([ds], ["bma-nb:H=1|-1"], runs=1, metrics=["error"])


def test_fallback_for_classifier_objects_without_the_protocol():
    """A classifier object with no grid_params is refitted at every point, exactly as before."""
    from toolkit.plugins.linear.cmls import CMLS

    pipeline = Pipeline(("cmls", {"C": [0.1, 1.0, 10.0]}))
    assert harness._shared_keys(pipeline) == set()
    assert not CMLS.grid_params
    check_against_brute_force(pipeline, bundled("diabetes"), Protocol(repetitions=2))


def test_shared_keys_name_the_classifier_grid_params():
    assert harness._shared_keys(Pipeline("bma-nb")) == {"clf.H"}
    assert harness._shared_keys(Pipeline("nb-multinomial")) == {"clf.epsilon", "clf.prior"}
    assert harness._shared_keys(Pipeline("liblinear-lr")) == {"clf.C"}


def test_multinomial_class_sums_many_classes_equal_the_indicator_product():
    """Above 6 classes the sums are taken per class; they must equal Y.T @ X bit for bit."""
    from toolkit.plugins.text.multinomial import class_sums

    rng = np.random.default_rng(3)
    for K in (2, 7, 20):
        X = sp.random(500, 300, density=0.05, random_state=K, format="csr") * 10
        y = rng.integers(0, K, 500)
        y[y == 3] = 4                                   # an empty class
        w = rng.random(500)
        Y = np.zeros((500, K))
        Y[np.arange(500), y] = w
        want = np.zeros((K, 300))
        for i in range(500):                            # the definition, row by row in row order
            want[y[i]] += w[i] * X[i].toarray()[0]
        got = class_sums(sp.csr_matrix(X), y, w, K)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
        np.testing.assert_array_equal(got, np.asarray(Y.T @ X))


def test_a_grid_point_with_undefined_scores_fails_as_refitting_it_does():
    """At epsilon 1e308 C-M's validation scores are NaN. Refitting refuses them (FittedPipeline.predict);
    the one-fit path took argmax over NaN (the first NaN wins), counted errors, and wrote an 'ok' record
    that chose the other point."""
    from toolkit.errors import CapabilityError

    ds = bundled("ReutersGrain-train").subset(np.arange(300))
    for spec in ("nb-multinomial:variant=C-M,epsilon=1|1e308", "dcm:smoothing=0.01|1e308"):
        pipeline = Pipeline(spec)
        assert harness._shared_keys(pipeline)
        split = Protocol(repetitions=1).splits(ds)[0]
        with pytest.raises(CapabilityError, match="undefined") as refit:
            brute_force(pipeline, ds, split)
        with np.errstate(all="ignore"):
            record = harness.run([ds], [pipeline], Protocol(repetitions=1), [], keep_going=True).records[0]
        assert record["status"] == "failed" and record["error"] == str(refit.value)



def _threshold_classifier():
    from toolkit.api import ClassifierBase
    from toolkit.plugin_host.capabilities import Capabilities

    class Threshold(ClassifierBase):
        grid_params = ("t",)
        capabilities = Capabilities(nominal=True, missing=True, sample_weight=True, probabilities=False)

        def __init__(self, t=0.0):
            self.t = t

        def fit(self, X, y, sample_weight=None, schema=None):
            X, codes, _ = self._validate_fit(X, y, sample_weight, schema)
            above = X[:, 2] > self.t
            K = len(self.classes_)
            self.hi_ = int(np.bincount(codes[above], minlength=K).argmax()) if above.any() else 0
            self.lo_ = int(np.bincount(codes[~above], minlength=K).argmax()) if (~above).any() else 0
            return self

        def predict(self, X):
            X = self._validate_predict(X)
            return self.classes_[np.where(X[:, 2] > self.t, self.hi_, self.lo_)]

    return Threshold()


def test_a_predict_only_classifier_with_grid_params_is_refitted():
    """Its predictions come from predict (FittedPipeline.predict), so it has no scores to give from one fit:
    every repetition failed with 'gives no probabilities' where refitting worked."""
    from toolkit.models.pipeline import Step

    pipeline = Pipeline(Step("classifier", "threshold", grid={"t": [1.0, 2.5, 4.5, 6.0]}, obj=_threshold_classifier()))
    assert harness._shared_keys(pipeline) == set()
    records = check_against_brute_force(pipeline, bundled("iris"), Protocol(repetitions=3))
    assert {r["chosen_params"]["clf.t"] for r in records} <= {1.0, 2.5, 4.5, 6.0}


@pytest.mark.parametrize("drop", [True, False])
def test_a_grid_decision_function_with_too_few_or_too_many_arrays_is_a_plugin_error(drop):
    """Points were paired with the yielded arrays by zip: a point left without one kept 0 errors and could
    be chosen, silently."""
    from toolkit.models.pipeline import Step
    from toolkit.plugins.naive_bayes.bma import BMANaiveBayes

    class Miscounting(BMANaiveBayes):
        def grid_decision_function(self, X, y, X_val, settings, **kwargs):
            arrays = list(super().grid_decision_function(X, y, X_val, settings, **kwargs))
            yield from (arrays[:-1] if drop else arrays + arrays[:1])

    pipeline = Pipeline(Step("classifier", "miscounting", grid={"H": [1e9, 1e8, 1.0]}, obj=Miscounting()))
    record = harness.run([bundled("iris")], [pipeline], Protocol(repetitions=1), [], keep_going=True).records[0]
    assert record["status"] == "failed"
    assert f"gave {'fewer' if drop else 'more'} score arrays than the 3 settings" in record["error"]
