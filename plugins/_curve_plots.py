"""PNG figures for rankings: precision-recall curves (from ``pr-curve`` results) and the OTS search's
average precision against training-set size (the OTS paper's Figure 3). Needs the ``plot`` extra."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolkit.errors import ParameterError, ToolkitError

__all__ = ["pr_curves_from_records", "plot_pr_curves", "plot_traces"]


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ToolkitError("plotting needs matplotlib: pip install 'toolkit[plot]'") from None
    return plt


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
    plt = _pyplot()
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
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_traces(traces: Mapping[str, Mapping[str, Any]], path: str, title: str = "",
                relative: bool = True) -> str:
    """Leave-one-out AP against STS size for each OTS trace (``OTSSelector.trace_``); the chosen size is
    marked. With ``relative``, sizes are shown as multiples of the number of positives."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for name, trace in traces.items():
        sizes = [float(s) for s in trace["size"]]
        if not sizes:
            continue
        n_pos = sizes[0] - trace["n_negatives"][0]
        xs = [s / n_pos for s in sizes] if relative else sizes
        line, = ax.plot(xs, trace["average_precision"], linewidth=1, label=name)
        best = trace["best_size"] / n_pos if relative else trace["best_size"]
        ax.plot([best], [trace["best_average_precision"]], marker="o", color=line.get_color())
    ax.set_xlabel("STS size / number of positives" if relative else "STS size")
    ax.set_ylabel("leave-one-out average precision")
    ax.set_xscale("log")
    ax.set_title(title or "OTS search")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
