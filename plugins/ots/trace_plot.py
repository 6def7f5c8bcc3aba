"""The OTS search's AP against training-set size (the OTS paper's Figure 3), drawn for
the ``ots-trace`` command."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolkit.plotting import pyplot, save_figure

__all__ = ["plot_traces"]


def plot_traces(traces: Mapping[str, Mapping[str, Any]], path: str, title: str = "",
                relative: bool = True) -> str:
    """The search's AP against STS size for each OTS trace (``OTSSelector.trace_``); the chosen size is
    marked. With ``relative``, sizes are shown as multiples of the number of positives."""
    plt = pyplot()
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
    ax.set_ylabel("AP on the training set (STS: leave-one-out)")
    ax.set_xscale("log")
    ax.set_title(title or "OTS search")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, path)
