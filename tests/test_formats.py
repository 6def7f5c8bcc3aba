"""CSV and LIBSVM loaders (built-in plugins through the load_dataset hook), `toolkit convert`, and the
dataset cache: the bundled datasets round-trip, WEKA's CSVLoader rules hold, bad input is refused."""

from __future__ import annotations


import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import PEAK_KB
from toolkit.cli import app
from toolkit.config import LoadOptions
from toolkit.data import arff
from toolkit.errors import DatasetError
from toolkit.loading import list_bundled, load_dataset

runner = CliRunner()
BUNDLED = sorted(list_bundled(), key=lambda p: p.name)


def _labels(ds, r, attr_index):
    """The value of attribute ``attr_index`` (position in the file) at row ``r``, as text or number."""
    attr = ds.attributes[attr_index]
    if attr_index == ds.class_index:
        v = float(ds.y[r]) if not (attr.kind == "nominal" and ds.y[r] < 0) else np.nan
        col = None
    else:
        col = attr_index - (ds.class_index is not None and attr_index > ds.class_index)
        X = ds.X
        v = float(X[r, col])
    if v != v:
        return None
    if attr.kind == "nominal":
        return attr.values[int(v)]
    if attr.kind == "string":
        return ds.string_value(col, v)
    return v


def _same_by_value(a, b):
    assert a.n_instances == b.n_instances and len(a.attributes) == len(b.attributes)
    assert a.attributes.names() == b.attributes.names()
    for j in range(len(a.attributes)):
        for r in range(a.n_instances):
            assert _labels(a, r, j) == _labels(b, r, j), (a.attributes.name(j), r)


@pytest.mark.parametrize("path", BUNDLED, ids=[p.name for p in BUNDLED])
def test_bundled_datasets_round_trip_through_csv(path, tmp_path):
    ds = arff.read(path)
    out = tmp_path / "x.csv.gz"
    result = runner.invoke(app, ["convert", str(path), str(out)])
    assert result.exit_code == 0, result.output
    kinds = {"nominal": [], "string": []}
    for a in ds.attributes:
        if a.kind in kinds:
            kinds[a.kind].append(a.name)
    from toolkit.plugins.csv.reader import read_csv

    back = read_csv(out, **kinds)
    _same_by_value(ds, back)
    assert ds.class_index == back.class_index


@pytest.mark.parametrize("path", BUNDLED, ids=[p.name for p in BUNDLED])
def test_bundled_datasets_round_trip_through_libsvm_or_are_refused(path, tmp_path):
    ds = arff.read(path)
    out = tmp_path / "x.libsvm"
    result = runner.invoke(app, ["convert", str(path), str(out)])
    has_missing = bool(np.isnan(ds.X.data if ds.is_sparse else ds.X).any()) or bool((ds.y < 0).any())
    if ds.strings or has_missing:
        assert result.exit_code == 2 and ("missing values" in result.stderr or "string" in result.stderr)
        return
    assert result.exit_code == 0, result.output
    back = load_dataset(out)
    dense = lambda X: X.toarray() if hasattr(X, "toarray") else np.asarray(X)  # noqa: E731
    a, b = dense(ds.X), dense(back.X)
    np.testing.assert_array_equal(a[:, : b.shape[1]], b)  # nominal features as their codes
    assert not a[:, b.shape[1]:].any()  # trailing all-zero columns are not written
    labels = ds.class_attribute.values
    numeric = all(x.lstrip("-").replace(".", "", 1).isdigit() for x in labels)
    want = [labels[k] if numeric else str(k) for k in ds.y]
    got = [back.class_attribute.values[k] for k in back.y]
    assert [float(x) for x in want] == [float(x) for x in got]


def test_csv_follows_wekas_csvloader(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("x, colour ,n,when,text\n1.5,red,3,2020-01-02T03:04:05,\"a, b\"\n?,blue,,?,\"say \"\"hi\"\"\"\n"
                    " 2 ,red,1e3,2021-06-01T00:00:00,c\n")
    ds = load_dataset(path, LoadOptions(class_attribute="colour"))
    assert ds.attributes.names() == ["x", "colour", "n", "when", "text"]
    assert [a.kind for a in ds.attributes] == ["numeric", "nominal", "numeric", "nominal", "nominal"]
    assert ds.class_attribute.values == ("red", "blue")  # order of appearance
    np.testing.assert_array_equal(ds.X[:, 0], [1.5, np.nan, 2.0])
    np.testing.assert_array_equal(ds.X[:, 1], [3, np.nan, 1000])
    from toolkit.plugins.csv.reader import read_csv

    forced = read_csv(path, date=["when"], string=[5], nominal=["n"], class_attribute=None)
    assert [a.kind for a in forced.attributes] == ["numeric", "nominal", "nominal", "date", "string"]
    assert forced.X[0, 3] == 1577934245000.0  # date -u -d "2020-01-02 03:04:05" +%s
    assert forced.string_value(4, forced.X[1, 4]) == 'say "hi"'
    with pytest.raises(DatasetError, match=r"d\.csv:3: column 'x': 'oops' is not a number"):
        path.write_text("x,c\n1,a\noops,b\n")
        read_csv(path, numeric=["x"])
    with pytest.raises(DatasetError, match=r"d\.csv:2: the row has 3 cells, the header 2"):
        path.write_text("x,c\n1,a,9\n")
        read_csv(path)


def test_csv_rows_of_empty_cells_blank_lines_bom_and_line_numbers(tmp_path):
    """WEKA's CSVLoader reads ',,' as a row of missing values and skips blank lines; a BOM is not part of
    the first name; messages name the file's line (a quoted line break counts)."""
    from toolkit.plugins.csv.reader import read_csv

    path = tmp_path / "d.csv"
    path.write_bytes(b"\xef\xbb\xbfa,b,c\n1,x,p\n,,\n\n2,y,q\n")
    ds = read_csv(path, class_attribute="a")
    assert ds.attributes.names() == ["a", "b", "c"] and ds.n_instances == 3
    assert np.isnan(ds.y[1]) and np.isnan(ds.X[1]).all()
    path.write_text('a,b,c\n1,"two\nlines",p\n\n2,y,q\n1,2\n')
    with pytest.raises(DatasetError, match=r"d\.csv:6: the row has 2 cells, the header 3"):
        read_csv(path)
    path.write_text('a,b\n1,x\n2,"open\n')
    with pytest.raises(DatasetError, match=r"d\.csv:3: not a valid CSV file"):
        read_csv(path)


def test_libsvm_reading(tmp_path):
    path = tmp_path / "d.svm"
    path.write_text("# a comment\n+1 3:0.5 1:2 qid:7\n-1 2:1e-3 # tail\n2.5\n")
    ds = load_dataset(path)
    assert ds.is_sparse and ds.X.shape == (3, 3)
    np.testing.assert_array_equal(ds.X.toarray(), [[2, 0, 0.5], [0, 1e-3, 0], [0, 0, 0]])
    assert ds.class_attribute.values == ("-1", "1", "2.5") and ds.y.tolist() == [1, 0, 2]
    for text, problem in (("1 0:1\n", "indices start at 1"), ("1,2 1:1\n", "multi-label"),
                          ("1 1:1 1:2\n", "appears twice"), ("1 a:1\n", "not index:value"),
                          ("1 1:1_0\n", "is not a number"), ("x 1:1\n", "label 'x' is not a number"),
                          # 1e400 overflowed to Infinity where 'inf' is refused; qid:x was skipped unread
                          ("1 1:1\n-1 2:1e400\n", r"d\.svm:2: value '1e400' is not a finite number"),
                          ("1 qid:1 1:1\n-1 qid:x 2:1\n", r"d\.svm:2: 'qid:x' is not qid:n"),
                          ("1 qid:-1 1:1\n-1 qid:1.5 2:1\n", r"d\.svm:2: 'qid:1.5' is not qid:n")):
        path.write_text(text)
        with pytest.raises(DatasetError, match=problem):
            load_dataset(path)
    path.write_text("1 qid:-1 1:1\n-1 qid:+2 2:1\n")   # signed query ids, as scikit-learn reads them
    assert load_dataset(path).X.shape == (2, 2)
    path.write_text("# header\n1 1:1 2:2\n\n-1 4:1 2:1 4:3\n")
    with pytest.raises(DatasetError, match=r"d\.svm:4: index 4 appears twice"):
        load_dataset(path)


def test_libsvm_hostile_lines_are_refused_with_bounded_memory(tmp_path):
    """An index far beyond a file's values (1 2000000000:1) must not allocate one attribute per column; an
    index too long for an integer, a NaN label or value, a BOM and a class other than the label are
    clear errors or handled, each naming the line."""
    import subprocess
    import sys

    path = tmp_path / "d.libsvm"
    for text, problem in (("1 1:0.5 2000000000:1\n-1 3:2\n", r"d\.libsvm:1: index 2,000,000,000 would make"),
                          # 16 million columns for 4 values: 1.3 GB to describe, 2.4 GB for nb-weka, before
                          ("1 1:1 16000000:2\n-1 5:1\n1 3:1\n", r"d\.libsvm:1: index 16,000,000 would make .*"
                                                                   r"--n-features"),
                          ("1 1:0.5 99999999999999999999:1\n", r"d\.libsvm:1: .* is an index too large"),
                          ("1 1:1\nNaN 2:1\n", r"d\.libsvm:2: label 'NaN' is not a finite number"),
                          ("1 1:NaN\n", "no missing values")):
        path.write_text(text)
        with pytest.raises(DatasetError, match=problem):
            load_dataset(path)
    # in a process of its own, its peak memory measured: the refusal comes before any allocation by width
    warm = tmp_path / "warm.libsvm"
    warm.write_text("1 1:1\n0 2:1\n")
    path.write_text("1 1:0.5 2000000000:1\n")
    # the peak grown from after a first small load (imports and plugin loading included), in its own process
    code = ("import sys\nfrom toolkit.loading import load_dataset\n" + PEAK_KB + "load_dataset(sys.argv[2])\n"
            "before = peak()\ntry:\n    load_dataset(sys.argv[1])\n"
            "except Exception as e:\n    print(type(e).__name__)\n"
            "print(peak() - before)")
    done = subprocess.run([sys.executable, "-c", code, str(path), str(warm)], capture_output=True, text=True,
                          timeout=120)
    kind, grown_kb = done.stdout.split()
    assert kind == "DatasetError" and int(grown_kb) < 100_000, done.stdout
    path.write_bytes(b"\xef\xbb\xbf1 1:1\n0 2:1\n")   # a BOM before the first label
    assert load_dataset(path).y.tolist() == [1, 0]
    path.write_bytes(b"1 1:1\x0c2:3\n0 2:1\n")         # a form feed is not a line break
    assert load_dataset(path).n_instances == 2
    path.write_text("1 1:1\n0 2:1\n")
    with pytest.raises(DatasetError, match="class is its label"):
        load_dataset(path, LoadOptions(class_attribute="nonexistent"))
    assert load_dataset(path, LoadOptions(class_attribute="class")).n_features == 2


def test_info_of_a_wide_file_lists_a_bounded_number_of_attributes(tmp_path):
    from toolkit.data.summary import LISTED_ATTRIBUTES, describe

    path = tmp_path / "wide.libsvm"
    path.write_text(f"1 1:1 {LISTED_ATTRIBUTES * 3}:2\n0 2:1\n")
    ds = load_dataset(path)
    assert ds.n_features == LISTED_ATTRIBUTES * 3 and ds.features.name(LISTED_ATTRIBUTES * 3 - 1) == \
        f"a{LISTED_ATTRIBUTES * 3}"
    info = describe(ds)
    assert info["features"] == LISTED_ATTRIBUTES * 3 and len(info["feature_attributes"]) == LISTED_ATTRIBUTES
    assert info["feature_attributes_listed"] == LISTED_ATTRIBUTES
    assert info["attribute_kinds"] == {"numeric": LISTED_ATTRIBUTES * 3, "nominal": 1}
    assert len(describe(ds, limit=None)["feature_attributes"]) == LISTED_ATTRIBUTES * 3
    result = runner.invoke(app, ["info", str(path)])
    assert result.exit_code == 0 and f"({LISTED_ATTRIBUTES * 3:,} feature attributes; --json lists the first" in \
        result.stdout


def test_convert_refuses_unknown_formats(tmp_path):
    result = runner.invoke(app, ["convert", "iris", str(tmp_path / "x.xlsx")])
    assert result.exit_code == 2 and "no writer for this file name" in result.stderr
    assert not (tmp_path / "x.xlsx").exists()
    result = runner.invoke(app, ["convert", "iris", str(tmp_path / "no_suffix")])
    assert result.exit_code == 2 and "cannot tell the format" in result.stderr


def test_cache_stores_by_content_and_survives_damage(tmp_path, monkeypatch):
    from toolkit.data import cache

    folder = tmp_path / "cache"
    src = tmp_path / "d.arff"
    src.write_text("@relation r\n@attribute s string\n@attribute c {a,b}\n@data\nhello,a\n'w o',b\n")
    result = runner.invoke(app, ["--cache", str(folder), "info", str(src), "--json"])
    assert result.exit_code == 0, result.output
    entries = list(folder.rglob("*.zip"))
    assert len(entries) == 1
    monkeypatch.setenv("TOOLKIT_CACHE", str(folder))
    try:
        first = load_dataset(src)
        assert len(list(folder.rglob("*.zip"))) == 1  # the same entry was read
        assert first.difference(arff.read(src)) is None and first.sha256 == arff.read(src).sha256
        src.write_text(src.read_text().replace("hello", "bye"))  # other bytes: another entry
        assert load_dataset(src).string_value(0, 0.0) == "bye"
        assert len(list(folder.rglob("*.zip"))) == 2
        for entry in folder.rglob("*.zip"):  # damaged entries are ignored, not trusted
            entry.write_bytes(b"PK\x03\x04garbage")
        assert load_dataset(src).string_value(0, 0.0) == "bye"
    finally:
        cache.set_cache_dir(None)


def test_save_dataset_goes_through_the_hook_for_every_format(tmp_path):
    """ARFF, CSV and LIBSVM writers are plugins (the save_dataset hook): the core names no format plugin."""
    import toolkit as tk
    from toolkit.errors import DatasetError
    from toolkit.loading import load_dataset, save_dataset

    iris = tk.load_arff("iris")
    for name in ("i.arff", "i.arff.gz", "i.csv", "i.csv.gz", "i.libsvm", "i.svm.gz"):
        save_dataset(iris, tmp_path / name)
        back = load_dataset(tmp_path / name)
        assert back.n_instances == 150 and back.X.shape[1] == 4, name
    with pytest.raises(DatasetError, match="no writer for this file name"):
        save_dataset(iris, tmp_path / "i.xlsx")
    with pytest.raises(DatasetError, match="does not exist"):
        save_dataset(iris, tmp_path / "missing" / "i.csv")


def test_a_string_class_is_refused_by_name_as_by_position(tmp_path):
    path = tmp_path / "s.arff"
    path.write_text("@relation r\n@attribute s string\n@attribute c {x,y}\n@data\nhello,x\nbye,y\n")
    for choice in ("s", "1"):
        result = runner.invoke(app, ["info", str(path), "--class", choice])
        assert result.exit_code == 2 and "attribute 's' is string and cannot be the class" in result.stderr


def test_a_negative_seed_is_a_clear_error():
    for command in (["evaluate", "iris", "-c", "nb-weka", "--seed", "-1"],
                    ["vocab-curve", "iris", "--seed", "-1"]):
        result = runner.invoke(app, command)
        assert result.exit_code == 2 and "seed must be a whole number >= 0" in result.stderr, result.output


def test_writing_what_a_format_cannot_hold_warns(tmp_path):
    """CSV and LIBSVM have no instance weights; LIBSVM labels '1' and '1.0' would merge into one class."""
    src = tmp_path / "w.arff"
    src.write_text("@relation w\n@attribute a numeric\n@attribute c {1,1.0,2}\n@data\n1,1,{2}\n2,1.0\n3,2\n")
    ds = arff.read(src)
    for name in ("w.csv", "w.libsvm"):
        with pytest.warns(Warning, match="no instance weights; the weights of 1 instance"):
            toolkit_save(ds, tmp_path / name)
    back = load_dataset(tmp_path / "w.libsvm")
    assert len(back.classes) == 3 and back.y.tolist() == [0, 1, 2]


def toolkit_save(ds, path):
    from toolkit.loading import save_dataset

    save_dataset(ds, path)


def test_convert_refuses_csv_options_for_other_inputs(tmp_path):
    result = runner.invoke(app, ["convert", "iris", str(tmp_path / "o.csv"), "--nominal", "zzz"])
    assert result.exit_code == 2 and "--nominal: CSV input only" in result.stderr
    assert not (tmp_path / "o.csv").exists()


def test_libsvm_reads_in_chunks_of_lines_with_the_file_line_numbers(tmp_path, monkeypatch):
    """The reader parses a chunk of lines at a time (Python objects for those only): the dataset is the
    same whatever the chunk size, and an error in a later chunk names its own line of the file."""
    from toolkit.plugins.libsvm import svmlight

    rng = np.random.default_rng(5)
    lines = ["# comment"] + [f"{int(rng.integers(0, 3))} " + " ".join(
        f"{j + 1}:{rng.random():.3f}" for j in np.sort(rng.choice(40, 5, replace=False))) for _ in range(97)]
    lines.insert(50, "")
    path = tmp_path / "c.libsvm"
    path.write_text("\n".join(lines) + "\n")
    whole = svmlight.read_libsvm(path)
    monkeypatch.setattr(svmlight, "_BLOCK_CHARS", 7)
    chunked = svmlight.read_libsvm(path)
    assert whole.X.shape == chunked.X.shape == (97, 40)
    assert (whole.X != chunked.X).nnz == 0 and whole.y.tolist() == chunked.y.tolist()
    lines[80] = lines[80].replace(":", ":x", 1)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match=r"c\.libsvm:81: value 'x"):
        svmlight.read_libsvm(path)


@pytest.mark.parametrize("declared, value, why", [
    ("{' lead',ok}", "' lead'", "its surrounding spaces are dropped"),
    ("{'?',ok}", "'?'", "it reads back as a missing value"),
    ("{'',ok}", "''", "it reads back as a missing value"),
    ("string", "'?'", "it reads back as a missing value"),
])
def test_csv_refuses_a_value_it_would_read_back_as_another(declared, value, why, tmp_path):
    """CSV (like WEKA's CSVLoader) reads '?' and an empty cell as missing, quoted or not, and strips a nominal
    value's spaces: ARFF -> CSV -> ARFF turned such values into missing ones or other values without a word.
    The writer refuses them, naming the attribute and the value, and writes nothing."""
    src = tmp_path / "v.arff"
    src.write_text(f"@relation v\n@attribute a {declared}\n@attribute class {{yes,no}}\n@data\n{value},yes\nok,no\n",
                   encoding="utf-8")
    out = tmp_path / "v.csv"
    result = CliRunner().invoke(app, ["convert", str(src), str(out)])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.stderr
    assert f"attribute 'a' has the value {value.strip(chr(39))!r}" in lines[0] and why in lines[0]
    assert not out.exists()
    # a string's inner and surrounding spaces are kept (read back with --string), so they are written
    src.write_text("@relation v\n@attribute a string\n@attribute class {yes,no}\n@data\n' pad ',yes\nok,no\n",
                   encoding="utf-8")
    assert CliRunner().invoke(app, ["convert", str(src), str(out)]).exit_code == 0
    back = tmp_path / "back.arff"
    assert CliRunner().invoke(app, ["convert", str(out), str(back), "--string", "a"]).exit_code == 0
    ds = arff.read(back)
    assert [ds.string_value(0, c) for c in ds.X[:, 0]] == [" pad ", "ok"]


def test_written_files_get_the_mode_of_any_new_file(tmp_path):
    """ARFF and model files are written to a temporary file and renamed; mkstemp made them 0600 whatever the
    umask (CSV, LIBSVM and results files were 0644): now the mode any new file gets, or the replaced file's."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        for args in (["convert", "iris", str(tmp_path / "i.arff")], ["convert", "iris", str(tmp_path / "i.arff.gz")],
                     ["train", "iris", "-c", "nb-weka", "-o", str(tmp_path / "m.tkm"), "-q"]):
            assert CliRunner().invoke(app, args).exit_code == 0
        for name in ("i.arff", "i.arff.gz", "m.tkm"):
            assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o644, name
        os.chmod(tmp_path / "i.arff", 0o640)
        assert CliRunner().invoke(app, ["convert", "vote", str(tmp_path / "i.arff")]).exit_code == 0
        assert stat.S_IMODE(os.stat(tmp_path / "i.arff").st_mode) == 0o640
    finally:
        os.umask(old)


def test_a_wide_libsvm_file_loads_with_its_declared_width(tmp_path):
    path = tmp_path / "w.libsvm"
    path.write_text("1 1:1 2000000:2\n-1 5:1\n")
    out = tmp_path / "w.csv"
    refused = runner.invoke(app, ["convert", str(path), str(out)])
    assert refused.exit_code == 2 and "--n-features N" in refused.stderr and not out.exists()
    done = runner.invoke(app, ["convert", str(path), str(tmp_path / "w.libsvm.gz"), "--n-features", "2000000"])
    assert done.exit_code == 0, done.stderr
    other = runner.invoke(app, ["convert", "iris", str(out), "--n-features", "5"])
    assert other.exit_code == 2 and "--n-features: LIBSVM input only" in other.stderr


def test_messages_for_a_csv_label_column_and_for_numbers_written_oddly(tmp_path):
    path = tmp_path / "lab.csv"
    path.write_text("a,b,label\n1,2,0\n3,4,1\n5,6,0\n4,2,1\n")
    result = runner.invoke(app, ["evaluate", str(path), "-c", "nb-weka"])
    assert result.exit_code == 2 and "toolkit convert lab.csv OUT.arff --nominal 'label'" in result.stderr
    whole = runner.invoke(app, ["evaluate", "iris", "-c", "cmls:max_iter=1e12", "-p", "Iris-setosa"])
    assert whole.exit_code == 2 and "max_iter must be a whole number written without a decimal point" in whole.stderr
    huge = runner.invoke(app, ["evaluate", "iris", "-c", "liblinear-lr:C=1e400"])
    assert huge.exit_code == 2 and "'1e400' is too large for a number" in huge.stderr


def test_csv_is_read_a_chunk_of_rows_at_a_time(tmp_path):
    """Reading held every row as Python strings, 12.5 times the file's size (229 MB for this 18 MB file, 1.3 GB
    for 109 MB); two passes over chunks of rows keep it near the arrays' own size. Peak growth measured in a
    process of its own, after a first small load (imports and plugins)."""
    import subprocess
    import sys

    rng = np.random.default_rng(0)
    path = tmp_path / "m.csv"
    with open(path, "w") as fh:
        fh.write(",".join(f"a{j}" for j in range(10)) + ",c\n")
        for block in range(20):
            values = rng.random((10_000, 10))
            fh.write("".join(",".join(f"{v:.6f}" for v in row) + ("y\n" if (i % 2) else ",n\n").replace("y", ",y")
                             for i, row in enumerate(values)))
    small = tmp_path / "small.csv"
    small.write_text("a,c\n1,y\n2,n\n")
    code = ("import sys\nfrom toolkit.loading import load_dataset\n" + PEAK_KB + "load_dataset(sys.argv[2])\n"
            "before = peak()\nds = load_dataset(sys.argv[1])\n"
            "print(peak() - before, ds.n_instances, ds.n_features)")
    done = subprocess.run([sys.executable, "-c", code, str(path), str(small)], capture_output=True, text=True,
                          timeout=300)
    grown_kb, n, features = done.stdout.split()
    assert (int(n), int(features)) == (200_000, 10), done.stdout
    assert int(grown_kb) * 1024 < 6 * path.stat().st_size, (grown_kb, path.stat().st_size)


def test_info_lists_at_most_sixty_classes(tmp_path):
    """A declared class list of thousands of values printed a line per value (2,000,000 lines took seconds);
    the plain output lists 60 and says how many more there are, --json all of them."""
    labels = [f"c{i}" for i in range(500)]
    path = tmp_path / "many.arff"
    path.write_text("@relation many\n@attribute x numeric\n@attribute class {" + ",".join(labels) + "}\n@data\n"
                    + "".join(f"{i},c{i % 7}\n" for i in range(30)))
    result = runner.invoke(app, ["info", str(path)])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert sum(1 for line in lines if line.startswith("  c")) == 60
    assert "  (440 more classes; --json lists them)" in lines
    assert "  c59 " in result.stdout and "  c60 " not in result.stdout
    import json

    listed = json.loads(runner.invoke(app, ["info", str(path), "--json"]).stdout)
    assert len(listed["class"]["distribution"]) == 500


def test_info_mean_of_a_numeric_class_near_the_largest_float(tmp_path):
    """Two class values of 1.7e308 summed past the largest float: a RuntimeWarning line, and a mean of inf
    written as null in --json."""
    import json
    import warnings

    path = tmp_path / "huge.arff"
    path.write_text("@relation r\n@attribute x numeric\n@attribute c numeric\n@data\n1,1.7e308\n2,1.7e308\n3,1\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = runner.invoke(app, ["info", str(path), "--json"])
    assert result.exit_code == 0 and "Warning" not in result.stderr, result.output
    entry = json.loads(result.stdout)["class"]
    assert entry["mean"] == pytest.approx(1.7e308 / 3 * 2, rel=1e-12)   # (2 x 1.7e308 + 1) / 3


def test_info_keeps_odd_names_in_their_rows_and_columns(tmp_path):
    """An attribute or class name with a line break split its row, a tab or a wide (CJK) character
    misaligned the columns: names are shown escaped and padded by terminal columns."""
    path = tmp_path / "odd.arff"
    path.write_text("@relation 'two\\nlines'\n@attribute 'line\\nbreak' {x,y}\n@attribute '\u6f22\u5b57' {u,v}\n"
                    "@attribute class {'p\\tq','\u6f22'}\n@data\nx,u,'p\\tq'\ny,v,'\u6f22'\n", encoding="utf-8")
    result = runner.invoke(app, ["info", str(path)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "relation    two\\nlines" in lines
    assert "  p\\tq        1   50.0%" in lines and "  \u6f22          1   50.0%" in lines
    assert "  line\\nbreak  nominal(2)      0.00%" in lines
    assert "  \u6f22\u5b57         nominal(2)      0.00%" in lines   # two columns per character


def test_describe_takes_a_dataset_a_path_or_a_bundled_name(tmp_path):
    """docs/api.md: toolkit.describe(dataset) is what `toolkit info` prints; given a name it raised
    AttributeError ('str' object has no attribute 'attributes')."""
    import toolkit
    from conftest import ROOT

    by_name = toolkit.describe("vote")
    assert by_name["relation"] == "vote" and by_name["instances"] == 435 and by_name["class"]["classes"] == 2
    assert toolkit.describe(toolkit.load_arff(ROOT / "datasets" / "vote.arff")) == by_name
    assert toolkit.describe("vote", class_attribute="handicapped-infants")["class"]["name"] == "handicapped-infants"
    with pytest.raises(toolkit.ToolkitError, match="absent.arff: no such file"):
        toolkit.describe(str(tmp_path / "absent.arff"))


def test_describe_lists_the_first_limit_attributes_or_all():
    import toolkit

    assert len(toolkit.describe("vote", limit=3)["feature_attributes"]) == 3
    assert len(toolkit.describe("vote", limit=None)["feature_attributes"]) == 16


def test_cache_option_holds_for_its_invocation_only(tmp_path, monkeypatch):
    """--cache set the process's cache for good: a later invocation in the same process (an embedding
    program, a test run) without --cache still read and wrote that folder."""
    from toolkit.data import cache

    monkeypatch.delenv("TOOLKIT_CACHE", raising=False)
    folder = tmp_path / "cache"
    src = tmp_path / "d.arff"
    src.write_text("@relation r\n@attribute x numeric\n@attribute c {a,b}\n@data\n1,a\n2,b\n")
    assert runner.invoke(app, ["--cache", str(folder), "info", str(src)]).exit_code == 0
    assert len(list(folder.rglob("*.zip"))) == 1
    assert runner.invoke(app, ["info", str(src)]).exit_code == 0
    assert cache.cache_dir() is None
    other = tmp_path / "e.arff"
    other.write_text(src.read_text().replace("1,a", "3,a"))
    assert runner.invoke(app, ["info", str(other)]).exit_code == 0
    assert len(list(folder.rglob("*.zip"))) == 1   # nothing written for the second file
