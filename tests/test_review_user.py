"""What a first-time user's review of the command line and the API found (2026-12-07): each case as the
user met it, checked against what the file or the model says independently."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from typer.testing import CliRunner

import toolkit
from conftest import ROOT
from toolkit.cli import app

runner = CliRunner()
IRIS = ROOT / "datasets" / "iris.arff"


@pytest.fixture(scope="module")
def iris_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model")
    model = folder / "iris.tkm"
    assert runner.invoke(app, ["train", str(IRIS), "-c", "nb-weka", "-o", str(model)]).exit_code == 0
    return model


def _predicted_labels(model, data):
    result = runner.invoke(app, ["predict", str(model), str(data), "--format", "csv", "--no-summary"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    return [r["predicted"] for r in rows]


def test_predict_to_arff_keeps_the_true_class_and_adds_the_prediction(iris_model, tmp_path):
    """predict -o p.arff wrote the predictions over the true labels, without a word: 186 of 810 rows of
    segment-test changed, and predicting the file again scored 100 %."""
    out = tmp_path / "p.arff"
    result = runner.invoke(app, ["predict", str(iris_model), str(IRIS), "-o", str(out), "--proba"])
    assert result.exit_code == 0, result.output
    original, written = toolkit.load_arff(IRIS), toolkit.load_arff(out)
    names = [a.name for a in written.attributes]
    assert names[-1] == "class" and written.class_attribute.name == "class"   # still the last attribute
    assert names[4:-1] == ["predicted(class)", "p(Iris-setosa)", "p(Iris-versicolor)", "p(Iris-virginica)"]
    np.testing.assert_array_equal(written.y, original.y)                     # the true labels, untouched
    classes = list(original.classes)
    predicted = [classes[int(c)] for c in np.asarray(written.X[:, 4])]
    assert predicted == _predicted_labels(iris_model, IRIS)
    assert sum(p != classes[t] for p, t in zip(predicted, original.y)) > 0   # the labels did differ somewhere
    np.testing.assert_allclose(np.asarray(written.X[:, 5:8]).sum(axis=1), 1.0, rtol=1e-12)


def test_predict_to_arff_labels_unlabelled_data_in_its_class_column(iris_model, tmp_path):
    text = IRIS.read_text()
    head, data = text.split("@DATA") if "@DATA" in text else text.split("@data")
    rows = [line.rsplit(",", 1)[0] + ",?" for line in data.strip().splitlines() if line and not line.startswith("%")]
    unlabelled = tmp_path / "u.arff"
    unlabelled.write_text(head + "@data\n" + "\n".join(rows) + "\n")
    out = tmp_path / "p.arff"
    result = runner.invoke(app, ["predict", str(iris_model), str(unlabelled), "-o", str(out)])
    assert result.exit_code == 0, result.output
    written = toolkit.load_arff(out)
    assert [a.name for a in written.attributes][-1] == "class" and len(written.attributes) == 5
    classes = list(written.classes)
    assert [classes[int(c)] for c in written.y] == _predicted_labels(iris_model, unlabelled)


def test_a_saved_model_predicts_a_path_or_a_bundled_name(iris_model):
    """load_model(...).predict("iris") was an AttributeError traceback; load_arff and the CLI take names."""
    model = toolkit.load_model(iris_model)
    by_dataset = model.predict(toolkit.load_arff(IRIS))
    for given in ("iris", str(IRIS), IRIS):
        got = model.predict(given)
        np.testing.assert_array_equal(got.y_pred, by_dataset.y_pred)
        np.testing.assert_array_equal(got.y_true, by_dataset.y_true)
    with pytest.raises(TypeError, match="Dataset, a path or a bundled name"):
        model.predict(np.zeros((2, 4)))


def test_convert_says_what_it_did_on_stderr_and_keeps_stdout_for_data(tmp_path):
    """README: messages go to stderr; convert printed its line on stdout (train and predict used stderr)."""
    result = runner.invoke(app, ["convert", "iris", str(tmp_path / "x.csv")])
    assert result.exit_code == 0, result.output
    assert result.stdout == "" and "150 instances, 5 attributes" in result.stderr


def test_compare_and_report_warn_of_an_unfinished_run(tmp_path):
    """A results file of a run that stopped early was tabulated as if complete: the missing repetitions
    looked like failures, and a dataset whose records were all cut off vanished from the table."""
    full = tmp_path / "r.jsonl"
    toolkit.evaluate(["iris", "vote"], ["nb-weka"], runs=3, out=full)
    lines = full.read_text().splitlines(keepends=True)
    assert len(lines) == 7   # the statement and 2 x 3 records
    for args in (["compare", str(full)], ["report", str(full), "-o", str(tmp_path / "full.md")]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0 and "Warning" not in result.stderr, result.output
    from toolkit.evaluation.report import markdown_escape   # the path as Markdown text (its "_" escaped)

    assert f"from {markdown_escape(str(full))}." in (tmp_path / "full.md").read_text()   # the file, not "results in memory"
    toolkit.write_report(toolkit.evaluate(["iris"], ["nb-weka"], runs=2, out=tmp_path / "again.jsonl"),
                         tmp_path / "again.md")
    assert f"from {markdown_escape(str(tmp_path / 'again.jsonl'))}." in (tmp_path / "again.md").read_text()
    part = tmp_path / "part.jsonl"
    part.write_text("".join(lines[:3]) + lines[3][:100])   # two records, then a line cut off
    for args in (["compare", str(part)], ["report", str(part), "-o", str(tmp_path / "part.md")]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning: ")]
        assert len(warnings) == 2, result.stderr
        assert "last line is cut off" in warnings[0] and str(part) in warnings[0]
        assert "4 of 6 repetitions of the experiment were not run" in warnings[1] and "--resume" in warnings[1]
    # and the report itself says it, for a reader without the terminal
    assert "**Warning:** 4 of 6 repetitions of the experiment were not run" in (tmp_path / "part.md").read_text()
    assert "Warning" not in (tmp_path / "full.md").read_text()
    assert toolkit.Results.from_files([part]).not_run() == (4, 6)
    assert toolkit.Results.from_files([full]).not_run() == (0, 6)


def test_interval_lcl_shows_the_bound_on_the_worse_side_of_the_metric(tmp_path):
    """--interval lcl showed 'iris 2.22 (≥ -4.27)' for error: a lower bound of a metric where lower is
    better (and below 0). The one-sided limit on the worse side is the upper one there."""
    from scipy import stats as st

    out = tmp_path / "r.jsonl"
    results = toolkit.evaluate(["iris"], ["nb-weka"], runs=4, out=out, metrics=["error", "accuracy"])
    errors = np.array([r["metrics"]["error"] for r in results.ok()])
    half = st.t.ppf(0.95, len(errors) - 1) * errors.std(ddof=1) / np.sqrt(len(errors))
    assert half > 0
    shown = runner.invoke(app, ["compare", str(out), "--interval", "lcl"]).stdout
    assert f"{100 * errors.mean():.2f} (≤ {100 * (errors.mean() + half):.2f})" in shown
    assert "upper 95% confidence limit" in shown
    shown = runner.invoke(app, ["compare", str(out), "--interval", "lcl", "-m", "accuracy"]).stdout
    assert f"{100 * (1 - errors.mean()):.2f} (≥ {100 * (1 - errors.mean() - half):.2f})" in shown


def test_explain_orders_bma_features_by_their_log_odds_when_the_weights_saturate():
    """On text most bma-nb weights are exactly 1.0 and explain listed those in column order; the rows now
    follow SC - (N+1) log H - SAC (the note says so), computed here from the row's own columns."""
    rng = np.random.default_rng(0)
    n, F = 200, 12
    y = np.arange(n) % 2
    strength = np.linspace(0.5, 3.0, F)                     # later columns separate the classes better
    X = rng.poisson(np.where(y[:, None] == 1, 1.0 + strength, 1.0)).astype(float)
    from toolkit.api import Schema
    from toolkit.data.dataset import Attribute

    schema = Schema([Attribute(f"w{j}", "numeric") for j in range(F)], ("a", "b"))
    clf = toolkit.get_classifier("bma-nb").fit(X, y, schema=schema)
    report = clf.explain()
    rows = report["rows"]
    assert sum(r[1] == 1.0 for r in rows) >= 3                 # saturated weights: the case at hand
    logit = [r[2] - (r[4] + 1) * np.log(clf.H) - r[3] for r in rows]
    assert logit == sorted(logit, reverse=True)


def test_csv_tables_have_a_metric_column_whatever_the_number_of_metrics(tmp_path):
    """With one metric the CSV had no metric column (and named the metric nowhere); with two it had one, so
    a script written for one run broke on the next."""
    out = tmp_path / "r.jsonl"
    toolkit.evaluate(["iris"], ["nb-weka"], runs=2, out=out, metrics=["error", "accuracy"])
    one = runner.invoke(app, ["compare", str(out), "--format", "csv", "-m", "accuracy"]).stdout.splitlines()
    two = runner.invoke(app, ["compare", str(out), "--format", "csv", "-m", "error", "-m", "accuracy"]).stdout.splitlines()
    assert one[0] == two[0] and one[0].startswith("metric,dataset,")
    assert one[1:] == [line for line in two[1:] if line.startswith("accuracy,")]


def test_save_proba_keeps_the_scores_of_a_model_without_probabilities(tmp_path):
    """--save-proba stored nothing for liblinear-svm or cmls: the records held labels only, so average
    precision and break-even could not be recomputed from the results file. Now their scores are stored,
    and recomputing AP from them gives the record's own value."""
    from toolkit.api import Predictions

    results = toolkit.evaluate(["iris"], ["liblinear-svm"], runs=2, out=tmp_path / "r.jsonl", store_proba=True,
                               metrics=["average-precision"])
    classes = tuple(toolkit.load_arff(IRIS).classes)
    ap = toolkit.get_evaluator("average-precision")
    for record in results.ok():
        stored = record["predictions"]
        assert "proba" not in stored and len(stored["scores"]) == len(stored["y_true"])
        scores = np.array(stored["scores"], dtype=float)
        p = Predictions(y_true=np.array(stored["y_true"]), y_pred=np.array(stored["y_pred"]), proba=None,
                        scores=scores, classes=classes)
        assert ap(p) == record["metrics"]["average-precision"]
        np.testing.assert_array_equal(np.argmax(scores, axis=1), stored["y_pred"])


def test_pr_plot_names_the_class_it_draws(tmp_path):
    """On a multi-class result pr-plot drew the first class's curves; neither title nor legend said which."""
    pytest.importorskip("matplotlib")
    out = tmp_path / "r.jsonl"
    toolkit.evaluate(["iris"], ["nb-weka"], runs=1, out=out, metrics=["pr-curve"])
    for args, shown in (([], "Iris-setosa"), (["-l", "Iris-virginica"], "Iris-virginica")):
        figure = tmp_path / f"pr-{shown}.svg"
        result = runner.invoke(app, ["pr-plot", str(out), "-o", str(figure), *args])
        assert result.exit_code == 0, result.output
        assert f"class '{shown}' of 3" in result.stderr
        assert f"class '{shown}', repetition 0" in figure.read_text()


def test_list_shows_the_text_step_and_its_parameters():
    """--text word-counts:k=v takes parameters that toolkit list did not show ('toolkit list text' was an error)."""
    from toolkit.models.text_step import WordCounts
    import inspect

    for kind in ([], ["text-steps"], ["text"]):
        result = runner.invoke(app, ["list", *kind])
        assert result.exit_code == 0, result.output
        assert "text-steps (1)" in result.stdout and "word-counts" in result.stdout
    shown = runner.invoke(app, ["list", "text-steps"]).stdout
    for name in inspect.signature(WordCounts).parameters:
        assert f"{name}:" in shown, name


def test_compare_runs_with_the_options_of_evaluate(tmp_path):
    """compare (the README's main command) lacked --no-tune, --validation-fraction, --positive,
    --positive-below, --text, --dense and --save-proba; each now reaches the run as with evaluate."""
    cases = {"untuned": ["--no-tune", "--positive", "Iris-setosa", "--save-proba"],
             "tuned": ["--validation-fraction", "0.3", "--positive-below", "0.4"]}
    for case, extra in cases.items():
        for command in ("compare", "evaluate"):
            result = runner.invoke(app, [command, "iris", "-c", "nb-gaussian", "--runs", "2", "-q", *extra,
                                         "--out", str(tmp_path / f"{case}-{command}.jsonl")])
            assert result.exit_code == 0, result.output
        a = toolkit.Results.from_files([tmp_path / f"{case}-compare.jsonl"]).ok()
        b = toolkit.Results.from_files([tmp_path / f"{case}-evaluate.jsonl"]).ok()
        key = lambda r: (r["dataset"]["name"], r["repetition"])   # noqa: E731
        a, b = sorted(a, key=key), sorted(b, key=key)
        assert len(a) == len(b) == (2 if case == "untuned" else 6)
        for x, y in zip(a, b):
            assert (x["pipeline"], x["dataset"]["name"], x["n_validation"], x["metrics"]["error"]) == \
                (y["pipeline"], y["dataset"]["name"], y["n_validation"], y["metrics"]["error"])
            assert ":" in x["dataset"]["name"]   # a one-vs-rest task
            if case == "untuned":
                assert x["pipeline"]["tune"] is False and x["predictions"]["proba"] == y["predictions"]["proba"]
            else:
                assert x["pipeline"]["tune"] is True and x["n_validation"] > 0.25 * x["n_train"]
    rejected = runner.invoke(app, ["compare", str(tmp_path / "tuned-compare.jsonl"), "--no-tune"])
    assert rejected.exit_code == 2 and "--no-tune" in rejected.stderr


def test_train_does_not_write_a_model_that_would_not_load(tmp_path, monkeypatch):
    """A plugin whose _state_schema leaves out part of its state: train wrote the file ("model written") and
    predict then refused it, blaming the file. The model is now read back before it replaces anything."""
    from toolkit.plugins.naive_bayes.classifiers import NaiveBayes

    schema = dict(NaiveBayes._state_schema)
    del schema["mean_"]
    monkeypatch.setattr(NaiveBayes, "_state_schema", schema)
    target = tmp_path / "m.tkm"
    target.write_bytes(b"an older model, kept")
    result = runner.invoke(app, ["train", str(IRIS), "-c", "nb-weka", "-o", str(target)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "not written" in lines[0] and "'nb-weka'" in lines[0] and "Traceback" not in lines[0]
    assert target.read_bytes() == b"an older model, kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tkm"]


def test_a_component_bug_in_train_or_predict_is_one_line_naming_the_pipeline(tmp_path, monkeypatch, iris_model):
    """A plugin raising a plain Exception in fit printed a full traceback from train (evaluate records the
    same as a failed repetition)."""
    from toolkit.plugins.naive_bayes.classifiers import NaiveBayes

    def boom(self, *args, **kwargs):
        raise Exception("boom")

    monkeypatch.setattr(NaiveBayes, "fit", boom)
    result = runner.invoke(app, ["train", str(IRIS), "-c", "nb-weka", "-o", str(tmp_path / "m.tkm")])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 1 and len(lines) == 1, result.output
    assert "nb-weka failed while fitting iris: Exception: boom" in lines[0] and "Traceback" not in result.output
    assert not (tmp_path / "m.tkm").exists()
    monkeypatch.undo()
    real = NaiveBayes._joint_log_likelihood

    def boom_on_data(self, X):   # the load-time probe (two rows) passes; the data's 150 rows do not
        if X.shape[0] > 2:
            raise Exception("boom")
        return real(self, X)

    monkeypatch.setattr(NaiveBayes, "_joint_log_likelihood", boom_on_data)
    result = runner.invoke(app, ["predict", str(iris_model), str(IRIS)])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 1 and len(lines) == 1 and "failed while predicting iris" in lines[0], result.output


def test_the_api_takes_one_classifier_alone_and_spec_strings_everywhere():
    """tk.evaluate("iris", "nb-weka") failed with "unknown classifier 'n'" (the name iterated letter by
    letter); tk.get_classifier("bma-nb:H=1.1") was refused although -c, Pipeline and train take it; a class
    given for an object failed with get_params() missing 'self'."""
    from toolkit.errors import ParameterError
    from toolkit.plugins.naive_bayes.classifiers import WekaNaiveBayes

    alone = toolkit.evaluate("iris", "nb-weka", runs=2)
    listed = toolkit.evaluate("iris", ["nb-weka"], runs=2)
    assert [r["metrics"] for r in alone.ok()] == [r["metrics"] for r in listed.ok()] and len(alone.ok()) == 2
    assert len(toolkit.evaluate("iris", WekaNaiveBayes(), runs=1).ok()) == 1
    assert toolkit.get_classifier("bma-nb:H=1.1").H == 1.1
    assert toolkit.get_classifier("nb-weka:prior=mle", laplace=2.0).get_params()["prior"] == "mle"
    with pytest.raises(ParameterError, match="given in the name and as a keyword"):
        toolkit.get_classifier("bma-nb:H=1.1", H=2.0)
    with pytest.raises(ParameterError, match="not the class itself"):
        toolkit.evaluate("iris", [WekaNaiveBayes], runs=1)
    # one (name, params) in any mapping form, a {name: params} dict, and a tuple of two names
    for given, names in ((("nb-weka", [("laplace", 2.0)]), ["nb-weka:laplace=2.0"]),
                         (("nb-weka", {"laplace": 2.0}), ["nb-weka:laplace=2.0"]),
                         ({"nb-weka": {"laplace": 2.0}, "nb-gaussian": {}}, ["nb-gaussian", "nb-weka:laplace=2.0"]),
                         (("nb-weka", "nb-gaussian"), ["nb-gaussian", "nb-weka"])):
        ran = toolkit.evaluate("iris", given, runs=1)
        assert sorted({r["pipeline"]["name"] for r in ran.ok()}) == names, given


def test_baseline_names_the_classifier_when_a_selector_prefixes_every_pipeline(tmp_path):
    """--baseline as -c was written failed with --fs: the pipelines are 'SELECTOR + CLASSIFIER'."""
    from toolkit.models.pipeline import resolve_pipeline_name

    names = ["mi:k=50 + nb-multinomial", "mi:k=50 + dcm"]
    assert resolve_pipeline_name("dcm", names) == "mi:k=50 + dcm"
    assert resolve_pipeline_name("nb-multinomial", names) == "mi:k=50 + nb-multinomial"
    assert resolve_pipeline_name("nb-weka", names) is None
    # ambiguous: the same classifier behind two selectors is not guessed
    assert resolve_pipeline_name("dcm", ["kl:k=5 + dcm", "mi:k=5 + dcm"]) is None
    text = ROOT / "datasets" / "ReutersGrain-train.arff.gz"
    shown = runner.invoke(app, ["compare", str(text), "-c", "nb-multinomial", "-c", "dcm", "--fs", "mi:k=20",
                                "--runs", "2", "-q", "--baseline", "dcm"])
    assert shown.exit_code == 0, shown.output
    assert "worse than mi:k=20 + dcm" in shown.stdout


def test_what_the_api_returns_and_raises_is_exported():
    """Comparison (what compare returns), SavedModel, FittedPipeline, RunFailed and the like lived only in
    submodules, RunFailed in one not on the public list."""
    results = toolkit.evaluate("iris", "nb-weka", runs=2)
    assert isinstance(toolkit.compare(results), toolkit.Comparison)
    fitted = toolkit.Pipeline("nb-weka").fit(toolkit.load_arff("iris"))
    assert isinstance(fitted, toolkit.FittedPipeline)
    for name in ("SavedModel", "SufficientStatistics", "RunFailed", "WorkerDied", "ComponentFailed"):
        assert name in dir(toolkit) and isinstance(getattr(toolkit, name), type), name
    assert issubclass(toolkit.RunFailed, toolkit.ToolkitError) and issubclass(toolkit.ComponentFailed, toolkit.ToolkitError)


def test_nb_weka_with_the_gaussian_variant_is_nb_gaussian():
    """Declaring the prior's default per class (laplace, mle) made nb-weka:variant=gaussian keep WEKA's
    laplace prior (a review of the change found it); the prior follows the variant."""
    ds = toolkit.load_arff(IRIS)
    a = toolkit.get_classifier("nb-weka", variant="gaussian").fit(ds.X, ds.y)
    b = toolkit.get_classifier("nb-gaussian").fit(ds.X, ds.y)
    np.testing.assert_array_equal(a.predict_proba(ds.X), b.predict_proba(ds.X))
    c = toolkit.get_classifier("nb-gaussian", variant="weka").fit(ds.X, ds.y)
    d = toolkit.get_classifier("nb-weka").fit(ds.X, ds.y)
    np.testing.assert_array_equal(c.predict_proba(ds.X), d.predict_proba(ds.X))
