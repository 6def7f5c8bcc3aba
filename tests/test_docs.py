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


def _cli_options() -> tuple[set[str], dict[str, dict[str, object]]]:
    """The root group's options, and per command its options (every spelling) with their defaults."""
    import typer

    from toolkit.cli.application import build_app

    group = typer.main.get_command(build_app())

    def options(cmd) -> dict[str, object]:
        return {o: p.default for p in cmd.params for o in (*p.opts, *p.secondary_opts)}

    return set(options(group)), {name: options(cmd) for name, cmd in group.commands.items()}


def _documented_commands(text: str) -> list[str]:
    """Every `toolkit COMMAND ...` of a page: lines of code blocks (an indented line under one continues it)
    and inline code spans."""
    found = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S):
        current = None
        for line in block.splitlines():
            m = re.search(r"(?:^|[\s$(])(toolkit(?: +\S+)+)", line)
            if m:
                current = len(found)
                found.append(m.group(1))
            elif current is not None and line.startswith(" ") and line.strip().startswith("["):
                found[current] += " " + line.strip()   # the README's option lines under their command
            else:
                current = None
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    found += [span for span in re.findall(r"`([^`\n]+)`", prose) if span.startswith("toolkit ")]
    return found


def test_documented_commands_options_and_defaults_exist():
    """Each `toolkit COMMAND --option` in README.md and docs/*.md names a command and options it has, and
    a documented `[--option NUMBER]` is the option's default."""
    root_options, commands = _cli_options()
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    checked = 0
    for page in pages:
        for doc in _documented_commands(page.read_text()):
            words = doc.split()[1:]
            i = 0
            while i < len(words) and words[i].startswith("-"):   # root options come before the command
                assert words[i] in root_options | {"--help"}, f"{page.name}: `{doc}`: no root option {words[i]}"
                i += 2 if words[i] in ("--plugins-dir", "--cache", "--block") else 1
            if i == len(words) or words[i] in ("as", "import", "COMMAND", "...") or not re.fullmatch(r"[a-z-]+", words[i]):
                continue   # `import toolkit as tk`, `toolkit --help`, the README's `toolkit --cache DIR COMMAND`
            name = words[i]
            assert name in commands, f"{page.name}: `{doc}`: no command '{name}'"
            options = commands[name]
            for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", " ".join(words[i + 1:])):
                assert option in options, f"{page.name}: `{doc}`: '{name}' has no option {option}"
                checked += 1
            for option, value in re.findall(r"\[(--[a-z][a-z0-9-]*) ([0-9.]+)\]", doc):
                if options[option] is not None:   # None: no default, the value is an example
                    assert float(value) == float(options[option]), \
                        f"{page.name}: `{doc}`: {option} defaults to {options[option]}, not {value}"
    assert checked > 50


def test_readme_evaluate_default_metrics_and_table():
    """README: without -m, evaluate computes error, accuracy and, when every classifier gives probabilities,
    log-loss, and shows error's table only; a table per --metric given."""
    text = (ROOT / "README.md").read_text()
    assert "default error, accuracy and, when every classifier" in text and "a table per --metric given" in text
    run = _run("", "-m", "toolkit", "evaluate", "iris", "-c", "nb-weka", "-c", "liblinear-svm", "--runs", "2",
               "-q", "--json")
    assert run.returncode == 0, run.stderr
    records = json.loads(run.stdout)["records"]
    assert all({"error", "accuracy"} <= set(r["metrics"]) and "log-loss" not in r["metrics"] for r in records)
    alone = _run("", "-m", "toolkit", "evaluate", "iris", "-c", "nb-weka", "--runs", "2", "-q", "--json")
    assert alone.returncode == 0, alone.stderr
    assert all({"error", "accuracy", "log-loss"} <= set(r["metrics"]) for r in json.loads(alone.stdout)["records"])
    table = _run("", "-m", "toolkit", "evaluate", "iris", "-c", "nb-weka", "--runs", "2", "-q")
    assert table.returncode == 0, table.stderr
    assert table.stdout.count("mean ± 95% CI") == 1 and table.stdout.splitlines()[-1].startswith("error (%)")
    two = _run("", "-m", "toolkit", "evaluate", "iris", "-c", "nb-weka", "--runs", "2", "-q", "-m", "error",
               "-m", "kappa")
    assert two.returncode == 0, two.stderr
    assert two.stdout.count("mean ± 95% CI") == 2


def _is_module(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def test_api_md_signatures_match_the_code():
    """docs/api.md: every `name=` of a `toolkit.f(...)` call is a parameter of f, and the statistics table
    names the parameters of toolkit.stats's functions as the code does."""
    import importlib

    import toolkit as tk

    text = (ROOT / "docs" / "api.md").read_text()
    checked = 0
    for dotted, args, method, method_args in re.findall(r"`(toolkit(?:\.\w+)+)\(([^`()]*)\)(?:\.(\w+)\(([^`()]*)\))?`",
                                                     text):
        parts = dotted.split(".")
        cut = 1
        while cut < len(parts) and _is_module(".".join(parts[:cut + 1])):
            cut += 1
        obj = importlib.import_module(".".join(parts[:cut]))
        for part in parts[cut:]:
            obj = getattr(obj, part)
        params = inspect.signature(obj).parameters
        for keyword in re.findall(r"(\w+)=", args):
            assert keyword in params, f"docs/api.md: `{dotted}` has no parameter {keyword} ({list(params)})"
            checked += 1
        if method:   # `Class(...).method(a, b=None)`: every argument named as the method names it
            params = list(inspect.signature(getattr(obj, method)).parameters)
            for arg in re.findall(r"(\w+)(?:=\w+)?", method_args):
                assert arg in params, f"docs/api.md: `{dotted}.{method}` has no parameter {arg} ({params})"
                checked += 1
    stats_rows = [line.split("|")[1] for line in text.splitlines() if line.startswith("| `corrected_ttest")
                  or re.match(r"\| `(bayesian|ranks|friedman|nemenyi|wilcoxon)", line)]
    assert len(stats_rows) == 6
    for cell in stats_rows:
        for name, args in re.findall(r"`(\w+)\(([^)]*)\)`", cell):
            params = list(inspect.signature(getattr(tk.stats, name)).parameters)
            for arg in re.findall(r"\w+", args):
                assert arg in params, f"docs/api.md: toolkit.stats.{name} has no parameter {arg} ({params})"
                checked += 1
    assert checked > 30


def test_plugin_hooks_snippets_work_from_a_plugins_dir(tmp_path):
    """docs/plugin-hooks.md: the register_evaluators and register_commands examples, saved as one file in a
    --plugins-dir, add an evaluator that `toolkit evaluate -m` runs and a command that answers."""
    blocks = _python_blocks((ROOT / "docs" / "plugin-hooks.md").read_text())
    chosen = [b for b in blocks if "def register_evaluators" in b or "def register_commands" in b]
    assert len(chosen) == 2
    (tmp_path / "docs_hooks.py").write_text("from toolkit import hookimpl\n\n" + "\n\n".join(chosen))
    listing = _run("", "-m", "toolkit", "--plugins-dir", str(tmp_path), "plugins", "--json")
    assert listing.returncode == 0, listing.stderr
    entry = next(p for p in json.loads(listing.stdout)["plugins"] if p["name"].endswith("docs_hooks"))
    assert entry["components"] == {"evaluators": ["share-first"]}
    run = _run("", "-m", "toolkit", "--plugins-dir", str(tmp_path), "evaluate", "iris", "-c", "nb-weka",
               "-m", "share-first", "--runs", "2", "--json")
    assert run.returncode == 0, run.stderr
    records = json.loads(run.stdout)["records"]
    assert all(0 <= r["metrics"]["share-first"] <= 1 for r in records)
    hello = _run("", "-m", "toolkit", "--plugins-dir", str(tmp_path), "hello", "--name", "docs")
    assert hello.returncode == 0 and hello.stdout.strip() == "hello docs", hello.stderr
