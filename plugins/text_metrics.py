"""Built-in text evaluator: perplexity of the test documents (algorithms.md 5.2.6)."""

from __future__ import annotations

from toolkit import hookimpl


@hookimpl
def register_evaluators(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins._text_metrics_impl import perplexity

    register("perplexity", perplexity,
             description="exp(-sum log p(doc | its class) / tokens), multinomial coefficient left out",
             greater_is_better=False, needs_proba=False)
