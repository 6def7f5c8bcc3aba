"""Built-in naive Bayes classifiers: WEKA-compatible and plain Gaussian (algorithms.md 2.1-2.3)."""

from __future__ import annotations

from toolkit import Capabilities, hookimpl

_CAPS = Capabilities(numeric=True, nominal=True, sparse=True, missing=True, sample_weight=True)
_WEKA_REF = ("John & Langley (1995), Estimating continuous distributions in Bayesian classifiers, UAI; "
             "WEKA 3.6 weka.classifiers.bayes.NaiveBayes")


@hookimpl
def register_classifiers(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins._naive_bayes_impl import GaussianNaiveBayes, WekaNaiveBayes

    register(
        "nb-weka",
        WekaNaiveBayes,
        description="Naive Bayes exactly as WEKA 3.6 NaiveBayes (Laplace counts, NormalEstimator)",
        capabilities=_CAPS,
        references=(_WEKA_REF,),
    )
    register(
        "nb-gaussian",
        GaussianNaiveBayes,
        description="Naive Bayes with maximum-likelihood Gaussians and variance smoothing",
        param_grid={"var_smoothing": [1e-9, 1e-6, 1e-3]},
        capabilities=_CAPS,
        references=("Mitchell (1997), Machine Learning, ch. 6",),
    )
