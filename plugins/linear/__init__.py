"""The linear family: LIBLINEAR logistic regression and linear SVM, and CMLS (algorithms.md 2.8-2.9).

Registrations only; the math is imported on first use:

* ``features.py``: the preprocessing both share (imputation, WEKA's NominalToBinary, scaling);
* ``liblinear.py``: ``liblinear-lr`` and ``liblinear-svm`` (liblinear-official, one-vs-rest);
* ``cmls.py``: ``cmls``, modified least squares by Newton-CG.

The LIBLINEAR grid is the thesis's C x B grid, C the outer loop and B the inner one, both ascending
(the order of the keys below is the order of the search).
"""

from __future__ import annotations

from toolkit import Capabilities, hookimpl

_GRID = {"C": [0.01, 0.1, 1.0, 10.0, 20.0, 100.0], "B": [0.01, 0.1, 1.0, 10.0, 20.0, 100.0]}
_REFS = ("Fan, Chang, Hsieh, Wang & Lin (2008), LIBLINEAR: a library for large linear classification, JMLR 9",
         "Ga Wu (2015), Bayesian model averaging for naive Bayes, ANU Master's thesis (the C x B grid)")


@hookimpl
def register_classifiers(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins.linear.cmls import CMLS
    from toolkit.plugins.linear.liblinear import LiblinearLR, LiblinearSVM

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
    register(
        "cmls",
        CMLS,
        description="Wide-margin linear classifier with the modified-least-squares loss (Newton-CG)",
        param_grid={"C": [0.01, 0.1, 1.0, 10.0, 100.0]},
        capabilities=Capabilities(numeric=True, nominal=True, sparse=True, missing=True, sample_weight=True,
                                  probabilities=False),
        references=("Zhang & Oles (2001), Text categorization based on regularized linear classification "
                    "methods, Information Retrieval 4",
                    "Sohn, Kim, Comeau & Wilbur (2008), Optimal training sets for Bayesian prediction of "
                    "MeSH assignment, JAMIA 15 (CMLS on the optimal training set)",
                    "Galli & Lin (2021), A study on truncated Newton methods for linear classification, "
                    "IEEE TNNLS (the optimiser, as in LIBLINEAR 2.4x)"),
    )
