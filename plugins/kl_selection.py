"""Built-in text feature selectors: Schneider's KL and dKL, and mutual information (algorithms.md 3.1-3.2)."""

from __future__ import annotations

from toolkit import Capabilities, hookimpl

_CAPS = Capabilities(numeric=True, nominal=False, sparse=True, missing=False, nonnegative=True)
_SCHNEIDER = ("Schneider (2004), A new feature selection score for multinomial naive Bayes text "
              "classification based on KL-divergence, ACL (P04-3024)")


@hookimpl
def register_feature_selectors(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins._kl_selection_impl import DKLSelector, KLSelector, MISelector

    register("kl", KLSelector, description="Schneider's KL score (word counts): keep the k best words",
             capabilities=_CAPS, references=(_SCHNEIDER,))
    register("dkl", DKLSelector, description="Schneider's dKL score (smoothed class mixture): keep the k best words",
             capabilities=_CAPS, references=(_SCHNEIDER,))
    register("mi", MISelector, description="Mutual information between class and word occurrence: keep the k best",
             capabilities=_CAPS,
             references=("Yang & Pedersen (1997), A comparative study on feature selection in text "
                         "categorization, ICML",))
