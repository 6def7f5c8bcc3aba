"""What every command, built-in or from a plugin, uses to talk to the user: results on stdout, one
line per message on stderr, a progress bar when stderr is a terminal. Public (``toolkit.cli``)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import typer

__all__ = ["err", "out", "terminal_text", "plain_table", "check_output_path", "write_text_output", "progress_bar",
           "class_attribute", "json_text", "check_alpha", "check_rope",
           "check_not_an_input", "one_line", "CLASS_OPTION_HELP"]

#: What ``--class`` means on every command.
CLASS_OPTION_HELP = ("Class attribute: its name, first, last (the default, as WEKA), or its 1-based position "
                     "(WEKA's -c).")


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _stdout_is_tty() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def terminal_text(text: str) -> str:
    """``text`` as a terminal shows it literally: a name from a data or results file (an ARFF relation, a
    class value, a file name) with control characters in it is shown with them escaped (\\x1b); the line
    breaks and tabs of the output itself stay."""
    from toolkit.control_characters import escape_controls

    return escape_controls(text, keep="\n\t")


def err(message: str, *, prefix: str = "", color: str | None = None) -> None:
    """One message line on stderr (red/yellow prefix when stderr is a terminal)."""
    if _stderr_is_tty():
        message = terminal_text(message)
        if prefix and color:
            prefix = typer.style(prefix, fg=color, bold=True)
    typer.echo(f"{prefix}{message}", err=True)


def one_line(text: str) -> str:
    """A message as one line: an error or a warning is one line on stderr, also when it carries the text of an
    exception raised with line breaks (a plugin's, a solver's), whose lines are joined with ' / '."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return " / ".join(lines)


def plain_table(rows: Sequence[Sequence[str]], left: int = 1) -> list[str]:
    """Lines of a plain-text table: the first ``left`` columns padded on the right (names), the rest on
    the left (numbers), two spaces apart. A name's line break or tab is shown escaped (it would split its
    row) and widths count terminal columns (a CJK character takes two)."""
    from toolkit.evaluation.cells import aligned, display_width, plain_cell

    cells = [[plain_cell(str(c)) for c in row] for row in rows]
    widths = [max((display_width(row[i]) for row in cells if i < len(row)), default=0)
              for i in range(max((len(row) for row in cells), default=0))]
    return ["  ".join(aligned(c, w, i < left) for i, (c, w) in enumerate(zip(row, widths))) for row in cells]


def out(text: str) -> None:
    """Results on stdout. A failed write (stdout redirected to a full disk) is one error line, not a traceback;
    a closed pipe (``| head``) is left to the usual quiet end."""
    try:
        # on a terminal only: a pipe or a file gets the data as it is (CSV, JSON and ARFF keep every character;
        # color=True: click would else cut what looks like an ANSI sequence out of a class value)
        typer.echo(terminal_text(text) if _stdout_is_tty() else text, color=True)
    except BrokenPipeError:
        raise
    except OSError as exc:
        from toolkit.errors import ToolkitError

        raise ToolkitError(f"cannot write the results to stdout ({exc.strerror or exc})") from None


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def json_text(doc: Any) -> str:
    """``doc`` as standard JSON for stdout: an undefined value (NaN, an infinity) is null, since NaN is no
    JSON and ``jq`` or a browser's JSON.parse refuse the whole document for one."""
    import json

    return json.dumps(_finite(doc), indent=2, allow_nan=False, default=str)


def class_attribute(value: str | None) -> str | int:
    """A ``--class`` value for the Python API: ``first`` -> 0, ``last`` or nothing -> -1, a 1-based
    position as WEKA's ``-c`` -> its 0-based index, anything else an attribute name."""
    from toolkit.errors import ParameterError

    if value is None:
        return -1
    text = value.strip()
    if text.lower() == "first":
        return 0
    if text.lower() == "last":
        return -1
    if text.isascii() and text.isdigit():
        if int(text) < 1:
            raise ParameterError(f"--class {value}: positions count from 1 (first), as WEKA's -c does")
        return int(text) - 1
    if not text:
        raise ParameterError("--class needs an attribute name, first, last or a 1-based position")
    return text


def check_alpha(alpha: float) -> None:
    """A significance level strictly between 0 and 1 (NaN is none), checked before any work, on every command
    that takes --alpha (as ``toolkit report`` does)."""
    from toolkit.errors import ParameterError

    if not 0 < alpha < 1:
        raise ParameterError(f"--alpha must lie between 0 and 1, not {alpha}")


def check_rope(rope: float) -> None:
    """The Bayesian test's region of practical equivalence: a finite number >= 0 (NaN compares false, so the
    old ``rope < 0`` let it through)."""
    from toolkit.errors import ParameterError

    if not (rope >= 0 and rope != float("inf")):
        raise ParameterError(f"--rope must be a finite number >= 0, not {rope}")


def check_not_an_input(output: str, inputs: dict[str, str]) -> None:
    """Refuse to write ``output`` over one of the command's own inputs ({what: path or bundled name}), which
    the command has read by then: ``train d.arff -o d.arff`` replaced the dataset with the model, ``predict
    m.tkm d.arff -o d.arff`` the dataset with its predicted labels. Checked before any work."""
    import os

    from toolkit.errors import ParameterError

    if not os.path.exists(output):
        return
    for what, name in inputs.items():
        try:
            from toolkit.loading import resolve_dataset

            path = os.fspath(resolve_dataset(name)) if what.startswith("dataset") else name
            same = os.path.samefile(output, path)
        except Exception:  # an input that does not resolve is reported by its reader
            continue
        if same:
            raise ParameterError(f"{output}: is the {what} this command reads ({name}); writing the output there "
                                 f"would replace it: give another output file")


def check_output_path(output: str, option: str, inputs: dict[str, str] | None = None) -> None:
    """An output file a command will write, checked before any work: not a folder, in a folder that
    exists, and (``inputs`` as for :func:`check_not_an_input`) not one of the command's inputs."""
    import os

    from toolkit.errors import ParameterError

    if os.path.isdir(output):
        raise ParameterError(f"{output}: is a folder; {option} names the file to write")
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        raise ParameterError(f"{output}: the folder {folder} does not exist ({option})")
    check_not_an_input(output, inputs or {})


def write_text_output(output: str, text: str) -> None:
    """``text`` written to ``output`` in one step: a reader never sees half of it, and a failed write keeps
    the file that was there (one error line naming it)."""
    from toolkit.atomic_write import replaced_atomically
    from toolkit.errors import ToolkitError

    with replaced_atomically(output, ToolkitError) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)


class _PlainProgress:
    """Progress as plain lines on stderr when it is not a terminal (a log, CI, a batch job): one line at
    the start, whenever the dataset changes, and at most every ``interval`` seconds otherwise."""

    def __init__(self, interval: float = 10.0, clock: Any = time.monotonic):
        self.interval = interval
        self.clock = clock
        self.start = clock()
        self.last = float("-inf")
        self.dataset: str | None = None

    def __call__(self, done: int, total: int, what: str) -> None:
        now = self.clock()
        dataset = what.split(" / ", 1)[0]
        if done == 0 or dataset != self.dataset or now - self.last >= self.interval or done == total:
            self.last = now
            self.dataset = dataset
            err(f"progress: {done}/{total} repetitions ({_percent(done, total)}), {what}, elapsed "
                f"{_clock(now - self.start)}, {_eta(now - self.start, done, total)}")


def _percent(done: int, total: int) -> str:
    return f"{100 * done // max(total, 1)}%"


def _clock(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def _eta(elapsed: float, done: int, total: int) -> str:
    if done == 0:
        return "ETA unknown"
    if done >= total:
        return "done"
    return f"ETA {_clock(elapsed / done * (total - done))}"


@contextmanager
def progress_bar(enabled: bool, interval: float = 10.0) -> Iterator[Any]:
    """A progress callback ``update(done, total, what)``: a rich bar on stderr when it is a terminal
    (dataset and pipeline, count, elapsed time and ETA), plain lines otherwise; None when disabled."""
    if not enabled:
        yield None
        return
    if not _stderr_is_tty():
        yield _PlainProgress(interval)
        return
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("ETA"), TimeRemainingColumn(), console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("starting", total=None)

        from rich.markup import escape

        def update(done: int, total: int, what: str) -> None:
            # a dataset name is text, not rich markup ("[/b]" in it raised a MarkupError mid-run)
            progress.update(task, completed=done, total=total, description=escape(terminal_text(what[:60])))

        yield update
