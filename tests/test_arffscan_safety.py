"""Memory safety, bounded work and agreement with the strict engine of the C scanner
(toolkit/data/_arffscan.c) on hostile input.

These drive the scanner directly (its Parser API) where the reader's own buffers would hide a fault:
the reader hands over bytes and bytearrays, which end in a NUL that an over-read lands on unseen.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from conftest import PEAK_KB
from toolkit.data import _arffscan, arff
from toolkit.errors import ArffFormatError

H_NUM = "@relation r\n" + "".join(f"@attribute a{i} numeric\n" for i in range(4)) + "@data\n"


def _lines() -> list[str]:
    """Data lines for the scanner's every way out of a line: each grammar point, cut after each token."""
    prefixes = ["1", "x", "'a'", "\"a\"", "1 2", "1,2", "?", "{", "{0", "{0 ", "{0 1", "{0 1}", "{0 1} ", "{0 'a'",
                "{1 x,0 1", "1,2,{3}", "{0 1}{2}", "{0 1} {2}", "{}", "{ }", "'a\\'", "'\\", "1e", "-", "+1.5",
                "123456789012345", "1234567890123456", "1,x,s", "1 x s", "{2 s}"]
    suffixes = ["", ",", " ,", ", ", ",,", " ", "\t", "{", "{2", "{2}", "{2},", "}", "},", "'", "\"", "\\", "%",
                ",%", ",{", " {", "\r", ",\r", "\r\n", ",\n"]
    rng = random.Random(20240611)
    alphabet = "{}',\"%?\\ \t\r\n0123456789xys-+.eE"
    randoms = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 16))) for _ in range(3000)]
    return [p + s for p in prefixes for s in suffixes] + randoms


_AT_PAGE_END = textwrap.dedent("""
    import ctypes, json, mmap, sys
    from toolkit.data import _arffscan

    PAGE = mmap.PAGESIZE
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    mm = mmap.mmap(-1, 2 * PAGE)
    anchor = ctypes.c_char.from_buffer(mm)
    assert libc.mprotect(ctypes.addressof(anchor) + PAGE, PAGE, 0) == 0  # PROT_NONE: a read there faults

    def parsers():
        yield _arffscan.Parser(bytes([0, 0]), [None, None], [None, None], [None, None], -1, -1)
        yield _arffscan.Parser(bytes([0, 1, 2]), [None, [b"x", b"a"], None], [None, None, ({}, [])],
                               [None, None, None], 1, -1)

    def run(data, view):
        out = []
        for p in parsers():
            pos, line = 0, 1
            while True:
                status, pos, line, line_end, after = p.feed(view, pos, len(data), line, 0, True)
                out.append((status, pos, line, line_end, after))
                if status != 2:
                    break
                pos = after
            out.append(sorted((k, bytes(memoryview(v)).hex() if not isinstance(v, int) else v)
                              for k, v in p.take().items()))
        return out

    lines = json.loads(sys.stdin.read())
    for text in lines:
        data = text.encode("latin-1")
        mm[PAGE - len(data):PAGE] = data
        with memoryview(mm)[PAGE - len(data):PAGE] as view:  # the line's last byte touches the guard page
            guarded = run(data, view)
        assert guarded == run(data, data), text
    del anchor
    print("ok", len(lines))
""")


@pytest.mark.skipif(sys.platform != "linux", reason="mprotect through ctypes")
def test_the_scanner_reads_nothing_past_the_end_of_its_buffer():
    """Each line is fed ending exactly at an unreadable page: a read one byte past the buffer faults.

    A comma that ends the last line ("1," or "{0 1},", no line end after it) made the scanner look at
    the byte after the buffer before the fix (SIGSEGV here)."""
    lines = _lines()
    done = subprocess.run([sys.executable, "-c", _AT_PAGE_END], input=json.dumps(lines), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.split() == ["ok", str(len(lines))]


def test_trailing_comma_on_an_unterminated_last_line_is_an_error_on_both_engines():
    """The reader's view of the same lines as the guard-page test: the same error whichever engine."""
    for row in ("1,2,3,4,", "{0 1},", "{0 1,", "1,2,3,4 ,"):
        messages = []
        for engine in ("fast", "strict"):
            with pytest.raises(ArffFormatError) as info:
                arff.read_text(H_NUM + row, engine=engine, class_attribute=None)
            messages.append(str(info.value))
        assert messages[0] == messages[1] and ":7:" in messages[0]



# ---------------------------------------------------------------------------- sparse rows out of order

def _expected_rows(rows: list[list[tuple[int, float]]], n: int) -> np.ndarray:
    full = np.zeros((len(rows), n))
    for r, pairs in enumerate(rows):
        for j, v in pairs:
            full[r, j] = v
    return full


@pytest.mark.parametrize("order", ["reversed", "shuffled", "one_out_of_place"])
def test_long_sparse_rows_in_any_order_are_sorted(order):
    """Rows of 1..3000 entries in any order give canonical CSR (sorted, values with their indices)."""
    n = 3000
    header = "@relation r\n" + "".join(f"@attribute a{i} numeric\n" for i in range(n)) + "@data\n"
    rng = random.Random(order)
    rows = []
    for size in (1, 2, 31, 32, 33, 34, 100, 1000, n):
        pairs = [(j, float(j + 1) * (1 if j % 3 else -0.5)) for j in sorted(rng.sample(range(n), size))]
        if order == "reversed":
            pairs.reverse()
        elif order == "shuffled":
            rng.shuffle(pairs)
        else:
            pairs.insert(0, pairs.pop())
        rows.append(pairs)
    text = header + "".join("{" + ",".join(f"{j} {v!r}" for j, v in pairs) + "}\n" for pairs in rows)
    fast = arff.read_text(text, class_attribute=None)
    strict = arff.read_text(text, class_attribute=None, engine="strict")
    for r in range(len(rows)):
        seg = fast.X.indices[fast.X.indptr[r]:fast.X.indptr[r + 1]]
        assert np.all(np.diff(seg) > 0)
    np.testing.assert_array_equal(fast.X.toarray(), _expected_rows(rows, n))
    assert fast.difference(strict) is None


def test_long_unordered_rows_handed_to_the_strict_path_are_sorted():
    """A line the scanner hands over (a relational value) comes back through add_sparse, sorted there."""
    n = 200
    header = ("@relation r\n@attribute bag relational\n@attribute v numeric\n@end bag\n"
              + "".join(f"@attribute a{i} numeric\n" for i in range(n)) + "@data\n")
    pairs = [(j, float(j)) for j in range(n, 0, -1)]
    text = header + "{" + ",".join(f"{j} {v!r}" for j, v in pairs) + ",0 '1\\n2'}\n" + \
        "{" + ",".join(f"{j} {v!r}" for j, v in pairs) + "}\n"
    fast = arff.read_text(text, class_attribute=None)
    strict = arff.read_text(text, class_attribute=None, engine="strict")
    assert fast.difference(strict) is None
    for r in range(2):
        seg = fast.X.indices[fast.X.indptr[r]:fast.X.indptr[r + 1]]
        assert np.all(np.diff(seg) > 0)
    np.testing.assert_array_equal(fast.X.toarray()[:, 1:], np.tile(np.arange(1.0, n + 1), (2, 1)))


def test_many_long_rows_in_reverse_order(tmp_path):
    """Hostile: 80 rows of 30,000 entries each, every row in descending index order. Sorting each row
    by insertion took n^2/4 moves (36 s for this file before the fix, 0.7 s after, on a busy 2-core machine);
    the values must land in their columns."""
    n, n_rows = 30_000, 80
    path = tmp_path / "desc.arff"
    with open(path, "w") as fh:
        fh.write("@relation r\n" + "".join(f"@attribute a{i} numeric\n" for i in range(n)) + "@data\n")
        row = "{" + ",".join(f"{j} {j + 1}" for j in range(n - 1, -1, -1)) + "}\n"
        for _ in range(n_rows):
            fh.write(row)
    ds = arff.read(path, class_attribute=None)
    X = ds.X
    assert X.shape == (n_rows, n) and X.nnz == n * n_rows
    np.testing.assert_array_equal(X.indices, np.tile(np.arange(n, dtype=X.indices.dtype), n_rows))
    np.testing.assert_array_equal(X.data, np.tile(np.arange(1.0, n + 1), n_rows))


# ---------------------------------------------------------------------------- rows added by the strict path

def _sparse_parser(n: int = 3) -> "_arffscan.Parser":
    return _arffscan.Parser(bytes(n), [None] * n, [None] * n, [None] * n, -1, 1)


def _csr(d: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return (np.frombuffer(d["indptr"], np.int64), np.frombuffer(d["indices"], np.int32),
            np.frombuffer(d["data"], np.float64))


def test_a_refused_strict_row_leaves_nothing_in_the_csr_arrays():
    """add_sparse/add_dense that fail half way through a row leave no entries behind (before the fix
    they joined the next row)."""
    p = _sparse_parser()
    with pytest.raises(IndexError):
        p.add_sparse([(0, 1.0), (7, 2.0)], 1.0)
    with pytest.raises(TypeError):
        p.add_dense([1.0, "2", 3.0], 1.0)
    with pytest.raises(TypeError):
        p.add_sparse([(2, 5.0), (1, "x")], 1.0)
    p.add_sparse([(1, 3.0)], 1.0)
    d = p.take()
    assert d["n_rows"] == 1
    indptr, indices, data = _csr(d)
    assert indptr.tolist() == [0, 1] and indices.tolist() == [1] and data.tolist() == [3.0]
    assert np.frombuffer(d["w"], np.float64).tolist() == [1.0]


def test_a_pair_that_is_not_a_tuple_is_a_type_error():
    with pytest.raises(TypeError, match="pairs expected"):  # a SystemError before
        _sparse_parser().add_sparse([(2, 5.0), [1, 2.0]], 1.0)


def test_strict_path_rows_and_scanner_rows_interleave_in_csr():
    p = _sparse_parser()
    status, pos, line, line_end, after = p.feed(b"{2 1,0 2}\n", 0, 10, 1, 0, True)
    assert (status, pos, line) == (0, 10, 2)
    p.add_sparse([(2, 4.0), (1, 5.0)], 2.0)
    p.add_dense([0.0, 6.0, 0.0], 1.0)
    indptr, indices, data = _csr(p.take())
    assert indptr.tolist() == [0, 2, 4, 5]
    assert indices.tolist() == [0, 2, 1, 2, 1] and data.tolist() == [2.0, 1.0, 5.0, 4.0, 6.0]


def test_a_row_of_the_strict_path_with_only_a_class():
    """No feature column: the dense matrix is never allocated (memset of a NULL row before the fix,
    which UndefinedBehaviorSanitizer reports)."""
    p = _arffscan.Parser(bytes([1]), [[b"x", b"y"]], [None], [None], 0, 0)
    p.add_sparse([(0, 1.0)], 1.0)
    p.add_dense([0.0], 2.0)
    d = p.take()
    assert d["n_rows"] == 2 and len(memoryview(d["X"])) == 0
    assert np.frombuffer(d["y"], np.float64).tolist() == [1.0, 0.0]


# ---------------------------------------------------------------------------- found by differential fuzzing

H_NOM = "@relation r\n@attribute a numeric\n@attribute b {x,y}\n@data\n"


def _errors(path, **kw) -> list[str]:
    """The error of each way of reading ``path`` (whole file on both engines, chunks, a byte range)."""
    readers = [lambda: arff.read(path, engine="fast", **kw), lambda: arff.read(path, engine="strict", **kw),
               lambda: list(arff.iter_chunks(path, rows=2, **kw)), lambda: arff.read_range(path, 0, 1 << 30, **kw)]
    out = []
    for reader in readers:
        with pytest.raises(ArffFormatError) as info:
            reader()
        out.append(str(info.value))
    return out


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
@pytest.mark.parametrize("gap", [0, 3])
def test_an_error_before_an_undecodable_byte_is_reported_first(tmp_path, encoding, gap):
    """Line 6 has a bad value and a later line a byte that does not decode: every reader names line 6.
    The fast engine checked the whole block's encoding before reading its lines (it named the later
    line); the strict engine, looking one line ahead for its truncation hint, named the next line."""
    path = tmp_path / "mixed.arff"
    path.write_bytes((H_NOM + "1,x\n1,q\n" + "2,y\n" * gap + "3,\xff\n4,x\n").encode("latin-1"))
    errors = _errors(path, encoding=encoding)
    assert all(e == errors[0] for e in errors), errors
    assert ":6: value 'q' is not declared" in errors[0]


@pytest.mark.parametrize("encoding", ["utf-8", "ascii"])
def test_an_undecodable_byte_that_comes_first_is_reported_alike(tmp_path, encoding):
    path = tmp_path / "bad.arff"
    path.write_bytes((H_NOM + "1,x\n" * 3 + "2,\xff\n1,q\n").encode("latin-1"))
    errors = _errors(path, encoding=encoding)
    assert all(e == errors[0] for e in errors), errors
    assert ":8: byte 0xff at column 3 is not valid" in errors[0]


def test_a_negative_zero_class_keeps_its_sign_in_a_sparse_section():
    """-0 as a numeric class in a dense row of a sparse section: the strict engine dropped the sign
    (it dropped zero values before keeping the class), the fast one kept it."""
    text = "@relation r\n@attribute a numeric\n@attribute c numeric\n@data\n{0 1}\n2,-0\n{1 -0}\n"
    for engine in ("fast", "strict"):
        ds = arff.read_text(text, engine=engine)
        assert ds.is_sparse and ds.y.tolist() == [0.0, 0.0, 0.0]
        assert np.signbit(ds.y).tolist() == [False, True, True], engine


_HUGE_NUMBER = textwrap.dedent("""
    import ctypes, mmap, struct
    from toolkit.data import _arffscan

    n = (1 << 31) + 7  # digits: more than an int counts
    mm = mmap.mmap(-1, n + 1)
    anchor = ctypes.c_char.from_buffer(mm)
    ctypes.memset(ctypes.addressof(anchor), ord("1"), n)
    ctypes.memset(ctypes.addressof(anchor) + n, ord("\\n"), 1)
    p = _arffscan.Parser(bytes([0]), [None], [None], [None], -1, -1)
    with memoryview(mm) as view:
        status = p.feed(view, 0, n + 1, 1, 0, True)[0]
    d = p.take()
    value = struct.unpack("d", bytes(memoryview(d["X"])))[0] if d["n_rows"] else None
    print(status, value)
""")


@pytest.mark.skipif(not os.environ.get("TOOLKIT_BIG_MEMORY_TESTS"), reason="needs 5 GB of memory and ~15 s; "
                    "set TOOLKIT_BIG_MEMORY_TESTS=1 to run")
def test_a_number_of_two_billion_digits_is_not_misread():
    """The quick number reader counted digits in an int: past 2**31 digits (a 2 GB line, or a 2 MB
    gzip) the count wrapped and the number was read as about 8.2e18. Now it goes to the general
    path (whose dtoa refuses that many digits, as Python's float() does: the line is handed over)."""
    done = subprocess.run([sys.executable, "-c", _HUGE_NUMBER], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    status, value = done.stdout.split()
    assert (status, value) == ("2", "None") or float(value) == float("inf")


# ---------------------------------------------------------------------------- hash flooding of nominal values

def _old_fnv_slots(values: np.ndarray) -> np.ndarray:
    """The scanner's former (unkeyed) hash of each row of ``values`` (uint8, fixed width): 64-bit
    FNV-1a, then h ^ (h >> 29); the slot is its low bits. Written from that description, vectorised."""
    h = np.full(len(values), 1469598103934665603, dtype=np.uint64)
    prime = np.uint64(1099511628211)
    for j in range(values.shape[1]):
        h ^= values[:, j].astype(np.uint64)
        h *= prime  # modulo 2**64, as in C
    return h ^ (h >> np.uint64(29))


def _fnv_colliding_values(count: int, bits: int) -> list[str]:
    """``count`` four-character names whose former hashes agree in their low ``bits`` bits: they all
    landed in one probe sequence of a table of up to 2**bits slots (brute force over base-36 names)."""
    alphabet = np.frombuffer(b"0123456789abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    k = np.arange(36 ** 4, dtype=np.int64)
    digits = np.stack([(k // 36 ** p) % 36 for p in range(4)], axis=1)
    names = alphabet[digits]
    slots = (_old_fnv_slots(names) & np.uint64((1 << bits) - 1)).astype(np.int64)
    target = int(np.argmax(np.bincount(slots)))
    chosen = names[slots == target][:count]
    assert len(chosen) == count
    return [bytes(row).decode() for row in chosen]


def _flood_file(tmp_path, values: list[str]):
    """A header declaring ``values`` and ten rows per value, each value used in turn."""
    path = tmp_path / f"flood{len(values)}.arff"
    rows = "".join(f"{values[i % len(values)]},{i}\n" for i in range(10 * len(values)))
    path.write_text("@relation r\n@attribute a {" + ",".join(values) + "}\n@attribute x numeric\n@data\n" + rows)
    return path


def _work(path) -> tuple[int, object]:
    before = _arffscan._probes()
    ds = arff.read(path, class_attribute=None)
    return _arffscan._probes() - before, ds


def test_nominal_values_that_collided_under_the_old_hash_cost_linear_work(tmp_path):
    """500 declared values that all shared one slot of the former unkeyed FNV hash: every lookup
    walked the whole run (1.4 million probes for 5,000 rows, 100 times the work of the 50-value
    file). The keyed hash spreads them: the work grows with the file, about 10 times."""
    values = _fnv_colliding_values(500, 10)  # a table of 500 values has 1024 slots (50 values: 128)
    small, ds_small = _work(_flood_file(tmp_path, values[:50]))
    big, ds_big = _work(_flood_file(tmp_path, values))
    lookups = 500 + 5000  # one insertion per declared value, one lookup per row
    assert big < 4 * lookups, big
    assert big < 20 * small, (small, big)
    assert ds_big.X[:, 0].tolist() == [float(i % 500) for i in range(5000)]  # the codes are unchanged
    assert ds_small.X[:, 0].tolist() == [float(i % 50) for i in range(500)]


def test_lookups_stay_bounded_even_when_every_value_hashes_alike(tmp_path):
    """The worst case of any hash function: past 64 probes for one value the table is replaced by
    the values in sorted order (bisection), so a lookup costs at most 65 probes or log2(n) + 1
    comparisons, and the codes are those of the declaration (the strict engine's)."""
    values = [f"v{k:04d}" for k in range(500)][::-1]  # declared out of order: the codes are not the sort
    _arffscan._constant_hash_for_tests(True)
    try:
        small, ds_small = _work(_flood_file(tmp_path, values[:50]))
        big, ds_big = _work(_flood_file(tmp_path, values))
        bad = tmp_path / "undeclared.arff"
        bad.write_text(Path(ds_big.path).read_text().replace("\nv0499,0\n", "\nv9999,0\n"))
        with pytest.raises(ArffFormatError, match=r"undeclared\.arff:5: value 'v9999' is not declared"):
            arff.read(bad, class_attribute=None)
    finally:
        _arffscan._constant_hash_for_tests(False)
    assert big < 65 * 65 + 5000 * 10, big  # the build gives up after 64 probes; bisection of 500 values
    assert big < 20 * small, (small, big)
    for ds in (ds_small, ds_big):
        strict = arff.read(ds.path, class_attribute=None, engine="strict")
        assert ds.difference(strict) is None
    assert ds_big.X[:, 0].tolist() == [float(i % 500) for i in range(5000)]


def test_escapes_on_the_strict_path_cost_their_own_size(tmp_path):
    """An unterminated quote of 4 million escapes (a line the C scanner declines) is tokenised by the
    Python path: the quoted-value pattern must keep no state per escape (it kept ~70 bytes each: 500 MB
    here, 7 GB for a 100 MB line)."""
    path = tmp_path / "b.arff"
    path.write_text("@relation r\n@attribute s string\n@attribute c {x,y}\n@data\n'" + "\\'" * 4_000_000 + "\n")
    code = PEAK_KB + textwrap.dedent(f"""
        from toolkit.data import arff
        from toolkit.errors import ArffFormatError
        before = peak()
        try:
            arff.read({str(path)!r})
        except ArffFormatError as exc:
            print("refused" if "unterminated quote" in str(exc) else str(exc)[:200])
        print((peak() - before) // 1024)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    verdict, grown_mb = done.stdout.split()
    assert verdict == "refused", done.stdout + done.stderr
    assert int(grown_mb) < 120, f"{grown_mb} MB for an 8 MB line"


@pytest.mark.parametrize("engine", ["fast", "strict"])
@pytest.mark.parametrize("where", ["data", "header"])
def test_a_line_beyond_the_limit_is_refused_with_its_number_and_bounded_memory(tmp_path, engine, where):
    """A small .arff.gz that inflates to one line longer than MAX_LINE_BYTES (digits without a line end,
    a gzip bomb) is refused naming that line, without holding more than about the limit (a 2 GiB line
    took 6.4 GB and a MemoryError)."""
    import gzip

    from toolkit.data.arff_source import MAX_LINE_BYTES

    path = tmp_path / "bomb.arff.gz"
    with gzip.open(path, "wb", compresslevel=1) as fh:
        if where == "data":
            fh.write(b"@relation r\n@attribute a numeric\n@attribute c {x,y}\n@data\n1,x\n")
        else:
            fh.write(b"@relation r\n@attribute 'a")
        block = b"1" * (1 << 24)
        for _ in range(MAX_LINE_BYTES // len(block) + 2):
            fh.write(block)
        fh.write(b",x\n" if where == "data" else b"' numeric\n@attribute c {x,y}\n@data\n1,x\n")
    line = 6 if where == "data" else 2
    code = PEAK_KB + textwrap.dedent(f"""
        from toolkit.data import arff
        from toolkit.errors import ArffFormatError
        before = peak()
        try:
            arff.read({str(path)!r}, engine={engine!r})
            print("read")
        except ArffFormatError as exc:
            print(exc.line if "longer than" in str(exc) else str(exc)[:200])
        print((peak() - before) // 1024)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    got, grown_mb = done.stdout.split()
    assert got == str(line), done.stdout + done.stderr
    assert int(grown_mb) < 1.5 * (MAX_LINE_BYTES >> 20) + 64, f"{grown_mb} MB more for the line"
