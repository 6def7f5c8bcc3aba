"""Documentation stays true: the API example runs, every hook and built-in component is documented,
and the example plugin package installs, runs and passes the conformance suite."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT
from toolkit.plugin_host import hookspecs
from toolkit.plugin_host.manager import get_plugin_manager
from toolkit.plugin_host.registry import KINDS


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_api_example_runs(tmp_path, monkeypatch, capsys):
    text = (ROOT / "docs" / "api.md").read_text()
    example = next(b for b in _python_blocks(text) if "toolkit.load_arff" in b)
    monkeypatch.chdir(tmp_path)
    exec(compile(example, "docs/api.md", "exec"), {"__name__": "docs_api_example"})
    printed = capsys.readouterr().out
    assert "balanced + fewest-missing + bma-nb" in printed
    assert "training error of the saved model" in printed
    assert "grain: 500 words" in printed


def _hooks() -> dict[str, list[str]]:
    out = {}
    for name, fn in inspect.getmembers(hookspecs, inspect.isfunction):
        if hasattr(fn, "toolkit_spec"):
            out[name] = list(inspect.signature(fn).parameters)
    return out


def test_every_hook_and_argument_is_documented():
    text = (ROOT / "docs" / "plugin-hooks.md").read_text()
    headings = dict(re.findall(r"^## (\w+)\(([^)]*)\)", text, flags=re.M))
    hooks = _hooks()
    assert len(hooks) == 8
    for name, args in hooks.items():
        assert name in headings, f"hook {name} is not documented in docs/plugin-hooks.md"
        documented = [a.strip() for a in headings[name].split(",") if a.strip()]
        assert documented == args, f"{name}: documented ({documented}) != spec ({args})"
    assert set(headings) == set(hooks), "docs/plugin-hooks.md documents a hook that does not exist"


def test_every_builtin_component_has_a_section():
    text = (ROOT / "docs" / "plugins.md").read_text()
    sections = set(re.findall(r"^## ([a-z0-9-]+)\s*$", text, flags=re.M))
    registry = get_plugin_manager(autoload=False).registry
    for kind in KINDS:
        for spec in registry.specs(kind):
            assert spec.name in sections, f"{kind} '{spec.name}' has no section in docs/plugins.md"


@pytest.fixture(scope="module")
def example_installed(tmp_path_factory):
    target = tmp_path_factory.mktemp("example-site")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                           "--target", str(target), str(ROOT / "examples" / "toolkit-centroid")],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        pytest.fail(proc.stderr[-2000:])
    return target


def _run(site, *args):
    env = {**os.environ, "PYTHONPATH": str(site), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=600)


def test_example_package_shows_runs_and_conforms(example_installed):
    listing = _run(example_installed, "-m", "toolkit", "plugins", "--json")
    assert listing.returncode == 0, listing.stderr
    entry = next(p for p in json.loads(listing.stdout)["plugins"] if p["name"] == "centroid")
    assert entry["distribution"] == "toolkit-centroid"
    assert entry["components"] == {"classifiers": ["nearest-centroid"], "feature-selectors": ["top-variance"]}
    run = _run(example_installed, "-m", "toolkit", "evaluate", "iris", "-c", "nearest-centroid", "-c", "nb-weka",
               "--fs", "top-variance:k=2", "--runs", "3", "--json")
    assert run.returncode == 0, run.stderr
    records = json.loads(run.stdout)["records"]
    assert {r["status"] for r in records} == {"ok"}
    assert {r["extra"]["n_selected_features"] for r in records} == {2}
    conform = _run(example_installed, "-c",
                   "from toolkit.testing import check_classifier; check_classifier('nearest-centroid'); print('ok')")
    assert conform.returncode == 0 and conform.stdout.strip() == "ok", conform.stderr
