"""What every command, built-in or from a plugin, uses to talk to the user: results on stdout, one
line per message on stderr, a progress bar when stderr is a terminal. Public (``toolkit.cli``)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import typer

__all__ = ["err", "out", "progress_bar"]


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def err(message: str, *, prefix: str = "", color: str | None = None) -> None:
    """One message line on stderr (red/yellow prefix when stderr is a terminal)."""
    if prefix and color and _stderr_is_tty():
        prefix = typer.style(prefix, fg=color, bold=True)
    typer.echo(f"{prefix}{message}", err=True)


def out(text: str) -> None:
    """Results on stdout."""
    typer.echo(text)


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Any]:
    """A rich progress bar on stderr (transient); a no-op when stderr is not a terminal."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("evaluating", total=None)

        def update(done: int, total: int, what: str) -> None:
            progress.update(task, completed=done, total=total, description=what[:50])

        yield update
