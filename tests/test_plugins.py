"""The plugin system: entry-point loading, isolation of broken plugins, switches, registry validation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import numpy as np
import pytest

import toolkit
from typer.testing import CliRunner

from toolkit import Capabilities, hookimpl
from toolkit.api import ClassifierBase
from toolkit.errors import ParameterError, PluginError, PluginLoadError, ToolkitWarning, UnknownComponentError
from toolkit.plugin_host.manager import BUILTIN_PLUGINS, get_plugin_manager, reset_default_manager
from toolkit.plugin_host.registry import Registry, parse_component

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()


# ----------------------------------------------------------------------------- a real install

@pytest.fixture(scope="module")
def installed_fake(tmp_path_factory):
    """pip-install tests/fake_plugin into a private folder (a real wheel build and install)."""
    target = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                           "--target", str(target), str(ROOT / "tests" / "fake_plugin")],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.fail(f"pip could not install the fake plugin: {proc.stderr[-2000:]}")
    return target


def _toolkit(args: list[str], site: Path, **env: str) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONPATH": str(site), "NO_COLOR": "1", **env}
    return subprocess.run([sys.executable, "-m", "toolkit", *args], capture_output=True, text=True, env=full_env,
                          timeout=300)


def test_installed_plugin_shows_in_plugins_and_list(installed_fake):
    proc = _toolkit(["plugins", "--json"], installed_fake)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    entry = next(p for p in data["plugins"] if p["name"] == "fake")
    assert entry["distribution"] == "toolkit-fake-plugin" and entry["version"] == "0.3.1"
    assert set(entry["hooks"]) == {"register_classifiers", "register_evaluators", "register_commands"}
    assert entry["components"] == {"classifiers": ["fake-majority"], "evaluators": ["fake-share"]}
    assert all(not p["builtin"] for p in data["plugins"])  # built-ins only with --all
    listing = json.loads(_toolkit(["list", "--json"], installed_fake).stdout)
    spec = next(c for c in listing["components"]["classifiers"] if c["name"] == "fake-majority")
    assert spec["plugin"] == "fake" and spec["distribution"] == "toolkit-fake-plugin 0.3.1"
    assert spec["param_grid"] == {"smoothing": [0.0, 1.0]}


def test_installed_plugin_runs_in_evaluate_and_adds_a_command(installed_fake):
    proc = _toolkit(["evaluate", str(ROOT / "tests" / "data" / "tiny.arff"), "-c", "fake-majority", "-c", "nb-weka",
                     "--metric", "error", "--metric", "fake-share", "--json", "--runs", "3"], installed_fake)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    records = [r for r in doc["records"] if r["pipeline"]["name"] == "fake-majority"]
    assert len(records) == 3 and all(r["status"] == "ok" for r in records)
    # the test part has 2 instances (ceil(20/10)); a majority classifier predicts one class for both
    assert all(r["metrics"]["fake-share"] in (0.0, 1.0) for r in records)
    hello = _toolkit(["hello", "--name", "tests"], installed_fake)
    assert hello.returncode == 0 and "hello tests from toolkit-fake-plugin" in hello.stdout


def test_switches_disable_or_block_third_party_plugins(installed_fake):
    off = json.loads(_toolkit(["plugins", "--all", "--json"], installed_fake,
                              TOOLKIT_DISABLE_PLUGIN_AUTOLOAD="1").stdout)
    names = {p["name"] for p in off["plugins"]}
    assert "fake" not in names and set(BUILTIN_PLUGINS) <= names
    blocked = json.loads(_toolkit(["plugins", "--json"], installed_fake, TOOLKIT_BLOCK_PLUGINS="fake").stdout)
    assert blocked["plugins"] == []
    only_none = json.loads(_toolkit(["plugins", "--all", "--json"], installed_fake, TOOLKIT_LOAD_PLUGINS="").stdout)
    assert {p["name"] for p in only_none["plugins"]} == set(BUILTIN_PLUGINS)
    version = _toolkit(["--version"], installed_fake)
    assert f"toolkit {toolkit.__version__}" in version.stdout and "toolkit-fake-plugin 0.3.1" in version.stdout


# ----------------------------------------------------------------------------- broken plugin, in process

def _fake_distribution(folder: Path, dist: str, module: str, entry: str, source: str) -> None:
    info = folder / f"{dist.replace('-', '_')}-0.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.2\n")
    (info / "entry_points.txt").write_text(f"[toolkit.plugins]\n{entry} = {module}\n")
    (folder / f"{module}.py").write_text(source)


def test_broken_plugin_is_reported_and_skipped(tmp_path, monkeypatch):
    source = (ROOT / "tests" / "broken_plugin" / "toolkit_broken_plugin.py").read_text()
    _fake_distribution(tmp_path, "toolkit-broken-plugin", "toolkit_broken_plugin", "broken", source)
    monkeypatch.syspath_prepend(str(tmp_path))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        manager = get_plugin_manager()
    assert [f.name for f in manager.failed] == ["broken"]
    assert manager.failed[0].distribution == "toolkit-broken-plugin"
    assert "Don't hide me" in manager.failed[0].error
    messages = [str(w.message) for w in caught]
    assert any("toolkit-broken-plugin 0.2" in m and "failed to import" in m and "TOOLKIT_STRICT_PLUGINS" in m
               for m in messages)
    assert "nb-weka" in manager.registry.names("classifier")  # the others still work
    reset_default_manager(manager)
    try:
        result = runner.invoke(__import__("toolkit.cli", fromlist=["app"]).app, ["plugins", "--json"])
        assert result.exit_code == 0
        assert json.loads(result.stdout)["failed"][0]["distribution"] == "toolkit-broken-plugin"
    finally:
        reset_default_manager(None)
    monkeypatch.setenv("TOOLKIT_STRICT_PLUGINS", "1")
    with pytest.raises(PluginLoadError, match="Don't hide me"):
        get_plugin_manager()


def test_misspelled_hook_disables_the_plugin_and_says_so(tmp_path, monkeypatch):
    """A plugin implementing a hook the toolkit does not have made every command (--help, plugins) end in a
    traceback; now the plugin is disabled, recorded among the failed ones with a warning, and the rest works
    (TOOLKIT_STRICT_PLUGINS=1 still raises)."""
    _fake_distribution(tmp_path, "toolkit-typo", "toolkit_typo", "typo",
                       "from toolkit import hookimpl\n\n@hookimpl\ndef register_clasifiers(register):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from toolkit.cli import app

    with pytest.warns(ToolkitWarning, match="register_clasifiers, which is no hook of the toolkit"):
        manager = get_plugin_manager()
    assert [f.name for f in manager.failed] == ["typo"] and "typo" not in manager.plugins
    assert "nb-weka" in manager.registry.names("classifier")
    reset_default_manager(manager)
    try:
        for args in (["--help"], ["plugins"], ["list", "classifiers"]):
            result = CliRunner().invoke(app, args)
            assert result.exit_code == 0 and "Traceback" not in result.output, result.output
        assert "FAILED typo" in CliRunner().invoke(app, ["plugins"]).stdout
    finally:
        reset_default_manager(None)
    monkeypatch.setenv("TOOLKIT_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match="no hook of the toolkit"):
        get_plugin_manager()


@pytest.mark.parametrize("body, why", [
    ("    raise RuntimeError('boom')\n", "failed in register_classifiers: RuntimeError: boom"),
    ("    from toolkit.plugins.naive_bayes.classifiers import WekaNaiveBayes\n"
     "    register('own-nb', WekaNaiveBayes, description='x')\n"
     "    register('nb-weka', WekaNaiveBayes, description='a clash with a built-in')\n",
     "'nb-weka' is registered twice"),
])
def test_a_plugin_failing_in_a_register_hook_is_disabled_alone(body, why, tmp_path, monkeypatch):
    """One third-party plugin raising in register_classifiers, or taking a built-in's name, stopped plugins,
    list, evaluate and predict of every built-in; now that plugin alone is disabled (its other components
    too) and recorded."""
    module = f"toolkit_bad_reg_{abs(hash(body)) % 10**8}"   # a module of its own per case (imports are cached)
    _fake_distribution(tmp_path, "toolkit-bad-reg", module, "badreg",
                       "from toolkit import hookimpl\n\n@hookimpl\ndef register_classifiers(register):\n" + body)
    monkeypatch.syspath_prepend(str(tmp_path))
    from toolkit.cli import app

    manager = get_plugin_manager()
    with pytest.warns(ToolkitWarning, match=why):
        names = manager.registry.names("classifier")
    assert "nb-weka" in names and "own-nb" not in names
    assert [f.name for f in manager.failed] == ["badreg"] and why in manager.failed[0].error
    reset_default_manager(manager)
    try:
        result = CliRunner().invoke(app, ["evaluate", "iris", "-c", "nb-weka", "--runs", "1", "-q"])
        assert result.exit_code == 0, result.output
    finally:
        reset_default_manager(None)


# ----------------------------------------------------------------------------- registry validation

class _Plugin:
    def __init__(self, name, factory=None, **kw):
        self.name, self.factory, self.kw = name, factory, kw

    @hookimpl
    def register_classifiers(self, register):
        from toolkit.plugins.naive_bayes.classifiers import WekaNaiveBayes

        register(self.name, self.factory or WekaNaiveBayes, **{"description": "x", **self.kw})


def _manager_with(*plugins):
    manager = get_plugin_manager(autoload=False)
    for i, plugin in enumerate(plugins):
        manager.register(plugin, f"p{i}", distribution=f"dist-{i}", version="1.0")
    return manager


def _refused(manager, message):
    """The plugin p0's registration is refused: it is disabled with a warning naming the problem (the built-ins
    stay), and TOOLKIT_STRICT_PLUGINS=1 raises it."""
    with pytest.warns(ToolkitWarning, match=message):
        registry = manager.registry
    assert [f.name for f in manager.failed] == ["p0"] and "nb-weka" in registry.names("classifier")


def test_duplicate_names_are_an_error_naming_both_plugins(monkeypatch):
    manager = _manager_with(_Plugin("nb-weka"))
    _refused(manager, r"'nb-weka' is registered twice: by plugin 'naive-bayes' .* and by plugin 'p0'")
    monkeypatch.setenv("TOOLKIT_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match="'nb-weka' is registered twice"):
        _ = _manager_with(_Plugin("nb-weka")).registry


@pytest.mark.parametrize("name, kw, message", [
    ("Bad_Name", {}, "kebab-case"),
    ("ok-name", {"description": ""}, "one non-empty line"),
    ("ok-name", {"param_grid": {"nope": [1]}}, "grid key 'nope' is not a keyword parameter"),
    ("ok-name", {"param_grid": {"laplace": [[1, 2]]}}, "not a JSON scalar"),
    ("ok-name", {"param_grid": {"laplace": []}}, "non-empty list"),
])
def test_invalid_registrations_are_refused(name, kw, message, monkeypatch):
    _refused(_manager_with(_Plugin(name, **kw)), message)
    monkeypatch.setenv("TOOLKIT_STRICT_PLUGINS", "1")
    with pytest.raises(PluginError, match=message):
        _ = _manager_with(_Plugin(name, **kw)).registry


def test_factory_that_cannot_construct_is_refused():
    def broken_factory(*, x=1):
        raise RuntimeError("boom")

    _refused(_manager_with(_Plugin("broken-factory", broken_factory)), "calling the factory with its defaults failed")


def test_unknown_names_and_parameters_suggest_close_matches():
    registry = get_plugin_manager(autoload=False).registry
    with pytest.raises(UnknownComponentError, match="did you mean 'nb-weka'"):
        registry.get("classifier", "nb-wekka")
    with pytest.raises(ParameterError, match="did you mean 'laplace'"):
        registry.get("classifier", "nb-weka").create(laplac=1)


def test_parse_component_forms():
    assert parse_component("nb-weka") == ("nb-weka", {})
    assert parse_component("x:C=0.5,B=1,s=weka") == ("x", {"C": [0.5], "B": [1], "s": ["weka"]})
    assert parse_component("x:C=[1,2],B=1|10") == ("x", {"C": [1, 2], "B": [1, 10]})
    with pytest.raises(ParameterError):
        parse_component("x:C")
    with pytest.raises(ParameterError, match="'H' is given twice"):   # not silently the last value
        parse_component("bma-nb:H=1,H=2")


# ----------------------------------------------------------------------------- packaging stays in step

def test_builtin_entry_points_equal_the_fallback_tuple():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = pyproject["project"]["entry-points"]["toolkit.plugins"]
    assert declared == BUILTIN_PLUGINS


def test_builtins_pass_check_pending_and_register_valid_components():
    manager = get_plugin_manager(autoload=False)
    manager.check_pending()
    registry: Registry = manager.registry
    for spec in registry:
        assert spec.description and "\n" not in spec.description
        params = spec.parameters()
        assert set(spec.param_grid) <= set(params)
        assert isinstance(spec.capabilities, Capabilities)


def test_cli_start_imports_no_numpy():
    code = ("import json, sys; from toolkit.cli import app; "
            "print(json.dumps(sorted(sys.modules)))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    imported = set(json.loads(proc.stdout))
    assert "toolkit.cli.application" in imported and "toolkit.plugins.naive_bayes" in imported
    assert not any(name == "numpy" or name.startswith("numpy.") for name in imported)
    assert not any(name == "scipy" or name.startswith("scipy.") for name in imported)


def test_toolkit_configure_reaches_plugins_with_the_run_configuration(tmp_path):
    import toolkit
    from toolkit.plugin_host.manager import default_manager

    seen = []

    class Listener:
        @hookimpl
        def toolkit_configure(self, config):
            seen.append(config)

    manager = get_plugin_manager(autoload=False)
    reset_default_manager(manager)
    try:
        toolkit.evaluate(ROOT / "tests" / "data" / "tiny.arff", ["nb-weka"], runs=2, seed=7,
                         out=tmp_path / "r.jsonl")
        default_manager().register(Listener(), "listener")  # historic: a late plugin still hears it
    finally:
        reset_default_manager(None)
    assert len(seen) == 1 and seen[0].seed == 7 and seen[0].output_dir == tmp_path


def test_plugins_dir_and_block_choose_the_commands_too(tmp_path):
    """--plugins-dir and --block chose the components but not the commands: the application was built
    before they were parsed, so a plugin directory's command did not exist and a blocked plugin's did."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "hello_plugin.py").write_text(
        "from toolkit import hookimpl\n\n"
        "@hookimpl\n"
        "def register_commands(app):\n"
        "    @app.command('dir-hello')\n"
        "    def dir_hello():\n"
        "        print('hello from the folder')\n")
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    run = [sys.executable, "-m", "toolkit"]
    found = subprocess.run([*run, "--plugins-dir", str(folder), "dir-hello"], capture_output=True, text=True,
                           env=env, timeout=120)
    assert found.returncode == 0 and found.stdout.strip() == "hello from the folder", found.stderr
    found = subprocess.run([*run, f"--plugins-dir={folder}", "--debug", "dir-hello"], capture_output=True,
                           text=True, env=env, timeout=120)
    assert found.returncode == 0 and "hello from the folder" in found.stdout, found.stderr
    blocked = subprocess.run([*run, "--block", "naive-bayes", "bma-curve", "--help"], capture_output=True,
                             text=True, env=env, timeout=120)
    assert blocked.returncode == 2 and "No such command 'bma-curve'" in blocked.stderr
    shown = subprocess.run([*run, "bma-curve", "--help"], capture_output=True, text=True, env=env, timeout=120)
    assert shown.returncode == 0 and "BMA" in shown.stdout


def test_convert_writes_and_reads_a_format_a_plugin_adds(tmp_path):
    """convert refused any suffix but its own three before asking the load_dataset / save_dataset hooks."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "rows_format.py").write_text(
        "from toolkit import hookimpl\n\n"
        "@hookimpl\n"
        "def save_dataset(dataset, path, options):\n"
        "    if path.suffix != '.rows':\n"
        "        return None\n"
        "    path.write_text(f'{dataset.n_instances} rows\\n')\n"
        "    return True\n")
    target = tmp_path / "iris.rows"
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([sys.executable, "-m", "toolkit", "--plugins-dir", str(folder), "convert", "iris",
                           str(target)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert target.read_text() == "150 rows\n"
    nobody = subprocess.run([sys.executable, "-m", "toolkit", "convert", "iris", str(tmp_path / "iris.other")],
                            capture_output=True, text=True, env=env, timeout=120)
    assert nobody.returncode == 2 and "no writer for this file name" in nobody.stderr
    assert not (tmp_path / "iris.other").exists()


def test_a_plugin_calling_sys_exit_at_import_is_disabled_not_fatal(tmp_path):
    """SystemExit is no Exception: a plugin module that ran a script's sys.exit() at import ended the toolkit."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "exits.py").write_text("import sys\nsys.exit(3)\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        manager = get_plugin_manager(plugins_dir=folder)
    assert [f.name for f in manager.failed] == ["plugins-dir:exits"]
    assert "SystemExit" in manager.failed[0].error
    assert any("failed to import" in str(w.message) for w in caught)
    assert "nb-weka" in manager.registry.names("classifier")


def test_trace_plugins_lists_the_register_hooks_and_the_others(monkeypatch, capsys):
    """TOOLKIT_TRACE_PLUGINS=1 prints each hook call with its plugins; the register hooks run one plugin at a
    time outside pluggy's monitored caller and were missing."""
    from toolkit.config import RunConfig
    from toolkit.plugin_host.manager import get_plugin_manager

    monkeypatch.setenv("TOOLKIT_TRACE_PLUGINS", "1")
    manager = get_plugin_manager()
    manager.registry
    manager.pm.hook.toolkit_configure.call_historic(kwargs={"config": RunConfig()})
    err = capsys.readouterr().err
    for hook in ("register_classifiers", "register_feature_selectors", "register_example_selectors",
                 "register_evaluators", "toolkit_configure"):
        assert f"[toolkit] hook {hook} -> [" in err, hook
    line = next(x for x in err.splitlines() if "register_classifiers" in x)
    assert "'naive-bayes'" in line and "'linear'" in line


@pytest.mark.parametrize("how", ["env", "cli"])
def test_run_config_debug_follows_the_debug_flag(tmp_path, monkeypatch, how):
    """RunConfig.debug was always False: --debug and TOOLKIT_DEBUG now reach the plugins' configuration."""
    from typer.testing import CliRunner

    from toolkit.cli import app
    from toolkit.config import set_debug

    seen = []

    class Listener:
        @hookimpl
        def toolkit_configure(self, config):
            seen.append(config.debug)

    monkeypatch.delenv("TOOLKIT_DEBUG", raising=False)
    args = ["evaluate", str(ROOT / "tests" / "data" / "tiny.arff"), "-c", "nb-weka", "--runs", "1", "-q"]
    if how == "env":
        monkeypatch.setenv("TOOLKIT_DEBUG", "1")
    else:
        args = ["--debug", *args]
    for debug_args in (args, [a for a in args if a != "--debug"] if how == "cli" else args):
        manager = get_plugin_manager(autoload=False)
        manager.register(Listener(), "listener")
        reset_default_manager(manager)
        try:
            result = CliRunner().invoke(app, debug_args)
            assert result.exit_code == 0, result.stderr
        finally:
            reset_default_manager(None)
            set_debug(False)
    assert seen[0] is True
    if how == "cli":  # the next invocation without --debug is not in debug mode
        assert seen[1] is False


def test_plugins_listing_does_not_say_none_installed_above_failed_ones(tmp_path):
    """`toolkit --plugins-dir D plugins` printed 'no third-party plugins installed' and then the FAILED lines
    of D's plugins."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "broken_one.py").write_text("raise RuntimeError('boom at import')\n")
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    run = subprocess.run([sys.executable, "-m", "toolkit", "--plugins-dir", str(folder), "plugins"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "no third-party plugin loaded (1 failed, below) (--all shows the built-ins)"
    assert lines[1].startswith("FAILED ") and "boom at import" in lines[1]


# ----------------------------------------------------------------------------- a plugin author's review (2026-12-07)

class _NotAClassifier:
    """A selector-like object registered as a classifier: it has fit but no predict."""

    def fit(self, X, y):
        return self


class _ScoresOnly(ClassifierBase):
    """A classifier with decision scores and no predict_proba of its own."""

    def fit(self, X, y, sample_weight=None, schema=None):
        X, y, _ = self._validate_fit(X, y, sample_weight, schema)
        K = len(self.classes_)
        self.centroids_ = np.vstack([X[y == k].mean(axis=0) if np.any(y == k) else np.zeros(X.shape[1])
                                     for k in range(K)])
        return self

    def decision_function(self, X):
        X = self._validate_predict(X)
        return -((X[:, None, :] - self.centroids_[None]) ** 2).sum(axis=2)

    def predict(self, X):
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]


def test_a_factory_of_the_wrong_kind_is_refused_at_registration():
    """It was listed, passed the checks before a run, then failed at the first repetition with an
    AttributeError (and train wrote its model)."""
    _refused(_manager_with(_Plugin("not-a-classifier", _NotAClassifier)),
             "has no predict or predict_proba or decision_function method")


def test_a_classifier_without_predict_proba_is_registered_without_probabilities():
    """Registered without probabilities=False (the docs' example leaves capabilities out), it failed every
    repetition with 'gives no probabilities', even with -m error."""
    import toolkit

    manager = _manager_with(_Plugin("scores-only", _ScoresOnly))
    spec = manager.registry.get("classifier", "scores-only")
    assert spec.capabilities.probabilities is False
    assert manager.registry.get("classifier", "nb-weka").capabilities.probabilities is True
    reset_default_manager(manager)
    try:
        res = toolkit.evaluate("iris", ["scores-only"], runs=2, metrics=["error"])
        assert len(res.ok()) == 2 and all(r["metrics"]["error"] < 0.2 for r in res.ok())
    finally:
        reset_default_manager(None)


class _Evaluators:
    def __init__(self, **kw):
        self.kw = kw

    @hookimpl
    def register_evaluators(self, register):
        register("my-metric", lambda p: 0.0, description="x", **self.kw)


def test_an_evaluator_must_say_which_way_is_better():
    """greater_is_better defaulted to True: an error-like metric had its v / * marks turned round."""
    with pytest.warns(ToolkitWarning, match="greater_is_better=True or False"):
        registry = _manager_with(_Evaluators(needs_proba=False)).registry
    assert "my-metric" not in registry.names("evaluator")
    assert "my-metric" in _manager_with(_Evaluators(greater_is_better=False)).registry.names("evaluator")
    assert "my-metric" in _manager_with(_Evaluators(scalar=False)).registry.names("evaluator")


class _Twice:
    @hookimpl
    def register_classifiers(self, register):
        from toolkit.plugins.naive_bayes.classifiers import WekaNaiveBayes

        register("own-nb", WekaNaiveBayes, description="x")
        register("own-nb", WekaNaiveBayes, description="x")


def test_one_plugin_registering_a_name_twice_is_told_so():
    _refused(_manager_with(_Twice()), "plugin 'p0' .*registers classifier 'own-nb' twice")


class _Forwarding:
    """A wrapper that forwards everything to another library's model through __getattr__."""

    def __init__(self):
        from toolkit.plugins.naive_bayes.classifiers import WekaNaiveBayes

        self._inner = WekaNaiveBayes()

    def __getattr__(self, name):
        return getattr(self.__dict__["_inner"], name)


def test_a_predict_proba_forwarded_by_getattr_counts_as_probabilities():
    spec = _manager_with(_Plugin("forwarding", _Forwarding)).registry.get("classifier", "forwarding")
    assert spec.capabilities.probabilities is True


class _PredictOnly(ClassifierBase):
    """fit and predict only: ClassifierBase's decision_function (the log of predict_proba) does not apply."""

    def fit(self, X, y, sample_weight=None, schema=None):
        X, y, _ = self._validate_fit(X, y, sample_weight, schema)
        self.top_ = int(np.bincount(y).argmax())
        return self

    def predict(self, X):
        X = self._validate_predict(X)
        return np.full(X.shape[0], self.classes_[self.top_])


class _DeepState(ClassifierBase):
    """A state of nested dicts deeper than a model file may hold."""

    _state_schema = {**__import__("toolkit.api", fromlist=["CLASSIFIER_STATE"]).CLASSIFIER_STATE, "tree_": "*"}

    def fit(self, X, y, sample_weight=None, schema=None):
        X, y, _ = self._validate_fit(X, y, sample_weight, schema)
        node = {"leaf": int(np.bincount(y).argmax())}
        for _ in range(70):
            node = {"left": node}
        self.tree_ = node
        return self

    def predict(self, X):
        X = self._validate_predict(X)
        return np.zeros(X.shape[0], dtype=np.int64)


def test_a_classifier_with_fit_and_predict_only_is_evaluated_by_its_predict(tmp_path):
    """A ClassifierBase subclass with only fit and predict failed every repetition ('gives no probabilities'):
    the pipeline asked ClassifierBase's decision_function, the log of predict_proba."""
    manager = _manager_with(_Plugin("predict-only", _PredictOnly))
    reset_default_manager(manager)
    try:
        res = toolkit.evaluate("iris", ["predict-only"], runs=2, metrics=["error"])
        assert len(res.ok()) == 2 and all(abs(r["metrics"]["error"] - 2 / 3) < 0.25 for r in res.ok())
    finally:
        reset_default_manager(None)


def test_train_refuses_a_state_that_a_model_file_cannot_hold(tmp_path):
    """save_model's check before writing read meta.json with json.loads, without the depth limit that loading
    applies: train wrote a file that load_model refused."""
    manager = _manager_with(_Plugin("deep-state", _DeepState))
    reset_default_manager(manager)
    try:
        with pytest.raises(toolkit.ModelFileError, match="not written.*nests deeper"):
            toolkit.train("iris", "deep-state", out=tmp_path / "m.tkm")
        assert not (tmp_path / "m.tkm").exists()
    finally:
        reset_default_manager(None)
