"""Precision-recall curves from ``pr-curve`` results, drawn for the ``pr-plot`` command."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolkit.errors import ParameterError
from toolkit.plotting import pyplot, save_figure

__all__ = ["pr_curves_from_records", "plot_pr_curves"]


def pr_curves_from_records(records: Sequence[Mapping[str, Any]], dataset: str | None = None,
                           repetition: int = 0, label: str | None = None) -> dict[str, dict[str, list[float]]]:
    """{pipeline: {"recall": [...], "precision": [...]}} for one dataset and repetition, from records that
    hold the ``pr-curve`` metric; ``label`` picks the class (default: the binary positive class, or the
    first class with a curve)."""
    ok = [r for r in records if r.get("status") == "ok" and isinstance(r["metrics"].get("pr-curve"), dict)]
    if not ok:
        raise ParameterError("no record holds a precision-recall curve; evaluate with -m pr-curve")
    names = list(dict.fromkeys(r["dataset"]["name"] for r in ok))
    if dataset is None:
        dataset = names[0]
    elif dataset not in names:
        raise ParameterError(f"no precision-recall curve for dataset '{dataset}' (the results have: "
                             f"{', '.join(names)})")
    curves: dict[str, dict[str, list[float]]] = {}
    for r in ok:
        if r["dataset"]["name"] != dataset or r["repetition"] != repetition:
            continue
        by_class = r["metrics"]["pr-curve"]
        key = label if label is not None else next(iter(by_class), None)
        if key in by_class:
            curves[r["pipeline"]["name"]] = by_class[key]
    if not curves:
        raise ParameterError(f"no precision-recall curve for '{dataset}', repetition {repetition}"
                             + (f", class '{label}'" if label else ""))
    return curves


def plot_pr_curves(curves: Mapping[str, Mapping[str, Sequence[float]]], path: str, title: str = "") -> str:
    """Non-interpolated precision-recall points (one line per curve), with the AP in the legend."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for name, curve in curves.items():
        recall, precision = list(curve["recall"]), list(curve["precision"])
        ap = sum(precision) / len(precision) if precision else float("nan")
        ax.step([0.0] + recall, [precision[0] if precision else 0.0] + precision, where="pre",
                label=f"{name} (AP {ap:.3f})")
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_xlim(0, 1.01)
    ax.set_ylim(0, 1.02)
    ax.set_title(title or "precision-recall")
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return save_figure(fig, path)
