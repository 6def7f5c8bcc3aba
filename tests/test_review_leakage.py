"""Review of information leakage and determinism across the pipeline: no stage (text step, example
selector, feature selector, scaling, tuning, classifier) ever sees a test part, and the same seed gives
the same records.

Each check perturbs what a stage must not see (the test rows' words, values and classes; the features of
training rows whose class is missing) and asserts that what it must not change is bit-identical; expected
values are computed here from the documented split rule (algorithms.md 5.1.2) and from the training rows
alone, never by calling the code under test twice the same way."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

import toolkit
from toolkit.data import arff
from toolkit.models.pipeline import Pipeline, Step

TOOLKIT = [sys.executable, "-m", "toolkit"]

WORDS_A = ["apple", "banana", "cherry", "date", "elder", "fig", "grape"]
WORDS_B = ["zebra", "yak", "xerus", "wolf", "vole", "urchin", "tapir"]
COMMON = ["the", "and", "of", "to", "in", "grape", "wolf"]


def _split(n, seed, test_fraction_den=10):
    """algorithms.md 5.1.2, from its sentence: (test, train, validation, fit)."""
    perm = np.random.default_rng(seed).permutation(n)
    n_test = (n + test_fraction_den - 1) // test_fraction_den
    test, train = perm[:n_test], perm[n_test:]
    n_val = (len(train) + 9) // 10
    return test, train, train[:n_val], train[n_val:]


def _text_docs(n, seed=0):
    rng = np.random.default_rng(seed)
    docs, labels = [], []
    for i in range(n):
        c = "a" if i % 2 == 0 else "b"
        own = WORDS_A if c == "a" else WORDS_B
        # some noise so that tuning and selection have something to choose
        pool = own + COMMON + ([WORDS_B[i % 7]] if c == "a" else [WORDS_A[i % 7]])
        docs.append(" ".join(rng.choice(pool, size=int(rng.integers(4, 12)))))
        labels.append(c)
    return docs, labels


def _write_text(path, docs, labels):
    lines = ["@relation docs", "@attribute text string", "@attribute class {a,b}", "@data"]
    lines += [f"'{d}',{c}" for d, c in zip(docs, labels)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _write_numeric(path, X, labels, classes=("a", "b", "c")):
    lines = ["@relation num"] + [f"@attribute x{j} numeric" for j in range(X.shape[1])]
    lines += ["@attribute class {" + ",".join(classes) + "}", "@data"]
    for row, c in zip(X, labels):
        lines.append(",".join("?" if np.isnan(v) else repr(float(v)) for v in row) + f",{c}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _numeric_data(n, seed=5, missing=0.0):
    rng = np.random.default_rng(seed)
    labels = np.array(["a", "b", "c"], dtype=object)[np.arange(n) % 3]
    shift = np.array([{"a": 0.0, "b": 0.8, "c": 1.6}[c] for c in labels])
    X = rng.normal(size=(n, 3)) * np.array([1.0, 10.0, 0.1]) + shift[:, None] * np.array([1.0, 10.0, 0.1])
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X, labels


def _record(path, clf, seed, **kw):
    res = toolkit.evaluate(str(path), [clf], runs=1, seed=seed, store_proba=True, **kw)
    (rec,) = res.records
    assert rec["status"] == "ok", rec.get("error")
    return rec


def _rows_of(rec, rows):
    """Positions in the record's predictions of the test rows ``rows``."""
    index = rec["predictions"]["test_index"]
    return [index.index(int(i)) for i in rows]


# ----------------------------------------------------------------------------- the test part, perturbed

@pytest.mark.parametrize("clf,fs,es", [
    ("nb-multinomial", None, None),
    ("nb-multinomial", "kl:k=6", None),
    ("nb-multinomial", "mi:k=6", None),
    ("nb-multinomial", "dkl:k=6", None),
    ("nb-multinomial", "bim-threshold", None),
    ("dcm", None, None),
    ("liblinear-lr:B=1", None, None),
    ("nb-bim", "kl:k=6", "ots"),
    ("nb-bim", None, "random-sts"),
])
def test_no_stage_sees_the_test_part_of_a_text_dataset(tmp_path, clf, fs, es):
    """Half of the test documents get 40 words no training document holds and many copies of a training
    word; every test class is set missing. The vocabulary (which enters every multinomial's smoothing), the
    selected words and examples, the tuned parameters and the scores of the other test documents must not
    move. And they are those of a pipeline fitted on the training rows of the documented split."""
    n, seed = 60, 3
    docs, labels = _text_docs(n)
    test, train, _, _ = _split(n, seed)
    touched, untouched = test[: len(test) // 2], test[len(test) // 2:]
    docs2, labels2 = list(docs), list(labels)
    for i in touched:
        docs2[i] = " ".join([f"unseen{j}" for j in range(40)] + ["grape"] * 30)
    for i in test:
        labels2[i] = "?"
    kw = {"feature_selector": fs, "example_selector": es}
    a = _record(_write_text(tmp_path / "a.arff", docs, labels), clf, seed, **kw)
    b = _record(_write_text(tmp_path / "b.arff", docs2, labels2), clf, seed, **kw)
    assert a["predictions"]["test_index"] == b["predictions"]["test_index"] == test.tolist()
    assert a["chosen_params"] == b["chosen_params"] and a["tuning"] == b["tuning"]
    assert a["extra"] == b["extra"]
    key = "proba" if "proba" in a["predictions"] else "y_pred"
    pa, pb = np.asarray(a["predictions"][key]), np.asarray(b["predictions"][key])
    assert np.array_equal(pa[_rows_of(a, untouched)], pb[_rows_of(b, untouched)])
    assert b["metrics"]["n_evaluated"] == 0 and b["metrics"]["errors"] == 0
    # the same pipeline fitted by hand on the training rows of the documented split
    ds = arff.read(tmp_path / "b.arff")
    pipeline = Pipeline(clf, feature_selector=fs, example_selector=es)
    fitted = pipeline.fit(ds.subset(train), b["chosen_params"], seed=seed)
    vocabulary = sorted({w for i in train for w in re.findall(r"[a-z]+", docs[i].lower())})
    assert fitted.vectorizer.vocabulary_ == vocabulary
    pred = fitted.predict(ds.subset(test))
    mine = pred.proba if key == "proba" else pred.y_pred
    assert np.array_equal(np.asarray(mine), pb)


@pytest.mark.parametrize("clf,cli", [("liblinear-lr:scale=standard", True), ("nb-weka", True),
                                     ("cmls:scale=standard", False), ("liblinear-svm:scale=minmax", False),
                                     ("nb-gaussian", False), ("bma-nb", False)])
def test_a_fixed_test_file_changes_nothing_learned(tmp_path, clf, cli):
    """``toolkit evaluate TRAIN --test TEST``: half of the test rows become 1e6 (a scaling, an imputed
    mean or a numeric precision that saw them would move every score) and every test class is missing.
    The tuning trace and the scores of the other test rows stay bit-identical, and the scaling is the
    mean and standard deviation (ddof 0) of the training file."""
    X, labels = _numeric_data(120)
    train = _write_numeric(tmp_path / "train.arff", X[:80], labels[:80])
    _write_numeric(tmp_path / "test.arff", X[80:], labels[80:])
    X2 = X[80:].copy()
    X2[:20] = 1e6
    _write_numeric(tmp_path / "test2.arff", X2, np.array(["?"] * 40, dtype=object))
    out = []
    for name in ("test.arff", "test2.arff"):
        if not cli:
            (rec,) = toolkit.evaluate(str(train), [clf], test=str(tmp_path / name), store_proba=True).records
            out.append(rec)
            continue
        target = tmp_path / f"{name}.jsonl"
        proc = subprocess.run([*TOOLKIT, "evaluate", str(train), "--test", str(tmp_path / name), "-c", clf,
                               "--out", str(target), "--save-proba", "-q"], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        (rec,) = [r for r in map(json.loads, target.read_text().splitlines()) if "key" in r]
        out.append(rec)
    a, b = out
    assert a["chosen_params"] == b["chosen_params"] and a["tuning"] == b["tuning"]
    key = "proba" if "proba" in a["predictions"] else "y_pred"
    assert np.array_equal(np.asarray(a["predictions"][key])[20:], np.asarray(b["predictions"][key])[20:])
    assert a["predictions"]["test_index"] == list(range(80, 120))
    if "scale=standard" in clf:
        model = Pipeline(clf).fit(arff.read(train), a["chosen_params"]).classifier
        assert np.allclose(model.prep_shift_, X[:80].mean(axis=0), rtol=1e-12, atol=0)
        assert np.allclose(model.prep_factor_, 1 / X[:80].std(axis=0), rtol=1e-12, atol=0)


def test_missing_class_rows_of_the_training_part_teach_nothing(tmp_path):
    """Training rows whose class is missing are dropped before any stage (algorithms.md 0.2): giving them
    extreme values and unseen words changes no score, no tuning and no selection; a test row with a missing
    class is predicted but not evaluated (n_evaluated counts the known ones, the error divides by them)."""
    n, seed = 80, 4
    docs, labels = _text_docs(n, seed=1)
    test, train, _, _ = _split(n, seed)
    unlabelled = train[:12]
    docs1, labels1 = list(docs), list(labels)
    for i in unlabelled:
        labels1[i] = "?"
    labels1[test[0]] = "?"
    docs2 = list(docs1)
    for i in unlabelled:
        docs2[i] = " ".join([f"only{j}" for j in range(30)] + ["apple"] * 50)
    for clf, fs in (("nb-multinomial", None), ("nb-multinomial", "kl:k=5"), ("liblinear-lr:B=1", None),
                    ("dcm", "mi:k=8")):
        a = _record(_write_text(tmp_path / "a.arff", docs1, labels1), clf, seed, feature_selector=fs)
        b = _record(_write_text(tmp_path / "b.arff", docs2, labels1), clf, seed, feature_selector=fs)
        assert a["chosen_params"] == b["chosen_params"] and a["tuning"] == b["tuning"] and a["extra"] == b["extra"]
        key = "proba" if "proba" in a["predictions"] else "y_pred"
        assert a["predictions"][key] == b["predictions"][key]
        y_true = np.asarray(a["predictions"]["y_true"])
        y_pred = np.asarray(a["predictions"]["y_pred"])
        assert y_true[0] == -1 and (y_true[1:] >= 0).all()
        assert a["metrics"]["n_evaluated"] == len(test) - 1
        assert a["metrics"]["errors"] == int(np.sum(y_pred[1:] != y_true[1:]))
        assert a["metrics"]["error"] == pytest.approx(a["metrics"]["errors"] / (len(test) - 1))
        assert a["train_class_counts"] == [float(sum(labels1[i] == c for i in train)) for c in "ab"]
    # the vocabulary is that of the labelled training documents (a multinomial ignores words no labelled
    # document holds, so the scores above cannot show it)
    ds = arff.read(tmp_path / "b.arff")
    fitted = Pipeline("nb-multinomial").fit(ds.subset(train), {"clf.epsilon": 1.0})
    labelled = [i for i in train if labels1[i] != "?"]
    assert fitted.vectorizer.vocabulary_ == sorted({w for i in labelled for w in re.findall(r"[a-z]+", docs[i])})


# ----------------------------------------------------------------------------- tuning


def _noisy_binary(n, seed=11):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.7 * X[:, 1] + rng.normal(scale=1.0, size=n) > 0, "a", "b").astype(object)
    return X, y


def test_tuning_sees_the_fit_and_validation_parts_only(tmp_path):
    """The trace of validation errors is the brute-force one (each point fitted on the fit rows of the
    documented split, errors counted on its validation rows); flipping the validation classes changes it,
    scrambling the test part (values and classes) does not."""
    n, seed = 150, 2
    X, y = _noisy_binary(n)
    test, _, val, fit = _split(n, seed)
    clf = "liblinear-lr:C=0.001|0.01|0.1|1|10,B=1"
    base = _record(_write_numeric(tmp_path / "a.arff", X, y, ("a", "b")), clf, seed)
    ds = arff.read(tmp_path / "a.arff")
    expected = []
    for point in Pipeline(clf).grid_points():
        pred = Pipeline(clf, tune=False).fit(ds.subset(fit), point, seed=seed).predict(ds.subset(val))
        expected.append(int(np.sum(pred.y_pred != pred.y_true)))
    assert [t["validation_errors"] for t in base["tuning"]] == expected
    assert len(set(expected)) > 1   # the grid is not flat: a perturbation can show
    # the test part scrambled: values and classes
    X2, y2 = X.copy(), y.copy()
    X2[test] = np.random.default_rng(0).normal(scale=100, size=(len(test), X.shape[1]))
    y2[test] = np.where(y[test] == "a", "b", "a")
    scrambled = _record(_write_numeric(tmp_path / "b.arff", X2, y2, ("a", "b")), clf, seed)
    assert scrambled["tuning"] == base["tuning"] and scrambled["chosen_params"] == base["chosen_params"]
    # the validation part's classes flipped: the trace moves
    y3 = y.copy()
    y3[val] = np.where(y[val] == "a", "b", "a")
    flipped = _record(_write_numeric(tmp_path / "c.arff", X, y3, ("a", "b")), clf, seed)
    assert [t["validation_errors"] for t in flipped["tuning"]] == [len(val) - e for e in expected]


def test_inner_folds_tune_inside_the_training_part(tmp_path):
    """--inner-folds 3 through the CLI: the test part scrambled leaves the summed fold errors and the choice
    unchanged; they are the brute-force sums over WEKA-sized consecutive folds of the training part."""
    n, seed = 120, 5
    X, y = _noisy_binary(n, seed=3)
    test, train, _, _ = _split(n, seed)
    clf = "liblinear-lr:C=0.001|0.01|1,B=1"
    X2, y2 = X.copy(), y.copy()
    X2[test] = 50.0
    y2[test] = "?"
    recs = []
    for name, (Xi, yi) in {"a": (X, y), "b": (X2, y2)}.items():
        path = _write_numeric(tmp_path / f"{name}.arff", Xi, yi, ("a", "b"))
        target = tmp_path / f"{name}.jsonl"
        proc = subprocess.run([*TOOLKIT, "evaluate", str(path), "-c", clf, "--inner-folds", "3", "--runs", "1",
                               "--seed", str(seed), "--out", str(target), "-q"], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        (rec,) = [r for r in map(json.loads, target.read_text().splitlines()) if "key" in r]
        recs.append(rec)
    assert recs[0]["tuning"] == recs[1]["tuning"] and recs[0]["chosen_params"] == recs[1]["chosen_params"]
    ds = arff.read(tmp_path / "a.arff")
    sizes = [len(train) // 3 + (f < len(train) % 3) for f in range(3)]
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    expected = []
    for point in Pipeline(clf).grid_points():
        total = 0
        for f in range(3):
            val = train[bounds[f]:bounds[f + 1]]
            fit = np.concatenate([train[:bounds[f]], train[bounds[f + 1]:]])
            pred = Pipeline(clf, tune=False).fit(ds.subset(fit), point, seed=seed).predict(ds.subset(val))
            total += int(np.sum(pred.y_pred != pred.y_true))
        expected.append(total)
    assert [t["validation_errors"] for t in recs[0]["tuning"]] == expected


# ----------------------------------------------------------------------------- determinism


def _records(path):
    out = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if "key" in rec:
            rec.pop("timing")
            out[rec["key"]] = rec
    return out


def test_jobs_and_repeated_runs_give_identical_records_and_seeds_other_splits(tmp_path):
    """Two runs of one seed, with --jobs 1 and --jobs 2, give the same records (but for timing); a run with
    another seed tests other instances, each split being the documented one."""
    X, labels = _numeric_data(90, missing=0.05)
    data = _write_numeric(tmp_path / "d.arff", X, labels)
    common = [str(data), "-c", "nb-weka", "-c", "liblinear-lr:scale=standard,C=0.1|1", "--runs", "3", "-q"]
    files = {}
    for tag, extra in {"j1": ["--jobs", "1"], "j2": ["--jobs", "2"], "s7": ["--seed", "7"]}.items():
        target = tmp_path / f"{tag}.jsonl"
        proc = subprocess.run([*TOOLKIT, "evaluate", *common, *extra, "--out", str(target), "--save-proba"],
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr
        files[tag] = _records(target)
    assert len(files["j1"]) == 6
    assert files["j1"] == files["j2"]
    for seed, recs in ((1, files["j1"]), (7, files["s7"])):
        for rec in recs.values():
            test, train, _, _ = _split(90, seed + rec["repetition"])
            assert rec["split_seed"] == seed + rec["repetition"]
            assert rec["predictions"]["test_index"] == test.tolist()
            assert rec["n_train"] == len(train)
    first = {tuple(r["predictions"]["test_index"]) for r in files["j1"].values()}
    other = {tuple(r["predictions"]["test_index"]) for r in files["s7"].values()}
    assert len(first) == 3 and not first & other


def test_a_component_objects_own_random_state_is_kept(tmp_path):
    """An object given with random_state=42 is fixed by the user, and the experiment statement records 42:
    every split must use 42 (the split's seed only replaces a random_state of None). Before, every split's
    seed replaced it, so the records said 42 of a run that never used it."""
    from toolkit.plugin_host.components import get_registry

    docs, labels = _text_docs(40)
    ds = arff.read(_write_text(tmp_path / "d.arff", docs, labels))
    selector = get_registry().get("example-selector", "random-sts").factory
    y = np.asarray(ds.y)
    negatives = np.flatnonzero(y == 0)
    chosen = np.random.default_rng(42).choice(negatives, size=5, replace=False)
    expected = np.sort(np.concatenate([np.flatnonzero(y == 1), chosen])).tolist()
    pipeline = Pipeline("nb-bim", example_selector=selector(random_state=42, n_negatives=5))
    assert pipeline.describe()["example_selector"]["params"]["random_state"] == 42
    for seed in (0, 1, 2):
        assert pipeline.fit(ds, seed=seed).selected_rows.tolist() == expected
    # a random_state left at its default still takes the split's seed (the same seed, the same rows), also
    # when the default is not None (docs/api.md's Balanced selector defaults to 0)
    free = Pipeline("nb-bim", example_selector=selector(n_negatives=5))
    rows = [free.fit(ds, seed=seed).selected_rows.tolist() for seed in (0, 0, 1)]
    assert rows[0] == rows[1] != rows[2]

    class ZeroDefault(selector):
        def __init__(self, *, n_negatives=5, random_state=0):
            super().__init__(n_negatives=n_negatives, random_state=random_state)

    built = [Step.build(Pipeline("nb-bim", example_selector=ZeroDefault()).example_selector, {}, seed)
             for seed in (3, 4)]
    assert [b.random_state for b in built] == [3, 4]
    kept = Step.build(Pipeline("nb-bim", example_selector=ZeroDefault(random_state=9)).example_selector, {}, 3)
    assert kept.random_state == 9


@pytest.mark.parametrize("clf,fs", [("nb-multinomial", None), ("dcm", None), ("liblinear-lr:B=1", "mi:k=6")])
def test_a_fixed_test_file_of_text_adds_no_word(tmp_path, clf, fs):
    """A fixed test file's string table is merged into the training file's (Dataset.concat): half of its
    documents made of words no training document holds, and its classes missing, change no tuning and no
    score of the other test documents."""
    docs, labels = _text_docs(70, seed=2)
    train = _write_text(tmp_path / "train.arff", docs[:50], labels[:50])
    _write_text(tmp_path / "test.arff", docs[50:], labels[50:])
    changed = [" ".join(["zzz", "qqq", "unseen"] * 20 + ["apple"] * 10)] * 10 + docs[60:]
    _write_text(tmp_path / "test2.arff", changed, ["?"] * 20)
    a, b = (toolkit.evaluate(str(train), [clf], test=str(tmp_path / name), store_proba=True,
                             feature_selector=fs).records[0] for name in ("test.arff", "test2.arff"))
    assert a["status"] == b["status"] == "ok"
    assert a["tuning"] == b["tuning"] and a["chosen_params"] == b["chosen_params"] and a["extra"] == b["extra"]
    assert np.array_equal(np.asarray(a["predictions"]["proba"])[10:], np.asarray(b["predictions"]["proba"])[10:])
