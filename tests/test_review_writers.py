"""Faults the review of the writers (ARFF, CSV, LIBSVM), the model files and convert / train / predict found.

Expected values come from the input files themselves (their labels, names, declared values), from the
byte layout of the hostile files built here, or from an in-memory prediction of the same fitted model."""

from __future__ import annotations

import io
import json
import tracemalloc
import zipfile

import numpy as np
import pytest
from numpy.lib import format as npy
from typer.testing import CliRunner

from conftest import ROOT
from toolkit.cli import app
import toolkit
from toolkit.data import arff
from toolkit.loading import save_dataset
from toolkit.errors import DatasetError, ModelFileError
from toolkit.models.model_file import _checksum, load_model, save_model
from toolkit.models.pipeline import Pipeline
from toolkit.plugins.csv.reader import read_csv, write_csv
from toolkit.plugins.libsvm.svmlight import read_libsvm, write_libsvm

runner = CliRunner()

WEATHER = ROOT / "datasets" / "weather.nominal.arff"


def _one_error_line(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in result.output, result.output
    return lines[0]


# ------------------------------------------------------------------------------------------ model files

def _with_array(model, out, member, header, data, claimed=None):  # type: ignore[no-untyped-def]
    """``model`` with one .npy member of arrays.npz replaced by ``header`` + ``data``, its stored size in the
    inner directory set to ``claimed`` (what an editor may write there), and the outer checksum recomputed
    as an editor who knows the format would: only the array checks can refuse it."""
    with zipfile.ZipFile(model) as zf:
        head = json.loads(zf.read("toolkit-model.json"))
        meta, blob = zf.read("meta.json"), zf.read("arrays.npz")
    with zipfile.ZipFile(io.BytesIO(blob)) as inner:
        arrays = {info.filename: inner.read(info) for info in inner.infolist()}
    assert member in arrays
    buf = io.BytesIO()
    npy.write_array_header_1_0(buf, header)
    arrays[member] = buf.getvalue() + data
    packed = io.BytesIO()
    zf = zipfile.ZipFile(packed, "w", zipfile.ZIP_STORED)
    for name, raw in arrays.items():
        zf.writestr(name, raw)
    if claimed is not None:
        for info in zf.filelist:
            if info.filename == member:   # the central directory is written from these at close()
                info.file_size = info.compress_size = claimed
    zf.close()
    members = {"meta.json": meta, "arrays.npz": packed.getvalue()}
    head["members"] = {name: len(raw) for name, raw in members.items()}
    head["sha256"] = _checksum(members)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("toolkit-model.json", json.dumps(head))
        for name, raw in members.items():
            zf.writestr(name, raw)
    return out


@pytest.fixture
def weather_model(tmp_path):  # type: ignore[no-untyped-def]
    ds = arff.read(WEATHER)
    path = tmp_path / "w.tkm"
    save_model(Pipeline("nb-weka", tune=False).fit(ds), ds, path)
    return path


def test_an_array_claiming_more_bytes_than_the_file_holds_is_one_error(weather_model, tmp_path):
    """A .npy header claiming 10**16 float64 values (80 PB, beyond any address space), its inner zip entry
    claiming as many bytes: numpy allocated the claim before reading and the CLI printed a MemoryError
    traceback (exit 1). The entry's bytes must lie inside arrays.npz."""
    count = 10**16
    hostile = _with_array(weather_model, tmp_path / "h.tkm", "classifier/class_count_.npy",
                          {"descr": "<f8", "fortran_order": False, "shape": (count,)}, b"\0" * 16,
                          claimed=8 * count + 1000)
    with pytest.raises(ModelFileError, match="class_count_"):
        load_model(hostile)
    line = _one_error_line(runner.invoke(app, ["predict", str(hostile), str(WEATHER)]))
    assert "class_count_" in line and "h.tkm" in line


def test_an_empty_array_claiming_a_huge_extent_is_refused_before_any_work(weather_model, tmp_path):
    """mean_ of shape (0, 2,000,000) (no bytes at all): nb-weka's load-time probe sized arrays by the extent,
    153 MB for a 3 KB file (and 6.4 GB for (0, 10**8)). An extent beyond the bytes of every array is refused."""
    hostile = _with_array(weather_model, tmp_path / "h.tkm", "classifier/mean_.npy",
                          {"descr": "<f8", "fortran_order": False, "shape": (0, 2_000_000)}, b"")
    assert hostile.stat().st_size < 10_000
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError, match="mean_"):
            load_model(hostile)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20e6, peak


def _attribute_line(text: str, name: str) -> str:
    return next(line for line in text.splitlines() if line.lower().startswith("@attribute") and f" {name}" in line)


def test_a_nominal_list_differing_after_its_sixth_value_is_named(tmp_path):
    """The message showed both lists cut at six values: soybean's 'date' with 'october' renamed read
    'attribute 1 is ... {april,...,september,...}, the model expects ... {april,...,september,...}'."""
    src = ROOT / "datasets" / "soybean.arff"
    ds = arff.read(src)
    model = tmp_path / "soy.tkm"
    save_model(Pipeline("nb-weka", tune=False).fit(ds), ds, model)
    text = src.read_text()
    declared = _attribute_line(text, "date")
    values = declared[declared.index("{") + 1: declared.index("}")].split(",")
    assert len(values) > 6   # the case the cut list hid
    renamed = text.replace(declared, declared.replace(values[-1] + "}", "oct}")).replace(f"\n{values[-1]},", "\noct,")
    (tmp_path / "renamed.arff").write_text(renamed)
    added = text.replace(declared, declared.replace("}", ",november}"))
    (tmp_path / "added.arff").write_text(added)
    line = _one_error_line(runner.invoke(app, ["predict", str(model), str(tmp_path / "renamed.arff")]))
    assert f"value {len(values)} is 'oct', the model's '{values[-1]}'" in line
    line = _one_error_line(runner.invoke(app, ["predict", str(model), str(tmp_path / "added.arff")]))
    assert "'november' is new" in line
    removed = text.replace(declared, declared.replace("," + values[-1] + "}", "}"))
    removed = "\n".join(row for row in removed.splitlines() if not row.startswith(values[-1] + ","))
    (tmp_path / "removed.arff").write_text(removed)
    line = _one_error_line(runner.invoke(app, ["predict", str(model), str(tmp_path / "removed.arff")]))
    assert f"'{values[-1]}' is missing" in line


def test_a_date_format_that_differs_is_named(tmp_path):
    """Both sides read "'d' date": the formats were not shown, so nothing in the message differed."""
    train = tmp_path / "d1.arff"
    train.write_text('@relation r\n@attribute d date "yyyy-MM-dd"\n@attribute c {a,b}\n@data\n'
                     "2001-01-01,a\n2002-01-01,b\n")
    test = tmp_path / "d2.arff"
    test.write_text('@relation r\n@attribute d date "yyyy-MM-dd HH:mm"\n@attribute c {a,b}\n@data\n'
                    '"2001-01-01 00:00",a\n"2002-01-01 00:00",b\n')
    ds = arff.read(train)
    model = tmp_path / "d.tkm"
    save_model(Pipeline("nb-weka", tune=False).fit(ds), ds, model)
    line = _one_error_line(runner.invoke(app, ["predict", str(model), str(test)]))
    assert "'d' date 'yyyy-MM-dd HH:mm', the model expects 'd' date 'yyyy-MM-dd'" in line


# ------------------------------------------------------------------------------------------ predict --format arff

def test_predict_arff_with_proba_keeps_the_scores_of_a_model_without_probabilities(tmp_path):
    """--proba --format csv shows liblinear-svm's decision scores as score(c) columns; --format arff dropped
    them without a word. The scores are those of the same fitted model predicting in memory."""
    ds = arff.read(WEATHER)
    fitted = Pipeline("liblinear-svm", tune=False).fit(ds)
    expected = fitted.predict(ds)
    assert expected.proba is None and expected.scores is not None
    model = tmp_path / "svm.tkm"
    save_model(fitted, ds, model)
    out = tmp_path / "p.arff"
    result = runner.invoke(app, ["predict", str(model), str(WEATHER), "--proba", "-o", str(out)])
    assert result.exit_code == 0, result.output
    back = arff.read(out)   # the class stays last: the prediction and the score columns come before it
    names = back.attributes.names()
    score_names = [f"score({c})" for c in ds.classes]
    assert names[-len(score_names) - 2:] == [f"predicted({ds.class_attribute.name})"] + score_names + \
        [ds.class_attribute.name]
    columns = [back.features.names().index(n) for n in score_names]
    X = np.asarray(back.X.toarray() if back.is_sparse else back.X)
    assert np.array_equal(X[:, columns], expected.scores)
    assert np.array_equal(X[:, back.features.names().index(f"predicted({ds.class_attribute.name})")],
                          expected.y_pred)
    assert np.array_equal(back.y, ds.y)   # the true labels kept


# ------------------------------------------------------------------------------------------ LIBSVM and CSV writers

@pytest.mark.parametrize("label", ["NaN", "Infinity", "1e999"])
def test_libsvm_labels_its_reader_refuses_are_written_as_codes(tmp_path, label):
    """A class label that is a number but not a finite one was written as it is; the reader refuses it
    ('label ... is not a finite number'), so the file written could not be read back."""
    src = tmp_path / "in.arff"
    src.write_text(f"@relation r\n@attribute x numeric\n@attribute c {{'{label}',1}}\n@data\n"
                   f"1,'{label}'\n2,1\n3,'{label}'\n")
    ds = arff.read(src)
    out = tmp_path / "out.libsvm"
    write_libsvm(ds, out)
    back = read_libsvm(out)
    assert back.n_instances == 3
    # the partition of the rows by class survives (codes 0, 1 stand for the declared values in order)
    labels = [back.classes[k] for k in back.y]
    assert labels == ["0", "1", "0"]
    assert np.array_equal(np.asarray(back.X.toarray()).ravel(), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("name", [" x", "x ", ""])
def test_csv_refuses_an_attribute_name_its_header_row_cannot_keep(tmp_path, name):
    """The reader strips a header cell and refuses an empty one: ' x' came back as 'x', and '' gave a file
    that could not be read back ('names ... twice or not at all')."""
    src = tmp_path / "in.arff"
    src.write_text(f"@relation r\n@attribute '{name}' numeric\n@attribute c {{a,b}}\n@data\n1,a\n")
    ds = arff.read(src)
    assert ds.attributes.names()[0] == name
    out = tmp_path / "out.csv"
    with pytest.raises(DatasetError, match="attribute name"):
        write_csv(ds, out)
    assert not out.exists()


def test_csv_names_that_survive_are_written_as_they_are(tmp_path):
    """The check refuses only what the reader changes: inner spaces, quotes and commas come back."""
    src = tmp_path / "in.arff"
    names = ["a b", "q'uote", "c,omma"]
    src.write_text("@relation r\n" + "".join(f"@attribute {arff_quote(n)} numeric\n" for n in names)
                   + "@attribute c {a,b}\n@data\n1,2,3,a\n")
    ds = arff.read(src)
    out = tmp_path / "out.csv"
    write_csv(ds, out)
    assert read_csv(out).attributes.names() == names + ["c"]


def arff_quote(name: str) -> str:
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"


# ------------------------------------------------------------------------------------------ dates without a format

def test_a_date_attribute_built_without_a_format_is_written_with_wekas_default(tmp_path):
    """Attribute('d', 'date') (date_format None, as the API allows) made the ARFF and CSV writers fail with
    a TypeError deep in the date code. 0 and 86,400,000 ms are the first two days of 1970 (UTC)."""
    from toolkit.data import Attribute, Dataset

    ds = Dataset("r", [Attribute("d", "date"), Attribute("c", "nominal", ("a", "b"))],
                 np.array([[0.0], [86_400_000.0]]), np.array([0, 1]), 1, np.ones(2))
    text = arff.to_text(ds)
    assert "1970-01-01T00:00:00,a\n1970-01-02T00:00:00,b\n" in text
    back = arff.read_text(text)
    assert back.attributes[0].date_format == "yyyy-MM-dd'T'HH:mm:ss"
    assert np.array_equal(back.X.ravel(), [0.0, 86_400_000.0])
    write_csv(ds, tmp_path / "d.csv")
    assert (tmp_path / "d.csv").read_text() == "d,c\n1970-01-01T00:00:00,a\n1970-01-02T00:00:00,b\n"


# ------------------------------------------------------------------------------------------ toolkit convert

@pytest.mark.parametrize("target, flag", [("out.csv", "--sparse"), ("out.libsvm", "--dense")])
def test_convert_refuses_a_row_form_for_a_format_that_has_one(tmp_path, target, flag):
    """--sparse/--dense choose ARFF rows; for CSV or LIBSVM output they were ignored without a word (the
    input options, --nominal or --n-features, are refused for another format)."""
    out = tmp_path / target
    line = _one_error_line(runner.invoke(app, ["convert", str(WEATHER), str(out), flag]))
    assert flag in line and "ARFF output only" in line
    assert not out.exists()
    arff_out = tmp_path / "out.arff"
    result = runner.invoke(app, ["convert", str(WEATHER), str(arff_out), "--sparse"])
    assert result.exit_code == 0, result.output
    assert arff_out.read_text().split("@data\n", 1)[1].startswith("{")


@pytest.mark.parametrize("suffix", [".arff.gz", ".csv.gz", ".libsvm.gz"])
def test_gzip_output_is_the_same_bytes_for_the_same_data(tmp_path, suffix):
    """The gzip header held the temporary file's name and the clock, so two identical conversions gave
    different files (and sha256: it keys the cache and stands in reports). Also: CSV and LIBSVM are written
    in one step now, as ARFF was (no partial file, no temporary left)."""
    import time

    ds = toolkit.load_arff("iris")
    first, second = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    save_dataset(ds, first)
    time.sleep(1.1)   # the gzip header's clock has one-second steps
    save_dataset(ds, second)
    data = first.read_bytes()
    assert data == second.read_bytes()
    assert data[:2] == b"\x1f\x8b" and not data[3] & 0x08 and data[4:8] == b"\0\0\0\0"   # no name, no time
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.name, second.name])


def test_csv_refuses_string_values_that_read_back_as_missing(tmp_path):
    """The reader takes a cell as missing after stripping white space, strings too, but the writer's check
    stripped nothing for strings: ' ?', '   ' and a line break came back as '?'."""
    from toolkit.errors import DatasetError

    for value in (" ?", "   ", "\\n"):
        source = tmp_path / "s.arff"
        source.write_text(f"@relation s\n@attribute id numeric\n@attribute txt string\n@data\n1,'{value}'\n2,'ok'\n",
                          encoding="utf-8")
        ds = arff.read(source)
        with pytest.raises(DatasetError, match="reads back as a missing value"):
            save_dataset(ds, tmp_path / "s.csv")


def test_libsvm_refuses_infinite_values_its_reader_refuses(tmp_path):
    from toolkit.errors import DatasetError

    source = tmp_path / "inf.arff"
    source.write_text("@relation inf\n@attribute a numeric\n@attribute b numeric\n@attribute c {1,-1}\n@data\n"
                      "1,Infinity,1\n2,3,-1\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="attribute 'b' has infinite values"):
        save_dataset(arff.read(source), tmp_path / "o.libsvm")
    assert not (tmp_path / "o.libsvm").exists()


def test_writers_keep_a_symlink_and_write_a_device_in_place(tmp_path):
    """The one-step write replaced a symbolic link with a file (leaving its target as it was) and, given a
    device such as /dev/stdout, would put a regular file in its place."""
    import os
    import stat

    ds = toolkit.load_arff("iris")
    real, link = tmp_path / "real.csv", tmp_path / "link.csv"
    real.write_text("old\n", encoding="utf-8")
    os.symlink(real.name, link)
    save_dataset(ds, link)
    assert link.is_symlink() and real.read_text(encoding="utf-8").startswith("sepallength,")
    import threading

    pipe = tmp_path / "pipe.csv"           # a pipe, not /dev/null: the old code would have replaced it
    os.mkfifo(pipe)
    received = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_text(encoding="utf-8")), daemon=True)
    reader.start()
    save_dataset(ds, pipe)
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)
    assert received and received[0].startswith("sepallength,")


@pytest.mark.parametrize("columns", [1, 2])
def test_a_lone_carriage_return_is_quoted_in_csv(tmp_path, columns):
    """csv.writer quotes only its line terminator's characters: "a\\rb" went out bare, and the file read
    back as one more row (one column) or not at all ('the row has 1 cells, the header 2')."""
    head = "@relation r\n@attribute 'c\\rname' {'a\\rb',z}\n" + ("@attribute d numeric\n" if columns == 2 else "")
    rows = ["'a\\rb'" + (",1" if columns == 2 else ""), "z" + (",2" if columns == 2 else "")]
    src = tmp_path / "cr.arff"
    src.write_text(head + "@data\n" + "\n".join(rows) + "\n", encoding="utf-8")
    ds = arff.read(src)
    assert ds.attributes[0].values == ("a\rb", "z") and ds.attributes.name(0) == "c\rname"
    write_csv(ds, tmp_path / "cr.csv")
    back = read_csv(tmp_path / "cr.csv")
    assert back.n_instances == 2 and back.attributes.name(0) == "c\rname"
    assert back.attributes[0].values == ("a\rb", "z") and list(back.X[:, 0] if back.class_index else back.y) == [0, 1]
    assert (tmp_path / "cr.csv").read_bytes().count(b'"a\rb"') == 1


def test_csv_column_options_take_ascii_positions_only(tmp_path):
    """'²' passed str.isdigit() and int() raised (a traceback), '٢' (Arabic-Indic two) chose column 2."""
    data = tmp_path / "d.csv"
    data.write_text("a,b,c\n1,x,p\n2,y,q\n")
    for option, digit in (("--nominal", "\u00b2"), ("--string", "\u0662")):
        result = runner.invoke(app, ["convert", str(data), str(tmp_path / "o.arff"), option, digit])
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert f"no column named '{digit}'" in result.stderr
    assert runner.invoke(app, ["convert", str(data), str(tmp_path / "o.arff"), "--string", "2"]).exit_code == 0
    assert "@attribute b string" in (tmp_path / "o.arff").read_text().lower()


def test_convert_reads_a_name_without_suffix_as_arff_as_info_does(tmp_path):
    plain = tmp_path / "irisdata"
    plain.write_bytes((ROOT / "datasets" / "iris.arff").read_bytes())
    assert runner.invoke(app, ["info", str(plain)]).exit_code == 0
    result = runner.invoke(app, ["convert", str(plain), str(tmp_path / "o.csv")])
    assert result.exit_code == 0, result.output
    assert "irisdata (arff) -> " in result.stderr and len(read_csv(tmp_path / "o.csv").y) == 150


def test_a_numeric_class_label_around_white_space_is_written_as_one_libsvm_token(tmp_path):
    """'1\\n' reads as the number 1 and was written as it is: the line broke, and reading back failed with
    "the line starts with '1:1', not a label"."""
    src = tmp_path / "lab.arff"
    src.write_text("@relation l\n@attribute x numeric\n@attribute class {'1\\n',2}\n@data\n1,'1\\n'\n2,2\n")
    ds = arff.read(src)
    assert ds.classes == ("1\n", "2")
    write_libsvm(ds, tmp_path / "lab.libsvm")
    assert (tmp_path / "lab.libsvm").read_text() == "1 1:1\n2 1:2\n"
    assert read_libsvm(tmp_path / "lab.libsvm").classes == ("1", "2")


@pytest.mark.parametrize("suffix", [".arff", ".csv"])
def test_writing_a_wide_file_dense_holds_a_bounded_block(tmp_path, suffix, monkeypatch):
    """The dense ARFF and CSV writers formatted 4,096 rows x every column at a time: 400 rows of 100,000
    columns took 2.85 GB (a CSV block was also a dense float array: 3.3 GB for 5,000 rows), and writing
    k1a as CSV took 336 s. Blocks now hold a bounded number of cells (lowered here to 20,000, so that a
    small file shows it), numbers formatted a block at a time."""
    import scipy.sparse as sp

    import toolkit.data.arff as arff_module
    import toolkit.plugins.csv.reader as csv_module
    from toolkit.config import SaveOptions
    from toolkit.data import Attribute, AttributeList, Dataset

    monkeypatch.setattr(arff_module, "_CELLS_PER_BLOCK", 20_000, raising=False)
    monkeypatch.setattr(csv_module, "_CELLS_PER_CHUNK", 20_000)
    n, m = 4096, 1000   # 4,096 rows (one old block) x 1,000 columns: 32 MB as dense floats
    X = sp.random(n, m, density=0.002, random_state=0, format="lil") * 10
    X[0, 7] = np.nan
    X = sp.csr_matrix(X)
    attrs = AttributeList.numbered("w", m, then=[Attribute("class", "nominal", ("a", "b"))])
    ds = Dataset("wide", attrs, X, np.arange(n) % 2, m, np.ones(n))
    out = tmp_path / f"wide{suffix}"
    tracemalloc.start()
    try:
        save_dataset(ds, out, SaveOptions(sparse=False) if suffix == ".arff" else None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 12 * 2**20, f"{peak / 2**20:.1f} MiB"
    back = arff.read(out) if suffix == ".arff" else read_csv(out)
    np.testing.assert_array_equal(np.asarray(back.X.todense() if sp.issparse(back.X) else back.X), X.toarray())
    assert back.y.tolist() == (np.arange(n) % 2).tolist()


def test_convert_date_format_without_date_columns_or_empty_is_refused(tmp_path):
    """--date-format was ignored without --date (it reads those columns), and '' fell back to the default."""
    data = tmp_path / "dd.csv"
    data.write_text("a,d,c\n1,2020-01-01,p\n2,2020-02-01,q\n")
    out = str(tmp_path / "o.arff")
    for args, needle in ((["--date-format", "yyyy-MM-dd"], "reads the columns that --date names"),
                         (["--date", "d", "--date-format", ""], "--date-format is empty")):
        result = runner.invoke(app, ["convert", str(data), out, *args])
        assert result.exit_code == 2 and needle in result.stderr, result.output
    assert runner.invoke(app, ["convert", str(data), out, "--date", "d", "--date-format", "yyyy-MM-dd"]).exit_code == 0
    assert "@attribute d date yyyy-MM-dd" in (tmp_path / "o.arff").read_text()


def test_an_n_features_past_what_a_sparse_matrix_indexes_blames_the_option(tmp_path):
    """--n-features 99999999999 was reported as 'index 99,999,999,999 ...; a damaged line?' at line 1."""
    data = tmp_path / "d.libsvm"
    data.write_text("1 1:2 3:1\n0 2:1\n")
    result = runner.invoke(app, ["convert", str(data), str(tmp_path / "o.arff"), "--n-features", "99999999999"])
    assert result.exit_code == 2 and "n_features=99,999,999,999 is out of range" in result.stderr, result.output
    assert "d.libsvm:1" not in result.stderr


def test_csv_columns_parsed_a_chunk_at_a_time_keep_their_kinds_across_chunks(tmp_path, monkeypatch):
    """The reader parses every still-numeric column of a chunk in one call (a call per column and chunk
    took 123 s for 400 rows of 100,000 columns). Chunks of two rows here: a column turning nominal in a
    later chunk, missing cells, and a forced numeric column failing late, against a plain reading."""
    import csv as csv_module

    import toolkit.plugins.csv.reader as reader

    monkeypatch.setattr(reader, "_CELLS_PER_CHUNK", 8)   # 4 columns: two rows a chunk
    rows = [["1.5", "2", "?", "p"], ["2", "3", "4", "q"], ["", "5", "1e3", "p"], ["3", "x", "2", "q"],
            ["4", "6", "?", "p"], ["-1", "2", "7", "q"], ["0", "y", "8", "p"]]
    path = tmp_path / "c.csv"
    path.write_text("a,b,c,cls\n" + "\n".join(",".join(r) for r in rows) + "\n")
    ds = read_csv(path)
    plain = list(csv_module.reader(path.read_text().splitlines()))[1:]
    number = lambda t: np.nan if t in ("?", "") else float(t)   # noqa: E731
    np.testing.assert_array_equal(ds.X[:, 0], [number(r[0]) for r in plain])
    np.testing.assert_array_equal(ds.X[:, 2], [number(r[2]) for r in plain])
    first_seen = list(dict.fromkeys(r[1] for r in plain))
    assert ds.attributes[1].kind == "nominal" and list(ds.attributes[1].values) == first_seen
    np.testing.assert_array_equal(ds.X[:, 1], [first_seen.index(r[1]) for r in plain])
    assert list(ds.classes) == ["p", "q"] and ds.y.tolist() == [0, 1, 0, 1, 0, 1, 0]
    with pytest.raises(DatasetError, match=r"c.csv:5: column 'b': 'x' is not a number"):
        read_csv(path, numeric=["b"])
