"""Reports to share: one set of results written as HTML, LaTeX, Markdown, CSV, JSON, and the CD diagram as
PNG / SVG / PDF, the format taken from each output's extension (``toolkit report``, ``toolkit.write_report``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolkit.errors import ParameterError

__all__ = ["write_report", "REPORT_FORMATS", "FIGURE_FORMATS", "check_outputs"]

#: document formats by extension
REPORT_FORMATS = (".html", ".tex", ".md", ".csv", ".json")
#: the CD diagram alone
FIGURE_FORMATS = (".png", ".svg", ".pdf")


def check_outputs(outputs: Sequence[str | os.PathLike[str]]) -> list[str]:
    """Every output path, checked before any work: a known extension, an existing folder, matplotlib for
    .png and .pdf."""
    if not outputs:
        raise ParameterError("give the report to write with -o FILE (.html, .tex, .md, .csv, .json, or the CD "
                             "diagram as .png, .svg, .pdf)")
    out = []
    for item in outputs:
        text = os.fspath(item)
        ext = os.path.splitext(text)[1].lower()
        if ext not in REPORT_FORMATS + FIGURE_FORMATS:
            raise ParameterError(f"{text}: the format comes from the extension, one of "
                                 f"{', '.join(REPORT_FORMATS + FIGURE_FORMATS)} (got '{ext or 'none'}')")
        if os.path.isdir(text):
            raise ParameterError(f"{text}: is a folder; give the file to write")
        folder = os.path.dirname(os.path.abspath(text))
        if not os.path.isdir(folder):
            raise ParameterError(f"{text}: the folder {folder} does not exist")
        if ext in (".png", ".pdf"):
            from toolkit.plotting import check_figure_path

            check_figure_path(text)
        out.append(text)
    _check_no_file_written_twice(out)
    return out


def _planned(path: str) -> list[tuple[str, str]]:
    """(file, what goes in it) for one output: a .md also writes NAME-cd.svg, a .csv NAME-summary.csv."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".md":
        return [(_sibling(path, "-cd.svg"), "the CD diagram as SVG"), (path, "the Markdown report")]
    if ext == ".csv":
        return [(path, "the long CSV"), (_sibling(path, "-summary.csv"), "the summary CSV")]
    if ext == ".svg":
        return [(path, "the CD diagram as SVG")]
    return [(path, ext)]


def _check_no_file_written_twice(outputs: Sequence[str]) -> None:
    """-o r.csv -o r-summary.csv wrote the long CSV over the summary that r.csv puts beside it (and listed the
    file twice); refuse two different contents for one file, before anything is written. The same content
    twice (-o r.md -o r-cd.svg, or one -o given twice) is written once."""
    seen: dict[str, tuple[str, str]] = {}
    for output in outputs:
        for path, what in _planned(output):
            key = os.path.realpath(path)
            if key in seen and seen[key][1] != what:
                first, before = seen[key]
                raise ParameterError(f"{path}: would be written twice, as {before} for -o {first} and as {what} for "
                                     f"-o {output}; give outputs that do not collide")
            seen.setdefault(key, (output, what))


def _sibling(path: str, suffix: str) -> str:
    p = Path(path)
    return str(p.with_name(p.stem + suffix))


def write_report(results: Any, out: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *,
                 metrics: Sequence[str] | None = None, main: str | None = None, baseline: str | None = None,
                 alpha: float = 0.05, test: str = "corrected-t", rope: float | None = None) -> list[str]:
    """Write the report of ``results`` (a :class:`toolkit.Results` or results files) to every path of ``out``;
    returns the files written (a .md also writes its CD diagram beside it as NAME-cd.svg, a .csv its summary
    as NAME-summary.csv)."""
    from toolkit.evaluation.results import Results
    from toolkit.reporting.document import DEFAULT_ROPE, build_report, write_text
    from toolkit.reporting.figures import save_canvas
    from toolkit.reporting.formats import (cd_canvas, render_json, render_latex, render_long_csv, render_markdown,
                                           render_summary_csv)
    from toolkit.reporting.html import render_html

    outputs = check_outputs([out] if isinstance(out, (str, os.PathLike)) else list(out))
    files: list[str] = []
    if not isinstance(results, Results):
        files = [os.fspath(p) for p in ([results] if isinstance(results, (str, os.PathLike)) else results)]
        results = Results.from_files(files)
    else:
        files = list(results.sources)   # read by from_files: the report names them
    report = build_report(results, metrics=list(metrics) if metrics else None, main=main, baseline=baseline,
                          alpha=alpha, test=test, rope=DEFAULT_ROPE if rope is None else rope, files=files)
    figures = [path for path in outputs if os.path.splitext(path)[1].lower() in FIGURE_FORMATS]
    if figures and cd_canvas(report) is None:   # before any file is written
        m = report.across   # say which is missing: one pipeline on many datasets was told to add datasets
        n_p, n_d = len(m.pipelines), len(m.datasets)
        raise ParameterError(f"{figures[0]}: a CD diagram needs at least 2 datasets with a result for every pipeline, "
                             f"and at least 2 pipelines; the results have {n_d} such dataset{'' if n_d == 1 else 's'} "
                             f"and {n_p} pipeline{'' if n_p == 1 else 's'}")
    written: list[str] = []
    done: set[str] = set()

    def write(path: str, make: Any) -> None:
        """Write ``path`` unless this call wrote it already (checked to be the same content)."""
        if os.path.realpath(path) not in done:
            done.add(os.path.realpath(path))
            written.append(make(path))

    for path in outputs:
        ext = os.path.splitext(path)[1].lower()
        if ext in FIGURE_FORMATS:
            canvas = cd_canvas(report)
            assert canvas is not None
            write(path, lambda p: save_canvas(canvas, p))
        elif ext == ".html":
            write(path, lambda p: write_text(p, render_html(report)))
        elif ext == ".tex":
            write(path, lambda p: write_text(p, render_latex(report)))
        elif ext == ".md":
            canvas = cd_canvas(report)
            svg = None
            if canvas is not None:
                svg = _sibling(path, "-cd.svg")
                write(svg, lambda p: save_canvas(canvas, p))
            write(path, lambda p: write_text(p, render_markdown(report, os.path.basename(svg) if svg else None)))
        elif ext == ".csv":
            write(path, lambda p: write_text(p, render_long_csv(report)))
            write(_sibling(path, "-summary.csv"), lambda p: write_text(p, render_summary_csv(report)))
        else:
            write(path, lambda p: write_text(p, render_json(report)))
    return written
