"""Chunks (``iter_chunks``) and byte ranges (``read_range``) of sparse files mean what the whole file
means: a sparse row that leaves a string or relational attribute out has code 0, the attribute's
first value in the file (WEKA's meaning), in every chunk and range as in the whole file.

The expected values are worked out here from the rows as written (the rule above), not by the
reader: each chunk and range alone, their concatenation (``Dataset.concat``), and the whole file."""

from __future__ import annotations

import gzip
import random

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.data import arff
from toolkit.data.arff_data import FastBuilder
from toolkit.data.arff_syntax import quote
from toolkit.data.dataset import Attribute, Dataset
from toolkit.errors import ArffFormatError

STRINGS = ["a", "b", "c d", "", "\u00e9'x", "?"]  # "?" quoted is a value, not missing
BAGS = [(), (1.0,), (0.0, 2.5), (3.0,)]


# ---------------------------------------------------------------------------- generated files

class Spec:
    """A generated file: attribute kinds in file order, the rows as (attribute -> token) with the
    value each token stands for, and the expected value of every cell under WEKA's rule."""

    def __init__(self, kinds: list[str], class_index: int, rows: list[tuple[str, dict[int, object], float]],
                 blank_lines: list[int]):
        self.kinds, self.class_index, self.rows, self.blank_lines = kinds, class_index, rows, blank_lines

    def header(self) -> str:
        lines = ["@relation gen"]
        for i, kind in enumerate(self.kinds):
            if kind == "relational":
                lines += [f"@attribute r{i} relational", "@attribute v numeric", f"@end r{i}"]
            elif kind == "class":
                lines.append(f"@attribute c{i} {{p,q}}")
            else:
                lines.append(f"@attribute x{i} {kind}")
        return "\n".join(lines) + "\n@data\n"

    def token(self, i: int, value: object) -> str:
        kind = self.kinds[i]
        if value is None:
            return "?"
        if kind == "string":
            return quote(value)
        if kind == "relational":
            return quote("\n".join(repr(v) for v in value))
        if kind == "class":
            return value
        return repr(value)

    def text(self) -> str:
        out = [self.header()]
        for r, (form, values, weight) in enumerate(self.rows):
            if r in self.blank_lines:
                out.append("% a comment\n\n")
            if form == "dense":
                body = ",".join(self.token(i, values[i]) for i in range(len(self.kinds)))
            else:
                body = "{" + ",".join(f"{i} {self.token(i, values[i])}" for i in sorted(values)) + "}"
            out.append(body + ("" if weight == 1.0 else ",{" + repr(weight) + "}") + "\n")
        return "".join(out)

    def expected(self) -> list[tuple[object, ...]]:
        """Each row's values in file order: what a row gives, or for an attribute a sparse row leaves
        out: 0, class code 0 (p), and for a string or a bag the attribute's first value anywhere in
        the file; an attribute that never has a value reads as "" (string) or an empty bag."""
        first: dict[int, object] = {}
        for _form, values, _w in self.rows:
            for i, v in values.items():
                if self.kinds[i] in ("string", "relational") and v is not None:
                    first.setdefault(i, v)
        out = []
        for _form, values, weight in self.rows:
            row = []
            for i, kind in enumerate(self.kinds):
                if i in values:
                    v = values[i]
                    row.append({"p": 0, "q": 1, None: -1}[v] if kind == "class" else v)
                elif kind == "class":
                    row.append(0)
                elif kind in ("string", "relational"):
                    row.append(first.get(i, "" if kind == "string" else ()))
                else:
                    row.append(0.0)
            out.append((tuple(row), weight))
        return out


@st.composite
def specs(draw, dense_share: float | None = None) -> Spec:
    kinds = ["numeric", "string"] + draw(st.lists(st.sampled_from(["string", "relational", "numeric"]),
                                                  min_size=0, max_size=3))
    kinds = draw(st.permutations(kinds))
    class_index = draw(st.integers(0, len(kinds)))
    kinds = list(kinds[:class_index]) + ["class"] + list(kinds[class_index:])
    dense_share = draw(st.sampled_from([0.0, 0.0, 0.2])) if dense_share is None else dense_share
    give = draw(st.sampled_from([0.1, 0.3, 0.6]))  # how often a sparse row gives a string or bag
    rng = random.Random(draw(st.integers(0, 2**32)))
    rows = []
    for _ in range(draw(st.integers(0, 14))):
        dense = rng.random() < dense_share
        values: dict[int, object] = {}
        for i, kind in enumerate(kinds):
            if not dense and rng.random() >= (give if kind in ("string", "relational") else 0.5):
                continue
            if rng.random() < 0.1:
                values[i] = None
            elif kind == "string":
                values[i] = rng.choice(STRINGS)
            elif kind == "relational":
                values[i] = rng.choice(BAGS)
            elif kind == "class":
                values[i] = rng.choice("pq")
            else:
                values[i] = float(rng.choice([0, 1, 2, -3]))
        rows.append(("dense" if dense else "sparse", values, rng.choice([1.0, 1.0, 1.0, 2.0])))
    blank_lines = [r for r in range(len(rows)) if rng.random() < 0.15]
    return Spec(kinds, class_index, rows, blank_lines)


def resolved(ds: Dataset) -> list[tuple[tuple[object, ...], float]]:
    """The dataset's rows as values in file order: strings through their tables, bags as tuples."""
    X = ds.X.toarray() if sp.issparse(ds.X) else np.asarray(ds.X)
    out = []
    for r in range(ds.n_instances):
        row: list[object] = []
        col = 0
        for i, attr in enumerate(ds.attributes):
            if i == ds.class_index:
                row.append(int(ds.y[r]))
                continue
            v = X[r, col]
            if attr.kind == "string":
                row.append(ds.string_value(col, v))
            elif attr.kind == "relational":
                bag = ds.bag(col, v)
                row.append(None if bag is None else tuple(
                    (bag.X.toarray() if sp.issparse(bag.X) else np.asarray(bag.X))[:, 0].tolist()))
            else:
                row.append(None if np.isnan(v) else float(v))
            col += 1
        out.append((tuple(row), float(ds.weights[r])))
    return out


def _joined(parts: list[Dataset]) -> Dataset:
    joined = parts[0]
    for p in parts[1:]:
        joined = joined.concat(p)
    return joined


def check_parts(parts: list[Dataset], expected, whole: Dataset, what: str) -> None:
    """Every part alone, and all of them concatenated, give the expected rows."""
    at = 0
    for k, p in enumerate(parts):
        assert resolved(p) == expected[at:at + p.n_instances], f"{what}: part {k} (rows {at}..)"
        at += p.n_instances
    assert at == len(expected), what
    joined = _joined(parts)
    assert resolved(joined) == expected, what
    assert whole.difference(joined) is None, (what, whole.difference(joined))
    assert joined.strings == whole.strings, what  # the tables too: values in order of first appearance


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(specs(), st.lists(st.floats(0, 1), min_size=1, max_size=5), st.sampled_from(["auto", True, False]))
def test_every_split_of_a_sparse_file_means_the_whole_file(tmp_path_factory, spec, cut_shares, form):
    path = tmp_path_factory.mktemp("gen") / "g.arff"
    path.write_bytes(spec.text().encode("utf-8"))
    expected = spec.expected()
    ci = spec.class_index
    whole = arff.read(path, class_attribute=ci)
    assert resolved(whole) == expected
    for rows in sorted({1, 2, 3, max(1, len(expected) // 2 + 1)}):
        parts = list(arff.iter_chunks(path, rows=rows, class_attribute=ci, sparse=form))
        check_parts(parts, expected, whole, f"iter_chunks rows={rows}")
    size = path.stat().st_size
    cuts = [0] + sorted(int(share * size) for share in cut_shares) + [size]
    parts = [arff.read_range(path, a, b, class_attribute=ci, sparse=form) for a, b in zip(cuts[:-1], cuts[1:])]
    check_parts(parts, expected, whole, f"read_range {cuts}")
    for n in (2, 3):
        parts = [arff.read_range(path, a, b, class_attribute=ci) for a, b in arff.split_ranges(path, n)]
        check_parts(parts, expected, whole, f"split_ranges {n}")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(specs(dense_share=1.0))
def test_dense_files_keep_each_chunks_own_tables(tmp_path_factory, spec):
    """In a dense file every value is written: each chunk's string table is the chunk's own values in
    order of first appearance and its bags its own, one per row that has one (as before the fix)."""
    path = tmp_path_factory.mktemp("dense") / "d.arff"
    path.write_bytes(spec.text().encode("utf-8"))
    expected = spec.expected()
    whole = arff.read(path, class_attribute=spec.class_index)
    parts = list(arff.iter_chunks(path, rows=2, class_attribute=spec.class_index))
    check_parts(parts, expected, whole, "dense iter_chunks")
    at = 0
    for p in parts:
        rows = spec.rows[at:at + p.n_instances]
        col = 0
        for i, kind in enumerate(spec.kinds):
            if kind == "class":
                continue
            given_values = [values[i] for _f, values, _w in rows if values[i] is not None]
            if kind == "string":
                assert p.strings[col] == list(dict.fromkeys(given_values))
            elif kind == "relational":
                assert len(p.bags[col]) == len(given_values)
            col += 1
        at += p.n_instances


# ---------------------------------------------------------------------------- worked examples

SPARSE = "@relation r\n@attribute s string\n@attribute c {p,q}\n@data\n"


def _values(ds: Dataset, col: int = 0) -> list[str | None]:
    X = ds.X.toarray() if sp.issparse(ds.X) else ds.X
    return [ds.string_value(col, v) for v in X[:, col]]


def _line_starts(path) -> list[int]:
    data = path.read_bytes()
    start = data.index(b"@data\n") + len(b"@data\n")
    return [start] + [i + 1 for i in range(start, len(data) - 1) if data[i] == 10]


def test_the_example_of_the_review(tmp_path):
    """{0 a,1 p} {1 p} {0 b,1 p} {1 p}: a, a, b, a. In chunks of two the second chunk read b, b, and
    the two chunks concatenated a, a, a, a."""
    path = tmp_path / "r.arff"
    path.write_text(SPARSE + "{0 a,1 p}\n{1 p}\n{0 b,1 p}\n{1 p}\n")
    assert _values(arff.read(path)) == ["a", "a", "b", "a"]
    parts = list(arff.iter_chunks(path, rows=2))
    assert [_values(p) for p in parts] == [["a", "a"], ["b", "a"]]
    assert _values(parts[0].concat(parts[1])) == ["a", "a", "b", "a"]
    starts = _line_starts(path)
    for cut in starts[1:]:
        a, b = arff.read_range(path, 0, cut), arff.read_range(path, cut, path.stat().st_size)
        assert _values(a) + _values(b) == ["a", "a", "b", "a"]
        assert _values(a.concat(b)) == ["a", "a", "b", "a"]


def test_a_first_value_after_the_chunk_is_looked_ahead_for(tmp_path):
    """Rows before the attribute's first value leave it out: in the whole file they read that later
    value, and so they do in a chunk or range that ends before it (the reader looks ahead)."""
    path = tmp_path / "late.arff"
    path.write_text(SPARSE + "{1 q}\n" * 5 + "{0 z}\n{0 y}\n{1 q}\n")
    expected = ["z"] * 6 + ["y", "z"]
    assert _values(arff.read(path)) == expected
    parts = list(arff.iter_chunks(path, rows=2))
    assert [_values(p) for p in parts] == [expected[k:k + 2] for k in range(0, 8, 2)]
    assert parts[0].strings == {0: ["z"]} and parts[3].strings == {0: ["z", "y"]}
    starts = _line_starts(path) + [path.stat().st_size]
    ranges = [arff.read_range(path, a, b) for a, b in zip(starts[:-1], starts[1:])]  # a line each
    assert [v for p in ranges for v in _values(p)] == expected


def test_an_attribute_that_never_has_a_value_reads_as_in_the_whole_file(tmp_path):
    path = tmp_path / "never.arff"
    path.write_text(SPARSE + "{1 q}\n{1 p}\n{}\n")
    whole = arff.read(path)
    assert whole.strings == {0: []} and _values(whole) == ["", "", ""]
    for part in list(arff.iter_chunks(path, rows=1)) + [arff.read_range(path, a, b)
                                                         for a, b in arff.split_ranges(path, 3)]:
        assert part.strings == {0: []} and set(_values(part)) <= {""}


def test_bags_left_out_are_the_files_first_bag_in_every_range(tmp_path):
    path = tmp_path / "bags.arff"
    path.write_text("@relation r\n@attribute b relational\n@attribute v numeric\n@end b\n@attribute c {p,q}\n"
                    "@data\n{1 q}\n{0 '1\\n2',1 q}\n{1 q}\n{0 '7',1 q}\n{1 q}\n{0 ?,1 q}\n")
    expected = [(1.0, 2.0), (1.0, 2.0), (1.0, 2.0), (7.0,), (1.0, 2.0), None]

    def bags(ds):
        X = ds.X.toarray()
        out = []
        for v in X[:, 0]:
            bag = ds.bag(0, v)
            out.append(None if bag is None else tuple(np.asarray(bag.X)[:, 0].tolist()))
        return out

    assert bags(arff.read(path)) == expected
    for rows in (1, 2, 4):
        parts = list(arff.iter_chunks(path, rows=rows))
        assert [b for p in parts for b in bags(p)] == expected
        assert bags(_joined(parts)) == expected
    starts = _line_starts(path)
    for cut in starts[1:]:
        a, b = arff.read_range(path, 0, cut), arff.read_range(path, cut, path.stat().st_size)
        assert bags(a) + bags(b) == expected and bags(a.concat(b)) == expected


def test_gzip_and_another_encoding(tmp_path):
    """The look for first values reads a .gz from its start and decodes as the range does."""
    rows = "{1 q}\n" * 3 + "{0 '\u00e9t\u00e9',1 q}\n{1 p}\n{0 b}\n{}\n"
    expected = ["\u00e9t\u00e9"] * 5 + ["b", "\u00e9t\u00e9"]
    gz = tmp_path / "late.arff.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as fh:
        fh.write(SPARSE + rows)
    latin = tmp_path / "latin.arff"
    latin.write_bytes((SPARSE + rows).encode("latin-1"))
    for path, encoding in ((gz, "utf-8"), (latin, "latin-1")):
        assert _values(arff.read(path, encoding=encoding)) == expected
        parts = list(arff.iter_chunks(path, rows=2, encoding=encoding))
        assert [v for p in parts for v in _values(p)] == expected
    for path, encoding, size in ((gz, "utf-8", len((SPARSE + rows).encode())), (latin, "latin-1", latin.stat().st_size)):
        for cut in range(len(SPARSE), size, 3):
            a = arff.read_range(path, 0, cut, encoding=encoding)
            b = arff.read_range(path, cut, size, encoding=encoding)
            assert _values(a) + _values(b) == expected


def test_the_look_for_first_values_reads_only_as_far_as_needed(tmp_path, monkeypatch):
    """The string attribute has a value in the first row: a range at the end of a 3 MB file parses
    that row and its own two, not the 500,000 rows before it."""
    path = tmp_path / "big.arff"
    path.write_text(SPARSE + "{0 a,1 q}\n" + "{1 q}\n" * 500_000 + "{0 b}\n{1 q}\n")
    size = path.stat().st_size
    parsed = []
    for name in ("take", "discard"):
        def counting(self, _real=getattr(FastBuilder, name)):
            parsed.append(self.parser.n_rows)
            return _real(self)
        monkeypatch.setattr(FastBuilder, name, counting)
    part = arff.read_range(path, size - 12, size)
    assert _values(part) == ["b", "a"]
    assert sum(parsed) == 3, parsed


def test_an_error_met_while_looking_for_first_values_is_the_files_error(tmp_path):
    """The attribute's first value comes after a bad line: reading a range after it reads the lines
    before it up to that value, and so meets the error the whole file has, with its line."""
    path = tmp_path / "bad.arff"
    path.write_text(SPARSE + "{1 q}\n{1 zz}\n{0 a}\n{1 q}\n")
    message = r"bad\.arff:6: value 'zz' is not declared"
    with pytest.raises(ArffFormatError, match=message):
        arff.read(path)
    with pytest.raises(ArffFormatError, match=message):
        arff.read_range(path, _line_starts(path)[3], path.stat().st_size)
    with pytest.raises(ArffFormatError, match=message):
        list(arff.iter_chunks(path, rows=1))


# ---------------------------------------------------------------------------- Dataset.concat

def test_concat_keeps_what_a_sparse_rows_absent_string_or_bag_meant():
    """Two sparse datasets whose string tables (and bags) start differently: a row of the second that
    leaves the attribute out keeps the second's first value, it does not take the first's."""
    attrs = (Attribute("s", "string"), Attribute("b", "relational", relation=(Attribute("v", "numeric"),)))
    bag = lambda *v: Dataset(relation="b", attributes=attrs[1].relation, X=np.array(v, dtype=float).reshape(-1, 1),
                             y=None, class_index=None, weights=np.ones(len(v)))
    one = Dataset(relation="r", attributes=attrs, X=sp.csr_matrix(np.array([[0.0, 0.0], [1.0, 0.0]])), y=None,
                  class_index=None, weights=np.ones(2), strings={0: ["x", "y"]}, bags={1: [bag(1.0)]})
    two = Dataset(relation="r", attributes=attrs, X=sp.csr_matrix(np.array([[0.0, 0.0], [1.0, 1.0]])), y=None,
                  class_index=None, weights=np.ones(2), strings={0: ["z", "x"]}, bags={1: [bag(5.0), bag(6.0)]})
    joined = one.concat(two)
    assert _values(joined) == ["x", "y", "z", "x"]
    assert [tuple(joined.bag(1, v).X[:, 0]) for v in joined.X.toarray()[:, 1]] == [(1.0,), (1.0,), (5.0,), (6.0,)]
    assert joined.strings[0] == ["x", "y", "z"]


def test_a_bad_line_in_a_later_range_names_its_line_in_the_file(tmp_path):
    """Without string attributes a range does not count the lines before it unless one of its own lines
    is wrong; then the error names the line in the whole file (as arff.read does), whatever the line
    ends (\\n, \\r\\n) and blank or comment lines before the range."""
    path = tmp_path / "late-bad.arff"
    rows = ["1,2,a\n", "3,4,b\r\n", "\n", "% a comment\n", "5,6,a\r\n"] * 40 + ["7,x,b\n", "8,9,a\n"]
    path.write_bytes(("@relation r\n@attribute u numeric\n@attribute v numeric\n@attribute c {a,b}\n@data\n"
                      + "".join(rows)).encode())
    with pytest.raises(ArffFormatError) as whole:
        arff.read(path)
    line = whole.value.line
    assert line == 5 + 40 * 5 + 1            # the header's 5 lines, then 40 times 5 lines, then the bad one
    bad_start = path.read_bytes().index(b"7,x,b")
    starts = [s for s in _line_starts(path) if s <= bad_start]
    for start in [starts[0], starts[1], starts[len(starts) // 2], starts[-2], bad_start]:
        with pytest.raises(ArffFormatError, match=rf"late-bad\.arff:{line}: ") as part:
            arff.read_range(path, start, path.stat().st_size)
        assert part.value.line == line and str(part.value) == str(whole.value)
    assert arff.read_range(path, bad_start + 6, path.stat().st_size).n_instances == 1    # after it: no error


def test_ranges_of_one_file_parse_its_header_once_and_see_a_changed_file(tmp_path, monkeypatch):
    """A worker reading many ranges of a file parses the header once; a rewritten file is read anew."""
    import os

    from toolkit.data import arff as arff_module

    path = tmp_path / "h.arff"
    path.write_text("@relation r\n@attribute a numeric\n@attribute c {x,y}\n@data\n" + "1,x\n2,y\n" * 50)
    calls = []
    real = arff_module.read_header
    monkeypatch.setattr(arff_module, "read_header", lambda src: calls.append(1) or real(src))
    size = path.stat().st_size
    parts = [arff_module.read_range(path, a, b) for a, b in ((0, size // 2), (size // 2, size))]
    assert len(calls) == 1
    assert sum(p.n_instances for p in parts) == 100
    path.write_text("@relation r\n@attribute a numeric\n@attribute c {y,x,z}\n@data\n" + "3,z\n" * 10)
    os.utime(path, ns=(1, 1))  # a different mtime even on a coarse clock
    again = arff_module.read_range(path, 0, path.stat().st_size)
    assert len(calls) == 2
    assert list(again.classes) == ["y", "x", "z"] and again.n_instances == 10
