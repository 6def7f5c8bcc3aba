"""Found by a review of the commands beside evaluate, compare and report (2026-12-07, late night)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from test_trust import _one_error_line
from toolkit.cli import app

runner = CliRunner()
TINY = Path(__file__).parent / "data" / "tiny.arff"


def test_bma_curve_checks_its_table_path_before_any_work_and_never_writes_over_its_input(tmp_path):
    """--table replaced any file, the dataset it had read included (exit 0), and a path in a missing
    folder failed with a traceback after the whole computation."""
    data = tmp_path / "d.arff"
    data.write_text(TINY.read_text(encoding="utf-8"), encoding="utf-8")
    before = data.read_bytes()
    figure = str(tmp_path / "f.svg")
    for table, needle in ((data, "is the dataset this command reads"),
                          (tmp_path / "missing" / "t.md", "does not exist (--table)"),
                          (tmp_path, "is a folder; --table names the file to write")):
        _one_error_line(runner.invoke(app, ["bma-curve", str(data), "-r", "1", "-o", figure, "--table", str(table)]),
                        needle)
    assert data.read_bytes() == before


def _counts(path: Path, classes: str, names=("w0", "w1", "w2")) -> None:
    head = ["@relation wc", *[f"@attribute {n} numeric" for n in names], f"@attribute class {{{classes}}}", "@data"]
    rows = [f"{i % 3},{(i + 1) % 2},{i % 5},{'a' if i % 2 else 'b'}" for i in range(30)]
    path.write_text("\n".join(head + rows) + "\n", encoding="utf-8")


def test_vocab_curve_refuses_a_test_set_whose_header_differs_from_the_training_sets(tmp_path):
    """The test file's codes were used as they were: class values in another order scored 0 % where the
    right file scored 100 %, and renamed attributes or another class value passed without a word."""
    train, swapped, renamed, wider = (tmp_path / f"{n}.arff" for n in ("train", "swapped", "renamed", "wider"))
    _counts(train, "a,b")
    _counts(swapped, "b,a")
    _counts(renamed, "a,b", names=("z0", "w1", "w2"))
    _counts(wider, "a,b,c")
    for test, needle in ((swapped, "at attribute 'class' (values b, a vs a, b)"),
                         (renamed, "at attribute 'z0' ('z0' vs 'w0')"),
                         (wider, "at attribute 'class' (nominal(3) vs nominal(2))")):
        _one_error_line(runner.invoke(app, ["vocab-curve", str(train), "--test", str(test), "--sizes", "2,full", "-q"]),
                        needle)


def test_partition_sizes_are_bounded(tmp_path):
    """--partition-mb inf was a traceback; 1e-300 cut a file into 1-byte ranges, a task each."""
    from toolkit.models.partitioned import MAX_PARTS, MIN_PART_BYTES, partition_file

    _one_error_line(runner.invoke(app, ["train", "iris", "-c", "nb-weka", "-o", str(tmp_path / "m.tkm"),
                                        "--cluster", "local:1", "--partition-mb", "inf"]),
                    "--partition-mb must be a finite number > 0, not inf")
    data = tmp_path / "d.arff"
    data.write_text(TINY.read_text(encoding="utf-8"), encoding="utf-8")
    parts = partition_file(data, partition_bytes=1)
    size = data.stat().st_size
    assert 1 <= len(parts.ranges) <= -(-size // MIN_PART_BYTES) and MAX_PARTS >= 1000


def test_an_unsupported_date_format_of_convert_is_one_error_line(tmp_path):
    """A 146-line traceback (UnsupportedDateFormat) for --date-format QQQ."""
    csv = tmp_path / "d.csv"
    csv.write_text("when,x\n2020,1\n2021,2\n", encoding="utf-8")
    for pattern, needle in (("QQQ", "--date-format: date pattern letter 'Q'"),
                            ("yyyy'", "--date-format: unterminated quote")):
        _one_error_line(runner.invoke(app, ["convert", str(csv), str(tmp_path / "d.arff"), "--date", "when",
                                            "--date-format", pattern]), needle)


def test_a_model_that_cannot_predict_is_not_called_a_plugin_bug(tmp_path):
    """Values near 1.7e308 leave nb-weka no spread to estimate: train said the file 'was altered or written by
    an incompatible plugin ... (a plugin bug)'. It is the data's doing, and said so."""
    data = tmp_path / "huge.arff"
    rows = "".join(f"{sign}{v}e308,{c}\n" for sign, c in (("", "p"), ("-", "n")) for v in (1, 1.7, 1.2, 1.5))
    data.write_text(f"@relation m\n@attribute a numeric\n@attribute class {{p,n}}\n@data\n{rows}", encoding="utf-8")
    result = runner.invoke(app, ["train", str(data), "-c", "nb-weka", "-o", str(tmp_path / "m.tkm")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and "not written: the model cannot predict (" in errors[0], result.stderr
    assert "plugin bug" not in errors[0] and "altered" not in errors[0]
    assert not (tmp_path / "m.tkm").exists()


def test_predictions_as_arff_never_repeat_a_name_the_data_has(tmp_path):
    """An attribute already called predicted(play) (or p(yes)) made predict write a file with the name twice,
    which the toolkit then refused to read ('duplicate attribute name')."""
    text = TINY.read_text(encoding="utf-8").replace("@attribute windy", "@attribute predicted(play) numeric\n"
                                                    "@attribute P(YES) numeric\n@attribute windy")
    text = "\n".join(line if not line[:1].isalpha() or line.startswith("@") else
                     line.replace(",TRUE", ",1,2,TRUE").replace(",FALSE", ",1,2,FALSE") for line in text.splitlines())
    data = tmp_path / "clash.arff"
    data.write_text(text + "\n", encoding="utf-8")
    model, out = tmp_path / "m.tkm", tmp_path / "out.arff"
    assert runner.invoke(app, ["train", str(data), "-c", "nb-weka", "-o", str(model)]).exit_code == 0
    result = runner.invoke(app, ["predict", str(model), str(data), "-o", str(out), "--proba", "--no-summary"])
    assert result.exit_code == 0, result.output
    names = [line.split()[1] for line in out.read_text(encoding="utf-8").splitlines() if line.startswith("@attribute")]
    assert len({n.lower() for n in names}) == len(names), names
    assert "predicted(play)_2" in names and "p(yes)_2" in names
    assert runner.invoke(app, ["info", str(out)]).exit_code == 0
