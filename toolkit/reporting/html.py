"""The report as one self-contained HTML file: CSS, the sorting script and every figure (SVG) inline, nothing
fetched from the network. Everything is plain HTML: with scripts off the tables are all there, only not
sortable."""

from __future__ import annotations

import json
import math
from html import escape
from typing import Any

from toolkit.evaluation.detail import MAX_SHOWN_CLASSES
from toolkit.evaluation.report import TEST_NAMES, Comparison, _PERCENT_METRICS, best_in_row
from toolkit.reporting.document import Report
from toolkit.reporting.figures import cd_diagram, distribution_plot

__all__ = ["render_html"]

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0 auto;max-width:1200px;
padding:0 24px 48px;color:#1b1b1b;line-height:1.45}
h1{font-size:1.6em;margin:24px 0 4px}h2{font-size:1.25em;margin-top:36px;border-bottom:2px solid #2c5d8a;
padding-bottom:3px}h3{font-size:1.05em;margin:18px 0 6px}
table{border-collapse:collapse;margin:8px 0 6px;font-size:.92em}th,td{padding:3px 9px;border-bottom:1px solid #ddd;
text-align:right;vertical-align:top}th{background:#f1f4f8}th:first-child,td:first-child,th[scope=row]{text-align:left}
tbody th[scope=row]{background:none;font-weight:normal}tfoot td,tfoot th{border-top:2px solid #888;background:#fafafa}
td.best .mean{font-weight:bold}.mark{display:inline-block;width:1em;text-align:center;font-weight:bold}
.mark.v{color:#1e7b34}.mark.star{color:#b03a2e}.ci{color:#555}.caption{font-size:.88em;color:#444;max-width:1100px}
.kv th{text-align:left;width:14em}.hash{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.85em}
nav ul{columns:3;list-style:none;padding:0}nav a{text-decoration:none}figure{margin:12px 0}
figcaption{font-size:.88em;color:#444}details{margin:6px 0}summary{cursor:pointer;font-weight:600}
.grid{display:flex;flex-wrap:wrap;gap:18px}.cm td{min-width:2.2em}.cm td.diag{background:#e6f0e6}
th.sortable{cursor:pointer}th.sortable:after{content:" \\2195";color:#999;font-size:.8em}
.muted{color:#777}.warning{color:#8a4b00;background:#fff4e0;padding:.4em .6em;border-left:4px solid #e69500}.small{font-size:.86em}
@media print{nav{display:none}details{display:block}}
"""

# sorts a table by a clicked header cell; rows keep their data-value numbers (no script: tables still read)
_SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function(table){
  table.querySelectorAll('thead th').forEach(function(th, col){
    th.classList.add('sortable');
    th.addEventListener('click', function(){
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var dir = th.getAttribute('data-dir') === 'asc' ? -1 : 1;
      th.setAttribute('data-dir', dir === 1 ? 'asc' : 'desc');
      rows.sort(function(a, b){
        var x = a.cells[col], y = b.cells[col];
        var vx = x.getAttribute('data-value'), vy = y.getAttribute('data-value');
        if (vx !== null && vy !== null) return dir * (parseFloat(vx) - parseFloat(vy));
        return dir * x.textContent.localeCompare(y.textContent);
      });
      rows.forEach(function(r){ body.appendChild(r); });
    });
  });
});
"""


def _e(value: Any) -> str:
    return escape(str(value))


def _num(value: float | None, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "n/a"
    if value != 0 and abs(value) < 10 ** -digits:
        return f"{value:.2e}"
    return f"{value:.{digits}f}"


def _data_value(value: Any) -> str:
    """A sort key: numbers only (a results file is input, and its fields may hold any text)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return ""
    return f' data-value="{value!r}"'


def _comparison_table(comp: Comparison, table_id: str) -> str:
    scale = 100.0 if comp.metric in _PERCENT_METRICS else 1.0
    head = "".join(f'<th scope="col" data-pipeline="{_e(p)}">{_e(p)}</th>' for p in comp.pipelines)
    rows = []
    for d in comp.datasets:
        best = best_in_row(comp, d)
        cells = []
        for p in comp.pipelines:
            c = comp.cells.get((d, p))
            failed = comp.failed.get((d, p), 0)
            if c is None or c.mean != c.mean:
                cells.append(f'<td data-pipeline="{_e(p)}">{"failed" if failed else "&ndash;"}</td>')
                continue
            mean = f"{scale * c.mean:.2f}"
            spread = f" ± {scale * c.ci:.2f}" if c.ci == c.ci else ""
            extra = f" ({c.errors})" if c.thesis and c.errors is not None else ""
            if c.expected is not None and c.n < c.expected:
                extra += f" [{c.n}/{c.expected}]"
            mark_class = {"v": "v", "*": "star"}.get(c.mark, "")
            title = f"p = {_num(c.p_value)}" if c.p_value is not None else "baseline" if p == comp.baseline else ""
            cells.append(f'<td data-pipeline="{_e(p)}"{_data_value(c.mean)} class="{"best" if p in best else ""}" '
                         f'title="{_e(title)}"><span class="mean">{mean}</span><span class="ci">{_e(spread)}'
                         f'{_e(extra)}</span> <span class="mark {mark_class}">{_e(c.mark)}</span></td>')
        rows.append(f'<tr data-dataset="{_e(d)}"><th scope="row">{_e(d)}</th>{"".join(cells)}</tr>')
    foot = "".join(f"<td>{'baseline' if p == comp.baseline else '({}/{}/{})'.format(*comp.wins.get(p, (0, 0, 0)))}"
                   f"</td>" for p in comp.pipelines)
    return (f'<table class="results sortable" id="{_e(table_id)}" data-metric="{_e(comp.metric)}">'
            f'<thead><tr><th scope="col">dataset</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
            f'<tfoot><tr><th scope="row">(v/ /*)</th>{foot}</tr></tfoot></table>')


def _caption(comp: Comparison, protocol: str) -> str:
    unit = " (%)" if comp.metric in _PERCENT_METRICS else ""
    direction = "higher is better" if comp.greater_is_better else "lower is better"
    if not comp.thesis():
        shown = "mean ± 95 % confidence interval over the repetitions (t<sub>0.975,R-1</sub> s/√R)"
    elif comp.metric == "error":  # stats.thesis_ci: the whole dataset's size, not the test fold's
        shown = ("the error on the one test fold ± the thesis CI 2.228·√(e(1−e)/N), N the instances of the whole "
                 "dataset, not of the test fold (the thesis's “95 % CI”: narrower than a 95 % interval of the "
                 "fold's error), the fold's error count in parentheses")
    else:
        shown = "the value on the one test fold (no interval)"
    return (f"{_e(comp.metric)}{unit}, {direction}: {shown}{f' ({_e(protocol)})' if protocol else ''}. "
            f"<b>v</b> / <b>*</b>: significantly better / worse than <b>{_e(comp.baseline)}</b> "
            f"({_e(TEST_NAMES.get(comp.test, comp.test))}, alpha {comp.alpha:g}); (v/ /*) counts the datasets where "
            f"a pipeline is better / not different / worse. The best mean of each row is bold; hover a cell for its "
            f"p-value.")


def _experiment(report: Report) -> str:
    exp = report.experiment or {}
    protocol = exp.get("protocol", {})
    versions = exp.get("versions", {})
    rows = [("protocol", report.protocol_line() or protocol.get("name", "unknown"))]
    for key, value in protocol.items():
        rows.append((f"protocol.{key}", "none" if value is None else value))
    if protocol.get("name") == "random":
        seed, reps = protocol.get("seed", 0), protocol.get("repetitions", 0)
        rows.append(("split seeds", f"numpy default_rng(seed + r), r = 0..{reps - 1}: seeds {seed}..{seed + reps - 1}"))
    rows.append(("metrics", ", ".join(exp.get("metrics", [])) or "not stated"))
    for key in ("toolkit", "python", "numpy", "scipy"):
        if key in versions:
            rows.append((f"version of {key}", versions[key]))
    for dist, version in sorted((versions.get("plugins") or {}).items()):
        rows.append((f"plugin {dist}", version))
    if exp.get("timing", {}).get("created_utc"):
        rows.append(("experiment started", exp["timing"]["created_utc"]))
    rows.append(("results files", ", ".join(report.files) or "(in memory)"))
    if exp.get("kind") == "inferred":
        rows.append(("note", "written before results files stated their experiment; inferred from the records"))
    kv = "".join(f"<tr><th scope=\"row\">{_e(k)}</th><td style=\"text-align:left\">{_e(v)}</td></tr>" for k, v in rows)
    ds_rows = "".join(
        f'<tr><th scope="row">{_e(d["name"])}</th><td{_data_value(d.get("n_instances"))}>{_e(d.get("n_instances"))}'
        f'</td><td>{_e(d.get("n_classes"))}</td><td class="hash" style="text-align:left">{_e(d.get("sha256"))}</td></tr>'
        for d in report.datasets)
    pl_rows = "".join(f'<tr><th scope="row">{_e(p["name"])}</th><td style="text-align:left">{_e("; ".join(p["steps"]))}'
                      f'</td><td style="text-align:left">{_e(", ".join(p["versions"]))}</td></tr>'
                      for p in report.pipelines)
    return (f'<section id="experiment"><h2>Experiment</h2><table class="kv">{kv}</table>'
            f'<h3>Datasets ({len(report.datasets)})</h3><table class="sortable" id="datasets"><thead><tr>'
            f'<th scope="col">dataset</th><th scope="col">instances</th><th scope="col">classes</th>'
            f'<th scope="col" style="text-align:left">sha256</th></tr></thead><tbody>{ds_rows}</tbody></table>'
            f'<h3>Pipelines ({len(report.pipelines)})</h3><table id="pipelines"><thead><tr><th scope="col">pipeline</th>'
            f'<th scope="col" style="text-align:left">steps</th><th scope="col" style="text-align:left">plugins</th></tr></thead><tbody>{pl_rows}</tbody></table>'
            f'</section>')


def _across(report: Report) -> str:
    m = report.across
    if m.friedman is None or m.nemenyi is None:
        return (f'<section id="across"><h2>Across datasets</h2><p>{_e(m.format())}</p></section>')
    f, n = m.friedman, m.nemenyi
    svg = cd_diagram(m.pipelines, f.average_ranks, n.critical_difference, n.cliques, m.alpha, len(m.datasets),
                     m.metric).to_svg()
    order = sorted(range(len(m.pipelines)), key=lambda i: f.average_ranks[i])
    rank_rows = "".join(f'<tr><th scope="row">{_e(m.pipelines[i])}</th><td{_data_value(float(f.average_ranks[i]))}>'
                        f'{f.average_ranks[i]:.3f}</td></tr>' for i in order)
    pair_rows = "".join(
        f'<tr><th scope="row">{_e(m.pipelines[t.a])} vs {_e(m.pipelines[t.b])}</th><td{_data_value(t.p_value)}>'
        f'{_num(t.p_value)}</td><td{_data_value(t.p_holm)}>{_num(t.p_holm)}</td><td>{"yes" if t.significant else "no"}'
        f'</td></tr>' for t in m.pairwise)
    base_rows = "".join(
        f'<tr><th scope="row">{_e(p)}</th><td>{v["wins"]}/{v["ties"]}/{v["losses"]}</td><td{_data_value(v["sign_p"])}>'
        f'{_num(v["sign_p"])}</td><td{_data_value(v["wilcoxon_p"])}>{_num(v["wilcoxon_p"])}</td></tr>'
        for p, v in m.versus_baseline.items())
    cliques = "; ".join("{" + ", ".join(m.pipelines[i] for i in c) + "}" for c in n.cliques) or "none"
    left_out = (f"<p>Left out (a pipeline has no result there): {_e(', '.join(m.left_out))}.</p>" if m.left_out else "")
    return f"""<section id="across"><h2>Across datasets: {_e(m.metric)}</h2>
<p>Over the N = {len(m.datasets)} datasets where every pipeline has a result, ranking the k = {len(m.pipelines)}
pipelines on each dataset by their mean {_e(m.metric)} (1 = best, ties share the mean rank; Demšar, JMLR 2006).</p>{left_out}
<table id="friedman" class="kv"><tbody>
<tr><th scope="row">Friedman χ²<sub>F</sub></th><td>{_num(f.chi2)} (df {f.n_methods - 1}), p = {_num(f.p_value)}</td></tr>
<tr><th scope="row">Iman-Davenport F<sub>F</sub></th><td>{_num(f.iman_davenport)} (df {f.df[0]}, {f.df[1]}), p = {_num(f.iman_davenport_p)}</td></tr>
<tr><th scope="row">Nemenyi q<sub>α</sub></th><td>{n.q_alpha:.3f} (α = {m.alpha:g})</td></tr>
<tr><th scope="row">critical difference</th><td>CD = q<sub>α</sub>·√(k(k+1)/(6N)) = {n.critical_difference:.3f}</td></tr>
<tr><th scope="row">not significantly different</th><td style="text-align:left">{_e(cliques)}</td></tr>
</tbody></table>
<figure id="cd-diagram">{svg}<figcaption>Critical-difference diagram: average ranks on the axis (1 = best); methods
joined by a thick bar are not significantly different (Nemenyi, α = {m.alpha:g}); the bar at the top is the CD.</figcaption></figure>
<div class="grid"><div><h3>Average ranks</h3><table class="sortable" id="ranks"><thead><tr><th scope="col">pipeline</th>
<th scope="col">average rank</th></tr></thead><tbody>{rank_rows}</tbody></table></div>
<div><h3>Pairwise Wilcoxon signed-rank tests, Holm-corrected</h3><table class="sortable" id="pairwise"><thead><tr>
<th scope="col">pair</th><th scope="col">p</th><th scope="col">Holm p</th><th scope="col">significant</th></tr></thead>
<tbody>{pair_rows}</tbody></table></div>
<div><h3>Against {_e(m.baseline)} over datasets</h3><table id="versus-baseline"><thead><tr><th scope="col">pipeline</th>
<th scope="col">wins/ties/losses</th><th scope="col">sign test p</th><th scope="col">Wilcoxon p</th></tr></thead>
<tbody>{base_rows}</tbody></table></div></div></section>"""


def _bayes(report: Report) -> str:
    if not report.bayes:
        return ""
    comp = report.main
    others = [p for p in comp.pipelines if p != comp.baseline]
    head = "".join(f'<th scope="col" colspan="3">{_e(p)}</th>' for p in others)
    sub = "".join("<th>better</th><th>equiv.</th><th>worse</th>" for _ in others)
    rows = []
    for d in comp.datasets:
        cells = []
        for p in others:
            b = report.bayes.get((d, p))
            if b is None:
                cells.append("<td>&ndash;</td><td>&ndash;</td><td>&ndash;</td>")
                continue
            cells.append(f"<td>{b.p_a_better:.3f}</td><td>{b.p_equivalent:.3f}</td><td>{b.p_b_better:.3f}</td>")
        rows.append(f'<tr><th scope="row">{_e(d)}</th>{"".join(cells)}</tr>')
    return f"""<section id="bayes"><h2>Bayesian correlated t-test against {_e(comp.baseline)}</h2>
<p class="caption">Posterior probabilities (Benavoli et al., JMLR 2017) that a pipeline is better than, practically
equivalent to (|difference of {_e(comp.metric)}| ≤ rope = {report.rope:g}) or worse than {_e(comp.baseline)}, from the
per-repetition differences with the correlation correction n<sub>test</sub>/n<sub>train</sub> of the actual splits.</p>
<table id="bayes-table"><thead><tr><th scope="col" rowspan="2">dataset</th>{head}</tr><tr>{sub}</tr></thead>
<tbody>{"".join(rows)}</tbody></table></section>"""


def _metric_tables(report: Report, protocol: str) -> str:
    parts = []
    for comp in report.tables[1:]:
        anchor = f"metric-{comp.metric}"
        parts.append(f'<h3 id="{_e(anchor)}">{_e(comp.metric)}</h3>{_comparison_table(comp, "table-" + comp.metric)}'
                     f'<p class="caption">{_caption(comp, protocol)}</p>')
    if not parts:
        return ""
    return f'<section id="metrics"><h2>Every metric</h2>{"".join(parts)}</section>'


def _distributions(report: Report) -> str:
    comp = report.main
    scale = 100.0 if comp.metric in _PERCENT_METRICS else 1.0
    figures = []
    for d in comp.datasets:
        values = {p: report.values(d, p) for p in comp.pipelines if report.results.cell(d, p)}
        if not values:
            continue
        unit = " (%)" if scale == 100.0 else ""
        svg = distribution_plot(values, f"{d}: {comp.metric}{unit} per repetition", scale,
                                greater_is_better=comp.greater_is_better).to_svg()
        figures.append(f'<figure data-dataset="{_e(d)}">{svg}</figure>')
    return (f'<section id="distributions"><h2>Per-repetition {_e(comp.metric)} on each dataset</h2>'
            f'<p class="caption">Each dot is one repetition; the box spans the quartiles, the thick line is the median, '
            f'the thin line runs from the smallest to the largest value.</p><div class="grid">{"".join(figures)}</div>'
            f'</section>')


def _confusion(report: Report) -> str:
    blocks = []
    for d in report.main.datasets:
        tables = []
        counts: list[int] = []
        for p in report.main.pipelines:
            got = report.confusion(d, p)
            if got is None:
                if report.results.cell(d, p):   # records, but more classes than a table shows
                    tables.append(f'<div data-pipeline="{_e(p)}"><h3>{_e(p)}</h3><p class="small muted">left out: '
                                  f'more than {MAX_SHOWN_CLASSES:,} classes</p></div>')
                continue
            labels, matrix = got
            whole = bool((matrix == matrix.round()).all())
            head = "".join(f'<th scope="col" title="predicted {_e(lab)}">{_e(lab)}</th>' for lab in labels)
            body = []
            for i, lab in enumerate(labels):
                cells = "".join(f'<td class="{"diag" if i == j else ""}">{int(v) if whole else f"{v:.2f}"}</td>'
                                for j, v in enumerate(matrix[i]))
                body.append(f'<tr><th scope="row" title="true {_e(lab)}">{_e(lab)}</th>{cells}</tr>')
            per_class = report.per_class(d, p)
            f1 = ""
            if per_class is not None and "f1" in per_class:
                f1 = ("<p class=\"small muted\">mean per-class F1: " + ", ".join(
                    f"{_e(lab)} {_num(v, 3)}" for lab, v in zip(per_class["labels"], per_class["f1"])) + "</p>")
            n = len(report.results.cell(d, p))  # each pipeline's matrix sums its own finished repetitions
            counts.append(n)
            tables.append(f'<div data-pipeline="{_e(p)}" data-repetitions="{n}"><h3>{_e(p)}</h3><p class="small muted">'
                          f'summed over {n} repetition{"" if n == 1 else "s"}</p><table class="cm"><thead><tr>'
                          f'<th>true \\ predicted</th>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>{f1}</div>')
        opened = " open" if len(report.main.datasets) <= 6 else ""
        summed = (f"summed over {counts[0]} repetitions" if len(set(counts)) == 1 else
                  f"summed over each pipeline's finished repetitions, {min(counts)} to {max(counts)}") if counts else ""
        blocks.append(f'<details data-dataset="{_e(d)}"{opened}><summary>{_e(d)}{f" ({summed})" if summed else ""}'
                      f'</summary><div class="grid">{"".join(tables)}</div></details>')
    return (f'<section id="confusion"><h2>Confusion matrices</h2><p class="caption">Counts of (true class, predicted '
            f'class) over every test instance of every repetition.</p>{"".join(blocks)}</section>')


def _hyperparameters(report: Report) -> str:
    if not report.tuned():
        return ('<section id="hyperparameters"><h2>Chosen hyperparameters</h2><p>No pipeline had a grid to tune.</p>'
                '</section>')
    blocks = []
    for d in report.main.datasets:
        # a column per repetition any pipeline ran (finished or failed); a repetition a pipeline has no
        # finished record of is an empty cell
        reps = sorted({int(r["repetition"]) for r in report.results.records
                       if r["dataset"]["name"] == d and r.get("repetition") is not None})
        rows = []
        for p in report.main.pipelines:
            chosen = dict(report.hyperparameters(d, p))
            if not any(chosen.values()):
                continue
            cells = "".join("<td></td>" if r not in chosen else
                            f"<td>{_e(', '.join(f'{k}={v}' for k, v in chosen[r].items()) or '-')}</td>" for r in reps)
            rows.append(f'<tr><th scope="row">{_e(p)}</th>{cells}</tr>')
        if not rows:
            continue
        head = "".join(f'<th scope="col">{r}</th>' for r in reps)
        blocks.append(f'<h3>{_e(d)}</h3><table class="hyper"><thead><tr><th scope="col">pipeline \\ repetition</th>'
                      f'{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>')
    return (f'<section id="hyperparameters"><h2>Chosen hyperparameters per outer repetition</h2>'
            f'<p class="caption">The grid point each repetition chose on its own training part (first point with the '
            f'fewest validation errors), then refitted on the whole training part.</p>{"".join(blocks)}</section>')


def _failures(report: Report) -> str:
    rows = report.failures()
    if not rows:
        return ""
    body = "".join(f'<tr><th scope="row">{_e(r["dataset"])}</th><td>{_e(r["pipeline"])}</td><td>{_e(r["repetition"])}'
                   f'</td><td style="text-align:left">{_e(r["error"])}</td></tr>' for r in rows)
    return (f'<section id="failures"><h2>Failed repetitions ({len(rows)})</h2><table><thead><tr><th>dataset</th>'
            f'<th>pipeline</th><th>repetition</th><th>error</th></tr></thead><tbody>{body}</tbody></table></section>')


def render_html(report: Report) -> str:
    comp = report.main
    protocol = report.protocol_line()
    title = f"{len(comp.pipelines)} pipelines on {len(comp.datasets)} datasets: {comp.metric}"
    sections = [
        ("experiment", "Experiment"), ("significance", f"Significance: {comp.metric}"), ("across", "Across datasets"),
        ("bayes", "Bayesian test"), ("metrics", "Every metric"), ("distributions", "Distributions"),
        ("confusion", "Confusion matrices"), ("hyperparameters", "Hyperparameters"),
        ("failures", "Failed repetitions")]
    body = [_experiment(report),
            f'<section id="significance"><h2>Significance: {_e(comp.metric)}</h2>'
            f'{_comparison_table(comp, "significance-table")}<p class="caption">{_caption(comp, protocol)}</p></section>',
            _across(report), _bayes(report), _metric_tables(report, protocol), _distributions(report),
            _confusion(report), _hyperparameters(report), _failures(report)]
    present = [(a, t) for a, t in sections if any(f'id="{a}"' in b for b in body)]
    nav = "".join(f'<li><a href="#{a}">{_e(t)}</a></li>' for a, t in present)
    meta = json.dumps({"schema": "toolkit.report/1", "metric": comp.metric, "pipelines": comp.pipelines,
                       "datasets": comp.datasets}, separators=(",", ":"))
    # no markup inside the script element: "</script>" would end it and "<!--<script>" would swallow the next
    # script (the parser's escaped states); JSON reads the \u escapes back as the same characters
    meta = meta.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="toolkit {_e(report.toolkit_version)}"><title>{_e(title)}</title>
<style>{_CSS}</style></head>
<body>
<header><h1>{_e(title)}</h1>
<p class="muted">Report written by toolkit {_e(report.toolkit_version)} on {_e(report.created_utc)} from
{_e(", ".join(report.files) or "results in memory")}. {_e(protocol)}</p>
{"".join(f'<p class="warning" role="alert"><b>Warning:</b> {_e(w)}</p>' for w in report.warnings)}</header>
<nav><ul>{nav}</ul></nav>
{"".join(body)}
<script type="application/json" id="report-meta">{meta}</script>
<script>{_SCRIPT}</script>
</body></html>
"""
