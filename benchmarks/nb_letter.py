"""Naive Bayes fit + predict on letter (20,000 x 16, 26 classes) against scikit-learn's GaussianNB
(the anchor), on the harness's own 10 splits, in interleaved pairs.

    python benchmarks/nb_letter.py [--pairs 9] [--passes 5]

One sample = ``--passes`` passes over the 10 splits (one pass takes ~0.1 s, too short to time steadily).
Also checks that nb-weka's test predictions are still WEKA's (tests/golden/weka_nb/letter.json.gz,
written by WEKA 3.6.14 on the same splits).
"""

from __future__ import annotations

import argparse
import gzip
import json

import numpy as np
from sklearn.naive_bayes import GaussianNB

from _common import ROOT, interleaved, record, shared
from toolkit.api import Schema
from toolkit.data import arff
from toolkit.evaluation.harness import Protocol
from toolkit.plugins.naive_bayes.classifiers import GaussianNaiveBayes, WekaNaiveBayes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=9)
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    ds = arff.read(shared("uci", "letter.arff"))
    splits = Protocol().splits(ds)
    schema = Schema.from_dataset(ds)
    X, y = ds.X, ds.y
    parts = [(X[s.train], y[s.train], X[s.test]) for s in splits]   # the slicing is not timed

    def run(make, with_schema):
        def go():
            for _ in range(args.passes):
                for Xtr, ytr, Xte in parts:
                    clf = make()
                    clf.fit(Xtr, ytr, schema=schema) if with_schema else clf.fit(Xtr, ytr)
                    clf.predict(Xte)
        return go

    print(f"letter, fit + predict on the 10 harness splits x {args.passes} passes per sample")
    anchor = run(GaussianNB, False)
    record(interleaved("letter fit+predict", "sklearn GaussianNB", anchor, "nb-weka", run(WekaNaiveBayes, True),
                       pairs=args.pairs), goal="<= 1.0")
    record(interleaved("letter fit+predict", "sklearn GaussianNB", anchor, "nb-gaussian",
                       run(GaussianNaiveBayes, True), pairs=args.pairs), goal="<= 1.0")
    golden = ROOT / "tests" / "golden" / "weka_nb" / "letter.json.gz"
    if golden.exists():
        with gzip.open(golden, "rt", encoding="utf-8") as fh:
            ref = {s["repetition"]: s["predicted"] for s in json.load(fh)["splits"]}
        same = total = 0
        for s in splits:
            pred = WekaNaiveBayes().fit(X[s.train], y[s.train], schema=schema).predict(X[s.test])
            same += int(np.sum(pred == np.asarray(ref[s.repetition])))
            total += len(pred)
        print(f"  nb-weka test predictions equal to WEKA 3.6.14's: {same} of {total}")
    errs = [np.mean(GaussianNaiveBayes().fit(X[s.train], y[s.train], schema=schema).predict(X[s.test]) != y[s.test])
            for s in splits]
    sk = [np.mean(GaussianNB().fit(X[s.train], y[s.train]).predict(X[s.test]) != y[s.test]) for s in splits]
    print(f"  mean test error: nb-gaussian {np.mean(errs):.4f}, scikit-learn {np.mean(sk):.4f}")


if __name__ == "__main__":
    main()
