"""Built-in Dirichlet compound multinomial (DCM) and complement-DCM classifiers (algorithms.md 2.7)."""

from __future__ import annotations

from toolkit import Capabilities, hookimpl

_CAPS = Capabilities(numeric=True, nominal=False, sparse=True, missing=False, sample_weight=True, nonnegative=True)
_REFS = (
    "Madsen, Kauchak & Elkan (2005), Modeling word burstiness using the Dirichlet distribution, ICML",
    "Minka (2000/2003), Estimating a Dirichlet distribution (fastfit: polya_fit_simple)",
)


@hookimpl
def register_classifiers(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins._dcm_impl import DCM, ComplementDCM

    register(
        "dcm",
        DCM,
        description="Dirichlet compound multinomial (Polya) per class, Minka fixed point, uniform prior",
        capabilities=_CAPS,
        references=_REFS,
    )
    register(
        "c-dcm",
        ComplementDCM,
        description="Complement DCM: each class's complement fitted, predicts the worst-explained complement",
        capabilities=_CAPS,
        references=_REFS,
    )
