"""``toolkit report`` and the Python API around it: every format holds what the results hold (numbers checked
against the records, computed here independently), HTML is self-contained, LaTeX is booktabs with one number
per cell and the best in bold, several -m all shown, dict metrics shown without n/a, bad options refused
before any work."""

from __future__ import annotations

import csv
import math
import importlib.util
import io
import json
import re
import subprocess
import sys
from html.parser import HTMLParser

import numpy as np
import pytest
from scipy import stats as sps
from typer.testing import CliRunner

import toolkit
from conftest import ROOT
from toolkit.cli import app
from toolkit.evaluation.results import read_file

runner = CliRunner()
DATASETS = ["iris", "vote", "glass", "breast-cancer"]
PIPELINES = ["nb-weka", "nb-gaussian", "bma-nb:H=0.9|1.1", "liblinear-lr:C=1,B=1"]
METRICS = ["error", "accuracy", "kappa", "roc-auc", "per-class", "confusion-matrix"]
BMA = "bma-nb:H=0.9|1.1"  # a grid other than bma-nb's own is part of the pipeline's name


@pytest.fixture(scope="module")
def results_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "r.jsonl"
    toolkit.evaluate(DATASETS, PIPELINES, runs=3, metrics=METRICS, out=path)
    return path


@pytest.fixture(scope="module")
def written(results_file):
    folder = results_file.parent
    outs = [folder / f"r.{ext}" for ext in ("html", "tex", "md", "csv", "json")] + [folder / "cd.png", folder / "cd.svg",
                                                                                   folder / "cd.pdf"]
    result = runner.invoke(app, ["report", str(results_file), *[a for o in outs for a in ("-o", str(o))]])
    assert result.exit_code == 0, result.output
    return {o.name: o for o in outs} | {"stderr": result.stderr}


def _records(path):
    _experiments, records = read_file(path)
    return [r for r in records if r["status"] == "ok"]


def _cells(path, metric):
    out = {}
    for r in _records(path):
        out.setdefault((r["dataset"]["name"], r["pipeline"]["name"]), []).append(r["metrics"][metric])
    return out


class _Tables(HTMLParser):
    """Rows of every table by id: lists of (tag, attrs, text) cells."""

    def __init__(self):
        super().__init__()
        self.tables, self.stack, self.cell, self.row = {}, [], None, None
        self.links, self.scripts_with_src, self.svgs = [], 0, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self.stack.append(attrs.get("id", f"anon{len(self.tables)}"))
            self.tables[self.stack[-1]] = []
        elif tag == "tr" and self.stack:
            self.row = []
            self.tables[self.stack[-1]].append(self.row)
        elif tag in ("td", "th") and self.row is not None:
            self.cell = [tag, attrs, ""]
            self.row.append(self.cell)
        for key in ("href", "src"):
            if key in attrs:
                self.links.append(attrs[key])
        if tag == "script" and "src" in attrs:
            self.scripts_with_src += 1
        if tag == "svg":
            self.svgs.append(attrs)

    def handle_endtag(self, tag):
        if tag == "table" and self.stack:
            self.stack.pop()
        elif tag in ("td", "th"):
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell[2] += data


def test_report_writes_every_format(written):
    for name in ("r.html", "r.tex", "r.md", "r.csv", "r.json", "cd.png", "cd.svg", "cd.pdf"):
        assert written[name].stat().st_size > 200, name
    assert (written["r.md"].parent / "r-cd.svg").is_file() and (written["r.csv"].parent / "r-summary.csv").is_file()
    assert written["cd.png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and written["cd.pdf"].read_bytes()[:5] == b"%PDF-"
    assert "written: " in written["stderr"]


def test_html_is_self_contained_and_holds_every_row_and_column(written, results_file):
    text = written["r.html"].read_text()
    parser = _Tables()
    parser.feed(text)
    assert parser.scripts_with_src == 0 and "<link" not in text and "@import" not in text
    assert all(link.startswith("#") for link in parser.links), parser.links
    assert not re.search(r"url\(", text)
    names = toolkit.Results.from_files([results_file]).pipelines()
    table = parser.tables["significance-table"]
    assert [c[2] for c in table[0]][1:] == names
    body = [row for row in table[1:] if row[0][2] != "(v/ /*)"]
    assert [row[0][2] for row in body] == DATASETS
    cells = _cells(results_file, "error")
    comp = toolkit.compare(results_file, metric="error")
    for row in body:
        d = row[0][2]
        best = min(round(np.mean(cells[(d, p)]), 12) for p in names)
        for p, cell in zip(names, row[1:]):
            mean = 100 * np.mean(cells[(d, p)])
            assert cell[2].startswith(f"{mean:.2f}"), (d, p, cell[2])
            assert ("best" in cell[1].get("class", "")) == (round(np.mean(cells[(d, p)]), 12) == best)
            assert cell[2].strip().endswith(comp.cells[(d, p)].mark)
    kinds = {svg.get("class") for svg in parser.svgs}
    assert "cd-diagram" in kinds and "distribution" in kinds
    for section in ("experiment", "significance", "across", "bayes", "metrics", "distributions", "confusion",
                    "hyperparameters"):
        assert f'<section id="{section}">' in text, section
    experiment = read_file(results_file)[0][0]
    for d in experiment["datasets"]:
        assert d["sha256"] in text
    assert "seeds 1..3" in text and experiment["versions"]["numpy"] in text
    for metric in ("accuracy", "kappa", "roc-auc"):
        assert f'id="table-{metric}"' in text
    assert "clf.H=" in text  # bma-nb's chosen H per repetition


def test_latex_is_booktabs_with_one_number_per_cell_and_the_best_in_bold(written, results_file):
    text = written["r.tex"].read_text()
    assert text.count("\\begin{document}") == 1 and text.rstrip().endswith("\\end{document}")
    for rule in ("\\toprule", "\\midrule", "\\bottomrule"):
        assert rule in text
    assert "\\hline" not in text
    first = text.index("\\begin{longtable}{lr@")
    block = text[first:text.index("\\end{longtable}", first)]
    segments = [r.strip().splitlines()[-1] for r in block.split("\\\\") if r.strip()]  # drop rule lines
    rows = [r for r in segments if r.split(" & ")[0].strip() in DATASETS]
    cells = _cells(results_file, "error")
    names = toolkit.Results.from_files([results_file]).pipelines()
    assert len(rows) == len(DATASETS)
    for row in rows:
        parts = [c.strip() for c in row.split("&")]
        assert len(parts) == 1 + 3 * len(names)
        d = parts[0]
        best = min(round(np.mean(cells[(d, p)]), 12) for p in names)
        for j, p in enumerate(names):
            mean_cell, spread_cell = parts[1 + 3 * j], parts[2 + 3 * j]
            bold = mean_cell.startswith("\\textbf{")
            number = float(mean_cell.removeprefix("\\textbf{").removesuffix("}"))
            assert number == pytest.approx(100 * np.mean(cells[(d, p)]), abs=0.005)
            assert bold == (round(np.mean(cells[(d, p)]), 12) == best), (d, p)
            assert re.fullmatch(r"\$\\pm \d+\.\d\d\$", spread_cell), spread_cell
    assert "\\begin{tikzpicture}" in text and all(name.split(":")[0] in text for name in names)


def test_markdown_links_its_cd_diagram(written):
    text = written["r.md"].read_text()
    assert "![critical-difference diagram](r-cd.svg)" in text
    assert "| dataset | nb-weka |" in text and "Friedman chi2" in text and "## Confusion matrices" in text


def test_csv_long_and_summary_equal_the_records(written, results_file):
    long = list(csv.DictReader(io.StringIO(written["r.csv"].read_text())))
    records = _records(results_file)
    scalar = ["error", "accuracy", "kappa", "roc-auc"]
    assert len(long) == len(records) * len(scalar)
    by_key = {(r["dataset"]["name"], r["pipeline"]["name"], r["repetition"]): r for r in records}
    for row in long:
        rec = by_key[(row["dataset"], row["pipeline"], int(row["repetition"]))]
        assert float(row["value"]) == rec["metrics"][row["metric"]]
    summary = list(csv.DictReader(io.StringIO((written["r.csv"].parent / "r-summary.csv").read_text())))
    assert len(summary) == len(scalar) * len(DATASETS) * len(PIPELINES)
    for row in summary:
        values = [float(r["value"]) for r in long if (r["metric"], r["dataset"], r["pipeline"]) ==
                  (row["metric"], row["dataset"], row["pipeline"])]
        assert float(row["mean"]) == pytest.approx(np.mean(values), rel=1e-12)
        assert float(row["sd"]) == pytest.approx(np.std(values, ddof=1), rel=1e-9, abs=1e-15)
    for metric in scalar:  # ranks within each dataset, 1 = best, ties sharing the mean rank
        greater = metric != "error"
        for d in DATASETS:
            rows = [r for r in summary if r["metric"] == metric and r["dataset"] == d]
            means = [round(float(r["mean"]), 12) for r in rows]
            for r, m in zip(rows, means):
                better = sum(1 for x in means if (x > m if greater else x < m))
                ties = sum(1 for x in means if x == m)
                assert float(r["rank"]) == better + (ties + 1) / 2


def test_json_holds_the_experiment_and_the_tests_across_datasets(written, results_file):
    doc = json.loads(written["r.json"].read_text())
    assert doc["schema"] == "toolkit.report/1" and doc["main_metric"] == "error"
    experiment = read_file(results_file)[0][0]
    assert doc["experiment"]["protocol"] == experiment["protocol"]
    assert doc["experiment"]["datasets"] == experiment["datasets"]
    assert [t["metric"] for t in doc["tables"]] == ["error", "accuracy", "kappa", "roc-auc"]
    cells = _cells(results_file, "error")
    names = toolkit.Results.from_files([results_file]).pipelines()
    means = np.array([[round(np.mean(cells[(d, p)]), 12) for p in names] for d in DATASETS])
    ref = sps.friedmanchisquare(*(-means).T)
    assert doc["across_datasets"]["friedman"]["chi2"] == pytest.approx(ref.statistic, rel=1e-12)
    assert len(doc["confusion_matrices"]) == len(DATASETS) * len(PIPELINES)
    record_sum = {}
    for r in _records(results_file):
        key = (r["dataset"]["name"], r["pipeline"]["name"])
        record_sum[key] = record_sum.get(key, 0) + np.asarray(r["metrics"]["confusion-matrix"]["matrix"])
    for cm in doc["confusion_matrices"]:
        assert np.array_equal(cm["matrix"], record_sum[(cm["dataset"], cm["pipeline"])])


def test_several_metrics_are_all_shown_and_dict_metrics_without_na(results_file):
    result = runner.invoke(app, ["compare", str(results_file), "-m", "error", "-m", "kappa", "-m", "confusion-matrix",
                                 "-m", "per-class"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.startswith("dataset") and "\nkappa, mean ± 95% CI" in out and "error (%), mean ± 95% CI" in out
    assert "n/a" not in out
    record_sum = {}
    for r in _records(results_file):
        key = (r["dataset"]["name"], r["pipeline"]["name"])
        record_sum[key] = record_sum.get(key, 0) + np.asarray(r["metrics"]["confusion-matrix"]["matrix"])
    block = out[out.index("confusion matrix: vote / nb-weka"):].split("\n\n")[0].splitlines()
    rows = [[int(x) for x in line.split("|")[0].split()] for line in block[2:]]
    assert np.array_equal(rows, record_sum[("vote", "nb-weka")])
    assert "per class: vote / nb-weka, means over 3 repetitions" in out and "F-Measure" in out
    only = runner.invoke(app, ["compare", str(results_file), "-m", "error", "-m", "kappa", "--report", "kappa"])
    assert only.exit_code == 0 and "kappa" in only.stdout and "error (%)" not in only.stdout


def test_python_api_tables_and_stats_on_plain_arrays(results_file, tmp_path):
    comp = toolkit.compare(results_file, metric="error")
    assert str(comp).splitlines()[0].split() == ["dataset", *comp.pipelines]
    assert comp.to_markdown().startswith("| dataset |") and "\\toprule" in comp.to_latex()
    if importlib.util.find_spec("pandas") is None:
        with pytest.raises(toolkit.ToolkitError, match="pandas"):
            comp.to_frame()
    else:
        assert len(comp.to_frame()) == len(DATASETS) * len(PIPELINES)
    across = comp.across_datasets()
    kept, means = comp.means()
    assert across.friedman.chi2 == pytest.approx(sps.friedmanchisquare(*means.T).statistic)
    assert toolkit.stats.friedman(means, greater_is_better=False).chi2 == across.friedman.chi2
    assert toolkit.stats.nemenyi(means, greater_is_better=False).critical_difference == pytest.approx(
        toolkit.stats.nemenyi_q(4) * (4 * 5 / (6 * 4)) ** 0.5)
    written = toolkit.write_report(results_file, [tmp_path / "api.html", tmp_path / "api.json"], main="accuracy")
    assert len(written) == 2 and json.loads((tmp_path / "api.json").read_text())["main_metric"] == "accuracy"


def test_import_toolkit_stays_light():
    code = "import sys, toolkit; print('toolkit.evaluation.stats' in sys.modules, 'scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]
    code = "import toolkit; print(toolkit.stats.holm([0.01, 0.04])[1])"
    assert float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout) == 0.04


@pytest.mark.parametrize("args, needle", [
    (["-o", "report.docx"], "the format comes from the extension"),
    (["-o", "/no/such/folder/r.html"], "does not exist"),
    (["-o", "r.html", "-m", "f1-macro"], "metric 'f1-macro' is not in the results"),
    (["-o", "r.html", "--report", "log-loss"], "--report log-loss is not among"),
    (["-o", "r.html", "--significance", "bayes"], "--significance must be one of"),
    (["-o", "r.html", "--baseline", "nb-wekka"], "baseline 'nb-wekka' is not among the results"),
])
def test_bad_options_give_one_line_and_exit_2(results_file, tmp_path, monkeypatch, args, needle):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["report", str(results_file), *args])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and needle in lines[0], result.output
    assert not list(tmp_path.glob("r.*"))


def test_not_a_results_file_and_no_matplotlib(tmp_path, monkeypatch, results_file):
    result = runner.invoke(app, ["report", str(tmp_path / "x.csv"), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 2 and "reads results files (.jsonl)" in result.stderr
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    result = runner.invoke(app, ["report", str(results_file), "-o", str(tmp_path / "cd.png")])
    assert result.exit_code != 0 and "arff-toolkit[plot]" in result.stderr and not (tmp_path / "cd.png").exists()
    ok = runner.invoke(app, ["report", str(results_file), "-o", str(tmp_path / "r.html")])  # HTML needs no matplotlib
    assert ok.exit_code == 0, ok.output


def test_api_doc_statistics_example_runs(capsys):
    """docs/api.md's "Statistics and reports" example runs and prints what it says."""
    from conftest import ROOT

    text = (ROOT / "docs" / "api.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "tk.stats.friedman" in b)
    exec(compile(block, "docs/api.md", "exec"), {"__name__": "docs_api_stats"})
    out = capsys.readouterr().out
    assert "Friedman p = " in out and "CD = " in out and "BayesResult(" in out


@pytest.mark.skipif(__import__("shutil").which("pdflatex") is None, reason="no pdflatex here (Debian: texlive-latex-base, "
                    "texlive-latex-recommended, texlive-pictures)")
def test_latex_report_compiles(written, tmp_path):
    tex = tmp_path / "r.tex"
    tex.write_text(written["r.tex"].read_text())
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert (tmp_path / "r.pdf").read_bytes()[:5] == b"%PDF-"


def test_report_with_failed_repetitions_names_them(results_file, tmp_path):
    """A run with --keep-going leaves failed records: the report marks the cells [n/N] or failed, leaves the
    dataset out of the tests across datasets (naming it) and lists the failures."""
    lines = results_file.read_text().splitlines()
    out = []
    for line in lines:
        rec = json.loads(line)
        if rec.get("schema") == "toolkit.result/1" and rec["dataset"]["name"] == "glass" and \
                rec["pipeline"]["name"] == "nb-gaussian" and rec["repetition"] > 0:
            rec = {k: v for k, v in rec.items() if k not in ("metrics", "predictions", "chosen_params", "tuning")}
            rec.update(status="failed", error="solver diverged (made up for this test)", error_kind="bug")
        out.append(json.dumps(rec))
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(out) + "\n")
    written = toolkit.write_report(broken, [tmp_path / "b.html", tmp_path / "b.json", tmp_path / "b.md"])
    doc = json.loads((tmp_path / "b.json").read_text())
    assert len(doc["failures"]) == 2 and doc["across_datasets"]["left_out"] == []
    cell = next(r for r in doc["tables"][0]["rows"] if r["dataset"] == "glass")["nb-gaussian"]
    assert cell["n"] == 1
    html = (tmp_path / "b.html").read_text()
    assert "[1/3]" in html and "solver diverged" in html and len(written) == 4  # + b-cd.svg


def test_readme_path_from_compare_to_a_report(tmp_path, monkeypatch):
    """The README's two commands: toolkit compare FOLDER -c A -c B --out r.jsonl, then toolkit report."""
    from conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    assert "toolkit compare FOLDER -c nb-weka -c bma-nb --out r.jsonl" in readme
    assert "toolkit report r.jsonl -o report.html" in readme
    folder = tmp_path / "FOLDER"
    folder.mkdir()
    for name in ("iris", "labor", "contact-lenses"):
        (folder / f"{name}.arff").symlink_to(ROOT / "datasets" / f"{name}.arff")
    monkeypatch.chdir(tmp_path)
    ran = runner.invoke(app, ["compare", "FOLDER", "-c", "nb-weka", "-c", "bma-nb", "--out", "r.jsonl", "-r", "2", "-q"])
    assert ran.exit_code == 0, ran.output
    made = runner.invoke(app, ["report", "r.jsonl", "-o", "report.html"])
    assert made.exit_code == 0, made.output
    html = (tmp_path / "report.html").read_text()
    assert all(f'data-dataset="{d}"' in html for d in ("iris", "labor", "contact-lenses"))


def test_rows_and_columns_follow_the_run_not_the_completion_order(results_file, tmp_path):
    """--jobs and --cluster write records in completion order (largest tasks first); the table keeps the
    order of the run's statement: the same file with its records reversed gives the same table."""
    lines = results_file.read_text(encoding="utf-8").splitlines(keepends=True)
    reversed_file = tmp_path / "reversed.jsonl"
    reversed_file.write_text(lines[0] + "".join(reversed(lines[1:])), encoding="utf-8")
    first_seen = list(dict.fromkeys(r["dataset"]["name"] for r in _records(reversed_file)))
    assert first_seen == DATASETS[::-1]          # the reversed file does meet them in another order
    results = toolkit.evaluation.results.Results.from_files([reversed_file])
    assert results.datasets() == DATASETS
    assert results.pipelines() == json.loads(lines[0])["pipelines"]
    assert str(toolkit.compare(str(reversed_file))) == str(toolkit.compare(str(results_file)))


def _unescaped_pipes(line):
    return len(re.findall(r"(?<!\\)\|", line))


def test_markdown_tables_keep_their_columns_whatever_the_names(tmp_path):
    """A name holding '|' must not add a column to a Markdown table, nor '<...>' vanish as an HTML tag;
    LaTeX prints them with its text commands."""
    source = tmp_path / "a<b>&c|d.arff"
    source.write_text((ROOT / "datasets" / "iris.arff").read_text())
    out = tmp_path / "odd.jsonl"
    toolkit.evaluate([source], ["nb-weka", "nb-gaussian"], runs=2, out=out)
    md, tex = tmp_path / "odd.md", tmp_path / "odd.tex"
    result = runner.invoke(app, ["report", str(out), "-o", str(md), "-o", str(tex)])
    assert result.exit_code == 0, result.output
    text = md.read_text()
    assert "a&lt;b&gt;&amp;c\\|d" in text and "a<b>" not in text
    blocks, block = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            block.append(line)
        elif block:
            blocks.append(block)
            block = []
    assert len(blocks) >= 4
    for table in blocks:
        assert len({_unescaped_pipes(row) for row in table}) == 1, table[:3]
    latex = tex.read_text()
    assert "a\\textless{}b\\textgreater{}\\&c\\textbar{}d" in latex and "\\usepackage[T1]{fontenc}" in latex


def test_n_counts_the_values_the_mean_uses(tmp_path):
    """A repetition whose metric is undefined (null in the file) is not counted in n, which the mean, the
    interval and the tests leave it out of."""
    out = tmp_path / "r.jsonl"
    toolkit.evaluate(["iris"], ["nb-weka"], runs=4, out=out)
    lines = out.read_text().splitlines()
    record = json.loads(lines[2])
    kept = record["metrics"]["error"]
    record["metrics"]["error"] = None
    lines[2] = json.dumps(record)
    out.write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["compare", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    cell = json.loads(result.stdout)["rows"][0]["nb-weka"]
    values = [json.loads(x)["metrics"]["error"] for x in lines[1:]]
    finite = [v for v in values if v is not None]
    assert kept is not None and len(finite) == 3
    assert cell["n"] == 3 and cell["mean"] == pytest.approx(sum(finite) / 3)
    table = runner.invoke(app, ["compare", str(out)])
    assert "[3/4]" in table.stdout and "gave a value" in table.stdout


def test_a_cd_diagram_of_one_dataset_is_refused_before_anything_is_written(tmp_path):
    out = tmp_path / "one.jsonl"
    toolkit.evaluate(["iris"], ["nb-weka", "nb-gaussian"], runs=2, out=out)
    targets = [tmp_path / "one.html", tmp_path / "one.md", tmp_path / "one.json", tmp_path / "one-cd.svg"]
    result = runner.invoke(app, ["report", str(out), *[a for t in targets for a in ("-o", str(t))]])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and "needs at least 2 datasets" in lines[0], result.output
    assert not any(t.exists() for t in targets)


def test_compare_without_error_shows_the_first_metric_with_numbers(tmp_path):
    out = tmp_path / "r.jsonl"
    toolkit.evaluate(["iris"], ["nb-weka"], runs=2, metrics=["confusion-matrix", "kappa"], out=out)
    result = runner.invoke(app, ["compare", str(out)])
    assert result.exit_code == 0 and result.stdout.splitlines()[-1].startswith("kappa"), result.output


def test_latex_says_undefined_for_an_iman_davenport_f_that_is(tmp_path):
    from toolkit.evaluation import stats

    assert math.isnan(stats.friedman(np.array([[.9, .8, .7], [.6, .5, .4]])).iman_davenport)
    out = tmp_path / "r.jsonl"
    toolkit.evaluate(["iris", "glass"], ["nb-weka", "liblinear-lr:C=0.001,B=1"], runs=2, out=out)
    tex = tmp_path / "r.tex"
    assert runner.invoke(app, ["report", str(out), "-o", str(tex)]).exit_code == 0
    text = tex.read_text()
    # nb-weka beats the starved LR on both datasets (every dataset ranks alike): F_F is undefined
    assert "Iman-Davenport $F_F$ (df 1, 1) & undefined" in text and "& nan" not in text


def test_thesis_interval_is_captioned_as_what_it_is(tmp_path):
    """Under the thesis protocol a cell is one test fold's error +- 2.228 sqrt(e(1-e)/N) with N the whole
    dataset (algorithms.md 5.1.3; vote, WEKA NB: 11.63 +- 3.42 (5) in the thesis's Table 3): the HTML and
    LaTeX captions say so, not "mean +- 95 % confidence interval over the repetitions"."""
    out = tmp_path / "th.jsonl"
    toolkit.evaluate(["vote", "iris"], ["nb-weka", "nb-gaussian"], protocol="thesis", metrics=["error", "accuracy"],
                     out=out)
    html, tex = tmp_path / "th.html", tmp_path / "th.tex"
    result = runner.invoke(app, ["report", str(out), "-o", str(html), "-o", str(tex)])
    assert result.exit_code == 0, result.output
    parsed = _Tables()
    parsed.feed(html.read_text())
    row = next(r for r in parsed.tables["significance-table"] if r[0][2] == "vote")
    assert row[1][2].split() == ["11.63", "±", "3.42", "(5)"]
    assert 100 * 2.228 * math.sqrt(5 / 43 * 38 / 43 / 435) == pytest.approx(3.42, abs=0.005)
    text = html.read_text()
    captions = re.findall(r'<p class="caption">(error \(%\)|accuracy \(%\))([^<]*)', text)
    assert [c[0] for c in captions] == ["error (%)", "accuracy (%)"]
    error, accuracy = captions[0][1], captions[1][1]
    assert "thesis CI 2.228·√(e(1−e)/N), N the instances of the whole dataset, not of the test fold" in error
    assert "one test fold (no interval)" in accuracy
    assert "confidence interval over the repetitions" not in text
    latex = tex.read_text()
    assert "thesis CI $2.228\\sqrt{e(1-e)/N}$, $N$ the instances of the whole dataset, not of the test fold" in latex
    assert "confidence interval over the repetitions" not in latex


def test_html_with_failed_repetitions_keeps_columns_on_their_repetitions(results_file, tmp_path):
    """A failed repetition of the first pipeline shifted the hyperparameter table's header (and its count
    headed every confusion matrix): each column is one repetition number, a failed one an empty cell, and
    each pipeline's matrix says how many repetitions it sums (counted here from the records)."""
    fail = {("iris", "nb-weka", 0), ("iris", BMA, 1)}
    out = []
    for line in results_file.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("schema") == "toolkit.result/1" and \
                (rec["dataset"]["name"], rec["pipeline"]["name"], rec["repetition"]) in fail:
            rec = {k: v for k, v in rec.items() if k not in ("metrics", "predictions", "chosen_params", "tuning")}
            rec.update(status="failed", error="made up for this test", error_kind="bug")
        out.append(json.dumps(rec))
    broken = tmp_path / "broken.jsonl"
    broken.write_text("\n".join(out) + "\n")
    toolkit.write_report(broken, [tmp_path / "b.html"])
    html = (tmp_path / "b.html").read_text()
    ok = [r for r in _records(broken) if r["dataset"]["name"] == "iris"]

    start = html.index('<h3>iris</h3><table class="hyper">')
    parsed = _Tables()
    parsed.feed(html[start:html.index("</table>", start) + len("</table>")])
    (rows,) = parsed.tables.values()
    assert [c[2] for c in rows[0][1:]] == ["0", "1", "2"]
    body = {r[0][2]: [c[2] for c in r[1:]] for r in rows[1:]}
    assert set(body) == {"nb-gaussian", BMA}  # the tuned ones
    for p in body:
        chosen = {r["repetition"]: r["chosen_params"] for r in ok if r["pipeline"]["name"] == p}
        expected = [", ".join(f"{k}={v}" for k, v in chosen[rep].items()) if rep in chosen else "" for rep in range(3)]
        assert body[p] == expected, p
    assert body[BMA][1] == "" and body[BMA][2] != ""

    details = html[html.index('<details data-dataset="iris"'):]
    details = details[:details.index("</details>")]
    assert "<summary>iris (summed over each pipeline's finished repetitions, 2 to 3)</summary>" in details
    names = json.loads(broken.read_text().splitlines()[0])["pipelines"]
    assert len(names) == len(PIPELINES)
    for p in names:
        n = sum(r["pipeline"]["name"] == p for r in ok)
        block = details[details.index(f'data-pipeline="{p}"'):]
        assert block.startswith(f'data-pipeline="{p}" data-repetitions="{n}"') and f"summed over {n} repetitions" in block
        cm = _Tables()
        cm.feed(block[block.index("<table"):block.index("</table>") + 8])
        (matrix,) = cm.tables.values()
        total = sum(int(c[2]) for row in matrix[1:] for c in row[1:])
        assert total == sum(r["n_test"] for r in ok if r["pipeline"]["name"] == p)


def _rewritten(results_file, out, datasets, pipelines=None):
    """``results_file`` with each dataset's records written once under each of the names ``datasets[name]``
    (a dataset not in the dict is left out) and each pipeline ``p`` named ``pipelines.get(p, p)``."""
    import hashlib

    pipelines = pipelines or {}
    sha = lambda name: hashlib.sha256(name.encode()).hexdigest()  # noqa: E731
    lines = []
    for line in results_file.read_text().splitlines():
        rec = json.loads(line)
        if rec.get("schema") == "toolkit.experiment/1":
            rec["datasets"] = [dict(d, name=n, sha256=sha(n)) for d in rec["datasets"] for n in datasets.get(d["name"], [])]
            rec["pipelines"] = [pipelines.get(p, p) for p in rec["pipelines"]]
            rec["pipeline_specs"] = {pipelines.get(p, p): dict(s, name=pipelines.get(p, p))
                                     for p, s in rec["pipeline_specs"].items()}
            lines.append(json.dumps(rec))
        elif rec.get("schema") == "toolkit.result/1":
            for n in datasets.get(rec["dataset"]["name"], []):
                lines.append(json.dumps(dict(rec, dataset=dict(rec["dataset"], name=n, sha256=sha(n)),
                                             pipeline=dict(rec["pipeline"], name=pipelines.get(rec["pipeline"]["name"],
                                                                                                  rec["pipeline"]["name"])),
                                             key=sha(n + rec["key"])[:24])))
        else:
            lines.append(line)
    out.write_text("\n".join(lines) + "\n")
    return out


def test_latex_escape_braces_brackets_and_writes_ascii():
    """A name starting with [ after \\\\ or \\midrule was read as an optional argument (pdflatex: "Illegal unit
    of measure"), and pdflatex with T1 fonts stops at a non-ASCII letter it has no definition for."""
    from toolkit.evaluation.report import latex_escape

    assert latex_escape("[x]") == "{[}x{]}"
    assert latex_escape("*x") == "{*}x"
    assert latex_escape("\u03b2") == "$\\beta$" and latex_escape("\u0394\u0391") == "$\\Delta$A"
    assert latex_escape("\u00e9") == "\\'{e}"
    assert latex_escape("e\u0301") == "\\'{e}"  # decomposed: composed first
    assert latex_escape("na\u00efve") == 'na\\"{\\i}ve'
    assert latex_escape("\u0141\u00f3d\u017a") == "\\L{}\\'{o}d\\'{z}"
    assert latex_escape("a\tb\x07c\nd") == "a b c d"
    assert latex_escape("\u4e2d") == "\\texttt{\\textless{}U+4E2D\\textgreater{}}"
    assert latex_escape("\U0001f600") == "\\texttt{\\textless{}U+1F600\\textgreater{}}"
    assert latex_escape("a_b & 50% {c}") == "a\\_b \\& 50\\% \\{c\\}"


ODD_DATASETS = {"iris": ["[10fold]iris \u03b2"], "vote": ["na\u00efve vote \u00e9t\u00e9"],
                "glass": ["*glass \u03a9 \u00b5 \u20ac"], "breast-cancer": ["[b]reast\u2013cancer \u4e2d\x07"]}


@pytest.mark.skipif(__import__("shutil").which("pdflatex") is None, reason="no pdflatex here (Debian: texlive-latex-base, "
                    "texlive-latex-recommended, texlive-pictures)")
def test_latex_report_with_brackets_and_unicode_in_names_compiles(results_file, tmp_path):
    """Dataset and pipeline names starting with [ (rows of every table, after \\\\ or \\midrule) and holding
    Greek, accented, symbol, CJK and control characters: the .tex is ASCII and pdflatex compiles it."""
    odd = _rewritten(results_file, tmp_path / "odd.jsonl", ODD_DATASETS,
                     {"nb-gaussian": "[g]auss\u00efan", BMA: "*bma \u03b2"})
    tex = tmp_path / "odd.tex"
    result = runner.invoke(app, ["report", str(odd), "-o", str(tex)])
    assert result.exit_code == 0, result.output
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    text = tex.read_text()
    assert text.isascii() and "{[}10fold{]}iris $\\beta$" in text and "{[}g{]}auss\\\"{\\i}an" in text


def _many_datasets(results_file, tmp_path, n=67):
    """The module's results with its four datasets' records copied under n names (iris-00, vote-01, ...)."""
    names = {d: [f"{d}-{i:02d}" for i in range(k, n, len(DATASETS))] for k, d in enumerate(DATASETS)}
    return _rewritten(results_file, tmp_path / "many.jsonl", names), [x for v in names.values() for x in v]


def test_latex_tables_of_many_datasets_are_longtables(results_file, tmp_path):
    """67 datasets: a table in a float ran off the page ("Float too large", the last rows lost); every table is
    a longtable (breaks across pages) whose header repeats on each page."""
    many, names = _many_datasets(results_file, tmp_path)
    tex = tmp_path / "many.tex"
    assert runner.invoke(app, ["report", str(many), "-o", str(tex)]).exit_code == 0
    text = tex.read_text()
    preamble = text[:text.index("\\begin{document}")]
    assert "\\usepackage{longtable}" in preamble and "\\usepackage{booktabs}" in preamble
    assert "\\begin{table}" not in text and "\\begin{tabular}" not in text
    rows = [line for line in text.splitlines() if line.startswith(names[-1] + " & ")]
    assert len(rows) == 1 + 4  # the datasets table and one per metric (error, accuracy, kappa, roc-auc)
    for row in rows:
        at = text.index(row)
        begin = text.rindex("\\begin{", 0, at)
        assert text.startswith("\\begin{longtable}", begin) and text.index("\\end{longtable}", begin) > at
        head = text[begin:at]
        assert head.count("\\endfirsthead") == 1 and head.count("\\endhead") == 1 and "\\endlastfoot" in head
        # the header twice: on the first page and on each further one
        assert head.count(head[head.index("\\toprule") + 9:head.index("\\midrule")]) == 2


@pytest.mark.skipif(__import__("shutil").which("pdflatex") is None, reason="no pdflatex here (Debian: texlive-latex-base, "
                    "texlive-latex-recommended, texlive-pictures)")
def test_latex_report_of_many_datasets_fits_its_pages(results_file, tmp_path):
    """Compiled, 67 datasets: no float too large, and (with pdftotext) every dataset row printed, on pages
    that each have the header."""
    import shutil

    many, names = _many_datasets(results_file, tmp_path)
    tex = tmp_path / "many.tex"
    assert runner.invoke(app, ["report", str(many), "-o", str(tex)]).exit_code == 0
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    log = (tmp_path / "many.log").read_text(errors="replace")
    assert "Float too large" not in log and "Overfull \\vbox" not in log
    if shutil.which("pdftotext") is None:
        return
    pages = subprocess.run(["pdftotext", "many.pdf", "-"], cwd=tmp_path, capture_output=True, text=True,
                           check=True).stdout.split("\f")
    text = tex.read_text()
    for name in names:
        pattern = re.compile(re.escape(name) + r"(?!\d)")
        assert sum(len(pattern.findall(p)) for p in pages) == len(pattern.findall(text)) > 0, name
    with_rows = [p for p in pages if re.search(r"\b(?:" + "|".join(DATASETS) + r")-\d\d\b", p)]
    assert len(with_rows) >= 5 and all(re.search(r"\bdataset\b", p) for p in with_rows)
