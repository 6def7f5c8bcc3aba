"""Built-in CMLS classifier: L2-regularised modified least squares (algorithms.md 2.8)."""

from __future__ import annotations

from toolkit import Capabilities, hookimpl


@hookimpl
def register_classifiers(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins._cmls_impl import CMLS

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
