"""Found by a review of the output formats with hostile names (2026-12-07, late night): a results file is
input, and names in data files are anyone's text. Each output keeps its own syntax whatever a name or a
field holds."""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolkit.cli import app

runner = CliRunner()
TINY = Path(__file__).parent / "data" / "tiny.arff"


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _results(tmp_path, name: str = "r.jsonl", data: Path = TINY, runs: int = 2, metrics=("error", "accuracy")):
    out = tmp_path / name
    args = ["evaluate", str(data), "-c", "nb-weka", "-c", "nb-gaussian", "--runs", str(runs), "-q", "-o", str(out)]
    for m in metrics:
        args += ["-m", m]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return out


def test_fields_of_a_crafted_results_file_do_not_become_markup_in_the_html_report(tmp_path):
    """n_instances went into a data-value attribute and a metric's name into a table id unescaped: a
    crafted file ran a script in the report (an onerror handler)."""
    good = _results(tmp_path)
    bad_metric = 'acc"><img src=x onerror=alert(1)>'
    lines = []
    for line in good.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("schema") == "toolkit.result/1":
            record["metrics"][bad_metric] = record["metrics"].pop("accuracy")
            record["dataset"]["n_instances"] = '40"><img src=x onerror=document.body.dataset.pwned=1>'
        else:
            record["metrics"] = [bad_metric if m == "accuracy" else m for m in record["metrics"]]
            for d in record.get("datasets", []):
                d["n_instances"] = '40"><img src=x onerror=document.body.dataset.pwned=1>'
        lines.append(json.dumps(record))
    crafted = tmp_path / "crafted.jsonl"
    crafted.write_text("\n".join(lines) + "\n", encoding="utf-8")
    html = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(crafted), "-o", str(html)])
    assert result.exit_code == 0, result.output
    parser = _Elements()
    parser.feed(html.read_text(encoding="utf-8"))
    assert not [t for t, a in parser.tags if t == "img" or any(k.startswith("on") for k in a)]
    assert any(t == "table" and a.get("id") == "table-" + bad_metric for t, a in parser.tags)   # escaped, whole
    md = tmp_path / "r.md"
    assert runner.invoke(app, ["report", str(crafted), "-o", str(md)]).exit_code == 0
    assert "<img" not in md.read_text(encoding="utf-8")


def test_a_name_that_opens_a_comment_does_not_swallow_the_reports_scripts(tmp_path):
    """The JSON in <script id="report-meta"> escaped only '</': '<!--<script>' in a dataset's name put the
    parser in its double-escaped state and the sorting script became part of the JSON."""
    data = tmp_path / "<!--<script>x.arff"
    data.write_text(TINY.read_text(encoding="utf-8"), encoding="utf-8")
    html = tmp_path / "r.html"
    assert runner.invoke(app, ["report", str(_results(tmp_path, data=data)), "-o", str(html)]).exit_code == 0
    text = html.read_text(encoding="utf-8")
    meta = re.search(r'<script type="application/json" id="report-meta">(.*?)</script>', text, re.S).group(1)
    assert "<" not in meta and ">" not in meta
    assert json.loads(meta)["datasets"] == ["<!--<script>x"]


@pytest.mark.parametrize("separator", ["\u2028", "\x85", "\x0c", "\n"])
def test_csv_of_several_metrics_keeps_a_row_per_dataset_whatever_its_name(tmp_path, separator):
    """The CSV of several metrics was joined from each metric's text split with str.splitlines(), which
    also splits at U+2028, U+0085, form feed...: rows of 2 fields among rows of 14, and a name with a line
    break changed."""
    name = f"a{separator}b"
    data = tmp_path / f"{name}.arff"
    data.write_text(TINY.read_text(encoding="utf-8"), encoding="utf-8")
    results = _results(tmp_path, data=data)
    for fmt, width in (("csv", 14), ("csv-long", 5)):
        result = runner.invoke(app, ["compare", str(results), "-m", "error", "-m", "accuracy", "--format", fmt])
        assert result.exit_code == 0, result.output
        rows = list(csv.reader(io.StringIO(result.stdout, newline="")))
        assert {len(r) for r in rows} == {width}, (fmt, rows)
        names = {r[1] if fmt == "csv" else r[0] for r in rows[1:]}
        assert names == {name}


def test_markdown_escapes_emphasis_maths_and_line_breaks_and_links_any_file_name(tmp_path):
    from toolkit.evaluation.report import markdown_escape

    assert markdown_escape("*em*_x_~s~$m$") == "\\*em\\*\\_x\\_\\~s\\~\\$m\\$"
    assert markdown_escape("a\nb\u2028c\rd") == "a b c d"   # a line break would end the table's row
    first, second = tmp_path / "my_data_.arff", tmp_path / "other.arff"
    first.write_text(TINY.read_text(encoding="utf-8"), encoding="utf-8")
    second.write_text(TINY.read_text(encoding="utf-8").replace("sunny,85,85", "sunny,86,85"), encoding="utf-8")
    results = tmp_path / "r.jsonl"   # two datasets: the critical-difference diagram needs more than one
    assert runner.invoke(app, ["evaluate", str(first), str(second), "-c", "nb-weka", "-c", "nb-gaussian", "--runs", "2",
                               "-q", "-o", str(results)]).exit_code == 0
    md = tmp_path / "sp ace (1).md"
    result = runner.invoke(app, ["report", str(results), "-o", str(md)])
    assert result.exit_code == 0, result.output
    text = md.read_text(encoding="utf-8")
    assert "(sp%20ace%20%281%29-cd.svg)" in text and (tmp_path / "sp ace (1)-cd.svg").exists()
    assert "my\\_data\\_" in text and "my_data_" not in text


def test_latex_keeps_names_from_tex_ligatures():
    """'<!--' printed as '<!–' and '``' as a curly quote: TeX's fonts join -- ,, '' and read ` as a quote."""
    from toolkit.evaluation.report import latex_escape

    assert latex_escape("a--b---c") == "a-{}-b-{}-{}-c"
    assert latex_escape("``x''") == "\\textasciigrave{}\\textasciigrave{}x'{}'"
    assert latex_escape(",,y") == ",{},y"
    assert latex_escape("nb-weka") == "nb-weka"   # a single hyphen stays as it is


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_names_reach_a_terminal_with_their_control_characters_escaped(monkeypatch):
    """An ARFF relation 'rel<ESC>[2J<ESC>]0;pwned<BEL>' cleared the screen and set the terminal's title
    when 'toolkit info' printed it; a pipe or a file still gets every character."""
    from toolkit.cli import output

    hostile = "rel\x1b[2J\x1b]0;pwned\x07 \u202eevil\tok\nnext"
    for stream, tty in ((_Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stdout", stream)
        output.out(hostile)
        got = stream.getvalue()
        if tty:
            assert got == "rel\\x1b[2J\\x1b]0;pwned\\x07 \\u202eevil\tok\nnext\n"
        else:
            assert got == hostile + "\n"


def test_the_plain_table_aligns_wide_and_zero_width_characters():
    from toolkit.evaluation.report import display_width

    assert display_width("é中文😀\u200b") == 7 and display_width("e\u0301") == 1


def test_the_plain_table_of_wide_names_lines_up(tmp_path):
    wide = tmp_path / "中文😀.arff"
    wide.write_text(TINY.read_text(encoding="utf-8"), encoding="utf-8")
    plain = tmp_path / "ab.arff"
    plain.write_text(TINY.read_text(encoding="utf-8").replace("sunny,85,85", "sunny,86,85"), encoding="utf-8")
    out = tmp_path / "r.jsonl"
    result = runner.invoke(app, ["evaluate", str(wide), str(plain), "-c", "nb-weka", "-c", "nb-gaussian", "--runs", "2",
                                 "-q", "-o", str(out)])
    assert result.exit_code == 0, result.output
    from toolkit.evaluation.report import display_width

    table = result.stdout.splitlines()
    rows = [line for line in table if line.startswith(("中文😀", "ab "))]
    assert len(rows) == 2 and display_width(rows[0]) == display_width(rows[1]) == display_width(table[0])


def test_a_line_break_or_tab_in_a_name_stays_in_its_row_of_the_plain_table(tmp_path):
    broken = tmp_path / "new\nline\t.arff"
    broken.write_text(TINY.read_text(encoding="utf-8"), encoding="utf-8")
    result = runner.invoke(app, ["evaluate", str(broken), "-c", "nb-weka", "--runs", "2", "-q"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    rows = [line for line in lines if line.startswith("new")]
    assert len(rows) == 1 and rows[0].startswith("new\\nline\\t  "), lines
    assert not any(line.startswith("line") for line in lines)


def _odd_classes(path: Path) -> Path:
    """Three classes whose names hold a tab, a line break and a backtick run: 60 rows."""
    import random

    labels = ["'p\\tq'", "'a\\nb'", "'c```d'"]
    rng = random.Random(1)
    rows = [",".join([rng.choice("xy"), rng.choice("uv"), labels[i % 3]]) for i in range(60)]
    path.write_text("@relation odd\n@attribute f1 {x,y}\n@attribute f2 {u,v}\n@attribute class {"
                    + ",".join(labels) + "}\n@data\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_class_names_stay_in_their_rows_of_the_summary_and_the_matrix_views(tmp_path):
    """--summary's class details and confusion matrix, and the confusion-matrix / per-class views of a
    table or Markdown report, printed class names as they are: a line break split a row, and a backtick
    run closed the Markdown fence of the per-class table."""
    data = _odd_classes(tmp_path / "odd\nset.arff")
    summary = runner.invoke(app, ["evaluate", str(data), "-c", "nb-weka", "--runs", "2", "-q", "--summary"])
    assert summary.exit_code == 0, summary.output
    lines = summary.stdout.splitlines()
    assert not any(line.startswith("b") for line in lines), lines   # the rest of 'a\nb' on a line of its own
    assert any(line.endswith("    a\\nb") for line in lines) and any(line.endswith(" = a\\nb") for line in lines)
    assert any(line.startswith("=== Summary: odd\\nset / nb-weka") for line in lines)
    out = tmp_path / "r.jsonl"
    args = ["evaluate", str(data), "-c", "nb-weka", "--runs", "2", "-q", "-o", str(out), "-m", "confusion-matrix",
            "-m", "per-class"]
    assert runner.invoke(app, args).exit_code == 0
    for metric in ("confusion-matrix", "per-class"):
        table = runner.invoke(app, ["compare", str(out), "--report", metric])
        assert table.exit_code == 0, table.output
        lines = table.stdout.splitlines()
        assert not any(line.startswith(("b", "set")) for line in lines), lines
        markdown = runner.invoke(app, ["compare", str(out), "--report", metric, "--format", "markdown"])
        assert markdown.exit_code == 0, markdown.output
        text = markdown.stdout
        assert not any(line.startswith(("b", "set")) for line in text.splitlines()), text
        if metric == "per-class":   # the fence is longer than the name's run of three backticks
            assert "````text\n" in text and "\n````" in text
        else:
            assert "| a b |" in text and "| p q |" in text   # Markdown: a control character becomes a space
