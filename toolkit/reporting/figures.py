"""The report's figures, drawn once as a list of primitives and rendered three ways: SVG text (inline in the
HTML report, no plotting library needed), TikZ (inside the LaTeX report) and matplotlib (PNG / SVG / PDF
files, with the ``plot`` extra).

* :func:`cd_diagram` - Demsar's critical-difference diagram: the rank axis, the CD bar, every method at
  its average rank with a line to its label, the cliques (groups not significantly different) as thick
  bars, alpha and the number of datasets in the title.
* :func:`distribution_plot` - per-repetition values of each pipeline on one dataset: a box (quartiles,
  median), whiskers to the extremes and a dot per repetition.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import Any

__all__ = ["Canvas", "cd_diagram", "distribution_plot", "save_canvas"]

_FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"


@dataclass
class Canvas:
    """A figure in pixel coordinates (y downwards): lines, rectangles, circles and text."""

    width: float
    height: float
    title: str = ""
    kind: str = "figure"
    items: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def line(self, x1: float, y1: float, x2: float, y2: float, width: float = 1.0, color: str = "#000",
             role: str = "") -> None:
        self.items.append(("line", dict(x1=x1, y1=y1, x2=x2, y2=y2, width=width, color=color, role=role)))

    def rect(self, x: float, y: float, w: float, h: float, fill: str = "none", stroke: str = "#000",
             role: str = "") -> None:
        self.items.append(("rect", dict(x=x, y=y, w=w, h=h, fill=fill, stroke=stroke, role=role)))

    def circle(self, x: float, y: float, r: float, fill: str = "#000", role: str = "") -> None:
        self.items.append(("circle", dict(x=x, y=y, r=r, fill=fill, role=role)))

    def text(self, x: float, y: float, s: str, anchor: str = "start", size: float = 12, bold: bool = False,
             color: str = "#000", role: str = "") -> None:
        """``anchor`` start / middle / end; ``y`` is the baseline."""
        self.items.append(("text", dict(x=x, y=y, s=str(s), anchor=anchor, size=size, bold=bold, color=color,
                                        role=role)))

    # ------------------------------------------------------------------ renderers
    def to_svg(self) -> str:
        """A standalone ``<svg>`` element (usable inline in HTML and as an .svg file)."""
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="{self.kind}" width="{self.width:.0f}" '
                 f'height="{self.height:.0f}" viewBox="0 0 {self.width:.0f} {self.height:.0f}" role="img" '
                 f'aria-label="{escape(self.title)}" font-family="{_FONT}">',
                 f"<title>{escape(self.title)}</title>",
                 f'<rect x="0" y="0" width="{self.width:.0f}" height="{self.height:.0f}" fill="#fff"/>']
        for kind, a in self.items:
            role = f' data-role="{a["role"]}"' if a.get("role") else ""
            if kind == "line":
                parts.append(f'<line x1="{a["x1"]:.2f}" y1="{a["y1"]:.2f}" x2="{a["x2"]:.2f}" y2="{a["y2"]:.2f}" '
                             f'stroke="{a["color"]}" stroke-width="{a["width"]:g}"{role}/>')
            elif kind == "rect":
                parts.append(f'<rect x="{a["x"]:.2f}" y="{a["y"]:.2f}" width="{a["w"]:.2f}" height="{a["h"]:.2f}" '
                             f'fill="{a["fill"]}" stroke="{a["stroke"]}"{role}/>')
            elif kind == "circle":
                parts.append(f'<circle cx="{a["x"]:.2f}" cy="{a["y"]:.2f}" r="{a["r"]:g}" fill="{a["fill"]}"{role}/>')
            else:
                weight = ' font-weight="bold"' if a["bold"] else ""
                parts.append(f'<text x="{a["x"]:.2f}" y="{a["y"]:.2f}" text-anchor="{a["anchor"]}" '
                             f'font-size="{a["size"]:g}" fill="{a["color"]}"{weight}{role}>{escape(a["s"])}</text>')
        parts.append("</svg>")
        return "\n".join(parts)

    def to_tikz(self, scale: float = 0.03) -> str:
        """A ``tikzpicture`` (needs ``\\usepackage{tikz}``), 1 px = ``scale`` cm."""
        from toolkit.evaluation.report import latex_escape

        def xy(x: float, y: float) -> str:
            return f"({x * scale:.3f},{(self.height - y) * scale:.3f})"

        out = ["\\begin{tikzpicture}"]
        for kind, a in self.items:
            if kind == "line":
                out.append(f"\\draw[line width={a['width'] * 0.4:.2f}pt] {xy(a['x1'], a['y1'])} -- {xy(a['x2'], a['y2'])};")
            elif kind == "rect":
                fill = "" if a["fill"] == "none" else ", fill=black!15"
                out.append(f"\\draw[line width=0.4pt{fill}] {xy(a['x'], a['y'])} rectangle "
                           f"{xy(a['x'] + a['w'], a['y'] + a['h'])};")
            elif kind == "circle":
                out.append(f"\\fill {xy(a['x'], a['y'])} circle ({a['r'] * scale:.3f});")
            else:
                anchor = {"start": "base west", "middle": "base", "end": "base east"}[a["anchor"]]
                size = "\\scriptsize" if a["size"] < 11 else "\\small"
                text = latex_escape(a["s"])
                if a["bold"]:
                    text = f"\\textbf{{{text}}}"
                out.append(f"\\node[anchor={anchor}, inner sep=0pt] at {xy(a['x'], a['y'])} {{{size} {text}}};")
        out.append("\\end{tikzpicture}")
        return "\n".join(out)

    def to_matplotlib(self) -> Any:
        """A matplotlib figure of the same drawing (1 px = 1/100 inch)."""
        from toolkit.plotting import pyplot

        plt = pyplot()
        fig = plt.figure(figsize=(self.width / 100, self.height / 100))
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, self.width)
        ax.set_ylim(self.height, 0)
        ax.axis("off")
        from matplotlib.patches import Circle, Rectangle

        for kind, a in self.items:
            if kind == "line":
                ax.plot([a["x1"], a["x2"]], [a["y1"], a["y2"]], color=a["color"], linewidth=a["width"] * 0.75,
                        solid_capstyle="butt")
            elif kind == "rect":
                ax.add_patch(Rectangle((a["x"], a["y"]), a["w"], a["h"], facecolor=a["fill"] if a["fill"] != "none"
                                       else "none", edgecolor=a["stroke"], linewidth=0.75))
            elif kind == "circle":
                ax.add_patch(Circle((a["x"], a["y"]), a["r"], color=a["fill"]))
            else:
                ha = {"start": "left", "middle": "center", "end": "right"}[a["anchor"]]
                ax.text(a["x"], a["y"], a["s"], ha=ha, va="baseline", fontsize=a["size"] * 0.75,
                        fontweight="bold" if a["bold"] else "normal", color=a["color"])
        return fig


def save_canvas(canvas: Canvas, path: str | os.PathLike[str]) -> str:
    """Write the figure: .svg as our own SVG text; .png / .pdf through matplotlib."""
    text = os.fspath(path)
    ext = os.path.splitext(text)[1].lower()
    if ext == ".svg":
        from toolkit.reporting.document import write_text

        write_text(text, canvas.to_svg() + "\n")
        return text
    from toolkit.plotting import save_figure

    return save_figure(canvas.to_matplotlib(), text, dpi=200)


def _fmt(value: float) -> str:
    return f"{value:.3f}"


def cd_diagram(names: Sequence[str], average_ranks: Sequence[float], cd: float, cliques: Sequence[Sequence[int]],
               alpha: float, n_datasets: int, metric: str = "", width: float = 720) -> Canvas:
    """Demsar's (2006) critical-difference diagram. The axis runs from rank 1 (left, best) to k; the best
    half of the methods is labelled on the left, the rest on the right; each clique of methods whose
    average ranks differ by less than the CD (Nemenyi) is joined by a thick bar below the axis."""
    k = len(names)
    ranks = [float(r) for r in average_ranks]
    order = sorted(range(k), key=lambda i: (ranks[i], i))
    # room for the longest label with its rank, "name (2.167)", at 12 px (~7.2 px a character): the canvas
    # grows rather than cut a long pipeline name off at its edge
    label_w = max(90.0, 7.2 * max(len(n) + len(f" ({_fmt(r)})") for n, r in zip(names, ranks)) + 14)
    width = max(width, 2 * label_w + 40 + 240)
    left, right = label_w + 20, width - label_w - 20
    axis_y = 92.0
    span = max(k - 1, 1)

    def x(rank: float) -> float:
        return left + (rank - 1) / span * (right - left)

    half = math.ceil(k / 2)
    n_cliques = len(cliques)
    clique_h = 9.0
    first_label_y = axis_y + 30 + n_cliques * clique_h
    row_h = 22.0
    height = first_label_y + max(half, k - half) * row_h + 16
    title = (f"Critical-difference diagram{f' ({metric})' if metric else ''}: Nemenyi test, alpha = {alpha:g}, "
             f"N = {n_datasets} datasets, CD = {cd:.3f}")
    c = Canvas(width, height, title=title, kind="cd-diagram")
    c.text(width / 2, 18, title, anchor="middle", size=12, bold=True, role="title")
    # CD bar
    cd_x0 = left
    cd_x1 = left + min(cd, span) / span * (right - left)
    c.line(cd_x0, 44, cd_x1, 44, width=2, role="cd-bar")
    c.line(cd_x0, 39, cd_x0, 49, role="cd-bar")
    c.line(cd_x1, 39, cd_x1, 49, role="cd-bar")
    c.text((cd_x0 + cd_x1) / 2, 36, f"CD = {cd:.3f}", anchor="middle", size=11, role="cd-label")
    # axis with ticks at every rank (and half ranks)
    c.line(left, axis_y, right, axis_y, width=1.2, role="axis")
    for t in range(1, k + 1):
        c.line(x(t), axis_y - 8, x(t), axis_y, role="tick")
        c.text(x(t), axis_y - 12, str(t), anchor="middle", size=11, role="tick-label")
        if t < k:
            c.line(x(t + 0.5), axis_y - 4, x(t + 0.5), axis_y, role="tick")
    # cliques: thick bars just below the axis
    for g, members in enumerate(cliques):
        lo = min(ranks[i] for i in members)
        hi = max(ranks[i] for i in members)
        y = axis_y + 14 + g * clique_h
        c.line(x(lo) - 3, y, x(hi) + 3, y, width=4, color="#c0392b", role="clique")
    # methods: a drop line from the axis to a horizontal line that ends at the label
    for pos, i in enumerate(order):
        if pos < half:
            y = first_label_y + pos * row_h
            c.line(x(ranks[i]), axis_y, x(ranks[i]), y, role="method-line")
            c.line(x(ranks[i]), y, left - 10, y, role="method-line")
            c.text(left - 14, y + 4, f"{names[i]} ({_fmt(ranks[i])})", anchor="end", size=12, role="method")
        else:
            y = first_label_y + (k - 1 - pos) * row_h
            c.line(x(ranks[i]), axis_y, x(ranks[i]), y, role="method-line")
            c.line(x(ranks[i]), y, right + 10, y, role="method-line")
            c.text(right + 14, y + 4, f"({_fmt(ranks[i])}) {names[i]}", anchor="start", size=12, role="method")
    return c


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    n = len(sorted_values)
    pos = q * (n - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, n - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _nice_axis(lo: float, hi: float, target: int = 5) -> tuple[float, float, list[float]]:
    """An axis range from ``lo`` to ``hi`` widened to round ticks 1, 2 or 5 x 10^k apart (about ``target``)."""
    if hi == lo:
        lo, hi = lo - 0.5 * (abs(lo) or 1), hi + 0.5 * (abs(hi) or 1)
    raw = (hi - lo) / target
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    start = math.floor(lo / step) * step
    end = math.ceil(hi / step) * step
    ticks = [round(start + i * step, 12) for i in range(int(round((end - start) / step)) + 1)]
    return start, end, ticks


def distribution_plot(values: dict[str, Sequence[float]], title: str, unit_scale: float = 1.0, width: float = 560,
                      greater_is_better: bool = True) -> Canvas:
    """One row per pipeline: box from the first to the third quartile with the median, whiskers to the
    minimum and maximum, a dot for each repetition's value."""
    names = list(values)
    finite = {n: sorted(unit_scale * v for v in values[n] if v == v) for n in names}
    every = [v for vs in finite.values() for v in vs]
    label_w = min(200.0, max(80.0, 7.0 * max(len(n) for n in names) + 16))
    left, right = label_w + 10, width - 20
    row_h = 26.0
    top = 34.0
    height = top + row_h * len(names) + 34
    c = Canvas(width, height, title=title, kind="distribution")
    c.text(left, 16, title, anchor="start", size=12, bold=True, role="title")
    if not every:
        c.text(left, top + 12, "no values", size=11)
        return c
    lo, hi, ticks = _nice_axis(min(every), max(every))

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * (right - left)

    axis_y = top + row_h * len(names) + 4
    c.line(left, axis_y, right, axis_y, role="axis")
    for v in ticks:
        c.line(x(v), axis_y, x(v), axis_y + 4, role="tick")
        c.text(x(v), axis_y + 16, f"{v:g}", anchor="middle", size=10, role="tick-label")
    for row, n in enumerate(names):
        y = top + row * row_h + row_h / 2
        c.text(left - 8, y + 4, n, anchor="end", size=11, role="pipeline")
        vs = finite[n]
        if not vs:
            continue
        q1, med, q3 = _quantile(vs, 0.25), _quantile(vs, 0.5), _quantile(vs, 0.75)
        c.line(x(vs[0]), y, x(vs[-1]), y, color="#555", role="whisker")
        c.rect(x(q1), y - 8, max(x(q3) - x(q1), 1.0), 16, fill="#dbe9f6", stroke="#2c5d8a", role="box")
        c.line(x(med), y - 8, x(med), y + 8, width=2, color="#2c5d8a", role="median")
        for i, v in enumerate(vs):
            c.circle(x(v), y + (i % 3 - 1) * 3, 2.2, fill="#b03a2e", role="value")
    return c
