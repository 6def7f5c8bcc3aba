"""Damaged input on every reader: truncated or corrupt gzip streams (ARFF, CSV, LIBSVM), NUL bytes
anywhere in an ARFF text, undecodable bytes in CSV and LIBSVM, the liac-arff engine's numbers and
dates, and the small I/O rules (long CSV cells, writers' .GZ suffix, `info`'s non-zero share).

Every expected line number is computed here from how the test built the file (or by zlib from the
bytes the file holds), never by the reader under test."""

from __future__ import annotations

import gzip
import os
import random
import subprocess
import sys
import threading
import zlib

import numpy as np
import pytest
from typer.testing import CliRunner

from toolkit.cli import app
from toolkit.data import arff
from toolkit.errors import ArffFormatError, DatasetError
from toolkit.loading import load_dataset

runner = CliRunner()

HEADER = "@relation r\n@attribute a numeric\n@attribute b {x,y}\n@data\n"


def _intact_prefix(compressed: bytes) -> bytes:
    """The text a truncated gzip stream holds: what zlib decompresses before the stream breaks off."""
    d = zlib.decompressobj(31)
    return d.decompress(compressed)


def _truncated(tmp_path, name: str, text: str) -> tuple[str, int]:
    """Write ``text`` gzip-compressed and cut in half; the path and the line the stream breaks off in
    (the line after the last complete one)."""
    data = gzip.compress(text.encode())
    cut = data[: len(data) // 2]
    path = tmp_path / name
    path.write_bytes(cut)
    held = _intact_prefix(cut)
    assert 0 < len(held) < len(text)
    return str(path), held.count(b"\n") + 1


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], capture_output=True, text=True, timeout=300)


def _one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


# ---------------------------------------------------------------------------- truncated .arff.gz

@pytest.fixture(scope="module")
def truncated_arff(tmp_path_factory):
    rng = random.Random(1)
    # about 2 MB of text: the cut falls after the first 1 MiB block, in the data section
    text = HEADER + "".join(f"{rng.random():f},{'xy'[i % 2]}\n" for i in range(200_000))
    return _truncated(tmp_path_factory.mktemp("gz"), "trunc.arff.gz", text)


@pytest.mark.parametrize("how", ["fast", "strict", "iter_chunks", "read_range", "split_ranges"])
def test_truncated_arff_gz_names_the_line_after_the_last_complete_one(truncated_arff, how):
    path, line = truncated_arff
    assert line > 50_000  # far beyond the header (the fast engine said line 5, the strict one 190,647)
    with pytest.raises(ArffFormatError) as info:
        if how in ("fast", "strict"):
            arff.read(path, engine=how)
        elif how == "iter_chunks":
            for _ in arff.iter_chunks(path, rows=10_000):
                pass
        elif how == "read_range":
            arff.read_range(path, 0, 10**9)
        else:
            arff.split_ranges(path, 2)  # raised a raw EOFError
    assert info.value.line == line
    assert "gzip stream ends early" in str(info.value) and path in str(info.value)


def test_lines_before_the_truncation_are_read_first(tmp_path):
    # the stream holds less than one block (1 MiB) of text: its lines, with an error at line 105, come
    # before the truncation (which was reported at line 5, the whole block being dropped)
    rng = random.Random(3)
    rows = [f"{rng.random():f},{'xy'[i % 2]}\n" for i in range(100_000)]
    rows[100] = "oops,x\n"
    path, line = _truncated(tmp_path, "early.arff.gz", HEADER + "".join(rows))
    assert line > 105
    for engine in ("fast", "strict"):
        with pytest.raises(ArffFormatError, match="oops") as info:
            arff.read(path, engine=engine)
        assert info.value.line == 4 + 101, engine


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_pipe_names_the_lines_too(tmp_path, truncated_arff):
    """A pipe cannot be read again to count lines: its blocks are counted as read."""
    fifo = tmp_path / "pipe.arff"
    nul_path, nul_line = _nul_file(tmp_path, 3 << 20)
    gz_path, gz_line = truncated_arff
    for source, line, what in ((nul_path, nul_line, "NUL byte"), (gz_path, gz_line, "ends early")):
        os.mkfifo(fifo)
        data = open(source, "rb").read()

        def feed() -> None:
            with open(fifo, "wb") as out:
                try:
                    out.write(data)
                except BrokenPipeError:
                    pass

        writer = threading.Thread(target=feed)
        writer.start()
        try:
            with pytest.raises(ArffFormatError, match=what) as info:
                arff.read(fifo)
        finally:
            writer.join(timeout=60)
            os.unlink(fifo)
        assert info.value.line == line


def test_truncated_arff_gz_on_the_command_line(truncated_arff):
    path, line = truncated_arff
    _one_line_error(_cli("info", path), f"{path}:{line}:", "ends early")


# ---------------------------------------------------------------------------- CSV and LIBSVM .gz

def test_truncated_csv_gz_is_one_error_line_not_aborted(tmp_path):
    rng = random.Random(2)
    text = "a,b\n" + "".join(f"{rng.random():f},x{rng.randint(0, 5)}\n" for _ in range(100_000))
    path, line = _truncated(tmp_path, "trunc.csv.gz", text)
    with pytest.raises(DatasetError, match="ends early") as info:
        load_dataset(path)
    assert f"{path}:{line}:" in str(info.value)
    _one_line_error(_cli("info", path), f"{path}:{line}:", "ends early")  # was "Error: aborted", rc 1


def test_truncated_libsvm_gz(tmp_path):
    text = "".join(f"{i % 2} 1:{i} 2:{i * 7 % 13}\n" for i in range(100_000))
    path, line = _truncated(tmp_path, "trunc.libsvm.gz", text)
    with pytest.raises(DatasetError, match="ends early") as info:
        load_dataset(path)
    assert f"{path}:{line}:" in str(info.value)


def test_bad_crc_libsvm_gz_and_garbage_csv_gz(tmp_path):
    text = b"".join(b"%d 1:%d\n" % (i % 2, i) for i in range(1000))
    data = bytearray(gzip.compress(text))
    data[-8] ^= 0xFF  # the CRC-32 in the trailer
    crc = tmp_path / "badcrc.libsvm.gz"
    crc.write_bytes(bytes(data))
    _one_line_error(_cli("info", str(crc)), str(crc), "damaged gzip data", "CRC")  # was a 163-line traceback
    garbage = tmp_path / "garbage.csv.gz"
    garbage.write_bytes(b"\x1f\x8b\x09" + b"\x00" * 100)  # the gzip magic, then an unknown method
    _one_line_error(_cli("info", str(garbage)), f"{garbage}:1:", "damaged gzip data")
    for path in (crc, garbage):
        with pytest.raises(DatasetError):
            load_dataset(path)


# ---------------------------------------------------------------------------- NUL bytes in ARFF

def _nul_file(tmp_path, comment_bytes: int, name: str = "nul.arff", gz: bool = False) -> tuple[str, int]:
    """A file whose data line ``1,<NUL>x`` comes after a comment of ``comment_bytes``; its line number."""
    text = HEADER + "%" + "c" * comment_bytes + "\n" + "1,x\n" * 3 + "1,\0x\n" + "2,y\n"
    path = tmp_path / (name + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return str(path), 4 + 1 + 3 + 1


@pytest.mark.parametrize("comment", [9_000, 3 << 20], ids=["after-8k", "after-1MiB"])  # the first 8 KiB were checked
@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_a_nul_byte_is_refused_anywhere_with_its_line(tmp_path, comment, gz):
    path, line = _nul_file(tmp_path, comment, gz=gz)
    readers = {"fast": lambda: arff.read(path), "strict": lambda: arff.read(path, engine="strict"),
               "iter_chunks": lambda: list(arff.iter_chunks(path, rows=2)),
               "read_range": lambda: arff.read_range(path, 0, 10**9)}
    for how, read in readers.items():
        with pytest.raises(ArffFormatError, match="NUL byte") as info:
            read()
        assert info.value.line == line, how


def test_a_nul_byte_in_a_later_range_and_in_text(tmp_path):
    path, line = _nul_file(tmp_path, 9_000)
    size = len(open(path, "rb").read())
    with pytest.raises(ArffFormatError, match="NUL byte") as info:
        arff.read_range(path, size - 10, size)  # the range holding the NUL's line
    assert info.value.line == line
    with pytest.raises(ArffFormatError, match="NUL byte") as info:
        arff.read_text(open(path).read())
    assert info.value.line == line


def test_an_error_before_the_nul_byte_is_reported_first(tmp_path):
    # line 5 is wrong (no number); line 6 holds a NUL: the lines are read in order, on every engine
    path = tmp_path / "two.arff"
    path.write_bytes((HEADER + "zz,x\n1,\0x\n").encode())
    for engine in ("fast", "strict"):
        with pytest.raises(ArffFormatError) as info:
            arff.read(path, engine=engine)
        assert info.value.line == 5 and "NUL" not in str(info.value), engine


def test_a_utf16_file_is_named_as_such(tmp_path):
    path = tmp_path / "u16.arff"
    path.write_bytes((HEADER + "1,x\n").encode("utf-16"))
    with pytest.raises(ArffFormatError, match="UTF-16") as info:
        arff.read(path)
    assert info.value.line == 1


# ---------------------------------------------------------------------------- the liac-arff engine

def test_liac_engine_reads_nan_and_infinity_as_the_default_engine(tmp_path):
    path = tmp_path / "num.arff"
    path.write_text(HEADER + "NaN,x\nInfinity,y\n-Infinity,x\n+Infinity,y\n1.5,x\n")
    got = arff.read(path, engine="liac-arff")  # was an uncaught ValueError
    expected = np.array([[np.nan], [np.inf], [-np.inf], [np.inf], [1.5]])
    np.testing.assert_array_equal(got.X, expected)
    assert got.difference(arff.read(path)) is None


def test_liac_engine_refuses_a_bad_date_naming_the_line(tmp_path):
    path = tmp_path / "date.arff"
    path.write_text("@relation r\n@attribute d date yyyy-MM-dd\n@attribute c {a,b}\n@data\n"
                    "2001-01-01,a\n\n2001-13-45,b\n")
    with pytest.raises(ArffFormatError, match="2001-13-45") as info:
        arff.read(path, engine="liac-arff")
    assert info.value.line == 7


# ---------------------------------------------------------------------------- small rules

def test_a_csv_cell_over_128_kib_is_read(tmp_path):
    path = tmp_path / "bigcell.csv"
    path.write_text("a,b\n" + "x" * 200_000 + ",1\n")
    ds = load_dataset(path, None)
    assert ds.n_instances == 1 and ds.attributes[0].values == ("x" * 200_000,)


def test_csv_and_libsvm_bad_bytes_name_their_line(tmp_path):
    csv_path = tmp_path / "bad.csv"
    csv_path.write_bytes(b"a,b\n1,x\n\xff,y\n")
    with pytest.raises(DatasetError, match="0xff") as info:
        load_dataset(csv_path)
    assert str(info.value).startswith(f"{csv_path}:3:")
    svm = tmp_path / "bad.libsvm"
    svm.write_bytes(b"1 1:1\n\xff 2:1\n")
    with pytest.raises(DatasetError, match="0xff") as info:
        load_dataset(svm)
    assert str(info.value).startswith(f"{svm}:2:")
    # deep in a file of many blocks, after \r\n line ends
    deep = tmp_path / "deep.csv"
    deep.write_bytes(b"a,b\r\n" + b"1,x\r\n" * 300_000 + b"2,\xe9\r\n")
    with pytest.raises(DatasetError, match="0xe9") as info:
        load_dataset(deep)
    assert str(info.value).startswith(f"{deep}:{1 + 300_000 + 1}:")


@pytest.mark.parametrize("suffix", ["ARFF.GZ", "Csv.Gz", "LIBSVM.GZ"])
def test_writers_compress_a_gz_suffix_in_any_case(tmp_path, suffix):
    src = tmp_path / "in.arff"
    src.write_text("@relation r\n@attribute a numeric\n@attribute c {1,2}\n@data\n1,1\n2,2\n")
    out = tmp_path / f"out.{suffix}"
    result = runner.invoke(app, ["convert", str(src), str(out)])
    assert result.exit_code == 0, result.output
    raw = out.read_bytes()
    assert raw[:2] == b"\x1f\x8b"  # gzip, not plain text
    assert b"1" in gzip.decompress(raw)


def test_info_non_zero_share_leaves_missing_values_out(tmp_path):
    from toolkit.data.summary import describe

    # 3 rows x 2 features = 6 values: 0, ?, 3 | ?, 5, 0 -> two are known and not 0
    for sparse in (False, True):
        path = tmp_path / f"m{sparse}.arff"
        rows = ("{1 ?,2 a}\n{0 3,2 b}\n{0 ?,1 5}\n" if sparse else "0,?,a\n3,0,b\n?,5,a\n")
        path.write_text("@relation r\n@attribute p numeric\n@attribute q numeric\n@attribute c {a,b}\n@data\n"
                        + rows)
        ds = arff.read(path)
        assert ds.is_sparse == sparse
        assert describe(ds)["density"] == pytest.approx(2 / 6)
        # one missing value in each feature column (a sparse matrix counted by row before: an IndexError)
        np.testing.assert_allclose(ds.missing_share(), [1 / 3, 1 / 3])
