"""Built-in LIBLINEAR classifiers: logistic regression and linear SVM (algorithms.md 2.9).

The grid is the thesis's C x B grid, C the outer loop and B the inner one, both ascending (the
order of the keys below is the order of the search).
"""

from __future__ import annotations

from toolkit import Capabilities, hookimpl

_GRID = {"C": [0.01, 0.1, 1.0, 10.0, 20.0, 100.0], "B": [0.01, 0.1, 1.0, 10.0, 20.0, 100.0]}
_REFS = ("Fan, Chang, Hsieh, Wang & Lin (2008), LIBLINEAR: a library for large linear classification, JMLR 9",
         "Ga Wu (2015), Bayesian model averaging for naive Bayes, ANU Master's thesis (the C x B grid)")


@hookimpl
def register_classifiers(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins._liblinear_impl import LiblinearLR, LiblinearSVM

    register(
        "liblinear-lr",
        LiblinearLR,
        description="LIBLINEAR L2-regularised logistic regression (-s 0 primal or -s 7 dual), one-vs-rest",
        param_grid=_GRID,
        capabilities=Capabilities(numeric=True, nominal=True, sparse=True, missing=True, sample_weight=False,
                                  probabilities=True),
        references=_REFS,
    )
    register(
        "liblinear-svm",
        LiblinearSVM,
        description="LIBLINEAR L2-regularised linear SVM (-s 1/2 L2 loss, -s 3 L1 loss), one-vs-rest",
        param_grid=_GRID,
        capabilities=Capabilities(numeric=True, nominal=True, sparse=True, missing=True, sample_weight=False,
                                  probabilities=False),
        references=_REFS,
    )
