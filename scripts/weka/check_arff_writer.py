"""Does WEKA 3.6 read back what ``toolkit.data.arff.write`` writes? (issue 2 acceptance)

One command, from the repository root, with Debian's ``weka`` package installed (Java 17):

    python scripts/weka/check_arff_writer.py [--shared ../shared/datasets] [--weka-jar /usr/share/java/weka.jar]

Cases:

* every ``*.arff`` and ``*.arff.gz`` under the shared datasets folder (all sub-folders; the raw
  ``.tar.gz`` is not ARFF), read with ``toolkit.data.arff.read`` (class = last attribute) and written
  with ``toolkit.data.arff.write`` in its own form (dense stays dense, sparse stays sparse; ``.gz``
  sources are written gzip-compressed, so the compressed path is exercised too);
* a sparse version of a few dense files (two of them with the class attribute first or second)
  and a dense version of a few small sparse ones (``CONVERTED``);
* a small synthetic file (``EDGE_CASES``, kept in this script) with what the shared files lack:
  dates, instance weights, a missing class, and quoting edge cases in names, nominal values and
  strings; written dense and sparse.

Every written file is loaded by WEKA's ``weka.core.converters.ArffLoader`` through
``scripts/weka/ArffDump.java`` (compiled against weka.jar into a temporary folder, run once over
all files with ``-Dfile.encoding=UTF-8 -Duser.timezone=UTC``; the toolkit stores dates as UTC
milliseconds). WEKA's view is compared with the dataset the toolkit wrote:
relation name, number of instances and attributes, attribute names, types, nominal values and date
formats, instance weights, whether WEKA made sparse instances of a sparse file, and every value
(numbers exactly equal, nominal values by label, strings by string, missing where missing). The
original shared file is loaded by WEKA too and compared the same way (a check of the reader).

The result, per case ``ok`` or the first difference (attribute, row, both values), goes to
``tests/golden/weka_arff_writer.json``, which ``tests/test_weka_arff_writer.py`` checks without Java.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from toolkit.data import arff  # noqa: E402
from toolkit.data.dataset import Dataset  # noqa: E402

REPORT = ROOT / "tests" / "golden" / "weka_arff_writer.json"

#: (source, written form[, class attribute]) beyond the files' own forms (class: last by default).
CONVERTED: list[tuple[Any, ...]] = [
    ("uci/iris.arff", "sparse"),
    ("uci/wine.arff", "sparse", 0),          # the class first: y goes back to its own position
    ("uci/spectrometer.arff", "sparse", 1),  # the class second, 48 classes
    ("uci/anneal.arff", "sparse"),           # '?' as a declared nominal value; first values become implicit
    ("uci/vote.arff", "sparse"),             # missing values
    ("uci/bridges_version1.arff", "sparse"),  # missing class values
    ("quirky/iris.discretized.crlf.arff", "sparse"),  # escaped quotes inside nominal values
    ("weka-examples/weather.numeric.arff", "sparse"),
    ("weka-examples/ReutersCorn-test.arff", "sparse"),  # string attribute in sparse rows
    ("text/tr23.wc.arff", "dense"),
    ("text/webkb.linqs.arff.gz", "dense"),
    ("text/re0.cluto.arff.gz", "dense"),
]

EDGE_CASES = r"""% synthetic writer edge cases (not from the shared datasets)
@relation 'edge cases: it\'s "quoted", 100% {braced}, ünïcödé'
@attribute 'name with spaces' numeric
@attribute "it's" {'a b','c,d','e\'f','{g}','%h',ü,'?','tab\tx',日本,' lead','trail ',x}
@attribute text string
@attribute 'when' date 'yyyy-MM-dd HH:mm:ss'
@attribute iso date
@attribute n2 real
@attribute class {yes,no,'may be'}
@data
1.5,'a b','hello, world','2020-01-02 03:04:05',2020-01-02T03:04:05,0,yes
-0.0,'c,d','tab\there',?,?,1e-300,no
0,'e\'f','new\nline','1969-12-31 23:59:59',1969-12-31T23:59:59,5e-324,?
1.7976931348623157e308,'{g}','','2000-02-29 12:00:00',2000-02-29T12:00:00,0.1,'may be',{0.5}
-2.5e-10,'%h','?','1970-01-01 00:00:00',1970-01-01T00:00:00,123456789012345678,yes,{2}
?,ü,'back\\slash','2038-01-19 03:14:08',2038-01-19T03:14:08,0.3333333333333333,no
3,'?','% not a comment','1900-01-01 00:00:00',1900-01-01T00:00:00,-1,yes
4,'tab\tx','ctrl\001char','2100-12-31 23:59:59',2100-12-31T23:59:59,Infinity,no
5,日本,'日本語 テキスト','2024-02-29 00:00:00',2024-02-29T00:00:00,-Infinity,yes
6,' lead','{braces} and, commas','2001-09-09 01:46:40',2001-09-09T01:46:40,1e15,no
7,'trail ','"double" and \'single\'','1999-12-31 23:59:59',1999-12-31T23:59:59,1e16,no
?,x,?,?,?,?,yes
"""

_UNESCAPE = re.compile(r"\\(.)")
_UNESCAPES = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}


def unescape(text: str) -> str:
    return _UNESCAPE.sub(lambda m: _UNESCAPES[m.group(1)], text) if "\\" in text else text


# ------------------------------------------------------------------------------------ WEKA's view

class WekaView:
    """What ArffDump printed for one file."""

    def __init__(self, path: Path):
        with open(path, encoding="utf-8", newline="\n") as fh:
            first = fh.readline().rstrip("\n")
            self.error = None if first == "OK" else unescape(first[len("ERROR "):])
            if self.error:
                return
            self.relation = unescape(fh.readline().rstrip("\n")[2:])
            self.attributes: list[tuple[str, str, list[str]]] = []
            line = fh.readline().rstrip("\n")
            while line.startswith("A "):
                parts = [unescape(p) for p in line[2:].split("\t")]
                self.attributes.append((parts[0], parts[1], parts[2:]))
                line = fh.readline().rstrip("\n")
            self.n = int(line[2:])
            self.rows = [fh.readline().rstrip("\n").split("\t") for _ in range(self.n)]


def _toolkit_full(ds: Dataset) -> tuple[sp.csr_matrix, dict[int, list[str | None]]]:
    """All attributes in file order as a CSR matrix (class included, NaN = missing, no stored
    zeros; string attributes left empty), and the string attributes' values per row (None = missing)."""
    n, A = ds.n_instances, len(ds.attributes)
    position = np.array([j for j in range(A) if j != ds.class_index], dtype=np.int64)
    coo = sp.coo_matrix(ds.X)  # NaN is non-zero, so missing values are kept
    rows, cols, data = coo.row.astype(np.int64), position[coo.col], coo.data.astype(np.float64)
    strings: dict[int, list[str | None]] = {}
    string_cols = [c for c, j in enumerate(position) if ds.attributes[j].kind == "string"]
    for c in string_cols:
        column = ds.X[:, c]
        values = np.asarray(column.toarray() if sp.issparse(column) else column).ravel()
        table = ds.strings.get(c, [])
        strings[int(position[c])] = [None if v != v else table[int(v)] for v in values.tolist()]
    if string_cols:
        keep = ~np.isin(cols, position[string_cols])
        rows, cols, data = rows[keep], cols[keep], data[keep]
    if ds.class_index is not None:
        y = np.asarray(ds.y, dtype=np.float64)
        if ds.class_attribute.is_nominal:
            y = np.where(y < 0, np.nan, y)
        stored = np.flatnonzero(y != 0)
        rows = np.concatenate([rows, stored])
        cols = np.concatenate([cols, np.full(len(stored), ds.class_index, dtype=np.int64)])
        data = np.concatenate([data, y[stored]])
    full = sp.csr_matrix((data, (rows, cols)), shape=(n, A))
    full.sort_indices()
    return full, strings


def _weka_full(view: WekaView, ds: Dataset) -> tuple[sp.csr_matrix | None, dict[int, list[str | None]],
                                                      np.ndarray, str, dict[str, Any] | None]:
    """WEKA's values as the toolkit codes them (nominal: index of the label among the toolkit's
    values), string values per row, weights, instance form, or the first label the toolkit lacks."""
    A = len(view.attributes)
    kinds = [a[1] for a in view.attributes]
    lookup = [{v: i for i, v in enumerate(ds.attributes[j].values)} if kinds[j] == "nominal" else None
              for j in range(A)]
    strings: dict[int, list[str | None]] = {j: [None] * view.n for j in range(A) if kinds[j] == "string"}
    rows, cols, data = [], [], []
    weights = np.empty(view.n)
    forms = set()
    for i, tokens in enumerate(view.rows):
        forms.add(tokens[0])
        weights[i] = float(tokens[1])
        if tokens[0] == "S":
            entries = []
            for t in tokens[2:]:
                j, _, tok = t.partition(":")
                entries.append((int(j), tok))
        else:
            entries = list(enumerate(tokens[2:]))
        for j, tok in entries:
            kind = kinds[j]
            if kind == "string":
                strings[j][i] = None if tok == "?" else unescape(tok[1:])
                continue
            if tok == "?":
                value = np.nan
            elif kind == "nominal":
                label = unescape(tok[1:])
                if label not in lookup[j]:  # type: ignore[operator]
                    return None, strings, weights, "", {
                        "what": "nominal label unknown to the toolkit", "attribute": view.attributes[j][0],
                        "row": i, "toolkit": None, "weka": label}
                value = float(lookup[j][label])  # type: ignore[index]
            else:
                value = float(tok[1:])
            if value != 0.0:
                rows.append(i)
                cols.append(j)
                data.append(value)
    full = sp.csr_matrix((np.array(data, dtype=np.float64), (np.array(rows, dtype=np.int64),
                                                              np.array(cols, dtype=np.int64))), shape=(view.n, A))
    full.sort_indices()
    form = "sparse" if forms == {"S"} else "dense" if forms == {"D"} else ("mixed" if forms else "none")
    return full, strings, weights, form, None


def _clip(text: str | None, at: int = 0, width: int = 60) -> str | None:
    """A window of a long string around position ``at`` (the report stays small)."""
    if text is None or len(text) <= 2 * width:
        return text
    lo = max(0, at - width)
    return ("..." if lo else "") + text[lo:at + width] + ("..." if at + width < len(text) else "")


def _describe(value: float, attr: Any) -> Any:
    if value != value:
        return "?"
    if attr.kind == "nominal" and float(value).is_integer() and 0 <= value < len(attr.values):
        return attr.values[int(value)]
    return repr(float(value))


def compare(ds: Dataset, view: WekaView, expect_sparse: bool | None) -> dict[str, Any] | str:
    """``"ok"`` or the first difference between the toolkit's dataset and WEKA's view of a file."""
    if view.error:
        return {"what": "WEKA cannot read the file", "weka": view.error}
    if view.relation != ds.relation:
        return {"what": "relation name", "toolkit": ds.relation, "weka": view.relation}
    if len(view.attributes) != len(ds.attributes):
        return {"what": "number of attributes", "toolkit": len(ds.attributes), "weka": len(view.attributes)}
    for j, (attr, (name, kind, extra)) in enumerate(zip(ds.attributes, view.attributes)):
        if attr.name != name:
            return {"what": "attribute name", "attribute": j, "toolkit": attr.name, "weka": name}
        if attr.kind != kind:
            return {"what": "attribute type", "attribute": attr.name, "toolkit": attr.kind, "weka": kind}
        if kind == "nominal" and list(attr.values) != extra:
            first = next((k for k, (a, b) in enumerate(zip(attr.values, extra)) if a != b),
                         min(len(attr.values), len(extra)))
            return {"what": "nominal values", "attribute": attr.name, "index": first,
                    "toolkit": list(attr.values[first:first + 3]), "weka": extra[first:first + 3]}
        if kind == "date" and [attr.date_format] != extra:
            return {"what": "date format", "attribute": attr.name, "toolkit": attr.date_format, "weka": extra}
    if view.n != ds.n_instances:
        return {"what": "number of instances", "toolkit": ds.n_instances, "weka": view.n}
    weka, weka_strings, weights, form, problem = _weka_full(view, ds)
    if problem:
        return problem
    if expect_sparse is not None and form != ("sparse" if expect_sparse else "dense") and view.n:
        return {"what": "instance form", "toolkit": "sparse" if expect_sparse else "dense", "weka": form}
    if not np.array_equal(weights, np.asarray(ds.weights, dtype=np.float64)):
        i = int(np.flatnonzero(weights != ds.weights)[0])
        return {"what": "instance weight", "row": i, "toolkit": float(ds.weights[i]), "weka": float(weights[i])}
    ours, our_strings = _toolkit_full(ds)
    same = (np.array_equal(ours.indptr, weka.indptr) and np.array_equal(ours.indices, weka.indices)
            and np.array_equal(ours.data, weka.data, equal_nan=True))
    if not same:
        for i in range(ds.n_instances):
            a, b = ours[i], weka[i]
            if np.array_equal(a.indices, b.indices) and np.array_equal(a.data, b.data, equal_nan=True):
                continue
            da = dict(zip(a.indices.tolist(), a.data.tolist()))
            db = dict(zip(b.indices.tolist(), b.data.tolist()))
            for j in sorted(set(da) | set(db)):
                va, vb = da.get(j, 0.0), db.get(j, 0.0)
                if not (va == vb or (va != va and vb != vb)):
                    attr = ds.attributes[j]
                    return {"what": "value", "attribute": attr.name, "row": i,
                            "toolkit": _describe(va, attr), "weka": _describe(vb, attr)}
    for j, values in our_strings.items():
        if values != weka_strings.get(j):
            other = weka_strings.get(j) or [None] * len(values)
            i = next(k for k, (a, b) in enumerate(zip(values, other)) if a != b)
            a, b = values[i], other[i]
            at = 0 if a is None or b is None else next(
                (k for k, (p, q) in enumerate(zip(a, b)) if p != q), min(len(a), len(b)))
            return {"what": "string value", "attribute": ds.attributes[j].name, "row": i, "position": at,
                    "toolkit": _clip(a, at), "weka": _clip(b, at)}
    return "ok"


# ------------------------------------------------------------------------------------ driver

def run_weka(jar: str, build: Path, jobs: list[tuple[Path, Path]], work: Path) -> None:
    src = Path(__file__).with_name("ArffDump.java")
    subprocess.run(["javac", "-nowarn", "-cp", jar, "-d", str(build), str(src)], check=True)
    (work / "jobs.tsv").write_text("".join(f"{a}\t{b}\n" for a, b in jobs), encoding="utf-8")
    subprocess.run(["java", "-Xmx4g", "-Dfile.encoding=UTF-8", "-Duser.timezone=UTC",
                    "-cp", f"{jar}{os.pathsep}{build}", "ArffDump", str(work / "jobs.tsv")], check=True)


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def weka_version(jar: str) -> str:
    out = subprocess.run(["java", "-cp", jar, "weka.core.Version"], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()[0].strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", default=os.environ.get("TOOLKIT_SHARED_DATASETS",
                                                           str(ROOT.parent / "shared" / "datasets")))
    parser.add_argument("--weka-jar", default="/usr/share/java/weka.jar")
    parser.add_argument("--keep", help="keep the written files and WEKA's dumps in this folder")
    parser.add_argument("--report", default=str(REPORT))
    args = parser.parse_args(argv)

    started = time.perf_counter()
    shared = Path(args.shared)
    sources = sorted(p for p in shared.rglob("*") if p.is_file() and
                     (p.name.endswith(".arff") or p.name.endswith(".arff.gz")))
    if not sources:
        parser.error(f"no ARFF file under {shared}")
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="weka_arff_"))
    work.mkdir(parents=True, exist_ok=True)
    # case id -> (source label, dataset, written path, form written, original path or None)
    cases: dict[str, tuple[str, Dataset, Path, str, Path | None]] = {}
    try:
        for path in sources:
            rel = path.relative_to(shared).as_posix()
            ds = arff.read(path)
            form = "sparse" if ds.is_sparse else "dense"
            out = work / (rel.replace("/", "__"))
            arff.write(ds, out)
            cases[rel] = (rel, ds, out, form, path)
        for rel, form, *klass in CONVERTED:
            if not (shared / rel).exists():
                continue
            ds = arff.read(shared / rel, class_attribute=klass[0] if klass else -1)
            suffix = ".arff.gz" if rel.endswith(".gz") else ".arff"
            label = f"written {form}" + (f", class attribute {klass[0]}" if klass else "")
            out = work / (rel.replace("/", "__") + f".as-{form}{'.class' + str(klass[0]) if klass else ''}{suffix}")
            arff.write(ds, out, sparse=form == "sparse")
            cases[f"{rel} ({label})"] = (rel, ds, out, form, None)
        edge = arff.read_text(EDGE_CASES)
        for form in ("dense", "sparse"):
            out = work / f"edge-cases.{form}.arff"
            arff.write(edge, out, sparse=form == "sparse")
            cases[f"synthetic/edge-cases (written {form})"] = ("scripts/weka/check_arff_writer.py:EDGE_CASES",
                                                               edge, out, form, None)
        written = time.perf_counter()

        jobs: list[tuple[Path, Path]] = []
        for k, (_, _, out, _, original) in enumerate(cases.values()):
            jobs.append((out, work / f"dump{k}.written.txt"))
            if original is not None:
                jobs.append((original, work / f"dump{k}.original.txt"))
        run_weka(args.weka_jar, work / "classes", jobs, work)
        ran = time.perf_counter()

        results = {}
        for k, (case, (source, ds, out, form, original)) in enumerate(cases.items()):
            entry: dict[str, Any] = {
                "source": source,
                "written": form,
                "instances": ds.n_instances,
                "attributes": len(ds.attributes),
                "class_index": ds.class_index,
                "weka_reads_written": compare(ds, WekaView(work / f"dump{k}.written.txt"), form == "sparse"),
            }
            if original is not None:
                entry["weka_reads_original"] = compare(ds, WekaView(work / f"dump{k}.original.txt"), None)
            results[case] = entry
        compared = time.perf_counter()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    bad_written = {c: e["weka_reads_written"] for c, e in results.items() if e["weka_reads_written"] != "ok"}
    bad_original = {c: e["weka_reads_original"] for c, e in results.items()
                    if e.get("weka_reads_original", "ok") != "ok"}
    report = {
        "provenance": {
            "weka": f"WEKA {weka_version(args.weka_jar)} (Debian package weka, {os.path.realpath(args.weka_jar)}), "
                    "weka.core.converters.ArffLoader via scripts/weka/ArffDump.java, "
                    "java -Dfile.encoding=UTF-8 -Duser.timezone=UTC",
            "command": "python scripts/weka/check_arff_writer.py",
            "toolkit_commit": git_commit(),
            "date": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
            "what": "each case: the toolkit reads the source (class = last attribute), writes it with "
                    "toolkit.data.arff.write in the form given, WEKA loads the written file; "
                    "weka_reads_written compares WEKA's view with the toolkit's dataset (relation, "
                    "attributes, instance form, weights, every value); weka_reads_original does the "
                    "same for the source file as WEKA reads it",
        },
        "summary": {
            "cases": len(results),
            "shared_files": sum(1 for e in results.values() if "weka_reads_original" in e),
            "written_ok": len(results) - len(bad_written),
            "original_ok": sum(1 for e in results.values() if e.get("weka_reads_original") == "ok"),
        },
        "cases": results,
    }
    Path(args.report).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(results)} cases ({report['summary']['shared_files']} shared files); written read back "
          f"identically: {report['summary']['written_ok']}; originals: {report['summary']['original_ok']}; "
          f"reading+writing {written - started:.1f} s, WEKA {ran - written:.1f} s, comparing "
          f"{compared - ran:.1f} s, total {compared - started:.1f} s", file=sys.stderr)
    for case, diff in {**bad_written}.items():
        print(f"WRITTEN  {case}: {json.dumps(diff, ensure_ascii=False)}", file=sys.stderr)
    for case, diff in bad_original.items():
        print(f"ORIGINAL {case}: {json.dumps(diff, ensure_ascii=False)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
