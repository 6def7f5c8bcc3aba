"""Built-in multinomial naive Bayes family for word counts (algorithms.md 2.4)."""

from __future__ import annotations

from toolkit import Capabilities, hookimpl

_CAPS = Capabilities(numeric=True, nominal=False, sparse=True, missing=False, sample_weight=True, nonnegative=True)


@hookimpl
def register_classifiers(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins._multinomial_nb_impl import MultinomialNB

    register(
        "nb-multinomial",
        MultinomialNB,
        description="Multinomial NB on word counts with Rennie's L, TW-L, complement and weight "
                    "normalisation (variant=M|L-M|TW-L-M|C-M|C-L-M|C-TW-L-M)",
        param_grid={"epsilon": [1.0, 0.1, 0.01]},
        capabilities=_CAPS,
        references=(
            "McCallum & Nigam (1998), A comparison of event models for naive Bayes text classification, AAAI workshop",
            "Rennie, Shih, Teevan & Karger (2003), Tackling the poor assumptions of naive Bayes text classifiers, ICML",
            "Madsen, Kauchak & Elkan (2005), Modeling word burstiness using the Dirichlet distribution, ICML",
        ),
    )
