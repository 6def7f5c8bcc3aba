"""Faults the review of the CSV and LIBSVM readers found.

Expected values come from independent readers (scikit-learn's ``load_svmlight_file``, Python's ``csv``
module), from the byte layout of the hostile files built here, or from hand-written loops in the tests."""

from __future__ import annotations

import io
import subprocess
import sys

import numpy as np
import pytest

from toolkit.errors import DatasetError
from toolkit.plugins.libsvm import svmlight
from toolkit.plugins.libsvm.svmlight import read_libsvm

#: the peak memory a load adds in a process of its own, after a first small load (imports, plugins)
_PEAK = ("import resource, sys\nfrom toolkit.loading import load_dataset\nload_dataset(sys.argv[2])\n"
         "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\ntry:\n    ds = load_dataset(sys.argv[1])\n"
         "    print(ds.X.nnz)\nexcept Exception as e:\n    print(type(e).__name__)\n"
         "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)")


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
    # the arrays: 24 bytes an entry while read, the matrix's 12 and its building's: ~100 MB
    assert grown < 150_000, grown
    long = tmp_path / "long.libsvm"
    long.write_text("1 " + " ".join(f"{j}:1" for j in range(1, 1_200_001)) + "\n0 1:2\n")   # one 11 MB line
    result, grown = _grown_kb(long, warm)
    assert result == "1200001"
    assert grown < 150_000, grown


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
