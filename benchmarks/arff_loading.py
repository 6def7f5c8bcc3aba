"""ARFF loading: peak memory of the largest sparse text file against its CSR size, and speed against
liac-arff (the anchor) on dense, sparse and string files, measured in the same run.

    python benchmarks/arff_loading.py
"""

from __future__ import annotations

import gc
import gzip
import tracemalloc

import arff as liac

from _common import best_of, shared
from toolkit.data import arff


def csr_bytes(X) -> int:
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


def peak_memory(path) -> tuple[int, int]:
    gc.collect()
    tracemalloc.start()
    ds = arff.read(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, csr_bytes(ds.X)


def rss_growth(path) -> tuple[int, int]:
    """Growth of the peak resident set while loading, in a fresh process (includes the allocator)."""
    import json
    import subprocess
    import sys

    # VmHWM (the peak resident set of this process image); ru_maxrss would carry the parent's peak
    code = ("import json, sys\n"
            "from toolkit.data import arff\n"
            "import numpy, scipy.sparse\n"
            "hwm = lambda: int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])\n"
            "before = hwm()\n"
            "ds = arff.read(sys.argv[1])\n"
            "after = hwm()\n"
            "X = ds.X\n"
            "print(json.dumps([after - before, X.data.nbytes + X.indices.nbytes + X.indptr.nbytes]))\n")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    grown_kb, size = json.loads(out.stdout)
    return grown_kb * 1024, size


def liac_load(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        text = fh.read()
    sparse = "\n{" in text
    return liac.loads(text, encode_nominal=True, return_type=liac.COO if sparse else liac.DENSE)


def main() -> None:
    text = shared("text")
    sparse_files = [p for p in text.iterdir() if p.name.endswith((".arff", ".arff.gz")) and
                    ("cluto" in p.name or ".wc." in p.name or "linqs" in p.name)]

    def raw_size(p):
        with (gzip.open(p, "rb") if p.name.endswith(".gz") else open(p, "rb")) as fh:
            return sum(len(b) for b in iter(lambda: fh.read(1 << 20), b""))

    largest = max(sparse_files, key=raw_size)
    peak, size = peak_memory(largest)
    print(f"largest sparse file: {largest.name} ({raw_size(largest) / 1e6:.1f} MB of text)")
    print(f"  CSR {size / 1e6:.1f} MB; peak traced memory while loading {peak / 1e6:.1f} MB "
          f"= {peak / size:.2f}x the CSR (goal < 3x; tracemalloc: Python and numpy allocations)")
    grown, _ = rss_growth(largest)
    print(f"  peak resident set grew by {grown / 1e6:.1f} MB = {grown / size:.2f}x the CSR "
          f"(fresh process; includes allocator overhead and imports done lazily while reading)")
    print()
    print(f"{'file':42s} {'toolkit s':>10s} {'liac-arff s':>12s} {'speed-up':>9s}")
    for rel in ("uci/letter.arff", "uci/mushroom.arff", "text/tr11.wc.arff", "text/hitech.cluto.arff.gz",
                "text/20news-bydate-test.arff.gz", largest.relative_to(text.parent).as_posix()):
        path = shared(*rel.split("/"))
        ours = best_of(lambda: arff.read(path), 3)
        theirs = best_of(lambda: liac_load(path), 1)
        print(f"{rel:42s} {ours:10.3f} {theirs:12.3f} {theirs / ours:8.1f}x")


if __name__ == "__main__":
    main()
