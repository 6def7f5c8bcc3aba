"""The text family: multinomial naive Bayes with Rennie's heuristics, the Dirichlet compound multinomial,
Schneider's KL / dKL and mutual-information feature selection, and perplexity (algorithms.md 2.4,
2.7, 3.1-3.2, 5.2.6).

Registrations only; the math is imported on first use:

* ``counts.py``: checks and per-class sums of word counts, shared by the members below;
* ``multinomial.py``: ``nb-multinomial`` (M, L-M, TW-L-M and the complement variants);
* ``dcm.py``: ``dcm`` and ``c-dcm`` (Minka's fixed point);
* ``selection.py``: the ``kl``, ``dkl`` and ``mi`` feature selectors;
* ``perplexity.py``: the ``perplexity`` evaluator.
"""

from __future__ import annotations

from toolkit import Capabilities, hookimpl

_COUNTS = Capabilities(numeric=True, nominal=False, sparse=True, missing=False, sample_weight=True, nonnegative=True)
#: the selectors' scores are defined on word counts; tf-idf-like weights need allow_fractional=true
_SELECTOR = Capabilities(numeric=True, nominal=False, sparse=True, missing=False, nonnegative=True, integer=True)
_MADSEN = "Madsen, Kauchak & Elkan (2005), Modeling word burstiness using the Dirichlet distribution, ICML"
_DCM_REFS = (_MADSEN, "Minka (2000/2003), Estimating a Dirichlet distribution (fastfit: polya_fit_simple)")
_SCHNEIDER = ("Schneider (2004), A new feature selection score for multinomial naive Bayes text "
              "classification based on KL-divergence, ACL (P04-3024)")


@hookimpl
def register_classifiers(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins.text.dcm import DCM, ComplementDCM
    from toolkit.plugins.text.multinomial import MultinomialNB

    register(
        "nb-multinomial",
        MultinomialNB,
        description="Multinomial NB on word counts with Rennie's L, TW-L, complement and weight "
                    "normalisation (variant=M|L-M|TW-L-M|C-M|C-L-M|C-TW-L-M)",
        param_grid={"epsilon": [1.0, 0.1, 0.01]},
        capabilities=_COUNTS,
        references=(
            "McCallum & Nigam (1998), A comparison of event models for naive Bayes text classification, AAAI workshop",
            "Rennie, Shih, Teevan & Karger (2003), Tackling the poor assumptions of naive Bayes text classifiers, ICML",
            _MADSEN,
        ),
    )
    register(
        "dcm",
        DCM,
        description="Dirichlet compound multinomial (Polya) per class, Minka fixed point, uniform prior",
        capabilities=_COUNTS,
        references=_DCM_REFS,
    )
    register(
        "c-dcm",
        ComplementDCM,
        description="Complement DCM: each class's complement fitted, predicts the worst-explained complement",
        capabilities=_COUNTS,
        references=_DCM_REFS,
    )


@hookimpl
def register_feature_selectors(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins.text.selection import DKLSelector, KLSelector, MISelector

    register("kl", KLSelector, description="Schneider's KL score (word counts, ML estimates): keep the k best words",
             capabilities=_SELECTOR, references=(_SCHNEIDER,))
    register("dkl", DKLSelector, description="Schneider's dKL score (smoothed class mixture): keep the k best words",
             capabilities=_SELECTOR, references=(_SCHNEIDER,))
    register("mi", MISelector, description="Mutual information between class and word (event_model=document|token): "
                                           "keep the k best",
             capabilities=_SELECTOR,
             references=("Yang & Pedersen (1997), A comparative study on feature selection in text "
                         "categorization, ICML",))


@hookimpl
def register_evaluators(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins.text.perplexity import perplexity

    register("perplexity", perplexity,
             description="exp(-sum log p(doc | its class) / tokens), multinomial coefficient left out",
             greater_is_better=False, needs_proba=False)
