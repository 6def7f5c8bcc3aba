"""ARFF loading: speed against liac-arff (dense mode for dense files, COO for sparse ones) and WEKA,
peak memory against the arrays built, the dataset cache, and the hostile inputs of issue 16 at full
scale. One command:

    python benchmarks/arff_loading.py [--quick] [--json out.json]

Files: uci/letter.arff, a generated 16 MB dense file (20,000 x 100 numbers), a generated 13 MB
sparse file (20,000 rows x 50,000 attributes) and the largest shared text file (by decompressed
size). Timing: interleaved pairs (benchmarks/_common.py), median ratio. WEKA (Debian's weka.jar)
is timed in one JVM that loads the file repeatedly (JIT warm, JVM start-up excluded), where installed.
Memory: a fresh process per file; the tracemalloc peak while reading and the growth of the peak
resident set (VmHWM), both divided by the bytes of the arrays returned (X, y, weights).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import SHARED, interleaved, record, timed, write_json  # noqa: E402

WORK = Path(tempfile.gettempdir()) / "toolkit-bench-arff"
WEKA_JAR = Path("/usr/share/java/weka.jar")


# ---------------------------------------------------------------------------- inputs

def dense_file() -> Path:
    """20,000 x 100 numbers with 4 decimals (about 16 MB), seed 1."""
    path = WORK / "dense-20000x100.arff"
    if not path.exists():
        rng = np.random.default_rng(1)
        X = rng.normal(0, 100, size=(20_000, 100)).round(4)
        y = rng.integers(0, 3, size=20_000)
        with open(path, "w") as fh:
            fh.write("@relation dense\n" + "".join(f"@attribute a{j} numeric\n" for j in range(100))
                     + "@attribute class {c0,c1,c2}\n@data\n")
            for r in range(X.shape[0]):
                fh.write(",".join(f"{v:.4f}" for v in X[r]) + f",c{y[r]}\n")
    return path


def sparse_file() -> Path:
    """20,000 rows x 50,000 word counts, about 80 non-zeros a row (about 13 MB), seed 2."""
    path = WORK / "sparse-20000x50000.arff"
    if not path.exists():
        rng = np.random.default_rng(2)
        with open(path, "w") as fh:
            fh.write("@relation sparse\n" + "".join(f"@attribute w{j} numeric\n" for j in range(50_000))
                     + "@attribute class {c0,c1,c2}\n@data\n")
            for r in range(20_000):
                k = int(rng.integers(40, 120))
                cols = np.sort(rng.choice(50_000, size=k, replace=False))
                counts = rng.integers(1, 9, size=k)
                fh.write("{" + ",".join(f"{c} {v}" for c, v in zip(cols, counts)) + f",50000 c{r % 3}}}\n")
    return path


def raw_size(path: Path) -> int:
    with (gzip.open(path, "rb") if path.name.endswith(".gz") else open(path, "rb")) as fh:
        return sum(len(b) for b in iter(lambda: fh.read(1 << 20), b""))


def largest_text_file() -> Path | None:
    folder = SHARED / "text"
    if not folder.is_dir():
        return None
    files = [p for p in folder.iterdir() if p.name.endswith((".arff", ".arff.gz"))]
    return max(files, key=raw_size) if files else None


# ---------------------------------------------------------------------------- anchors

def liac_load(path: Path):  # type: ignore[no-untyped-def]
    import arff as liac

    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        text = fh.read()
    sparse = "\n{" in text
    return liac.loads(text, encode_nominal=True, return_type=liac.COO if sparse else liac.DENSE)


_WEKA_TIMER = """
import java.io.*;
import weka.core.Instances;
import weka.core.converters.ArffLoader;
public class ArffLoadTime {
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[1]);
        for (int i = 0; i < n; i++) {
            long t = System.nanoTime();
            ArffLoader l = new ArffLoader();
            l.setFile(new File(a[0]));
            Instances d = l.getDataSet();
            System.out.println((System.nanoTime() - t) / 1e9 + " " + d.numInstances());
        }
    }
}
"""


def weka_times(path: Path, repeat: int) -> list[float] | None:
    if not WEKA_JAR.exists() or shutil.which("javac") is None:
        return None
    build = WORK / "java"
    build.mkdir(parents=True, exist_ok=True)
    src = build / "ArffLoadTime.java"
    if not (build / "ArffLoadTime.class").exists():
        src.write_text(_WEKA_TIMER)
        subprocess.run(["javac", "-cp", str(WEKA_JAR), "-d", str(build), str(src)], check=True,
                       capture_output=True)
    out = subprocess.run(["java", "-Xmx4g", "-cp", f"{WEKA_JAR}:{build}", "ArffLoadTime", str(path), str(repeat + 2)],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        return None
    times = [float(line.split()[0]) for line in out.stdout.split("\n") if line.strip()]
    return times[2:]  # the first two warm the JIT


# ---------------------------------------------------------------------------- memory

_MEMORY = """
import json, sys, tracemalloc
hwm = lambda: int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) * 1024
from toolkit.data import arff
import numpy, scipy.sparse
arff.read_text('@relation r\\n@attribute a numeric\\n@data\\n1\\n')  # imports done before measuring
before = hwm()
tracemalloc.start()
ds = arff.read(sys.argv[1])
_, peak = tracemalloc.get_traced_memory()
tracemalloc.stop()
after = hwm()
X = ds.X
size = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) if scipy.sparse.issparse(X) else X.nbytes
size += ds.weights.nbytes + (0 if ds.y is None else ds.y.nbytes)
# a string attribute's values are part of the output (Python str objects, counted at their size in memory)
size += sum(sys.getsizeof(s) for t in ds.strings.values() for s in t)
print(json.dumps({"traced": peak, "rss": after - before, "arrays": size}))
"""


def memory(path: Path) -> dict[str, int]:
    out = subprocess.run([sys.executable, "-c", _MEMORY, str(path)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


# ---------------------------------------------------------------------------- hostile inputs

_HOSTILE = """
import json, sys, time
hwm = lambda: int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) * 1024
from toolkit.data import arff
from toolkit.errors import ToolkitError
import scipy.sparse
arff.read_text('@relation r\\n@attribute a numeric\\n@data\\n1\\n')
before = hwm()
t = time.perf_counter()
try:
    ds = arff.read(sys.argv[1])
    X = ds.X
    size = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) if scipy.sparse.issparse(X) else X.nbytes
    size += ds.weights.nbytes + sum(sys.getsizeof(s) for t in ds.strings.values() for s in t)
    outcome = f"loaded {ds.n_instances} rows"
except ToolkitError as exc:
    size = 0
    outcome = "refused: " + str(exc)[:120]
print(json.dumps({"seconds": time.perf_counter() - t, "rss": hwm() - before, "output": size, "outcome": outcome}))
"""


def hostile_files(scale: float) -> dict[str, Path]:
    WORK.mkdir(parents=True, exist_ok=True)
    files = {}
    n = int(10_000_000 * scale)
    p = WORK / f"long-string-{n}.arff"
    if not p.exists():
        p.write_text("@relation r\n@attribute s string\n@attribute c {a}\n@data\n'" + "x" * n + "',a\n")
    files[f"a {n:,}-character string value"] = p
    p = WORK / f"long-number-{scale}.arff"
    if not p.exists():
        with open(p, "w") as fh:
            fh.write("@relation r\n@attribute x numeric\n@attribute c {a}\n@data\n")
            fh.write("1,a\n" * 15_000 + "1" * int(1_000_000 * scale) + ",a\n" + "2,a\n" * 15_000)
    files[f"a {int(1_000_000 * scale):,}-digit number in 30,000 rows"] = p
    p = WORK / f"wide-row-{n}.arff"
    if not p.exists():
        with open(p, "w") as fh:
            fh.write("@relation r\n@attribute x numeric\n@attribute c {a}\n@data\n")
            fh.write(",".join(["1"] * n) + "\n")
    files[f"a row of {n:,} values (2 attributes)"] = p
    size = int(1_000_000_000 * scale)
    p = WORK / f"bomb-{size}.arff.gz"
    if not p.exists():
        with gzip.open(p, "wb", compresslevel=9) as fh:
            fh.write(b"@relation r\n@attribute s string\n@attribute c {a}\n@data\n'")
            block = b"x" * (1 << 20)
            for _ in range(size >> 20):
                fh.write(block)
            fh.write(b"',a\n")
    files[f"a {p.stat().st_size:,}-byte .gz inflating to {size:,} bytes (one string value)"] = p
    return files


def hostile(path: Path) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", _HOSTILE, str(path)], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        return {"outcome": "crashed: " + out.stderr.strip().splitlines()[-1][:200]}
    return json.loads(out.stdout)


# ---------------------------------------------------------------------------- main

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 pairs, hostile inputs at 1/10 scale")
    parser.add_argument("--json", help="also write the timings to this JSON file")
    args = parser.parse_args()
    pairs = 3 if args.quick else 5
    WORK.mkdir(parents=True, exist_ok=True)
    from toolkit.data import arff

    files: list[tuple[str, Path]] = []
    letter = SHARED / "uci" / "letter.arff"
    if letter.exists():
        files.append(("letter (dense)", letter))
    files.append(("generated dense 20,000 x 100", dense_file()))
    files.append(("generated sparse 20,000 x 50,000", sparse_file()))
    text = largest_text_file()
    if text is not None:
        files.append((f"largest shared text file {text.name}", text))

    print("ARFF loading: toolkit (fast engine) vs liac-arff 2.5.0 (DENSE / COO) and WEKA 3.6 ArffLoader")
    summary = []
    for label, path in files:
        mb = raw_size(path) / 1e6
        print(f"\n{label}: {path} ({mb:.1f} MB of text)")
        result = record(interleaved(label, "liac-arff", lambda: liac_load(path), "toolkit",
                                    lambda: arff.read(path), pairs=pairs), goal="<= 0.2 (5x), target 0.1")
        ours = float(np.median(result.ours))
        theirs = float(np.median(result.anchor))
        line = f"  toolkit {mb / ours:.0f} MB/s, liac-arff {mb / theirs:.1f} MB/s: {theirs / ours:.1f}x liac-arff"
        weka = weka_times(path, pairs)
        if weka:
            w = float(np.median(weka))
            line += f"; WEKA {w:.3f} s ({mb / w:.0f} MB/s): {w / ours:.1f}x WEKA"
        print(line)
        mem = memory(path)
        print(f"  peak memory / output bytes: traced {mem['traced'] / mem['arrays']:.2f}, resident "
              f"{mem['rss'] / mem['arrays']:.2f} (arrays and string values {mem['arrays'] / 1e6:.1f} MB; goal <= 2)")
        summary.append({"file": label, "mb": mb, "speedup": theirs / ours, "toolkit_mb_s": mb / ours,
                        "liac_mb_s": mb / theirs, "weka_s": float(np.median(weka)) if weka else None,
                        "traced_ratio": mem["traced"] / mem["arrays"], "rss_ratio": mem["rss"] / mem["arrays"]})

    # the cache: first load parses and stores, later loads read the arrays
    from toolkit.data import cache

    target = files[-1][1]
    folder = Path(tempfile.mkdtemp(prefix="toolkit-cache-"))
    try:
        cache.set_cache_dir(folder)
        from toolkit.loading import load_arff

        first = timed(lambda: load_arff(target))
        cache.set_cache_dir(None)
        os.environ.pop("TOOLKIT_CACHE", None)

        def cached() -> None:
            cache.set_cache_dir(folder)
            load_arff(target)
            cache.set_cache_dir(None)

        print(f"\ncache ({target.name}): first load {first:.3f} s (parse and store)")
        record(interleaved(f"cache {target.name}", "parse", lambda: arff.read(target), "cached load", cached,
                           pairs=pairs), goal="< 1 (a read of the arrays)")
    finally:
        cache.set_cache_dir(None)
        shutil.rmtree(folder, ignore_errors=True)

    print("\nhostile inputs (fresh process each; loads within 3x the output in memory or is refused in seconds)")
    for label, path in hostile_files(0.1 if args.quick else 1.0).items():
        r = hostile(path)
        if "seconds" in r:
            ratio = f", {r['rss'] / r['output']:.2f}x the output" if r["output"] else ""
            print(f"  {label}: {r['outcome']} in {r['seconds']:.2f} s, peak resident +{r['rss'] / 1e6:.0f} MB{ratio}")
        else:
            print(f"  {label}: {r['outcome']}")
    print("\nsummary: " + json.dumps(summary))
    if args.json:
        write_json(args.json)


if __name__ == "__main__":
    main()
