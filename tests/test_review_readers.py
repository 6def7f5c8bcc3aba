"""Faults the review of the CSV and LIBSVM readers found.

Expected values come from independent readers (scikit-learn's ``load_svmlight_file``, Python's ``csv``
module), from the byte layout of the hostile files built here, or from hand-written loops in the tests."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest

from conftest import PEAK_KB
from toolkit.errors import DatasetError
from toolkit.plugins.libsvm import svmlight
from toolkit.plugins.libsvm.svmlight import read_libsvm

#: the peak memory a load adds in a process of its own, after a first small load (imports, plugins)
_PEAK = ("import sys\nfrom toolkit.loading import load_dataset\n" + PEAK_KB +
         "load_dataset(sys.argv[2])\nbefore = peak()\ntry:\n    ds = load_dataset(sys.argv[1])\n"
         "    print(getattr(ds.X, 'nnz', ds.X.size))\nexcept Exception as e:\n    print(type(e).__name__)\n"
         "print(peak() - before)")


def _grown_kb(path, warm):
    done = subprocess.run([sys.executable, "-c", _PEAK, str(path), str(warm)], capture_output=True, text=True,
                          timeout=300)
    result, grown = done.stdout.split()
    return result, int(grown)


# ---------------------------------------------------------------------------- LIBSVM

def _libsvm_text(rng, rows, per_row, width):
    lines = []
    for r in range(rows):
        idx = np.sort(rng.choice(width, per_row, replace=False)) + 1
        lines.append(f"{r % 3} " + " ".join(f"{i}:{v + 0.5:.4f}" for i, v in zip(idx, rng.random(per_row))))
    return "\n".join(lines) + "\n"


def test_libsvm_memory_is_bounded_by_a_block_not_a_chunk_of_lines(tmp_path):
    """Parsed 65,536 lines at a time, a file of 80 entries a line held about 270 bytes of Python objects
    per entry (1.8 GB for an 83 MB file), and one long line all of them (a MemoryError for a big one)."""
    rng = np.random.default_rng(3)
    warm = tmp_path / "warm.libsvm"
    warm.write_text("1 1:1\n0 2:1\n")
    many = tmp_path / "many.libsvm"
    many.write_text(_libsvm_text(rng, 12_000, 100, 20_000))            # 1.2 million entries, 13 MB
    result, grown = _grown_kb(many, warm)
    assert result == "1200000"
    # the arrays: 24 bytes an entry while read, the matrix's 12 and its building's: ~90 MB (it was 390 MB)
    assert grown < 200_000, grown
    long = tmp_path / "long.libsvm"
    long.write_text("1 " + " ".join(f"{j}:0.{j:012d}" for j in range(1, 1_200_001)) + "\n0 1:2\n")  # one 26 MB line
    result, grown = _grown_kb(long, warm)
    assert result == "1200001"
    # the same arrays and 1.2 million attributes: ~170 MB (it was 420 MB)
    assert grown < 260_000, grown


@pytest.mark.parametrize("block", [5, 7, 64, 1000, 1 << 20])
def test_libsvm_equals_sklearn_whatever_the_block_size(tmp_path, monkeypatch, block):
    """Cut at every place (inside a line, after a label, inside a comment), the data is scikit-learn's."""
    from sklearn.datasets import load_svmlight_file

    rng = np.random.default_rng(11)
    text = _libsvm_text(rng, 60, 6, 30).splitlines()
    text[3] = "# a comment line with 1:2 in it"
    text[10] += "   # a tail comment 5:5 " + "#" * 50
    text[20] = text[20].replace(" ", " qid:7 ", 1)
    text[30] = ""
    text[40] = text[40].replace(" ", "\t")
    data = ("\r\n".join(text[:35]) + "\r\n" + "\n".join(text[35:]) + "\n").encode()
    path = tmp_path / "d.libsvm"
    path.write_bytes(data)
    X_ref, y_ref = load_svmlight_file(io.BytesIO(data), zero_based=False)
    monkeypatch.setattr(svmlight, "_BLOCK_CHARS", block)
    ds = read_libsvm(path)
    np.testing.assert_array_equal(ds.X.toarray(), X_ref.toarray()[:, : ds.X.shape[1]])
    assert not X_ref.toarray()[:, ds.X.shape[1]:].any()
    labels = np.array([float(v) for v in ds.class_attribute.values])
    np.testing.assert_array_equal(labels[ds.y], y_ref)
    # an error on a later line names that line of the file, whatever the block size
    bad = text.copy()
    bad[50] = bad[50].replace(":", ":x", 1)
    path.write_text("\n".join(bad) + "\n")
    with pytest.raises(DatasetError, match=r"d\.libsvm:51: value 'x"):
        read_libsvm(path)


def test_libsvm_hostile_long_tokens_and_comments(tmp_path, monkeypatch):
    """A run of characters with no space is refused once longer than any token can be (its line named);
    a long comment is skipped, however long, a block at a time."""
    monkeypatch.setattr(svmlight, "_BLOCK_CHARS", 1000)
    path = tmp_path / "d.libsvm"
    path.write_text("1 1:1\n2 2:" + "1" * 20_000 + "\n")
    with pytest.raises(DatasetError, match=r"d\.libsvm:2: a token of more than"):
        read_libsvm(path)
    path.write_text("1 1:1 #" + "x" * 20_000 + "\n# " + "y" * 20_000 + "\n2 2:3#" + "z" * 5_000 + "\n")
    ds = read_libsvm(path)
    assert ds.X.toarray().tolist() == [[1, 0], [0, 3]] and ds.class_attribute.values == ("1", "2")


def test_libsvm_refuses_nul_bytes_naming_the_line(tmp_path):
    """A NUL byte (binary data, UTF-16) was taken for whitespace in a value ('1:1\\0' read as 1), as the
    ARFF reader refuses it; an error on an earlier line is reported first."""
    path = tmp_path / "d.libsvm"
    path.write_bytes(b"1 1:1\n2 2:1\x00\n")
    with pytest.raises(DatasetError, match=r"d\.libsvm:2: binary data \(a NUL byte\)"):
        read_libsvm(path)
    path.write_bytes("1 1:1\n0 2:1\n".encode("utf-16-le"))
    with pytest.raises(DatasetError, match=r"d\.libsvm:1: binary data"):
        read_libsvm(path)
    path.write_bytes(b"1 1:x\n2 2:1\x00\n")
    with pytest.raises(DatasetError, match=r"d\.libsvm:1: value 'x'"):
        read_libsvm(path)


def test_libsvm_n_features_error_names_the_line(tmp_path):
    path = tmp_path / "d.libsvm"
    path.write_text("1 1:1\n2 2:1\n1 7:1 2:2\n")
    with pytest.raises(DatasetError, match=r"d\.libsvm:3: index 7 is beyond n_features=3"):
        read_libsvm(path, n_features=3)


# ---------------------------------------------------------------------------- CSV

def test_csv_memory_is_bounded_by_cells_not_rows(tmp_path):
    """32,768 rows were held as Python strings however wide: 10,000 rows of 400 cells took 370 MB for a 16 MB
    file (arrays: 3 x 32 MB); a chunk now holds at most about a million cells."""
    rng = np.random.default_rng(1)
    cols = 400
    values = rng.integers(100, 999, size=(10_000, cols))
    path = tmp_path / "wide.csv"
    path.write_text("\n".join([",".join(f"c{j}" for j in range(cols))]
                              + [",".join(map(str, r)) for r in values.tolist()]) + "\n")
    warm = tmp_path / "warm.csv"
    warm.write_text("a,b\n1,x\n")
    result, grown = _grown_kb(path, warm)
    assert result == str(10_000 * (cols - 1))
    assert grown < 240_000, grown


def test_csv_chunks_by_cells_give_what_the_csv_module_reads(tmp_path, monkeypatch):
    """Whatever the chunk size, values, missing cells and line numbers are those of Python's csv module."""
    import csv

    from toolkit.plugins.csv import reader

    text = ('a,b,c\r\n1,"x, y",p\r\n2,"two\nlines",q\n\n?,"say ""hi""",\n' + "".join(
        f"{k},v{k % 4},w\n" for k in range(40)))
    path = tmp_path / "d.csv"
    path.write_text(text, newline="")
    rows = [r for r in csv.reader(io.StringIO(text, newline="")) if r][1:]
    for cells in (1, 5, 7, 1 << 20):
        monkeypatch.setattr(reader, "_CELLS_PER_CHUNK", cells)
        ds = reader.read_csv(path)
        first = {}
        for r in rows:
            first.setdefault(r[1], len(first))
        assert ds.attributes[1].values == tuple(first)
        want_a = [np.nan if r[0] in ("?", "") else float(r[0]) for r in rows]
        np.testing.assert_array_equal(ds.X[:, 0], want_a)
        np.testing.assert_array_equal(ds.X[:, 1], [first[r[1]] for r in rows])
        assert [ds.attributes[2].values[k] if k >= 0 else None for k in ds.y] == [r[2] or None for r in rows]
    bad = text + "3,x\n"
    path.write_text(bad, newline="")
    monkeypatch.setattr(reader, "_CELLS_PER_CHUNK", 7)
    with pytest.raises(DatasetError, match=rf"d\.csv:{bad.count(chr(10)) + 0}: the row has 2 cells, the header 3"):
        reader.read_csv(path)


def test_csv_refuses_nul_bytes_naming_the_line(tmp_path):
    """A NUL byte was taken for whitespace (stripped around a value) or kept inside a nominal value, so a
    UTF-16 file without a BOM read as data; the ARFF reader refuses it. An earlier error is reported first."""
    from toolkit.plugins.csv.reader import read_csv

    path = tmp_path / "d.csv"
    path.write_bytes(b"a,b\n1,x\n2,y\x00z\n")
    with pytest.raises(DatasetError, match=r"d\.csv:3: binary data \(a NUL byte\)"):
        read_csv(path)
    path.write_bytes("a,b\n1,x\n".encode("utf-16-le"))
    with pytest.raises(DatasetError, match=r"d\.csv:1: binary data"):
        read_csv(path)
    path.write_bytes(b'a,b\n1,x,9\n2,"y\x00\n')
    with pytest.raises(DatasetError, match=r"d\.csv:2: the row has 3 cells"):
        read_csv(path)
    path.write_bytes(b'a,b\n1,"y\n\x00"\n')      # inside a quoted cell: the NUL byte's line, not the cell's
    with pytest.raises(DatasetError, match=r"d\.csv:3: binary data"):
        read_csv(path)


def test_csv_long_lines_are_refused_before_they_are_split(tmp_path, monkeypatch):
    """A file that lost its line ends (one line of millions of cells) was split into one Python string per
    cell before the row's width was checked (4 GB for a 200 MB line); a line beyond the line limit is refused
    unsplit, as in ARFF."""
    from toolkit.plugins.csv import reader

    path = tmp_path / "d.csv"
    path.write_text("a,b\n1,x\n2," + "ab," * 3_000_000 + "\n")       # one 9 MB line of 3 million cells
    warm = tmp_path / "warm.csv"
    warm.write_text("a,b\n1,x\n")
    result, grown = _grown_kb(path, warm)
    assert result == "DatasetError"
    assert grown < 60_000, grown
    with pytest.raises(DatasetError, match=r"d\.csv:3: the row has 3000002 cells, the header 2"):
        reader.read_csv(path)
    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 1000)
    path.write_text('a,b\n1,x\n2,"' + "y" * 2000 + '"\n')
    with pytest.raises(DatasetError, match=r"d\.csv:3: the line is longer than"):
        reader.read_csv(path)


def test_csv_of_one_column_reads_a_quoted_empty_cell_as_a_missing_value(tmp_path):
    """With one column a row '""' came out of the csv module as one empty cell, like a line of blanks, and was
    skipped; with two columns '"",b' is a missing value. Now it is a row (missing) there too, and a line of
    blanks is still skipped."""
    from toolkit.plugins.csv.reader import read_csv

    path = tmp_path / "one.csv"
    path.write_text('x\n1\n""\n   \n\n3\n', encoding="utf-8")
    ds = read_csv(path, class_attribute=None)
    assert ds.n_instances == 3
    values = np.asarray(ds.X, dtype=float)[:, 0]
    assert values[0] == 1 and np.isnan(values[1]) and values[2] == 3
    two = tmp_path / "two.csv"
    two.write_text('x,y\n1,a\n"",b\n3,a\n', encoding="utf-8")
    assert np.isnan(np.asarray(read_csv(two).X, dtype=float)[1, 0])
    # a line '""' in a file of several columns is still skipped as blank (as before), not a short row
    blank = tmp_path / "blank.csv"
    blank.write_text('x,y\n1,a\n""\n3,b\n', encoding="utf-8")
    assert read_csv(blank).n_instances == 2
