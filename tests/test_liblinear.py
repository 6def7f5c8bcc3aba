"""The LIBLINEAR plugins against liblinear-official called directly on the same coded data."""

from __future__ import annotations

import ctypes
import math

import numpy as np
import pytest
import scipy.sparse as sp

import toolkit as tk
from toolkit.api import Schema
from toolkit.errors import CapabilityError, ParameterError
from toolkit.plugins.linear.liblinear import LiblinearLR, LiblinearSVM

from conftest import shared_path  # not tests.conftest: baycomp (a test extra) installs a top-level "tests" package

liblinear = pytest.importorskip("liblinear.liblinearutil")

SOLVERS = [(LiblinearLR, 0), (LiblinearLR, 7), (LiblinearSVM, 1), (LiblinearSVM, 2), (LiblinearSVM, 3)]


def _direct(Xtr, ytr, Xte, options: str, seed: int, proba: bool = False):
    """liblinear-official's own train and predict, seeded like the plugin."""
    ctypes.CDLL(None).srand(seed)
    model = liblinear.train(np.asarray(ytr, dtype=float), sp.csr_matrix(Xtr), options)
    labels, _, values = liblinear.predict([], sp.csr_matrix(Xte), model, "-q")
    out = {"labels": np.asarray(labels, dtype=np.int64), "values": np.asarray(values), "order": model.get_labels(),
           "model": model}
    if proba:
        out["proba"] = np.asarray(liblinear.predict([], sp.csr_matrix(Xte), model, "-b 1 -q")[2])
    return out


def _coded_design(ds, train_rows, rows, onehot: bool) -> np.ndarray:
    """WEKA ReplaceMissingValues + NominalToBinary written with explicit loops (independent of the plugin)."""
    X = ds.X
    feats = ds.features
    fills = []
    for j, att in enumerate(feats):
        col = [X[i, j] for i in train_rows if not math.isnan(X[i, j])]
        if att.kind == "nominal":
            counts = [col.count(float(v)) for v in range(len(att.values))]
            fills.append(float(counts.index(max(counts))))
        else:
            fills.append(sum(col) / len(col) if col else 0.0)
    out = []
    for i in rows:
        row = []
        for j, att in enumerate(feats):
            v = fills[j] if math.isnan(X[i, j]) else X[i, j]
            if onehot and att.kind == "nominal" and len(att.values) > 2:
                row += [1.0 if int(v) == k else 0.0 for k in range(len(att.values))]
            else:
                row.append(v)
        out.append(row)
    return np.array(out)


# ---------------------------------------------------------------------------------------------
# equality with liblinear-official


@pytest.mark.parametrize("cls,solver", SOLVERS)
def test_ionosphere_equals_liblinear(cls, solver) -> None:
    ds = tk.load_arff(shared_path("uci", "ionosphere.arff"))
    schema = Schema.from_dataset(ds)
    rng = np.random.default_rng(3)
    perm = rng.permutation(ds.n_instances)
    tr, te = perm[:250], perm[250:]
    for C, B in [(0.1, 1.0), (10.0, 20.0)]:
        clf = cls(C=C, B=B, solver=solver, random_state=7).fit(ds.X[tr], ds.y[tr], schema=schema)
        ref = _direct(ds.X[tr], ds.y[tr], ds.X[te], f"-s {solver} -c {C} -B {B} -q", 7, proba=solver in (0, 7))
        np.testing.assert_array_equal(clf.predict(ds.X[te]), ref["labels"])
        dec = clf.decision_function(ds.X[te])
        first = ref["order"][0]
        np.testing.assert_allclose(dec[:, first], ref["values"][:, 0], rtol=1e-12, atol=1e-12)
        # coefficients equal get_decfun_coef / get_decfun_bias
        w, b = ref["model"].get_decfun(0)
        np.testing.assert_array_equal(clf.coef_[0], np.asarray(w))
        assert clf.intercept_[0] == b
        if solver in (0, 7):
            p = clf.predict_proba(ds.X[te])
            np.testing.assert_allclose(p[:, ref["order"]], ref["proba"], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("encoding", ["onehot", "index"])
@pytest.mark.parametrize("cls,solver", [(LiblinearLR, 0), (LiblinearSVM, 1)])
def test_nominal_dataset_equals_liblinear(cls, solver, encoding) -> None:
    # autos: nominal attributes with up to 22 values, numeric ones, missing values, 7 classes
    # (two of them rare), labels in LIBLINEAR's first-appearance order differ from code order
    ds = tk.load_arff(shared_path("uci", "autos.arff"))
    schema = Schema.from_dataset(ds)
    perm = np.random.default_rng(5).permutation(ds.n_instances)
    tr, te = perm[:160], perm[160:]
    clf = cls(C=1.0, B=1.0, solver=solver, tol=0.001, nominal_encoding=encoding, random_state=11)
    clf.fit(ds.X[tr], ds.y[tr], schema=schema)
    Ztr = _coded_design(ds, tr, tr, encoding == "onehot")
    Zte = _coded_design(ds, tr, te, encoding == "onehot")
    ref = _direct(Ztr, ds.y[tr], Zte, f"-s {solver} -c 1 -B 1 -e 0.001 -q", 11, proba=solver == 0)
    assert ref["order"] != sorted(ref["order"])
    np.testing.assert_array_equal(clf.predict(ds.X[te]), ref["labels"])
    dec = clf.decision_function(ds.X[te])
    np.testing.assert_allclose(dec[:, ref["order"]], ref["values"], rtol=1e-10, atol=1e-10)
    # the pipeline's argmax over decision scores gives the same labels
    np.testing.assert_array_equal(np.argmax(dec, axis=1), ref["labels"])
    if solver == 0:
        np.testing.assert_allclose(clf.predict_proba(ds.X[te])[:, ref["order"]], ref["proba"], atol=1e-12)


def test_sparse_and_csr_array_inputs_equal_dense() -> None:
    rng = np.random.default_rng(0)
    X = rng.poisson(0.4, size=(120, 40)).astype(float)
    y = (X[:, :5].sum(1) > 2).astype(int)
    dense = LiblinearSVM(solver=1, random_state=3).fit(X, y)
    sparse = LiblinearSVM(solver=1, random_state=3).fit(sp.csr_matrix(X), y)
    arr = LiblinearSVM(solver=1, random_state=3).fit(sp.csr_array(X), y)
    np.testing.assert_array_equal(dense.coef_, sparse.coef_)
    np.testing.assert_array_equal(dense.coef_, arr.coef_)
    np.testing.assert_array_equal(dense.decision_function(X), sparse.decision_function(sp.csr_array(X)))


@pytest.mark.parametrize("cls,solver", [(LiblinearLR, 7), (LiblinearSVM, 1), (LiblinearSVM, 3)])
def test_same_seed_same_model_and_seed_matters(cls, solver) -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 8))
    y = (X[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(int)
    a = cls(solver=solver, C=10.0, random_state=4).fit(X, y).coef_
    rng.random(10)  # unrelated random use in between
    b = cls(solver=solver, C=10.0, random_state=4).fit(X, y).coef_
    c = cls(solver=solver, C=10.0, random_state=5).fit(X, y).coef_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)  # the dual solvers do draw from rand()


def test_multiclass_label_order_and_unsorted_labels() -> None:
    ds = tk.load_arff(shared_path("uci", "iris.arff"))
    order = np.argsort(-ds.y, kind="stable")  # class 2 first: LIBLINEAR's label order is [2, 1, 0]
    X, y = ds.X[order], ds.y[order]
    clf = LiblinearLR(C=1.0, B=1.0).fit(X, y, schema=Schema.from_dataset(ds))
    assert list(clf.labels_) == [2, 1, 0]
    ref = _direct(X, y, X, "-s 0 -c 1 -B 1 -q", 0, proba=True)
    np.testing.assert_array_equal(clf.predict(X), ref["labels"])
    np.testing.assert_allclose(clf.predict_proba(X)[:, ref["order"]], ref["proba"], atol=1e-14)


def test_string_labels_without_schema() -> None:
    X = np.array([[0.0, 1.0], [1.0, 0.0], [0.1, 0.9], [0.9, 0.2]])
    y = np.array(["spam", "ham", "spam", "ham"])
    clf = LiblinearLR(C=10.0).fit(X, y)
    assert list(clf.classes_) == ["ham", "spam"]
    assert list(clf.predict(X)) == list(y)


# ---------------------------------------------------------------------------------------------
# edge cases and contracts


def test_single_class_training_predicts_that_class() -> None:
    schema = Schema.numeric(2, ["a", "b", "c"])
    X = np.array([[1.0, 2.0], [0.0, 1.0], [3.0, 1.0]])
    for cls in (LiblinearLR, LiblinearSVM):
        clf = cls().fit(X, np.array([1, 1, 1]), schema=schema)
        assert list(clf.predict(X)) == [1, 1, 1]
        assert list(np.argmax(clf.decision_function(X), axis=1)) == [1, 1, 1]
    p = LiblinearLR().fit(X, np.array([2, 2, 2]), schema=schema).predict_proba(X)
    np.testing.assert_array_equal(p, np.tile([0.0, 0.0, 1.0], (3, 1)))


def test_absent_class_gets_no_probability_and_no_score() -> None:
    schema = Schema.numeric(1, ["a", "b", "c"])
    X = np.array([[0.0], [1.0], [0.2], [0.9]])
    clf = LiblinearLR(C=10.0).fit(X, np.array([0, 2, 0, 2]), schema=schema)
    p = clf.predict_proba(X)
    assert np.all(p[:, 1] == 0) and np.allclose(p.sum(1), 1.0)
    assert np.all(clf.decision_function(X)[:, 1] == -np.inf)


def test_zero_decision_value_goes_to_liblinears_second_label() -> None:
    # no bias and an all-zero test row: f = 0 exactly; LIBLINEAR predicts label[1]
    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.2], [0.1, 1.0]])
    y = np.array([1, 0, 1, 0])
    clf = LiblinearSVM(B=-1.0, solver=1).fit(X, y)
    ref = _direct(X, y, np.zeros((1, 2)), "-s 1 -c 1 -q", 0)
    assert clf.predict(np.zeros((1, 2)))[0] == ref["labels"][0] == ref["order"][1]
    assert np.argmax(clf.decision_function(np.zeros((1, 2))), axis=1)[0] == ref["labels"][0]


@pytest.mark.parametrize("cls, solver", [(LiblinearLR, 0), (LiblinearSVM, 1), (LiblinearSVM, 2)])
def test_multiclass_exact_ties_go_to_liblinears_first_label_in_every_path(cls, solver, tmp_path) -> None:
    # no bias and an all-zero row: every decision value is 0; LIBLINEAR takes the first of its labels (the
    # first to appear in training, here code 2), and so must the argmax that the pipeline and harness take
    X = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [2, 0, 0], [0, 2, 0], [0, 0, 2.0], [1, 1, 0]])
    y = np.array([2, 1, 0, 2, 1, 0, 1])
    Q = np.array([[0.0, 0, 0], [1.0, 0, 0], [0, 0, 3.0]])
    ref = _direct(X, y, Q, f"-s {solver} -c 1 -q", 0)
    assert ref["order"][0] == 2 and np.all(ref["values"][0] == 0)
    clf = cls(B=-1.0, solver=solver).fit(X, y, schema=Schema.numeric(3, ["a", "b", "c"]))
    assert clf.predict(Q).tolist() == ref["labels"].tolist()
    assert np.argmax(clf.decision_function(Q), axis=1).tolist() == ref["labels"].tolist()
    head = "@relation ties\n" + "".join(f"@attribute x{j} numeric\n" for j in range(3))
    head += "@attribute class {a,b,c}\n@data\n"
    for name, rows, codes in (("train", X, y), ("test", Q, np.zeros(len(Q), dtype=np.int64))):
        body = "".join(",".join(map(repr, r.tolist())) + "," + "abc"[k] + "\n" for r, k in zip(rows, codes))
        (tmp_path / f"{name}.arff").write_text(head + body, encoding="utf-8")
    fitted = tk.Pipeline(f"{cls._kind}:B=-1,solver={solver}").fit(tk.load_arff(tmp_path / "train.arff"))
    assert fitted.predict(tk.load_arff(tmp_path / "test.arff")).y_pred.tolist() == ref["labels"].tolist()


def test_auto_solver_picks_primal_for_tall_data_and_dual_for_wide() -> None:
    rng = np.random.default_rng(2)
    tall = rng.normal(size=(50, 3))
    wide = rng.normal(size=(10, 30))
    y50, y10 = (tall[:, 0] > 0).astype(int), np.arange(10) % 2
    a = LiblinearSVM(C=1.0).fit(tall, y50)
    assert a.solver_ == 2
    ref = _direct(tall, y50, tall, "-s 2 -c 1 -B 1 -q", 0)
    np.testing.assert_array_equal(a.predict(tall), ref["labels"])
    assert LiblinearSVM().fit(wide, y10).solver_ == 1
    assert LiblinearSVM(solver=3).fit(tall, y50).solver_ == 3


def test_sample_weights_are_refused_but_unit_weights_pass() -> None:
    X = np.array([[0.0], [1.0]])
    y = np.array([0, 1])
    LiblinearLR().fit(X, y, sample_weight=np.ones(2))
    with pytest.raises(CapabilityError, match="weights"):
        LiblinearLR().fit(X, y, sample_weight=np.array([1.0, 2.0]))


@pytest.mark.parametrize("params,match", [
    ({"solver": 1}, "solver"), ({"solver": "auto"}, "solver"), ({"C": 0.0}, "C must"), ({"tol": -1.0}, "tol"),
    ({"nominal_encoding": "binary"}, "nominal_encoding"), ({"scale": "zscore"}, "scale"),
])
def test_bad_parameters(params, match) -> None:
    with pytest.raises(ParameterError, match=match):
        LiblinearLR(**params).fit(np.array([[0.0], [1.0]]), np.array([0, 1]))


def test_svm_gives_no_probabilities() -> None:
    clf = LiblinearSVM().fit(np.array([[0.0], [1.0]]), np.array([0, 1]))
    with pytest.raises(CapabilityError):
        clf.predict_proba(np.array([[0.5]]))


def test_state_round_trip_keeps_predictions() -> None:
    ds = tk.load_arff(shared_path("uci", "autos.arff"))
    schema = Schema.from_dataset(ds)
    clf = LiblinearLR(C=1.0, scale="minmax").fit(ds.X, ds.y, schema=schema)
    meta, arrays = clf.get_state()
    import json

    json.dumps(meta)  # the JSON half really is JSON
    assert not any(isinstance(v, np.ndarray) and v.dtype == object for v in arrays.values())
    again = LiblinearLR.from_state(clf.get_params(), json.loads(json.dumps(meta)), arrays)
    np.testing.assert_array_equal(again.predict_proba(ds.X), clf.predict_proba(ds.X))


def test_registration_grid_and_capabilities() -> None:
    from toolkit.plugin_host.registry import expand_grid

    for name, probs in (("liblinear-lr", True), ("liblinear-svm", False)):
        spec = tk.get_registry().get("classifier", name)
        points = expand_grid(spec.param_grid)
        assert len(points) == 36
        assert list(spec.param_grid) == ["C", "B"]
        assert points[:2] == [{"C": 0.01, "B": 0.01}, {"C": 0.01, "B": 0.1}]  # C outer, B inner
        assert spec.capabilities.probabilities is probs
        assert spec.capabilities.sample_weight is False
        assert spec.capabilities.sparse and spec.capabilities.nominal and spec.capabilities.missing


# ---------------------------------------------------------------------------------------------
# through the harness: the thesis protocol reproduces published Table 3 cells (algorithms.md 6.1)


@pytest.mark.parametrize("dataset,errors", [("iris", 1), ("labor", 0), ("haberman", 11), ("hepatitis", 9)])
def test_thesis_protocol_lr_reproduces_table3(dataset, errors) -> None:
    path = shared_path("uci", f"{dataset}.arff")
    res = tk.evaluate(path, ["liblinear-lr:nominal_encoding=index,tol=0.001"], protocol="thesis",
                      metrics=["error"])
    rec = res.records[0]
    assert rec["status"] == "ok"
    assert len(rec["tuning"]) == 36
    assert rec["metrics"]["errors"] == errors


def test_harness_passes_the_split_seed_and_is_deterministic() -> None:
    path = shared_path("uci", "vote.arff")
    runs = [tk.evaluate(path, ["liblinear-svm:C=[0.1,1],B=1"], runs=2, seed=3, metrics=["error"]) for _ in range(2)]
    a, b = ([(r["repetition"], r["chosen_params"], r["predictions"]["y_pred"]) for r in res.records] for res in runs)
    assert a == b


def test_default_metrics_leave_out_probability_metrics_for_the_svm() -> None:
    res = tk.evaluate(shared_path("uci", "iris.arff"), ["liblinear-svm:C=1,B=1"], runs=1)
    metrics = res.records[0]["metrics"]
    assert "error" in metrics and "accuracy" in metrics and "log-loss" not in metrics
    res = tk.evaluate(shared_path("uci", "iris.arff"), ["liblinear-lr:C=1,B=1"], runs=1)
    assert "log-loss" in res.records[0]["metrics"]


# ---------------------------------------------------------------------------------------------
# dual_fallback=false: the Java port's capped dual solve (algorithms.md 2.9, revision 2)


def _primal_objective(clf, Z: np.ndarray, y: np.ndarray, C: float, B: float) -> float:
    """Sum over the one-vs-rest problems of 1/2 |w|^2 + C sum max(0, 1 - y_i w.x_i)^2, the bias weight
    (intercept / B) regularised like any other, as LIBLINEAR's -B does."""
    labels = np.asarray(clf.labels_)
    total = 0.0
    for row in range(clf.coef_.shape[0]):
        positive = labels[row]
        sign = np.where(y == positive, 1.0, -1.0)
        w, b = clf.coef_[row], clf.intercept_[row]
        margin = sign * (Z @ w + b)
        total += 0.5 * (w @ w + (b / B) ** 2) + C * np.sum(np.maximum(0.0, 1.0 - margin) ** 2)
    return float(total)


@pytest.mark.parametrize("dataset", ["ionosphere", "iris"])
def test_without_fallback_a_converged_dual_is_liblinears_solution(dataset) -> None:
    # C = 0.1 on these data: the dual converges well within 300 iterations, so C LIBLINEAR never falls back
    # and both solvers stop near the optimum that the primal solver finds at a tight tolerance
    ds = tk.load_arff(shared_path("uci", f"{dataset}.arff"))
    schema = Schema.from_dataset(ds)
    ours = LiblinearSVM(C=0.1, B=1.0, solver=1, tol=0.001, dual_fallback=False, random_state=1).fit(
        ds.X, ds.y, schema=schema)
    optimum = LiblinearSVM(C=0.1, B=1.0, solver=2, tol=1e-9).fit(ds.X, ds.y, schema=schema)
    ref = _direct(ds.X, ds.y, ds.X, "-s 1 -c 0.1 -B 1 -e 0.001 -q", 1)
    np.testing.assert_array_equal(ours.predict(ds.X), ref["labels"])
    np.testing.assert_allclose(ours.coef_, optimum.coef_, atol=1e-3 * np.abs(optimum.coef_).max())
    assert sorted(ours.labels_.tolist()) == sorted(ref["order"])
    if len(ours.labels_) == 2:  # LIBLINEAR's first label is the one a positive value predicts
        dec = ours.decision_function(ds.X)
        np.testing.assert_array_equal(ours.predict(ds.X), np.argmax(dec, axis=1))


def test_without_fallback_the_dual_stops_at_1000_iterations_with_its_last_iterate() -> None:
    # anneal, index-coded and unscaled as the thesis ran it: the dual does not converge. C LIBLINEAR falls back
    # to the primal and reaches a far lower objective; the capped dual stops where it is after 1000 iterations
    # (a longer solve ends elsewhere, so the cap, not the tolerance, stopped it)
    from toolkit.plugins.linear.features import Preprocessing
    from toolkit.plugins.linear.liblinear import train_dual_without_fallback

    ds = tk.load_arff(shared_path("uci", "anneal.arff"))
    schema = Schema.from_dataset(ds)
    C, B = 1.0, 1.0
    capped = LiblinearSVM(C=C, B=B, solver=1, tol=0.001, nominal_encoding="index", dual_fallback=False,
                          random_state=2).fit(ds.X, ds.y, schema=schema)
    fallback = LiblinearSVM(C=C, B=B, solver=1, tol=0.001, nominal_encoding="index", random_state=2).fit(
        ds.X, ds.y, schema=schema)
    Z = Preprocessing.from_state(capped, "prep_").transform(ds.X).toarray()
    codes = np.asarray(ds.y, dtype=np.int64)
    longer = LiblinearSVM(C=C, B=B).fit(ds.X, ds.y, schema=schema)  # a container for the longer solve's arrays
    longer.labels_, longer.coef_, longer.intercept_ = train_dual_without_fallback(
        sp.csr_matrix(Z), codes, C, B, 0.001, 2, max_iter=5000)
    p_capped, p_longer, p_fallback = (_primal_objective(m, Z, codes, C, B) for m in (capped, longer, fallback))
    assert p_capped > 1.5 * p_fallback and p_longer > p_fallback
    assert np.abs(capped.coef_ - longer.coef_).max() > 0.1 * np.abs(capped.coef_).max()
    # the unconverged models are what the thesis's SVM column measured: many more training errors
    assert np.mean(capped.predict(ds.X) != ds.y) > 3 * np.mean(fallback.predict(ds.X) != ds.y)


def test_without_fallback_is_seeded_and_handles_one_class_and_the_solver_choice() -> None:
    ds = tk.load_arff(shared_path("uci", "anneal.arff"))
    schema = Schema.from_dataset(ds)
    fit = lambda seed, **kw: LiblinearSVM(C=1.0, dual_fallback=False, nominal_encoding="index", random_state=seed,
                                          **kw).fit(ds.X, ds.y, schema=schema)
    a, b, c = fit(4), fit(4), fit(5)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)  # unconverged: the random order shows
    assert a.solver_ == 1  # "auto" means the dual here, although instances outnumber features
    assert fit(4, solver=3).solver_ == 3
    one = LiblinearSVM(dual_fallback=False).fit(np.eye(3), np.array([1, 1, 1]), schema=Schema.numeric(3, ["a", "b"]))
    np.testing.assert_array_equal(one.predict(np.ones((2, 3))), [1, 1])


def test_without_fallback_bad_options_and_missing_scikit_learn(monkeypatch) -> None:
    X, y = np.eye(4), np.array([0, 1, 0, 1])
    with pytest.raises(ParameterError, match="dual_fallback must be true or false"):
        LiblinearSVM(dual_fallback="no").fit(X, y)
    with pytest.raises(ParameterError, match="solver 2 is the primal"):
        LiblinearSVM(dual_fallback=False, solver=2).fit(X, y)
    import sys

    monkeypatch.setitem(sys.modules, "sklearn.svm", None)  # import fails as if scikit-learn were absent
    with pytest.raises(CapabilityError, match=r"arff-toolkit\[sklearn\]"):
        LiblinearSVM(dual_fallback=False).fit(X, y)
    assert LiblinearSVM().fit(X, y).predict(X).shape == (4,)  # the default path needs no scikit-learn


def test_ctrl_c_during_training_is_raised_when_training_returns(monkeypatch) -> None:
    """LIBLINEAR's quiet mode prints through a ctypes callback, and a KeyboardInterrupt raised inside a ctypes
    callback is lost ('Exception ignored on calling ctypes callback'): a Ctrl-C during training let the run go
    on to its end with exit 0. Here the training calls back into Python (libc's qsort with a Python
    comparison, as LIBLINEAR calls its print function) after SIGINT came."""
    import signal

    import liblinear.liblinearutil as util

    from toolkit.plugins.linear import liblinear as plugin

    real_train = util.train

    def ctrl_c_in_a_callback(a, b):   # SIGINT comes while C code runs a Python callback
        signal.raise_signal(signal.SIGINT)
        return 0

    compare = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(ctrl_c_in_a_callback)

    def interrupted_train(prob, param):
        items = (ctypes.c_int * 2)()
        ctypes.CDLL(None).qsort(items, 2, ctypes.sizeof(ctypes.c_int), compare)
        return real_train(prob, param)

    X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.2], [0.1, 1.0]])
    y = np.array([1, 0, 1, 0])
    with monkeypatch.context() as mp:
        mp.setattr(util, "train", interrupted_train)
        with pytest.raises(KeyboardInterrupt):
            LiblinearLR().fit(X, y)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    # and the callback that swallows it, without the guard: the exception is lost
    with monkeypatch.context() as mp:
        mp.setattr(util, "train", interrupted_train)
        mp.setattr(plugin, "keeping_interrupts", lambda call: call())
        LiblinearLR().fit(X, y)   # no KeyboardInterrupt: what happened before
