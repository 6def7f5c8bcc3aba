"""``toolkit list``: every registered component."""

from __future__ import annotations

import json
from typing import Optional

import typer

from toolkit.cli.output import json_text, out
from toolkit.errors import ParameterError

__all__ = ["register"]


def list_components(
    kind: Optional[str] = typer.Argument(None, help="classifiers, feature-selectors, example-selectors, evaluators "
                                                    "or text-steps."),
    as_json: bool = typer.Option(False, "--json", help="One JSON document on stdout."),
) -> None:
    """Registered classifiers, selectors and evaluators: name, plugin, description, grid, capabilities."""
    from toolkit import get_registry
    from toolkit.plugin_host.registry import KINDS

    from toolkit.models.text_step import text_step_spec

    plural_to_kind = {plural: k for k, (_h, _n, plural) in KINDS.items()}
    plural_to_kind.update({k: k for k in KINDS})
    # the text step (--text word-counts:k=v) is no plugin kind, but its parameters are looked up the same way
    plural_to_kind.update({"text-steps": "text", "text-step": "text", "text": "text"})
    if kind is not None and kind not in plural_to_kind:
        raise ParameterError(f"unknown component kind '{kind}'; expected one of "
                             f"{', '.join(p for _k, (_h, _n, p) in KINDS.items())} or text-steps")
    registry = get_registry()
    kinds = [plural_to_kind[kind]] if kind else [*KINDS, "text"]

    def specs_of(k: str) -> list:
        return [text_step_spec()] if k == "text" else list(registry.specs(k))

    def plural(k: str) -> str:
        return "text-steps" if k == "text" else KINDS[k][2]

    data = {"schema": "toolkit.list/1", "components": {plural(k): [s.as_dict() for s in specs_of(k)] for k in kinds}}
    if as_json:
        out(json_text(data))
        return
    for k in kinds:
        specs = specs_of(k)
        out(f"{plural(k)} ({len(specs)})")
        width = max((len(s.name) for s in specs), default=0)
        pad = " " * (width + 4)
        for s in specs:
            out(f"  {s.name:<{width}}  {s.description}  [{s.plugin or 'core'}]")
            params = s.parameter_types()
            if params:
                out(pad + "parameters: " + ", ".join(
                    f"{name}: {kind} = {json.dumps(default) if default is not None else 'none'}"
                    for name, (kind, default) in params.items()))
            if s.param_grid:
                grid = "; ".join(f"{key}={list(v)}" for key, v in s.param_grid.items())
                out(pad + f"grid: {grid}")
            if k == "text":
                out(pad + "accepts: string attributes (--text word-counts:k=v before any selector or classifier)")
            elif k != "evaluator":
                # "probabilities" says what a classifier gives, not what a selector takes
                out(pad + f"accepts: {s.capabilities.summary(() if k == 'classifier' else ('probabilities',))}")
            else:
                if not getattr(s, "scalar", True):
                    direction = "a table per test part (no better or worse)"
                else:
                    direction = "greater is better" if getattr(s, "greater_is_better", True) else "lower is better"
                out(pad + direction + ("; needs probabilities" if getattr(s, "needs_proba", False) else ""))
        out("")


def register(app: typer.Typer) -> None:
    app.command("list")(list_components)
