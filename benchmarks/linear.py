"""Speed of the linear classifiers, as ratios against anchors measured in the same run.

1. LIBLINEAR plugins (``liblinear-lr``, ``liblinear-svm``): fit + predict on a training part and
   a test part, against liblinear-official called directly on the same data (``problem`` from the
   same ``csr_matrix``, ``train``, ``predict``). Goal: overhead at most 10 % (ratio <= 1.10).
   For dense data the direct call is also timed on the ndarray (liblinear's own dense path).
2. CMLS fit time on 20 Newsgroups (bydate train, 11,314 documents, word counts from
   scikit-learn's CountVectorizer, 20 classes one-vs-rest, C = 1), against LIBLINEAR ``-s 2``
   (the same objective) on the same matrix; test accuracy on the bydate test set for both.

Run: ``python benchmarks/linear.py [--datasets DIR] [--repeat 3] [--quick]``.
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

import toolkit as tk  # noqa: E402
from toolkit.api import Schema  # noqa: E402


def best_of(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def liblinear_overhead(shared: Path, repeat: int, quick: bool) -> None:
    from liblinear.liblinear import problem
    from liblinear.liblinearutil import parameter, predict, train

    libc = ctypes.CDLL(None)
    cases = [("uci/letter.arff", 0, 1.0), ("uci/letter.arff", 1, 1.0), ("text/la1.cluto.arff.gz", 0, 1.0),
             ("text/la1.cluto.arff.gz", 1, 1.0), ("text/wap.wc.arff.gz", 1, 1.0)]
    if quick:
        cases = [("uci/ionosphere.arff", 0, 1.0), ("text/tr11.wc.arff", 1, 1.0)]
    print("== LIBLINEAR plugin vs liblinear-official direct (fit + predict, best of %d) ==" % repeat)
    print(f"{'dataset':<22}{'solver':>7}{'n_train':>9}{'features':>9}{'direct s':>10}{'plugin s':>10}"
          f"{'ratio':>7}{'direct(ndarray) s':>19}")
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

        def direct_dense():
            libc.srand(0)
            m = train(problem(ytr.astype(float), np.asarray(Xtr), 1.0), parameter(opts))
            return np.asarray(predict([], np.asarray(Xte), m, "-q")[0], dtype=np.int64)

        name = "liblinear-lr" if solver in (0, 7) else "liblinear-svm"

        def plugin():
            clf = tk.get_classifier(name, C=C, B=1.0, solver=solver, random_state=0).fit(Xtr, ytr, schema=schema)
            return clf.predict(Xte)

        t_direct, ref = best_of(direct, repeat)
        t_plugin, got = best_of(plugin, repeat)
        same = np.array_equal(ref, got)
        dense_col = "-"
        if not sp.issparse(ds.X):
            t_dense, _ = best_of(direct_dense, repeat)
            dense_col = f"{t_dense:.3f}"
        print(f"{path.name:<22}{solver:>7}{len(tr):>9}{ds.n_features:>9}{t_direct:>10.3f}{t_plugin:>10.3f}"
              f"{t_plugin / t_direct:>7.3f}{dense_col:>19}" + ("" if same else "   PREDICTIONS DIFFER"))


def cmls_20news(shared: Path, repeat: int) -> None:
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
        t_cmls, clf = best_of(lambda: CMLS(C=C).fit(Xtr, ytr, schema=schema), repeat)

        def anchor():
            out = []
            for k in range(len(dtr.classes)):  # one-vs-rest, one binary problem per class, as CMLS
                yk = np.where(ytr == k, 1.0, -1.0)
                out.append(train(yk, Xtr, f"-s 2 -c {C} -B 1 -q"))
            return out

        t_ll, models = best_of(anchor, repeat)
        line = (f"C={C:g}: CMLS fit {t_cmls:.2f} s (Newton iterations per class: median "
                f"{int(np.median(clf.n_iter_))}, max {int(clf.n_iter_.max())}); LIBLINEAR -s 2 one-vs-rest "
                f"{t_ll:.2f} s; ratio {t_cmls / t_ll:.2f}")
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
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="small datasets only, no 20 Newsgroups")
    args = parser.parse_args()
    liblinear_overhead(args.datasets, args.repeat, args.quick)
    if not args.quick:
        cmls_20news(args.datasets, args.repeat)


if __name__ == "__main__":
    main()
