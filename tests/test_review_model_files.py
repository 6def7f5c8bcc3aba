"""Found by a review of the model-file path (2026-12-08): CSV and LIBSVM data, whose headers are inferred
from their rows, could not be predicted or used as a fixed test set unless they were row-for-row copies
of the training file; save_model took a dataset of another header; a damaged zip field and a format-1
file's declared array sizes escaped the checks."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import numpy as np
import pytest
from typer.testing import CliRunner

import toolkit
from conftest import ROOT
from test_trust import _one_error_line
from toolkit.cli import app
from toolkit.errors import ModelFileError
from toolkit.models.model_file import load_model, save_model
from toolkit.models.pipeline import Pipeline

runner = CliRunner()
IRIS = ROOT / "datasets" / "iris.arff"


def _csv(tmp_path, name: str, source=IRIS) -> tuple[str, list[str]]:
    path = tmp_path / name
    assert runner.invoke(app, ["convert", str(source), str(path)]).exit_code == 0
    lines = path.read_text(encoding="utf-8").splitlines()
    return str(path), lines


def _predicted(result) -> list[str]:
    rows = [line.split(",") for line in result.stdout.splitlines()[1:] if line]
    return [r[2] for r in rows]


def test_a_csv_model_predicts_any_csv_of_its_columns(tmp_path):
    """A CSV numbers its nominal values by first appearance: a file of virginica rows only, the rows
    reversed, or a class column of '?' (read as numeric) was refused against the training header."""
    train, lines = _csv(tmp_path, "iris.csv")
    model = tmp_path / "iris.tkm"
    assert runner.invoke(app, ["train", train, "-c", "nb-weka", "-o", str(model)]).exit_code == 0
    reference = runner.invoke(app, ["predict", str(model), str(IRIS), "--format", "csv"])
    assert reference.exit_code == 0
    expected = _predicted(reference)   # the ARFF file: its declared header is the model's
    variants = {"virginica.csv": [lines[0]] + lines[101:], "reversed.csv": [lines[0]] + lines[:0:-1],
                "unlabelled.csv": [lines[0]] + [line.rsplit(",", 1)[0] + ",?" for line in lines[101:]]}
    order = {"virginica.csv": list(range(100, 150)), "reversed.csv": list(range(149, -1, -1)),
             "unlabelled.csv": list(range(100, 150))}
    for name, rows in variants.items():
        (tmp_path / name).write_text("\n".join(rows) + "\n", encoding="utf-8")
        result = runner.invoke(app, ["predict", str(model), str(tmp_path / name), "--format", "csv"])
        assert result.exit_code == 0, (name, result.output)
        assert _predicted(result) == [expected[i] for i in order[name]], name
    (tmp_path / "other.csv").write_text("\n".join([lines[0]] + lines[101:103] + [lines[103].replace(
        "Iris-virginica", "Iris-other")]) + "\n", encoding="utf-8")
    _one_error_line(runner.invoke(app, ["predict", str(model), str(tmp_path / "other.csv")]),
                    "other.csv: data row 3 gives attribute 'class' the value 'Iris-other'",
                    "Iris-setosa, Iris-versicolor, Iris-virginica")


def test_an_arff_model_predicts_the_same_data_as_csv(tmp_path):
    """vote.csv (from toolkit convert vote.arff) numbers 'y' before 'n' where vote.arff declares {n,y}."""
    vote = ROOT / "datasets" / "vote.arff"
    csv_path, _ = _csv(tmp_path, "vote.csv", vote)
    model = tmp_path / "vote.tkm"
    save_model(Pipeline("nb-weka", tune=False).fit(toolkit.load_arff(vote)), toolkit.load_arff(vote), model)
    from_arff = load_model(model).predict(str(vote))
    from_csv = load_model(model).predict(csv_path)
    assert np.array_equal(from_arff.y_pred, from_csv.y_pred)
    np.testing.assert_array_equal(from_arff.proba, from_csv.proba)


def test_a_libsvm_model_predicts_a_narrower_file_with_fewer_classes(tmp_path):
    """A LIBSVM file's width is its highest index and its classes the labels it holds: a file without
    feature 4, or of class 2 only, was refused."""
    full = tmp_path / "iris.libsvm"
    assert runner.invoke(app, ["convert", str(IRIS), str(full)]).exit_code == 0
    lines = full.read_text().splitlines()
    model = tmp_path / "iris.tkm"
    assert runner.invoke(app, ["train", str(full), "-c", "nb-gaussian", "-o", str(model)]).exit_code == 0
    narrow = tmp_path / "narrow.libsvm"   # feature 4 absent: 0 in a LIBSVM file
    narrow.write_text("\n".join(" ".join(t for t in line.split() if not t.startswith("4:")) for line in lines) + "\n")
    zeroed = tmp_path / "zeroed.libsvm"
    zeroed.write_text("\n".join(" ".join(t if not t.startswith("4:") else "4:0" for t in line.split())
                                for line in lines) + "\n")
    a = load_model(model).predict(str(narrow))
    b = load_model(model).predict(str(zeroed))
    assert np.array_equal(a.y_pred, b.y_pred) and np.array_equal(a.proba, b.proba)
    two = tmp_path / "two.libsvm"
    two.write_text("\n".join(line for line in lines if line.startswith("2 ")) + "\n")
    got = load_model(model).predict(str(two))
    want = load_model(model).predict(str(full))
    assert np.array_equal(got.y_pred, want.y_pred[100:]) and np.array_equal(got.y_true, want.y_true[100:])
    wide = tmp_path / "wide.libsvm"
    wide.write_text("1 7:1\n")
    _one_error_line(runner.invoke(app, ["predict", str(model), str(wide)]), "index 7 is beyond n_features=4")


@pytest.mark.parametrize("fmt", ["csv", "libsvm"])
def test_a_fixed_test_set_in_csv_or_libsvm_scores_as_its_arff_twin(tmp_path, fmt):
    """evaluate --test te.csv with tr.csv: 'its header differs ... (nominal(1) vs nominal(3))'."""
    text = IRIS.read_text(encoding="utf-8")
    head, data = text.split("@DATA") if "@DATA" in text else text.split("@data")
    rows = [r for r in data.strip().splitlines() if r.strip() and not r.startswith("%")]
    train_rows, test_rows = rows[:120], rows[120:]   # the test part holds one class only
    for name, part in (("tr", train_rows), ("te", test_rows)):
        (tmp_path / f"{name}.arff").write_text(head + "@data\n" + "\n".join(part) + "\n", encoding="utf-8")
        assert runner.invoke(app, ["convert", str(tmp_path / f"{name}.arff"), str(tmp_path / f"{name}.{fmt}")]
                             ).exit_code == 0
    errors = {}
    for ext in ("arff", fmt):
        result = runner.invoke(app, ["evaluate", str(tmp_path / f"tr.{ext}"), "--test", str(tmp_path / f"te.{ext}"),
                                     "-c", "nb-gaussian", "--no-tune", "--format", "csv", "-q"])
        assert result.exit_code == 0, (ext, result.output)
        errors[ext] = result.stdout.splitlines()[1].split(",")[2:]   # after the metric and the dataset
    assert errors["arff"] == errors[fmt]
    assert errors["arff"][0] not in ("0.0", "1.0")


def test_save_model_refuses_a_dataset_of_another_header(tmp_path):
    """The same classes but a third declared value: the file stored that header, refused its real
    training data, and read the other header's codes from the next attribute's table."""
    vote = ROOT / "datasets" / "vote.arff"
    text = vote.read_text(encoding="utf-8")
    ds = toolkit.load_arff(vote)
    first = ds.attributes[0]
    declared = next(line for line in text.splitlines() if line.lower().startswith("@attribute") and first.name in line)
    widened = declared[: declared.rindex("}")] + ",u}"
    (tmp_path / "vote-u.arff").write_text(text.replace(declared, widened), encoding="utf-8")
    other = toolkit.load_arff(tmp_path / "vote-u.arff")
    assert other.classes == ds.classes and len(other.attributes[0].values) == len(first.values) + 1
    fitted = Pipeline("nb-weka", tune=False).fit(ds)
    with pytest.raises(ModelFileError, match=f"not written: the model was fitted on other attributes than "
                                             f"vote-u's \\(attribute 1 is '{first.name}'.*'u' is new"):
        save_model(fitted, other, tmp_path / "m.tkm")
    assert not (tmp_path / "m.tkm").exists()
    save_model(fitted, ds, tmp_path / "m.tkm")


def test_a_saved_model_predicts_a_dataset_as_toolkit_predict_does(tmp_path):
    """SavedModel.predict(Dataset) checked the dataset with its own class: a model trained with the class
    first refused the file's default class, and one read without a class had 17 features for 16."""
    vote = ROOT / "datasets" / "vote.arff"
    first = tmp_path / "first.tkm"
    assert runner.invoke(app, ["train", str(vote), "-c", "nb-weka", "--class", "first", "-o", str(first)]).exit_code == 0
    last = tmp_path / "last.tkm"
    assert runner.invoke(app, ["train", str(vote), "-c", "nb-weka", "-o", str(last)]).exit_code == 0
    for model in (first, last):
        for class_attribute in (-1, None, 0):
            ds = toolkit.load_arff(vote, class_attribute=class_attribute)
            _saved, _ds, want = toolkit.predict(str(model), ds)
            got = load_model(model).predict(ds)
            assert np.array_equal(got.y_pred, want.y_pred) and np.array_equal(got.y_true, want.y_true)


def _trained(tmp_path):
    model = tmp_path / "iris.tkm"
    assert runner.invoke(app, ["train", "iris", "-c", "nb-weka", "-o", str(model)]).exit_code == 0
    return model


def test_a_damaged_zip_version_field_is_one_error_line(tmp_path):
    """'version needed to extract' of 0xFF in the central directory: NotImplementedError, a traceback."""
    data = bytearray(_trained(tmp_path).read_bytes())
    at = data.find(b"PK\x01\x02")
    data[at + 6] = 0xFF
    bad = tmp_path / "bad.tkm"
    bad.write_bytes(bytes(data))
    _one_error_line(runner.invoke(app, ["predict", str(bad), "iris"]), "bad.tkm: damaged or not a model file")


def test_a_format_1_file_declaring_a_huge_array_is_refused_before_allocating(tmp_path):
    """--allow-format-1 read its arrays with np.load: a small file declaring (10^6, 10^6) ran out of
    memory (exit 1) where format 2 names the array."""
    golden = ROOT / "tests" / "golden" / "models_v1" / "iris-nb-weka.tkm"
    with zipfile.ZipFile(golden) as zf:
        members = {info.filename: zf.read(info) for info in zf.infolist()}
    with zipfile.ZipFile(io.BytesIO(members["arrays.npz"])) as inner:
        arrays = {info.filename: inner.read(info) for info in inner.infolist()}
    name = next(iter(arrays))
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)})
    arrays[name] = buffer.getvalue() + b"\0" * 64
    npz = io.BytesIO()
    with zipfile.ZipFile(npz, "w", zipfile.ZIP_DEFLATED) as out:
        for key, value in arrays.items():
            out.writestr(key, value)
    members["arrays.npz"] = npz.getvalue()
    meta = json.loads(members["meta.json"])
    meta["arrays_sha256"] = hashlib.sha256(members["arrays.npz"]).hexdigest()   # nothing covers meta.json
    members["meta.json"] = json.dumps(meta).encode()
    bad = tmp_path / "huge.tkm"
    with zipfile.ZipFile(bad, "w", zipfile.ZIP_DEFLATED) as out:
        for key, value in members.items():
            out.writestr(key, value)
    result = runner.invoke(app, ["predict", str(bad), "iris", "--allow-format-1"])
    _one_error_line(result, "huge.tkm", name)


def test_the_predict_table_lines_up_long_and_odd_class_labels_and_huge_scores(tmp_path):
    """Labels longer than 16 characters pushed the columns out of line (20 Newsgroups' names), a label's
    line break split its row, and liblinear-svm's scores of values near 1e308 printed 300 digits."""
    long_label = "comp.sys.ibm.pc.hardware"
    labels = [f"'{long_label}'", "'a\\nb'", "c"]   # 'a\nb' in ARFF: a line break inside the label
    data = tmp_path / "labels.arff"
    rows = [f"{i % 7},{(i * 3) % 5},{labels[i % 3]}" for i in range(30)]
    data.write_text("@relation labels\n@attribute x numeric\n@attribute z numeric\n@attribute class {"
                    + ",".join(labels) + "}\n@data\n" + "\n".join(rows) + "\n")
    model = tmp_path / "m.tkm"
    trained = runner.invoke(app, ["train", str(data), "-c", "nb-gaussian", "-o", str(model)])
    assert trained.exit_code == 0, trained.output
    result = runner.invoke(app, ["predict", str(model), str(data), "--proba"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.split("\n\n")[0].splitlines()
    assert len(lines) == 31, lines   # a header and one line per instance
    assert lines[0].startswith("  inst  actual" + " " * (len(long_label) - len("actual")) + " predicted")
    assert sum("a\\nb" in line for line in lines[1:]) >= 10
    # the probabilities start in the same column on every line
    assert len({len(line) - len(" ".join(line.split()[-3:])) for line in lines[1:]}) == 1, lines
    small, huge = tmp_path / "small.arff", tmp_path / "huge.arff"   # trained on small values, given huge ones
    for path, scale in ((small, 1), (huge, 1e300)):
        path.write_text("@relation h\n@attribute x numeric\n@attribute class {p,n}\n@data\n"
                        + "".join(f"{v * scale},{c}\n" for v, c in [(1, "p"), (-1, "n"), (2, "p"), (-2, "n")]))
    svm = tmp_path / "svm.tkm"
    assert runner.invoke(app, ["train", str(small), "-c", "liblinear-svm", "-o", str(svm)]).exit_code == 0
    scored = runner.invoke(app, ["predict", str(svm), str(huge), "--proba"])
    assert scored.exit_code == 0, scored.output
    assert max(len(line) for line in scored.stdout.split("\n\n")[0].splitlines()) < 120, scored.stdout


@pytest.mark.parametrize("classifier", ["liblinear-lr", "cmls"])
def test_predict_names_the_file_and_row_of_an_infinite_value(tmp_path, classifier):
    """'attribute 'x' (column 0) holds an infinite value' named neither the file nor the row (the naive
    Bayes models count an infinite test value as missing, algorithms.md 2.1; these refuse it)."""
    train, test = tmp_path / "train.arff", tmp_path / "test.arff"
    head = "@relation h\n@attribute x numeric\n@attribute y numeric\n@attribute class {p,n}\n@data\n"
    train.write_text(head + "1,2,p\n-1,0,n\n2,3,p\n-2,1,n\n")
    test.write_text(head + "1,2,p\n-1,0,n\n2,-Infinity,p\n")
    model = tmp_path / "m.tkm"
    assert runner.invoke(app, ["train", str(train), "-c", classifier, "-o", str(model)]).exit_code == 0
    _one_error_line(runner.invoke(app, ["predict", str(model), str(test)]),
                    "test.arff: attribute 'y' (column 1) holds an infinite value (-inf) in row 3")


def test_undefined_scores_name_their_first_row(tmp_path):
    """Values near 1e308 made liblinear-lr's score NaN, and the whole file was refused with 'the scores of
    some instances are undefined' naming no row."""
    data = tmp_path / "extreme.arff"
    data.write_text(IRIS.read_text(encoding="utf-8").split("@DATA")[0].split("@data")[0]
                    + "@data\n5,3,1,0.2,?\n1e308,1e308,1e308,1e308,?\n6,3,4,1,?\n")
    model = tmp_path / "lr.tkm"
    assert runner.invoke(app, ["train", str(IRIS), "-c", "liblinear-lr", "-o", str(model)]).exit_code == 0
    _one_error_line(runner.invoke(app, ["predict", str(model), str(data)]),
                    "extreme.arff: LiblinearLR: the scores of 1 instance are undefined (NaN), the first in row 2")


def test_a_model_given_as_a_pipe_is_named_as_such(tmp_path):
    """predict <(cat m.tkm) said 'damaged or not a model file', and a FIFO without a writer hung the open."""
    import os

    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)
    _one_error_line(runner.invoke(app, ["predict", str(fifo), "iris"]),
                    "model.fifo: is not a regular file (a pipe or a device)")


def test_a_csv_column_of_another_kind_is_refused_not_relabelled(tmp_path):
    """A numeric column holding one 'NA' reads as nominal; when another column was renumbered, the whole
    header was replaced and its codes 0, 1, 2 were read as the measurements (87 of 150 labels changed,
    evaluate --test 40.67 % for 96 %). It is refused, as when nothing else needs renumbering."""
    train, lines = _csv(tmp_path, "iris.csv")
    model = tmp_path / "iris.tkm"
    assert runner.invoke(app, ["train", str(IRIS), "-c", "nb-gaussian", "--no-tune", "-o", str(model)]).exit_code == 0
    body = lines[:0:-1]
    body[0] = "NA," + body[0].split(",", 1)[1]
    bad = tmp_path / "revna.csv"
    bad.write_text("\n".join([lines[0], *body]) + "\n")
    _one_error_line(runner.invoke(app, ["predict", str(model), str(bad)]),
                    "attribute 1 is 'sepallength' nominal {NA,", "the model expects 'sepallength' numeric")
    result = runner.invoke(app, ["evaluate", str(IRIS), "--test", str(bad), "-c", "nb-gaussian", "--no-tune", "-q"])
    _one_error_line(result, "revna.csv: its header differs from iris's at attribute 'sepallength'")


def test_csv_dates_and_texts_are_read_onto_the_training_header(tmp_path):
    """A CSV reads a date column and a text column as nominal: the dates were renumbered as codes 0, 1, ...
    (other probabilities), and a text model refused the reversed file ('a code outside its table')."""
    dates = tmp_path / "num.arff"
    rows = [f"{2000 + i}-0{1 + i % 9}-1{i % 10},{['1', '2', '10'][i % 3]},{['yes', 'no'][(i * 7) % 3 % 2]}"
            for i in range(24)]
    dates.write_text("@relation num\n@attribute d date yyyy-MM-dd\n@attribute k {1,2,10}\n@attribute c {yes,no}\n"
                     "@data\n" + "\n".join(rows) + "\n")
    words = ["great", "good", "fine", "bad", "awful", "ugly"]
    texts = tmp_path / "txt.arff"
    texts.write_text("@relation txt\n@attribute text string\n@attribute cls {pos,neg}\n@data\n" + "\n".join(
        f"'{words[i % 6]} {words[(i * 5) % 6]} {words[(i * 7 + 1) % 6]}',{'pos' if (i * 5) % 6 < 3 else 'neg'}"
        for i in range(30)) + "\n")
    for source, classifier in ((dates, "nb-weka"), (texts, "nb-multinomial")):
        model = tmp_path / f"{source.stem}.tkm"
        assert runner.invoke(app, ["train", str(source), "-c", classifier, "--no-tune", "-o", str(model)]).exit_code == 0
        as_csv, lines = _csv(tmp_path, f"{source.stem}.csv", source)
        reversed_csv = tmp_path / f"{source.stem}-rev.csv"
        reversed_csv.write_text("\n".join([lines[0], *lines[:0:-1]]) + "\n", encoding="utf-8")
        want = load_model(model).predict(str(source))
        for path, order in ((as_csv, slice(None)), (str(reversed_csv), slice(None, None, -1))):
            got = load_model(model).predict(str(path))
            assert np.array_equal(got.y_pred, want.y_pred[order]), (source.stem, path)
            np.testing.assert_array_equal(got.proba, want.proba[order])


def test_a_csv_test_set_with_number_labels_and_a_narrower_libsvm_one_for_vocab_curve(tmp_path):
    """A CSV reads class labels 0/1 as numbers: evaluate --test refused it ('class attribute is numeric')
    before renumbering it; vocab-curve --test read a LIBSVM test file without the training width."""
    rng = np.random.default_rng(5)
    head = "@relation t\n" + "".join(f"@attribute a{j} numeric\n" for j in range(1, 7)) + "@attribute class {0,1}\n@data\n"
    X = rng.poisson(1.0, size=(80, 6))
    y = (X[:, 0] + X[:, 1] > X[:, 2] + X[:, 3]).astype(int)
    X[60:, 5] = 0   # the test part never reaches the last feature
    for name, part in (("tr", slice(0, 60)), ("te", slice(60, 80))):
        (tmp_path / f"{name}.arff").write_text(head + "".join(
            ",".join(map(str, r)) + f",{c}\n" for r, c in zip(X[part], y[part])))
        for ext in ("csv", "libsvm"):
            assert runner.invoke(app, ["convert", str(tmp_path / f"{name}.arff"),
                                       str(tmp_path / f"{name}.{ext}")]).exit_code == 0
    scores = {}
    for ext in ("arff", "csv"):
        result = runner.invoke(app, ["evaluate", str(tmp_path / "tr.arff"), "--test", str(tmp_path / f"te.{ext}"),
                                     "-c", "nb-multinomial", "--no-tune", "--format", "csv", "-q"])
        assert result.exit_code == 0, (ext, result.output)
        scores[ext] = result.stdout.splitlines()[1].split(",")[2]
    assert scores["arff"] == scores["csv"]
    curves = {}
    for ext in ("arff", "libsvm"):
        result = runner.invoke(app, ["vocab-curve", str(tmp_path / f"tr.{ext}"), "--test", str(tmp_path / f"te.{ext}"),
                                     "-c", "nb-multinomial", "--sizes", "3,full", "-q"])
        assert result.exit_code == 0, (ext, result.output)
        curves[ext] = [line.split()[1:] for line in result.stdout.splitlines()[1:]]
    assert curves["arff"] == curves["libsvm"]


def test_an_extra_csv_column_is_named_as_such(tmp_path):
    """A CSV with one more column was reported as the class values' order ('value 1 is ...')."""
    train, lines = _csv(tmp_path, "iris.csv")
    model = tmp_path / "iris.tkm"
    assert runner.invoke(app, ["train", train, "-c", "nb-weka", "-o", str(model)]).exit_code == 0
    extra = tmp_path / "extra.csv"
    extra.write_text("\n".join([lines[0] + ",x", *(line + ",1" for line in lines[:0:-1])]) + "\n")
    _one_error_line(runner.invoke(app, ["predict", str(model), str(extra)]),
                    "it has 6 attributes, the model 5 (first extra: 'x')")
