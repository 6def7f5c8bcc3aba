"""Model files: train -> predict is bit-identical to in-memory prediction; damaged, tampered and
mismatched files are refused with exit code 2."""

from __future__ import annotations

import io
import json
import pickle
import zipfile

import numpy as np
import pytest
from typer.testing import CliRunner

import toolkit
from conftest import ROOT
from toolkit.cli import app
from toolkit.errors import ModelFileError
from toolkit.plugin_host.manager import get_plugin_manager
from toolkit.models.model_file import load_model, save_model
from toolkit.models.pipeline import Pipeline

runner = CliRunner()
BUILTIN = [s.name for s in get_plugin_manager(autoload=False).registry.specs("classifier")]


@pytest.mark.parametrize("name", BUILTIN)
def test_saved_model_predicts_bit_identically(name, tmp_path):
    """vote (nominal attributes) for classifiers that take nominal data; otherwise the bundled Reuters
    grain texts, so the saved model also carries the fitted word-count step."""
    spec = get_plugin_manager(autoload=False).registry.get("classifier", name)
    if spec.capabilities.nominal:
        train = test = toolkit.load_arff("vote")
    else:
        train, test = toolkit.load_arff("ReutersGrain-train"), toolkit.load_arff("ReutersGrain-test")
    fitted = Pipeline(name, tune=False).fit(train)
    memory = fitted.predict(test)
    save_model(fitted, train, tmp_path / "m.tkm")
    restored = load_model(tmp_path / "m.tkm").predict(test)
    assert np.array_equal(memory.y_pred, restored.y_pred)
    for a, b in ((memory.proba, restored.proba), (memory.scores, restored.scores)):
        assert (a is None and b is None) or np.array_equal(a, b)


def test_cli_train_then_predict_matches_in_memory(tmp_path):
    model = tmp_path / "vote.tkm"
    result = runner.invoke(app, ["train", "vote", "-c", "bma-nb", "-o", str(model)])
    assert result.exit_code == 0, result.output
    assert "tuned: clf.H=" in result.stderr
    result = runner.invoke(app, ["predict", str(model), "vote", "--format", "json", "--proba"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    fitted = toolkit.train("vote", "bma-nb")
    memory = fitted.predict(toolkit.load_arff("vote"))
    classes = doc["classes"]
    assert [classes.index(r["predicted"]) for r in doc["predictions"]] == memory.y_pred.tolist()
    probs = np.array([list(r["probabilities"].values()) for r in doc["predictions"]])
    assert np.array_equal(probs, memory.proba)  # JSON floats keep all 17 digits


@pytest.mark.parametrize("fmt, first", [("csv", "instance,actual,predicted"), ("table", "  inst"),
                                        ("arff", "@relation vote")])
def test_predict_formats(tmp_path, fmt, first):
    model = tmp_path / "m.tkm"
    runner.invoke(app, ["train", "vote", "-c", "nb-weka", "-o", str(model)])
    result = runner.invoke(app, ["predict", str(model), "vote", "--format", fmt])
    assert result.exit_code == 0 and result.stdout.startswith(first)


def test_header_mismatch_names_the_first_differing_attribute(tmp_path):
    model = tmp_path / "m.tkm"
    runner.invoke(app, ["train", "vote", "-c", "nb-weka", "-o", str(model)])
    result = runner.invoke(app, ["predict", str(model), "iris"])
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert "attribute 1 is 'sepallength' numeric, the model expects 'handicapped-infants' nominal" in result.stderr
    # same attributes, one nominal value list changed
    text = (ROOT / "datasets" / "vote.arff").read_text().replace("@attribute 'crime' { 'n', 'y'}",
                                                                 "@attribute 'crime' { 'n', 'y', 'maybe'}")
    changed = tmp_path / "vote2.arff"
    changed.write_text(text)
    result = runner.invoke(app, ["predict", str(model), str(changed)])
    assert result.exit_code == 2 and "'crime' nominal {n,y,maybe}" in result.stderr


def _rewrite(path, member, data):
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members[member] = data
    with zipfile.ZipFile(path, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)


def test_damaged_and_tampered_files_are_refused(tmp_path):
    model = tmp_path / "m.tkm"
    runner.invoke(app, ["train", "vote", "-c", "nb-weka", "-o", str(model)])
    blob = model.read_bytes()
    truncated = tmp_path / "truncated.tkm"
    truncated.write_bytes(blob[: len(blob) // 2])
    result = runner.invoke(app, ["predict", str(truncated), "vote"])
    assert result.exit_code == 2 and "damaged or not a model file" in result.stderr and "Traceback" not in result.stderr

    # an arrays.npz member that carries a pickle (with a matching checksum, as an attacker would write)
    pickled = tmp_path / "pickled.tkm"
    pickled.write_bytes(blob)
    buf = io.BytesIO()
    np.savez(buf, evil=np.array([object()], dtype=object), allow_pickle=True)
    import hashlib

    with zipfile.ZipFile(pickled) as zf:
        meta = json.loads(zf.read("meta.json"))
    meta["arrays_sha256"] = hashlib.sha256(buf.getvalue()).hexdigest()
    _rewrite(pickled, "arrays.npz", buf.getvalue())
    _rewrite(pickled, "meta.json", json.dumps(meta).encode())
    result = runner.invoke(app, ["predict", str(pickled), "vote"])
    assert result.exit_code == 2 and "pickled objects" in result.stderr

    # a whole pickle instead of the archive
    raw = tmp_path / "raw.tkm"
    raw.write_bytes(pickle.dumps({"model": 1}))
    result = runner.invoke(app, ["predict", str(raw), "vote"])
    assert result.exit_code == 2 and "not a model file" in result.stderr

    # arrays altered after saving: the checksum in meta.json no longer matches
    altered = tmp_path / "altered.tkm"
    altered.write_bytes(blob)
    with zipfile.ZipFile(altered) as zf:
        arrays = zf.read("arrays.npz")
    _rewrite(altered, "arrays.npz", arrays[:-10] + b"0123456789")
    with pytest.raises(ModelFileError, match="checksum"):
        load_model(altered)

    # an extra member, and an unknown format version
    extra = tmp_path / "extra.tkm"
    extra.write_bytes(blob)
    _rewrite(extra, "payload.pkl", b"x")
    with pytest.raises(ModelFileError, match="members"):
        load_model(extra)
    future = tmp_path / "future.tkm"
    future.write_bytes(blob)
    with zipfile.ZipFile(future) as zf:
        meta = json.loads(zf.read("meta.json"))
    meta["format_version"] = 99
    _rewrite(future, "meta.json", json.dumps(meta).encode())
    with pytest.raises(ModelFileError, match="format version 99"):
        load_model(future)


def test_missing_plugin_names_the_distribution(tmp_path):
    model = tmp_path / "m.tkm"
    runner.invoke(app, ["train", "vote", "-c", "nb-weka", "-o", str(model)])
    with zipfile.ZipFile(model) as zf:
        meta = json.loads(zf.read("meta.json"))
    meta["components"]["classifier"]["name"] = "knn"
    meta["components"]["classifier"]["distribution"] = "toolkit-knn 0.3"
    _rewrite(model, "meta.json", json.dumps(meta).encode())
    with pytest.raises(ModelFileError, match="install the plugin distribution toolkit-knn 0.3"):
        load_model(model)
