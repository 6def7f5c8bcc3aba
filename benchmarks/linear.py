"""Speed of the linear classifiers, as ratios against anchors measured in the same run.

1. LIBLINEAR plugins (``liblinear-lr``, ``liblinear-svm``): fit + predict on a training part and
   a test part, against liblinear-official called directly on the same data (``problem`` from the
   same ``csr_matrix``, ``train``, ``predict``). Goal: overhead at most 10 % (ratio <= 1.10).
   For dense data the direct call is also timed on the ndarray (liblinear's own dense path).
2. CMLS fit time on 20 Newsgroups (bydate train, 11,314 documents, word counts from
   scikit-learn's CountVectorizer, 20 classes one-vs-rest, C = 1), against LIBLINEAR ``-s 2``
   (the same objective) on the same matrix; test accuracy on the bydate test set for both.

Both in interleaved pairs (benchmarks/_common.py): the median of the per-pair ratios, min-max, load.

Run: ``python benchmarks/linear.py [--datasets DIR] [--pairs 5] [--quick]``.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(Path(__file__).resolve().parent))
import toolkit as tk  # noqa: E402
from _common import interleaved, record  # noqa: E402
from toolkit.api import Schema  # noqa: E402


def liblinear_overhead(shared: Path, pairs: int, quick: bool) -> None:
    from liblinear.liblinear import problem
    from liblinear.liblinearutil import parameter, predict, train

    libc = ctypes.CDLL(None)
    cases = [("uci/letter.arff", 0, 1.0), ("uci/letter.arff", 1, 1.0), ("text/la1.cluto.arff.gz", 0, 1.0),
             ("text/la1.cluto.arff.gz", 1, 1.0), ("text/wap.wc.arff.gz", 1, 1.0)]
    if quick:
        cases = [("uci/ionosphere.arff", 0, 1.0), ("text/tr11.wc.arff", 1, 1.0)]
    print("== LIBLINEAR plugin vs liblinear-official direct (fit + predict) ==")
    for rel, solver, C in cases:
        path = shared / rel
        if not path.exists():
            print(f"{rel}: absent, skipped")
            continue
        ds = tk.load_arff(path)
        schema = Schema.from_dataset(ds)
        perm = np.random.default_rng(0).permutation(ds.n_instances)
        n_test = (ds.n_instances + 9) // 10
        te, tr = perm[:n_test], perm[n_test:]
        Xtr, Xte, ytr = ds.X[tr], ds.X[te], ds.y[tr]
        Str, Ste = sp.csr_matrix(Xtr), sp.csr_matrix(Xte)
        opts = f"-s {solver} -c {C} -B 1 -q"

        def direct():
            libc.srand(0)
            m = train(problem(ytr.astype(float), Str, 1.0), parameter(opts))
            return np.asarray(predict([], Ste, m, "-q")[0], dtype=np.int64)

        name = "liblinear-lr" if solver in (0, 7) else "liblinear-svm"

        def plugin():
            clf = tk.get_classifier(name, C=C, B=1.0, solver=solver, random_state=0).fit(Xtr, ytr, schema=schema)
            return clf.predict(Xte)

        same = np.array_equal(direct(), plugin())
        record(interleaved(f"{path.name} -s {solver} ({len(tr)} x {ds.n_features})", "liblinear-official direct",
                           direct, name, plugin, pairs=pairs), goal="<= 1.10")
        if not same:
            print("    PREDICTIONS DIFFER")


def cmls_20news(shared: Path, pairs: int) -> None:
    from sklearn.feature_extraction.text import CountVectorizer
    from liblinear.liblinearutil import train

    from toolkit.plugins.linear.cmls import CMLS

    train_path = shared / "text" / "20news-bydate-train.arff.gz"
    test_path = shared / "text" / "20news-bydate-test.arff.gz"
    if not train_path.exists():
        print(f"{train_path}: absent, CMLS benchmark skipped")
        return
    t = time.perf_counter()
    dtr, dte = tk.load_arff(train_path), tk.load_arff(test_path) if test_path.exists() else None

    def docs(ds):
        table = ds.strings[0]
        return [table[int(c)] for c in ds.X[:, 0]]

    vec = CountVectorizer()
    Xtr = sp.csr_matrix(vec.fit_transform(docs(dtr)), dtype=np.float64)
    Xte = sp.csr_matrix(vec.transform(docs(dte)), dtype=np.float64) if dte is not None else None
    print(f"\n== CMLS on 20 Newsgroups bydate: {Xtr.shape[0]} x {Xtr.shape[1]} counts, nnz {Xtr.nnz}, "
          f"{len(dtr.classes)} classes (load + vectorise {time.perf_counter() - t:.1f} s) ==")
    ytr = dtr.y
    schema = Schema.numeric(Xtr.shape[1], dtr.classes)
    for C in (1.0, 0.1):
        def ours():
            return CMLS(C=C).fit(Xtr, ytr, schema=schema)

        def anchor():
            out = []
            for k in range(len(dtr.classes)):  # one-vs-rest, one binary problem per class, as CMLS
                yk = np.where(ytr == k, 1.0, -1.0)
                out.append(train(yk, Xtr, f"-s 2 -c {C} -B 1 -q"))
            return out

        record(interleaved(f"20news CMLS fit, C={C:g}", "LIBLINEAR -s 2 one-vs-rest", anchor, "cmls", ours,
                           pairs=pairs))
        clf, models = ours(), anchor()
        line = (f"    Newton iterations per class: median {int(np.median(clf.n_iter_))}, max {int(clf.n_iter_.max())}")
        if Xte is not None:
            acc = float(np.mean(clf.predict(Xte) == dte.y))
            scores = np.column_stack([_ll_scores(m, Xte) for m in models])
            acc_ll = float(np.mean(np.argmax(scores, axis=1) == dte.y))
            line += f"; test accuracy CMLS {acc:.4f}, LIBLINEAR {acc_ll:.4f}"
        print(line)


def _ll_scores(model, X) -> np.ndarray:
    n = int(model.nr_feature)
    w = np.ctypeslib.as_array(model.w, shape=(n + 1,))
    f = X @ w[:n] + model.bias * w[n]
    return f if model.get_labels()[0] == 1 else -f


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=Path,
                        default=Path(os.environ.get("TOOLKIT_SHARED_DATASETS", ROOT.parent / "shared" / "datasets")))
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="small datasets only, no 20 Newsgroups")
    args = parser.parse_args()
    liblinear_overhead(args.datasets, args.pairs, args.quick)
    if not args.quick:
        cmls_20news(args.datasets, args.pairs)


if __name__ == "__main__":
    main()
