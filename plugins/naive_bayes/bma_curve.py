"""Test error of BMA naive Bayes for each H without tuning, and its plot (thesis Figures 9, 10)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import toolkit
from toolkit import Pipeline
from toolkit.plotting import pyplot, save_figure

__all__ = ["error_by_h", "plot_curves", "markdown_table"]


def error_by_h(datasets: Sequence[str], grid: Sequence[float], runs: int = 10, seed: int = 1,
               jobs: int = 1) -> dict[str, list[float]]:
    """Mean test error (default protocol) of bma-nb at every fixed H, per dataset; nb-weka last."""
    pipelines = [Pipeline(f"bma-nb:H={h}", tune=False, name=f"H={h}") for h in grid]
    pipelines.append(Pipeline("nb-weka", name="nb-weka"))
    results = toolkit.evaluate(list(datasets), pipelines=pipelines, runs=runs, seed=seed, jobs=jobs,
                               metrics=["error"])
    curves: dict[str, list[float]] = {}
    for name in results.datasets():
        curves[name] = [float(np.mean(results.values(name, p.name, "error"))) for p in pipelines]
    return curves


def markdown_table(curves: dict[str, list[float]], grid: Sequence[float]) -> str:
    header = "| dataset | " + " | ".join(f"H={h:g}" for h in grid) + " | NB |"
    lines = [header, "|" + " --- |" * (len(grid) + 2)]
    for name, errors in curves.items():
        lines.append(f"| {name} | " + " | ".join(f"{100 * e:.2f}" for e in errors) + " |")
    return "\n".join(lines)


def plot_curves(curves: dict[str, list[float]], grid: Sequence[float], path: str) -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, errors in curves.items():
        line, = ax.plot(grid, [100 * e for e in errors[:-1]], marker="o", label=name)
        ax.axhline(100 * errors[-1], color=line.get_color(), linestyle=":", linewidth=1)
    ax.set_xlabel("H  (C = H^(N+1); H < 1 favours features, H > 1 penalises them)")
    ax.set_ylabel("mean test error (%)")
    ax.set_title("BMA naive Bayes: test error against H (dotted: WEKA NB)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path)
