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
from conftest import PEAK_KB, ROOT
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


@pytest.mark.parametrize("name, first", [("p.csv", "instance,actual,predicted"), ("p.txt", "  inst"),
                                         ("p.arff", "@relation vote"), ("p.json", "{")])
def test_predict_output_format_follows_the_extension(tmp_path, name, first):
    model = tmp_path / "m.tkm"
    runner.invoke(app, ["train", "vote", "-c", "nb-weka", "-o", str(model)])
    target = tmp_path / name
    result = runner.invoke(app, ["predict", str(model), "vote", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert target.read_text().startswith(first)
    forced = runner.invoke(app, ["predict", str(model), "vote", "-o", str(tmp_path / "q.csv"), "--format", "table"])
    assert forced.exit_code == 0 and (tmp_path / "q.csv").read_text().startswith("  inst")


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
    """Replace one member and leave the rest as it is (a naive edit: the checksum no longer matches)."""
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members[member] = data
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)


def _resign(path, member, data):
    """Replace one member and rewrite the header's sizes and checksum, as an editor who knows the format
    would: the checksum passes, so only the deeper checks can refuse what was changed."""
    from toolkit.models.model_file import _checksum

    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members[member] = data
    head = json.loads(members["toolkit-model.json"])
    body = {n: members[n] for n in ("meta.json", "arrays.npz")}
    head["members"] = {n: len(b) for n, b in body.items()}
    head["sha256"] = _checksum(body)
    members["toolkit-model.json"] = json.dumps(head).encode()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)


def _refused(path, *needles):
    result = runner.invoke(app, ["predict", str(path), "vote"])
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in result.output, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def vote_model(tmp_path):
    model = tmp_path / "m.tkm"
    result = runner.invoke(app, ["train", "vote", "-c", "nb-weka", "-o", str(model)])
    assert result.exit_code == 0, result.output
    return model


def _copy(src, tmp_path, name):
    dst = tmp_path / name
    dst.write_bytes(src.read_bytes())
    return dst


def _meta(path):
    with zipfile.ZipFile(path) as zf:
        return json.loads(zf.read("meta.json"))


def test_reversed_class_list_is_refused(vote_model, tmp_path):
    """Format 1 accepted this and relabelled every prediction."""
    meta = _meta(vote_model)
    meta["classes"] = meta["classes"][::-1]
    naive = _copy(vote_model, tmp_path, "naive.tkm")
    _rewrite(naive, "meta.json", json.dumps(meta).encode())
    _refused(naive, "checksum")
    signed = _copy(vote_model, tmp_path, "signed.tkm")
    _resign(signed, "meta.json", json.dumps(meta).encode())
    _refused(signed, "class list")


def _edit_array(path, name, edit):
    import io

    with zipfile.ZipFile(path) as zf:
        arrays = dict(np.load(io.BytesIO(zf.read("arrays.npz"))))
    assert name in arrays, sorted(arrays)
    arrays[name] = edit(arrays[name])
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    _resign(path, "arrays.npz", buffer.getvalue())


@pytest.mark.parametrize("classifier, dataset, array, edit", [
    ("liblinear-lr", "iris", "classifier/classes_", lambda a: np.concatenate([a, a[:1]])),   # a class too many
    ("nb-multinomial", "iris", "classifier/coef_", lambda a: a[:-1]),                         # a class's row cut
    ("cmls", "vote", "classifier/prep_fill_", lambda a: a[:-1]),                              # one fill value short
    # codes that name no class (found by a review, 2026-12-08): the probe's two rows predicted code 0, the
    # rest -1, shown as the last class while the summary counted them wrong
    ("nb-weka", "vote", "classifier/classes_", lambda a: -a),
    ("liblinear-lr", "iris", "classifier/classes_", lambda a: a[::-1]),
])
def test_model_state_arrays_of_the_wrong_size_are_refused_at_load(tmp_path, classifier, dataset, array, edit):
    """Arrays edited with the checksum redone (a file's state changed by hand or by an incompatible
    plugin): liblinear with 4 labels for 3 classes loaded and predicted with shifted labels, nb-multinomial
    with one row of coef_ for two classes wrote one probability per row, cmls with a fill value short
    failed only on data with missing values, as the plugin's bug. The load-time probe now checks the
    probabilities' shape, the classifier's classes and a row of missing values."""
    model = tmp_path / "m.tkm"
    result = runner.invoke(app, ["train", dataset, "-c", classifier, "-o", str(model)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["predict", str(model), dataset])
    assert result.exit_code == 0, result.output                  # the file as written predicts
    _edit_array(model, array, edit)
    result = runner.invoke(app, ["predict", str(model), dataset])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "Traceback" not in result.output, result.output
    assert "does not make a working model" in lines[0] and "m.tkm" in lines[0]


@pytest.mark.parametrize("edit, needle", [
    (lambda m: m["header"]["attributes"][0].__setitem__("values", None), "attribute 1 is nominal without a list"),
    (lambda m: m["header"]["attributes"][0].pop("values"), "attribute 1 is nominal without a list"),
    (lambda m: m["training"].__setitem__("class_weights", [150.0]), "training summary is malformed"),
    (lambda m: m.__setitem__("training", None), "training summary is malformed"),
    (lambda m: m["training"].__setitem__("dataset", 5), "training summary is malformed"),
], ids=["values-null", "values-gone", "weights-short", "training-null", "dataset-number"])
def test_malformed_training_summary_or_header_values_are_refused_at_load(vote_model, tmp_path, edit, needle):
    """meta.json edited with the checksum redone: these loaded, then predict ended in a traceback when it
    compared the headers (KeyError, TypeError) or summarised labelled data (IndexError, AttributeError)."""
    meta = _meta(vote_model)
    edit(meta)
    signed = _copy(vote_model, tmp_path, "signed.tkm")
    _resign(signed, "meta.json", json.dumps(meta).encode())
    _refused(signed, needle)


def test_a_model_of_a_blocked_plugin_says_blocked_not_missing(vote_model):
    """--block naive-bayes, then a model of nb-weka: the message said the plugin was not installed and to
    install arff-toolkit, which was installed."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "toolkit", "--block", "naive-bayes", "predict", str(vote_model), "vote"],
                          capture_output=True, text=True, timeout=120)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "comes from the plugin 'naive-bayes', which is blocked" in lines[0] and "install" not in lines[0]


def test_a_meta_json_that_would_expand_in_memory_is_refused_before_parsing(vote_model, tmp_path, monkeypatch):
    """A 99 MB meta.json with an unknown key of empty lists (checksum redone) took 2.6 GB and 30 s, then
    loaded. Its parse cost is estimated first (limits lowered here to a 1,000-character text)."""
    from toolkit import json_limits

    monkeypatch.setattr(json_limits, "MIN_CHECKED", 1_000)
    monkeypatch.setattr(json_limits, "EXPANSION_FLOOR", 0)
    assert runner.invoke(app, ["predict", str(vote_model), "vote"]).exit_code == 0   # the real file loads
    meta = _meta(vote_model)
    meta["junk"] = [[] for _ in range(20_000)]
    signed = _copy(vote_model, tmp_path, "signed.tkm")
    _resign(signed, "meta.json", json.dumps(meta).encode())
    _refused(signed, "meta.json: ", "lists and objects", "would take about")


def test_flipped_byte_in_deflated_data_is_refused(vote_model, tmp_path):
    """A flip inside compressed data used to end in an uncaught zlib.error."""
    with zipfile.ZipFile(vote_model) as zf:
        info = zf.getinfo("arrays.npz")
        offset = info.header_offset + 30 + len(info.filename) + len(info.extra) + info.compress_size // 2
    data = bytearray(vote_model.read_bytes())
    data[offset] ^= 0xFF
    flipped = tmp_path / "flipped.tkm"
    flipped.write_bytes(bytes(data))
    _refused(flipped)


def test_zip_bomb_meta_is_refused_without_inflating_it(vote_model, tmp_path):
    """A file of a few hundred KB whose meta.json inflates to 400 MB (it used to load, at 891 MB)."""
    import subprocess
    import sys

    bomb = tmp_path / "bomb.tkm"
    with zipfile.ZipFile(vote_model) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("toolkit-model.json", members["toolkit-model.json"])
        with zf.open("meta.json", "w", force_zip64=True) as fh:
            fh.write(b'{"pad": "')
            chunk = b" " * (1 << 20)
            for _ in range(400):
                fh.write(chunk)
            fh.write(b'"}')
        zf.writestr("arrays.npz", members["arrays.npz"])
    assert bomb.stat().st_size < 2_000_000
    # in a process of its own: the test process's own peak would hide the growth
    code = PEAK_KB + ("import sys\nfrom toolkit.models.model_file import load_model\nbefore = peak()\n"
                      "try:\n    load_model(sys.argv[1])\nexcept Exception as e:\n    print(type(e).__name__, 'limit' in str(e))\n"
                      "print(peak() - before)")
    done = subprocess.run([sys.executable, "-c", code, str(bomb)], capture_output=True, text=True, timeout=120)
    kind, says_limit, grown_kb = done.stdout.split()
    assert (kind, says_limit) == ("ModelFileError", "True"), done.stdout + done.stderr
    assert int(grown_kb) < 100_000  # peak resident memory grew by less than 100 MB
    _refused(bomb, "zip bomb")


def _depth_by_walking(text: str) -> int:
    """The deepest bracket nesting, strings skipped, by walking the text (the reference for the vectorised check)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def test_the_nesting_check_skips_brackets_inside_strings_and_escaped_quotes():
    from toolkit.models.model_file import _json_depth_ok

    rng = np.random.default_rng(7)
    texts = ['{"a": "[[[[", "b": [1, [2]]}', '["\\\\", [["x\\"]]]]"]]', '"\\\\\\"[[["', "", "[]"]
    # outside strings JSON has no backslash; inside them a backslash escapes the next character
    pieces = ["[", "]", "{", "}", ",", "a", '"[{"', '"\\\\"', '"\\""', '"x\\"]]"', '"\\\\\\"{"']
    for _ in range(300):
        texts.append("".join(rng.choice(pieces, size=rng.integers(0, 40))))
    for text in texts:
        deepest = _depth_by_walking(text)
        for limit in {max(deepest - 1, 0), deepest}:
            assert _json_depth_ok(text.encode(), limit) == (deepest <= limit), (text, limit)


def test_deep_nesting_and_cut_header_are_refused(vote_model, tmp_path):
    deep = _copy(vote_model, tmp_path, "deep.tkm")
    _resign(deep, "meta.json", b"[" * 100_000 + b"]" * 100_000)
    _refused(deep, "nests deeper")
    cut = _copy(vote_model, tmp_path, "cut.tkm")
    with zipfile.ZipFile(cut) as zf:
        head = zf.read("toolkit-model.json")
    _rewrite(cut, "toolkit-model.json", head[: len(head) // 2])
    _refused(cut, "not valid JSON")
    truncated = tmp_path / "truncated.tkm"
    truncated.write_bytes(vote_model.read_bytes()[: vote_model.stat().st_size // 2])
    _refused(truncated, "damaged or not a model file")


@pytest.mark.parametrize("edit, needle", [
    (lambda st: st.update(class_count_="many"), "class_count_"),                  # wrong type
    (lambda st: st.update(predict="x_"), "learned attribute"),                     # not a learned attribute
    (lambda st: st.update(__class___="x"), "learned attribute"),                   # dunder
    (lambda st: st.update(unexpected_=1), "no learned attribute"),                 # key the class never has
    (lambda st: st.pop("schema_"), "lacks schema_"),                               # a required key missing
])
def test_edited_state_is_refused(vote_model, tmp_path, edit, needle):
    meta = _meta(vote_model)
    edit(meta["state"]["classifier"])
    edited = _copy(vote_model, tmp_path, "edited.tkm")
    _resign(edited, "meta.json", json.dumps(meta).encode())
    _refused(edited, needle)


@pytest.mark.parametrize("class_index", ["16", 16.5, -1, 17, True])
def test_a_class_index_that_is_not_an_attribute_position_is_refused(vote_model, tmp_path, class_index):
    """A text or fractional class index gave a TypeError traceback in predict (exit 1)."""
    meta = _meta(vote_model)
    assert meta["header"]["class_index"] == 16
    meta["header"]["class_index"] = class_index
    edited = _copy(vote_model, tmp_path, "index.tkm")
    _resign(edited, "meta.json", json.dumps(meta).encode())
    _refused(edited, str(edited), f"class index {class_index!r} is not the position of one of its 17 attributes")


def test_inconsistent_arrays_are_refused(vote_model, tmp_path):
    """Arrays of the right types but shapes that do not fit together: the load-time probe refuses them."""
    with zipfile.ZipFile(vote_model) as zf:
        blob = zf.read("arrays.npz")
    with np.load(io.BytesIO(blob)) as npz:
        arrays = {k: npz[k] for k in npz.files}
    assert arrays["classifier/nominal_log_prob_"].shape[0] > 3  # one row per (attribute, value)
    arrays["classifier/nominal_log_prob_"] = arrays["classifier/nominal_log_prob_"][:3]
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    edited = _copy(vote_model, tmp_path, "shapes.tkm")
    _resign(edited, "arrays.npz", buf.getvalue())
    _refused(edited, "does not make a working model")


def test_other_damage_is_refused(vote_model, tmp_path):
    # an arrays.npz member that carries a pickle (checksum rewritten, as an attacker would)
    buf = io.BytesIO()
    np.savez(buf, evil=np.array([object()], dtype=object), allow_pickle=True)
    pickled = _copy(vote_model, tmp_path, "pickled.tkm")
    _resign(pickled, "arrays.npz", buf.getvalue())
    _refused(pickled, "object array")
    # a whole pickle instead of the archive
    raw = tmp_path / "raw.tkm"
    raw.write_bytes(pickle.dumps({"model": 1}))
    _refused(raw, "not a model file")
    # arrays altered after saving
    altered = _copy(vote_model, tmp_path, "altered.tkm")
    with zipfile.ZipFile(altered) as zf:
        arrays = zf.read("arrays.npz")
    _rewrite(altered, "arrays.npz", arrays[:-10] + b"0123456789")
    _refused(altered, "checksum")
    # an extra member, and an unknown format version
    extra = _copy(vote_model, tmp_path, "extra.tkm")
    _rewrite(extra, "payload.pkl", b"x")
    _refused(extra, "members")
    future = _copy(vote_model, tmp_path, "future.tkm")
    with zipfile.ZipFile(future) as zf:
        head = json.loads(zf.read("toolkit-model.json"))
    head["format_version"] = 99
    _rewrite(future, "toolkit-model.json", json.dumps(head).encode())
    _refused(future, "model format 99")
    # a folder, and a missing file
    _refused(tmp_path, "folder")
    _refused(tmp_path / "absent.tkm", "no such model file")


def test_format_1_files_are_refused_unless_asked_for(tmp_path):
    """The golden files written by toolkit 0.1 (tests/golden/models_v1): their meta is not covered by a
    checksum, so they are refused with one line naming the version; --allow-format-1 reads them."""
    golden = ROOT / "tests" / "golden" / "models_v1" / "iris-nb-weka.tkm"
    result = runner.invoke(app, ["predict", str(golden), "iris"])
    assert result.exit_code == 2
    assert "model format 1 (written by toolkit 0.1.0)" in result.stderr and "retrain" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    result = runner.invoke(app, ["predict", str(golden), "iris", "--allow-format-1", "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("\n") == 151


def test_concurrent_and_interrupted_saves_leave_no_temporary(tmp_path, monkeypatch):
    """Every save writes its own temporary beside the target; a failing save removes it, and one left by
    a killed process is cleaned at the next save."""
    import os

    from toolkit.atomic_write import temporary_name_pattern

    fitted = Pipeline("nb-weka", tune=False).fit(toolkit.load_arff("vote"))
    target = tmp_path / "m.tkm"
    stale = tmp_path / ".m.tkm.999999999.abc.tmp"  # no such process
    stale.write_bytes(b"half a model")
    seen = []
    real = zipfile.ZipFile

    def spy(file, *args, **kwargs):
        seen.append(os.path.basename(str(file)))
        return real(file, *args, **kwargs)

    monkeypatch.setattr(zipfile, "ZipFile", spy)
    save_model(fitted, toolkit.load_arff("vote"), target)
    save_model(fitted, toolkit.load_arff("vote"), target)
    # numpy's in-memory archives left out; each temporary is opened twice (written, then read back)
    seen = list(dict.fromkeys(n for n in seen if not n.startswith("<")))
    assert len(seen) == 2 and seen[0] != seen[1] and all(temporary_name_pattern(target).match(n) for n in seen)
    assert not stale.exists()

    def broken(file, *args, **kwargs):
        if isinstance(file, io.BytesIO):  # numpy's in-memory archive of the arrays
            return real(file, *args, **kwargs)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(zipfile, "ZipFile", broken)
    with pytest.raises(ModelFileError, match="No space left"):
        save_model(fitted, toolkit.load_arff("vote"), target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.tkm"]


def test_missing_plugin_names_the_distribution(tmp_path):
    model = tmp_path / "m.tkm"
    runner.invoke(app, ["train", "vote", "-c", "nb-weka", "-o", str(model)])
    with zipfile.ZipFile(model) as zf:
        meta = json.loads(zf.read("meta.json"))
    meta["components"]["classifier"]["name"] = "knn"
    meta["components"]["classifier"]["distribution"] = "toolkit-knn 0.3"
    _resign(model, "meta.json", json.dumps(meta).encode())
    with pytest.raises(ModelFileError, match="install the plugin distribution toolkit-knn 0.3"):
        load_model(model)


def test_a_model_of_mostly_zero_arrays_saves_to_a_file_that_loads(tmp_path):
    """Loading refuses a member inflating past 64 times its compressed size (a zip bomb); a vocabulary of
    40,000 words of which 50 occur in training made arrays.npz deflate 68-406 times, so `toolkit train`
    wrote a model that load_model then refused. Such a member is now stored uncompressed."""
    import zipfile

    import toolkit as tk

    rng = np.random.default_rng(0)
    d = 40_000
    lines = ["@relation wide"] + [f"@attribute w{i} numeric" for i in range(d)] + ["@attribute class {a,b}", "@data"]
    for i in range(300):
        cols = sorted(rng.choice(50, 5, replace=False))
        lines.append("{" + ",".join(f"{c} {rng.integers(1, 4)}" for c in cols) + f",{d} {'ab'[i % 2]}" + "}")
    data = tmp_path / "wide.arff"
    data.write_text("\n".join(lines) + "\n")
    for name in ("nb-multinomial", "dcm"):
        path = tmp_path / f"{name}.tkm"
        tk.train(str(data), name, out=str(path), tune=False)
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo("arrays.npz")
            assert info.file_size > 1 << 20  # past the 1 MiB any member may inflate to, so the ratio rule applies
            assert info.file_size <= 64 * info.compress_size or info.compress_type == zipfile.ZIP_STORED
        model = tk.load_model(str(path))
        ds = tk.load_arff(str(data))
        direct = tk.Pipeline(name, tune=False).fit(ds).predict(ds)
        np.testing.assert_array_equal(model.predict(ds).y_pred, direct.y_pred)


def _attribute_record(a) -> dict:
    """The header record of one attribute, written out by hand (the reference for AttributeList.to_records)."""
    out = {"name": a.name, "kind": a.kind}
    if a.kind == "nominal":
        out["values"] = list(a.values)
    if a.kind == "date":
        out["date_format"] = a.date_format
    return out


def _mixed_attributes(rng, n):
    from toolkit.data.attributes import Attribute

    kinds = rng.choice(["numeric", "numeric", "nominal", "string", "date"], size=n)
    return [Attribute(f"a{i}\u00e9\"{i % 3}", str(k), tuple(f"v{j}" for j in range(i % 4 + 1)) if k == "nominal" else (),
                      "yyyy-MM-dd" if k == "date" else None) for i, k in enumerate(kinds)]


def test_attribute_records_round_trip_like_one_object_per_attribute():
    from toolkit.data.attributes import AttributeList

    rng = np.random.default_rng(3)
    for n in (0, 1, 7, 300):
        attrs = _mixed_attributes(rng, n)
        listed = AttributeList(attrs)
        records = listed.to_records()
        assert records == [_attribute_record(a) for a in attrs]
        back = AttributeList.from_records(json.loads(json.dumps(records)))
        assert back == listed and list(back) == attrs
        # the older schema layout: every key on every attribute
        full = [{"name": a.name, "kind": a.kind, "values": list(a.values), "date_format": a.date_format} for a in attrs]
        assert AttributeList.from_records(full) == listed


@pytest.mark.parametrize("records, needle", [
    ([{"name": "x", "kind": "numeric", "values": ["a"]}], "only nominal"),
    ([{"name": "x", "kind": "string", "values": ["a"]}], "only nominal"),
    ([{"name": "x", "kind": "integer"}], "unknown kind"),
    ([{"name": "x", "kind": ["numeric"]}], "unknown kind"),
    ([{"name": 3, "kind": "numeric"}], "must be a string"),
    ([{"name": "x"}], "lacks"),
    ([{"name": "x", "kind": "nominal", "values": [1, 2]}], "list of strings"),
    ([{"name": "x", "kind": "relational"}], "relational"),
    ("x", "list of objects"),
])
def test_malformed_attribute_records_are_refused_by_name(records, needle):
    from toolkit.data.attributes import AttributeList
    from toolkit.errors import DatasetError

    with pytest.raises(DatasetError, match=needle):
        AttributeList.from_records(records)


def _first_difference_by_walking(stored, attrs):
    for i in range(min(len(stored), len(attrs))):
        if stored[i] != _attribute_record(attrs[i]):
            return i
    return None


def test_header_difference_finds_the_first_difference_like_walking_every_attribute():
    from toolkit.data.attributes import Attribute, AttributeList
    from toolkit.models.model_file import _first_difference

    rng = np.random.default_rng(11)
    attrs = _mixed_attributes(rng, 60)
    stored = AttributeList(attrs).to_records()
    assert _first_difference(stored, AttributeList(attrs)) is None
    for _ in range(200):
        changed = list(attrs)
        for i in rng.choice(len(attrs), size=rng.integers(1, 4), replace=False):
            a = changed[i]
            how = rng.integers(4)
            if how == 0:
                changed[i] = Attribute(a.name + "x", a.kind, a.values, a.date_format)
            elif how == 1 and a.kind != "nominal":
                changed[i] = Attribute(a.name, "string" if a.kind == "numeric" else "numeric")
            elif how == 2 and a.kind == "nominal":
                changed[i] = Attribute(a.name, "nominal", a.values[::-1] + ("extra",))
            elif a.kind == "date":
                changed[i] = Attribute(a.name, "date", (), "HH:mm")
            else:
                changed[i] = Attribute(a.name, "nominal", ("only",))
        listed = AttributeList(changed)
        want = _first_difference_by_walking(stored, listed)
        assert want is not None and _first_difference(stored, listed) == want
        shorter = AttributeList(changed[:want + 1])
        assert _first_difference(stored, shorter) == want
    # a stored plain record with a key more than name and kind differs (an altered header)
    altered = [dict(r) for r in stored]
    plain = next(i for i, a in enumerate(attrs) if a.kind == "numeric")
    altered[plain]["date_format"] = "x"
    assert _first_difference(altered, AttributeList(attrs)) == plain


def test_a_wide_vocabulary_model_saves_loads_and_checks_its_header(tmp_path):
    """200,000 numeric attributes (a text model's vocabulary): the header and the schema are built from
    the name string and kind bytes, not an object per attribute; the loaded model predicts as before
    and a renamed attribute deep in the header is found."""
    import scipy.sparse as sp

    from toolkit.data.attributes import Attribute, AttributeList
    from toolkit.data.dataset import Dataset

    rng = np.random.default_rng(0)
    n, d = 300, 200_000
    X = sp.random(n, d, density=0.0005, format="csr", random_state=1)
    X.data[:] = rng.integers(1, 5, X.nnz)
    y = rng.integers(0, 2, n)
    attrs = AttributeList.numbered("w", d, then=[Attribute("class", "nominal", ("a", "b"))])
    ds = Dataset("wide", attrs, X, y, d, np.ones(n))
    fitted = Pipeline("nb-multinomial", tune=False).fit(ds)
    path = tmp_path / "wide.tkm"
    save_model(fitted, ds, path)
    model = load_model(path)
    np.testing.assert_array_equal(model.predict(ds).proba, fitted.predict(ds).proba)
    names = attrs.names()
    names[150_000] = "renamed"
    other = Dataset("other", AttributeList.from_records([{"name": m, "kind": "numeric"} for m in names[:-1]]
                                                        + [{"name": "class", "kind": "nominal", "values": ["a", "b"]}]),
                    X, y, d, np.ones(n))
    with pytest.raises(ModelFileError, match="attribute 150001 is 'renamed' numeric, the model expects 'w150001'"):
        model.predict(other)


def test_a_dataset_with_float_class_codes_saves(tmp_path):
    """A Dataset built by hand may hold its class codes as floats; the class-weight count of the model file
    took them as int64 and failed."""
    from toolkit.data.attributes import Attribute
    from toolkit.data.dataset import Dataset

    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    y = np.array([0.0, 1.0, 0.0, 1.0])
    ds = Dataset("floats", [Attribute("x", "numeric"), Attribute("c", "nominal", ("p", "q"))], X, y, 1,
                 np.array([1.0, 2.0, 1.0, 1.0]))
    save_model(Pipeline("nb-gaussian", tune=False).fit(ds), ds, tmp_path / "f.tkm")
    assert load_model(tmp_path / "f.tkm").meta["training"]["class_weights"] == [2.0, 3.0]
