"""Options that the chosen protocol would ignore are refused before any work (found by the command-line
review: they were silently dropped), and inputs whose results could not be told apart are refused."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

import toolkit
from toolkit.cli import app
from toolkit.errors import ParameterError
from toolkit.evaluation.harness import Protocol

runner = CliRunner()


@pytest.mark.parametrize("args, needle", [
    (["--test", "iris", "--runs", "5"], "--runs would be ignored"),
    (["--test", "iris", "--test-fraction", "0.3"], "--test-fraction would be ignored"),
    (["--test", "iris", "--protocol", "thesis"], "thesis protocol splits the dataset itself"),
    (["--no-tune", "--inner-folds", "3"], "--inner-folds and --validation-fraction would be ignored"),
    (["--no-tune", "--validation-fraction", "0.2"], "would be ignored"),
    (["--inner-folds", "3", "--validation-fraction", "0.2"], "--validation-fraction would be"),
])
def test_options_the_protocol_would_ignore_are_refused(args, needle):
    result = runner.invoke(app, ["evaluate", "iris", "-c", "nb-weka", "-q", *args])
    assert result.exit_code == 2, result.output
    assert needle in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_the_protocols_own_options_still_run():
    for args in (["--test", "iris"], ["--inner-folds", "3", "--runs", "2"], ["--no-tune", "--runs", "2"],
                 ["--validation-fraction", "0.2", "--runs", "2"]):
        result = runner.invoke(app, ["evaluate", "iris", "-c", "nb-weka", "-q", *args])
        assert result.exit_code == 0, (args, result.stderr)


def test_protocol_object_refuses_ignored_settings():
    with pytest.raises(ParameterError, match="--runs would be ignored"):
        Protocol(name="fixed", repetitions=3)
    with pytest.raises(ParameterError, match="--validation-fraction would be ignored"):
        Protocol(inner_folds=5, validation_fraction=0.3)


def test_two_files_of_the_same_data_are_refused(tmp_path):
    """Records are keyed by content: a.arff and b.arff holding the same data gave the same keys and only one
    of them appeared in the table (and in the results file)."""
    src = toolkit.load_arff("iris").path
    for name in ("a.arff", "b.arff"):
        shutil.copy(src, tmp_path / name)
    result = runner.invoke(app, ["evaluate", str(tmp_path / "a.arff"), str(tmp_path / "b.arff"), "-c", "nb-weka",
                                 "-r", "2", "-q", "--out", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2 and "'a' and 'b' hold the same data" in result.stderr
    assert not (tmp_path / "r.jsonl").exists()
    # either file alone runs
    result = runner.invoke(app, ["evaluate", str(tmp_path / "a.arff"), "-c", "nb-weka", "-r", "2", "-q"])
    assert result.exit_code == 0


@pytest.mark.parametrize("jobs", ["100000000000000000000", "5000"])
def test_absurd_job_counts_are_refused_in_one_line(jobs):
    result = runner.invoke(app, ["evaluate", "iris", "-c", "nb-weka", "-r", "2", "-q", "-j", jobs])
    assert result.exit_code == 2 and "jobs must be a whole number from 1 to 1024" in result.stderr


def test_no_more_workers_than_repetitions(monkeypatch):
    from toolkit.evaluation import harness

    seen = []
    original = harness._run_on_workers
    monkeypatch.setattr(harness, "_run_on_workers", lambda order, jobs, finish: (seen.append(jobs),
                                                                               original(order, jobs, finish)))
    toolkit.evaluate("iris", ["nb-weka"], runs=3, jobs=40)
    assert seen == [min(3, 4 * harness._usable_cores())]
    seen.clear()
    monkeypatch.setattr(harness, "_usable_cores", lambda: 2)
    toolkit.evaluate("iris", ["nb-weka"], runs=20, jobs=40)
    assert seen == [8]                              # 4 per core, not 40 forked copies at once


def test_blocking_a_name_no_plugin_has_is_warned_about(recwarn):
    from toolkit.plugin_host.manager import get_plugin_manager

    manager = get_plugin_manager(block=["nope"])
    assert any("--block nope: no plugin has that name" in str(w.message) for w in recwarn.list)
    recwarn.clear()
    manager = get_plugin_manager(block=["metrics"])
    assert not any("no plugin has that name" in str(w.message) for w in recwarn.list)
    assert "confusion-matrix" not in manager.registry.names("evaluator")   # the built-in metrics are blocked


def test_a_pipeline_fitted_directly_refuses_weights_its_selector_would_ignore():
    """A run refuses weighted data for kl / dkl / mi up front; Pipeline.fit called directly gave the
    selector no weights and fitted anyway (found by the text-selection review)."""
    import numpy as np

    from toolkit.errors import CapabilityError

    ds = toolkit.load_arff("iris")
    ds.weights = np.r_[2.0, np.ones(ds.n_instances - 1)]
    with pytest.raises(CapabilityError, match="mi does not accept instance weights"):
        toolkit.Pipeline("nb-weka", feature_selector="mi:k=2", tune=False).fit(ds)
    ds.weights = np.ones(ds.n_instances)
    assert toolkit.Pipeline("nb-weka", feature_selector="mi:k=2", tune=False).fit(ds) is not None
