"""Naive Bayes fit + predict on letter (20,000 x 16, 26 classes) against scikit-learn's GaussianNB
(the anchor), on the harness's own 10 splits, measured in the same run.

    python benchmarks/nb_letter.py
"""

from __future__ import annotations

import numpy as np
from sklearn.naive_bayes import GaussianNB

from _common import best_of, shared
from toolkit.api import Schema
from toolkit.data import arff
from toolkit.evaluation.harness import Protocol
from toolkit.plugins.naive_bayes.classifiers import GaussianNaiveBayes, WekaNaiveBayes


def main() -> None:
    ds = arff.read(shared("uci", "letter.arff"))
    splits = Protocol().splits(ds)
    schema = Schema.from_dataset(ds)
    X, y = ds.X, ds.y

    def run(make, with_schema, passes=5):
        # one sample = 5 passes over the 10 splits (a single pass takes ~0.1 s, too short to time steadily)
        for s in splits * passes:
            clf = make()
            if with_schema:
                clf.fit(X[s.train], y[s.train], schema=schema)
            else:
                clf.fit(X[s.train], y[s.train])
            clf.predict(X[s.test])

    anchor = best_of(lambda: run(GaussianNB, False), 5)
    ours_gauss = best_of(lambda: run(GaussianNaiveBayes, True), 5)
    ours_weka = best_of(lambda: run(WekaNaiveBayes, True), 5)
    print("letter, 10 splits x 5 passes, fit + predict (best of 5 samples)")
    print(f"  scikit-learn GaussianNB  {anchor:7.3f} s   (anchor)")
    print(f"  toolkit nb-gaussian      {ours_gauss:7.3f} s   ratio {ours_gauss / anchor:5.2f}  (goal <= 1)")
    print(f"  toolkit nb-weka          {ours_weka:7.3f} s   ratio {ours_weka / anchor:5.2f}  "
          f"(WEKA's estimator: precision sort, rounding, two normal CDFs per value)")
    errs = [np.mean(GaussianNaiveBayes().fit(X[s.train], y[s.train], schema=schema).predict(X[s.test]) != y[s.test])
            for s in splits]
    sk = [np.mean(GaussianNB().fit(X[s.train], y[s.train]).predict(X[s.test]) != y[s.test]) for s in splits]
    print(f"  mean test error: toolkit nb-gaussian {np.mean(errs):.4f}, scikit-learn {np.mean(sk):.4f}")


if __name__ == "__main__":
    main()
