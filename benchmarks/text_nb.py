"""Speed of the text classifiers, as ratios against anchors measured in the same run, in interleaved pairs.

    python benchmarks/text_nb.py [--docs 1000000] [--pairs 5] [--skip-20ng] [--skip-large]

1. The 1M documents x 100k words corpus of ``ots_scale.py`` (binary, about 49M non-zeros):
   nb-multinomial's fit against one sparse product ``X @ w`` over the corpus (goal: at most 3x), nb-bim's
   fit against the same product (goal: at most 3x), scikit-learn's MultinomialNB fit for comparison, the
   same fit with 20 classes (random labels), and nb-multinomial's predict against scikit-learn's
   MultinomialNB predict on the corpus (goal: at most 1.0x).
2. 20 Newsgroups bydate (11,314 / 7,532 documents, word counts from our vectoriser, remove_top=500) and a
   synthetic 20,000 x 50,000 count matrix: fit + predict against scikit-learn's MultinomialNB (variant M)
   and ComplementNB (C-M), with the share of equal predictions; DCM and C-DCM fit times (no anchor).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from _common import info, interleaved, record

ROOT = Path(__file__).resolve().parent.parent


def synthetic(n: int = 20_000, V: int = 50_000, K: int = 20, words: int = 100, seed: int = 0):
    """Documents of ~``words`` tokens drawn from class-tilted Zipf distributions."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, K, size=n)
    base = 1.0 / np.arange(1, V + 1) ** 1.05
    lengths = rng.poisson(words, size=n) + 1
    rows = np.repeat(np.arange(n), lengths)
    cols = np.empty(int(lengths.sum()), dtype=np.int64)
    for k in range(K):  # loop over 20 classes only: draw all tokens of a class at once
        members = np.flatnonzero(y[rows] == k)
        p = base.copy()
        p[rng.choice(V, V // 50, replace=False)] *= 20  # each class boosts its own random 2 % of the words
        p /= p.sum()
        cols[members] = rng.choice(V, size=len(members), p=p)
    X = sp.csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(n, V))
    X.sum_duplicates()
    return X, y


def large_corpus(docs: int, pairs: int) -> None:
    from sklearn.naive_bayes import MultinomialNB as SkMNB

    from ots_scale import make_corpus
    from toolkit.plugins.ots.nb_bim import BIMNaiveBayes
    from toolkit.plugins.text.multinomial import MultinomialNB

    start = time.perf_counter()
    X, y = make_corpus(docs)
    print(f"corpus: {X.shape[0]:,} documents x {X.shape[1]:,} words, {X.nnz:,} non-zeros, 2 classes "
          f"(generated in {time.perf_counter() - start:.1f} s)")
    w = np.random.default_rng(0).random(X.shape[1])

    def product():
        return X @ w

    record(interleaved("1M corpus fit", "one product X @ w", product, "nb-multinomial fit",
                       lambda: MultinomialNB().fit(X, y), pairs=pairs), goal="<= 3.0")
    record(interleaved("1M corpus fit", "one product X @ w", product, "nb-bim fit",
                       lambda: BIMNaiveBayes().fit(X, y), pairs=pairs), goal="<= 3.0")
    record(interleaved("1M corpus fit", "one product X @ w", product, "sklearn MultinomialNB fit",
                       lambda: SkMNB().fit(X, y), pairs=pairs))
    y20 = np.random.default_rng(1).integers(0, 20, X.shape[0])
    record(interleaved("1M corpus fit, 20 classes", "one product X @ w", product, "nb-multinomial fit",
                       lambda: MultinomialNB().fit(X, y20), pairs=pairs))
    ours, theirs = MultinomialNB().fit(X, y), SkMNB().fit(X, y)
    record(interleaved("1M corpus predict", "sklearn MultinomialNB", lambda: theirs.predict(X), "nb-multinomial",
                       lambda: ours.predict(X), pairs=pairs), goal="<= 1.0")


def compare(label: str, X_tr, y_tr, X_te, pairs: int) -> None:
    from sklearn.naive_bayes import ComplementNB, MultinomialNB as SkMNB

    from toolkit.plugins.text.multinomial import MultinomialNB

    cases = [("M eps=1, mle prior", lambda: MultinomialNB(epsilon=1.0, prior="mle"), lambda: SkMNB(alpha=1.0)),
             ("C-M eps=1", lambda: MultinomialNB(variant="C-M", epsilon=1.0), lambda: ComplementNB(alpha=1.0, norm=True))]
    for name, ours, theirs in cases:
        agree = float(np.mean(ours().fit(X_tr, y_tr).predict(X_te) == theirs().fit(X_tr, y_tr).predict(X_te)))
        record(interleaved(f"{label}, {name}, fit+predict", "sklearn", lambda: theirs().fit(X_tr, y_tr).predict(X_te),
                           "nb-multinomial", lambda: ours().fit(X_tr, y_tr).predict(X_te), pairs=pairs), goal="<= 1.0")
        print(f"    same predictions as scikit-learn: {agree:.4f}")


def dcm_times(label: str, X_tr, y_tr) -> None:
    from toolkit.plugins.text.dcm import DCM, ComplementDCM

    for cls in (DCM, ComplementDCM):
        info(f"{label}, {cls._name} fit", lambda: cls().fit(X_tr, y_tr), repeat=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_dir = os.environ.get("TOOLKIT_SHARED_DATASETS", str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--datasets", default=default_dir, help="the shared datasets folder")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--skip-20ng", action="store_true")
    parser.add_argument("--skip-large", action="store_true")
    args = parser.parse_args()

    import toolkit
    from toolkit.models.text_step import WordCounts

    if not args.skip_large:
        large_corpus(args.docs, args.pairs)
    text = Path(args.datasets) / "text"
    if not args.skip_20ng and (text / "20news-bydate-train.arff.gz").exists():
        train = toolkit.load_arff(text / "20news-bydate-train.arff.gz")
        test = toolkit.load_arff(text / "20news-bydate-test.arff.gz")
        vec = WordCounts(remove_top=500)
        X_tr, _ = vec.fit_transform_dataset(train)
        X_te = vec.transform_dataset(test)
        print(f"20news bydate: {X_tr.shape[0]} x {X_tr.shape[1]} train (nnz {X_tr.nnz}), {X_te.shape[0]} test")
        compare("20news bydate", X_tr, train.y, X_te, args.pairs)
        dcm_times("20news bydate", X_tr, train.y)
    else:
        print(f"20news bydate: skipped ({text} absent or --skip-20ng)")
    X, y = synthetic()
    print(f"synthetic: {X.shape[0]} x {X.shape[1]} (nnz {X.nnz})")
    compare("synthetic 20k x 50k", X, y, X, args.pairs)
    dcm_times("synthetic 20k x 50k", X, y)
    return 0


if __name__ == "__main__":
    sys.exit(main())
