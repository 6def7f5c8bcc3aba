"""Built-in example selectors of the OTS paper: the optimal training set and the random small training
set of the same size (algorithms.md 4.1-4.3)."""

from __future__ import annotations

from toolkit import Capabilities, hookimpl

_REF = ("Sohn, Kim, Comeau & Wilbur (2008), Optimal training sets for Bayesian prediction of MeSH assignment, "
        "JAMIA 15(4)")
_CAPS = Capabilities(numeric=True, sparse=True, multiclass=False)


@hookimpl
def register_example_selectors(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins._ots_impl import OTSSelector, RandomSTSSelector

    register("ots", OTSSelector,
             description="Optimal training set: all positives plus the closest negatives, size chosen by "
                         "leave-one-out AP of BIM",
             capabilities=_CAPS, references=(_REF,))
    register("random-sts", RandomSTSSelector,
             description="All positives plus random negatives, as many as the OTS holds (the paper's baseline)",
             capabilities=_CAPS, references=(_REF,))
