"""Figures for commands and reports: matplotlib on demand, checked output paths, one way to save.

Plot commands call :func:`check_figure_path` before computing anything, so a missing folder, an
extension matplotlib cannot write or a missing ``plot`` extra is one error line at once instead of
a traceback after the work. Built-in and third-party plugins use the same helpers.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from toolkit.atomic_write import replaced_atomically
from toolkit.errors import ParameterError, ToolkitError

__all__ = ["FIGURE_FORMATS", "PLOT_EXTRA_HINT", "pyplot", "check_figure_path", "save_figure"]

#: Extensions matplotlib's Agg backend writes without extra software.
FIGURE_FORMATS = (".png", ".svg", ".pdf")
PLOT_EXTRA_HINT = "plotting needs matplotlib: pip install 'arff-toolkit[plot]'"


def _require_matplotlib() -> None:
    if importlib.util.find_spec("matplotlib") is None:
        raise ToolkitError(PLOT_EXTRA_HINT)


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (no display needed)."""
    _require_matplotlib()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ToolkitError(PLOT_EXTRA_HINT) from None
    return plt


def check_figure_path(path: str | os.PathLike[str]) -> str:
    """Refuse, before any computation, a figure path that cannot be written: an unknown extension, a
    folder that does not exist, or no matplotlib."""
    text = os.fspath(path)
    ext = os.path.splitext(text)[1].lower()
    if ext not in FIGURE_FORMATS:
        raise ParameterError(f"{text}: a figure must end in {', '.join(FIGURE_FORMATS)} (got '{ext or 'none'}')")
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise ParameterError(f"{text}: the folder {folder} does not exist")
    _require_matplotlib()
    return text


def save_figure(fig: Any, path: str | os.PathLike[str], dpi: int = 120) -> str:
    """Write ``fig`` to ``path`` (format from the extension) and close it."""
    plt = pyplot()
    text = os.fspath(path)
    target = os.path.realpath(text)   # through a symbolic link, as the reports are written
    suffix = os.path.splitext(text)[1].lstrip(".").lower() or None
    try:
        if os.path.exists(target) and not os.path.isfile(target):   # a device or a pipe: written as it is
            try:
                fig.savefig(target, dpi=dpi, format=suffix)
            except OSError as exc:
                raise ToolkitError(f"{text}: cannot write the figure ({exc.strerror or exc})") from None
        else:   # beside the target, moved over it when complete: a failure midway leaves the old file
            with replaced_atomically(target, ToolkitError) as temp:
                fig.savefig(temp, dpi=dpi, format=suffix)
    finally:
        plt.close(fig)
    return text
