"""BMA naive Bayes: fit time against our WEKA NB on letter (goal: at most 3x), and fit time at four
sizes of N (instances) and of K (features), with log-log slopes (linear growth = slope 1).

    python benchmarks/bma.py
"""

from __future__ import annotations

import numpy as np

from _common import best_of, shared
from toolkit.api import Schema
from toolkit.data import arff
from toolkit.evaluation.harness import Protocol
from toolkit.plugins.naive_bayes.bma import BMANaiveBayes
from toolkit.plugins.naive_bayes.classifiers import WekaNaiveBayes


def slope(sizes, times) -> float:
    return float(np.polyfit(np.log(sizes), np.log(times), 1)[0])


def main() -> None:
    ds = arff.read(shared("uci", "letter.arff"))
    schema = Schema.from_dataset(ds)
    splits = Protocol().splits(ds)
    X, y = ds.X, ds.y

    def fit_all(cls):
        for s in splits:
            cls().fit(X[s.train], y[s.train], schema=schema)

    nb = best_of(lambda: fit_all(WekaNaiveBayes), 5)
    bma = best_of(lambda: fit_all(BMANaiveBayes), 5)
    print("letter, fit on the 10 training parts (best of 5)")
    print(f"  nb-weka fit  {nb:.3f} s")
    print(f"  bma-nb fit   {bma:.3f} s   ratio {bma / nb:.2f}  (goal <= 3)")

    rng = np.random.default_rng(0)
    # growth in N: letter's rows resampled with replacement, all 16 features
    sizes_n = [5000, 10000, 20000, 40000]
    times_n = []
    for n in sizes_n:
        rows = rng.integers(0, ds.n_instances, n)
        times_n.append(best_of(lambda: BMANaiveBayes().fit(X[rows], y[rows], schema=schema), 5))
    # growth in K: letter's features repeated (with jitter so the precisions differ), 10,000 rows
    sizes_k = [16, 32, 64, 128]
    times_k = []
    rows = rng.integers(0, ds.n_instances, 10000)
    for k in sizes_k:
        reps = k // 16
        Xk = np.hstack([X[rows] + 0.001 * r for r in range(reps)])
        sk = Schema.numeric(k, schema.classes)
        times_k.append(best_of(lambda: BMANaiveBayes().fit(Xk, y[rows], schema=sk), 5))
    print("bma-nb fit time by N (16 features):  " + ", ".join(f"N={n}: {t * 1000:.1f} ms" for n, t in zip(sizes_n, times_n)))
    print(f"  log-log slope {slope(sizes_n, times_n):.2f}  (1 = linear)")
    print("bma-nb fit time by K (10,000 rows):  " + ", ".join(f"K={k}: {t * 1000:.1f} ms" for k, t in zip(sizes_k, times_k)))
    print(f"  log-log slope {slope(sizes_k, times_k):.2f}  (1 = linear)")


if __name__ == "__main__":
    main()
