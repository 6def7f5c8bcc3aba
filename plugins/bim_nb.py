"""Built-in BIM naive Bayes (the OTS paper's learner) and its weight-threshold feature selector
(algorithms.md 2.5, 3.3)."""

from __future__ import annotations

from toolkit import Capabilities, hookimpl

_REFS = ("Sohn, Kim, Comeau & Wilbur (2008), Optimal training sets for Bayesian prediction of MeSH assignment, "
         "JAMIA 15(4), eq. A.5",
         "Robertson & Sparck Jones (1976), Relevance weighting of search terms, JASIS 27(3)")


@hookimpl
def register_classifiers(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins._bim_impl import BIMNaiveBayes

    register("nb-bim", BIMNaiveBayes,
             description="Binary independence model naive Bayes on feature presence (two classes; rank by the "
                         "sum of weights |w| > threshold)",
             capabilities=Capabilities(numeric=True, nominal=False, sparse=True, missing=False, sample_weight=True,
                                       multiclass=False),
             references=_REFS)


@hookimpl
def register_feature_selectors(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins._bim_impl import BIMThresholdSelector

    register("bim-threshold", BIMThresholdSelector,
             description="Keep features whose BIM weight |w| exceeds a threshold (default 1; 'loo' = best "
                         "leave-one-out AP)",
             capabilities=Capabilities(numeric=True, sparse=True, multiclass=False),
             references=_REFS[:1])
