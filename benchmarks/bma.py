"""BMA naive Bayes: tuning H from one fit, the fit against nb-weka's, and how the fit grows.

    python benchmarks/bma.py [--pairs 7]

1. Tuning over the 11 H values (bma-nb's grid) on a fit part and its validation part, as the harness
   does it (``grid_decision_function``: one fit, the 11 validation scores), against one bma-nb fit plus
   one validation prediction (the anchor). Goal: at most 2x. On letter and on all 20 thesis datasets
   (algorithms.md 6.1) together, on each dataset's first harness split.
2. The same tuning through the harness's ``_tune`` against the refit-every-point path it replaces.
3. bma-nb fit against nb-weka fit on letter's 10 training parts (goal: at most 3x).
4. Fit time at four sizes of N (instances) and of K (features), medians, with log-log slopes.
"""

from __future__ import annotations

import argparse

import numpy as np

from _common import interleaved, median_of, record, shared
from toolkit.api import Schema
from toolkit.data import arff
from toolkit.evaluation import harness
from toolkit.evaluation.harness import Protocol
from toolkit.models.pipeline import Pipeline
from toolkit.plugins.naive_bayes import H_GRID
from toolkit.plugins.naive_bayes.bma import BMANaiveBayes
from toolkit.plugins.naive_bayes.classifiers import WekaNaiveBayes

THESIS = ["anneal", "autos", "vote", "sick", "credit-a", "mushroom", "heart-statlog", "segment", "labor", "vowel",
          "audiology", "iris", "zoo", "lymph", "soybean", "balance-scale", "glass", "letter", "hepatitis", "haberman"]


def slope(sizes, times) -> float:
    return float(np.polyfit(np.log(sizes), np.log(times), 1)[0])


def tuning_parts(names):
    """(X_fit, y_fit, X_val, schema) of the first harness split of each dataset (slicing not timed)."""
    out = []
    for name in names:
        ds = arff.read(shared("uci", f"{name}.arff"))
        s = Protocol().splits(ds)[0]
        out.append((ds.X[s.fit], ds.y[s.fit], ds.X[s.validation], Schema.from_dataset(ds)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=7)
    args = parser.parse_args()
    settings = [{"H": h} for h in H_GRID]

    for label, names, reps in (("letter", ["letter"], 5), ("20 thesis datasets", THESIS, 3)):
        parts = tuning_parts(names)

        def one_fit_one_prediction():
            for _ in range(reps):
                for Xf, yf, Xv, schema in parts:
                    BMANaiveBayes().fit(Xf, yf, schema=schema).decision_function(Xv)

        def tuned_over_11_h():
            for _ in range(reps):
                for Xf, yf, Xv, schema in parts:
                    for _scores in BMANaiveBayes().grid_decision_function(Xf, yf, Xv, settings, schema=schema):
                        pass

        record(interleaved(f"bma-nb tuning, {label}", "1 fit + 1 validation prediction", one_fit_one_prediction,
                           "11 H from one fit", tuned_over_11_h, pairs=args.pairs), goal="<= 2.0")

    # the harness's tuning step, grid path against the refit-every-point path it replaced
    ds = arff.read(shared("uci", "letter.arff"))
    split = Protocol().splits(ds)[0]
    pipeline = Pipeline("bma-nb")
    refit_keys = harness._shared_keys

    def refit_every_point():
        harness._shared_keys = lambda p: set()   # the fallback path: every grid point refitted
        try:
            harness._tune(pipeline, ds, split, split.seed)
        finally:
            harness._shared_keys = refit_keys

    record(interleaved("harness _tune, bma-nb on letter", "refit at every H", refit_every_point,
                       "grid from one fit", lambda: harness._tune(pipeline, ds, split, split.seed),
                       pairs=args.pairs))

    schema = Schema.from_dataset(ds)
    splits = Protocol().splits(ds)
    X, y = ds.X, ds.y
    trains = [(X[s.train], y[s.train]) for s in splits]

    def fit_all(cls):
        return lambda: [cls().fit(Xt, yt, schema=schema) for Xt, yt in trains]

    record(interleaved("letter, fit on the 10 training parts", "nb-weka", fit_all(WekaNaiveBayes), "bma-nb",
                       fit_all(BMANaiveBayes), pairs=args.pairs), goal="<= 3.0")

    rng = np.random.default_rng(0)
    sizes_n = [5000, 10000, 20000, 40000]
    times_n = []
    for n in sizes_n:       # letter's rows resampled with replacement, all 16 features
        rows = rng.integers(0, ds.n_instances, n)
        times_n.append(median_of(lambda: BMANaiveBayes().fit(X[rows], y[rows], schema=schema), 7)[0])
    sizes_k = [16, 32, 64, 128]
    times_k = []
    rows = rng.integers(0, ds.n_instances, 10000)
    for k in sizes_k:       # letter's features repeated with jitter (so the precisions differ), 10,000 rows
        Xk = np.hstack([X[rows] + 0.001 * r for r in range(k // 16)])
        sk = Schema.numeric(k, schema.classes)
        times_k.append(median_of(lambda: BMANaiveBayes().fit(Xk, y[rows], schema=sk), 7)[0])
    print("  bma-nb fit time by N (16 features), medians of 7: "
          + ", ".join(f"N={n}: {t * 1000:.1f} ms" for n, t in zip(sizes_n, times_n))
          + f"; log-log slope {slope(sizes_n, times_n):.2f} (1 = linear)")
    print("  bma-nb fit time by K (10,000 rows), medians of 7: "
          + ", ".join(f"K={k}: {t * 1000:.1f} ms" for k, t in zip(sizes_k, times_k))
          + f"; log-log slope {slope(sizes_k, times_k):.2f} (1 = linear)")


if __name__ == "__main__":
    main()
