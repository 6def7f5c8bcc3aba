"""The command list of ``toolkit --help`` shows each summary as one sentence, not cut at the source's line breaks."""

from __future__ import annotations

import inspect

from typer.testing import CliRunner

from toolkit.cli import app


def test_command_summaries_are_not_broken_at_docstring_line_breaks():
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "400", "TERM": "dumb"})
    assert result.exit_code == 0, result.output
    import typer.main

    group = typer.main.get_command(app)
    wrapped = 0
    for name, command in group.commands.items():
        first = inspect.cleandoc(command.help or "").split("\n\n")[0]
        lines = first.splitlines()
        if len(lines) < 2:
            continue
        wrapped += 1
        # the words either side of the docstring's first line break appear next to each other
        join = f"{lines[0].split()[-1]} {lines[1].split()[0]}"
        assert join in result.output, (name, join)
    assert wrapped >= 3  # the check above ran on real multi-line summaries


def test_usage_errors_are_one_line_with_exit_code_2():
    """A bad option value, a missing argument and an unknown command, as every other error: one line on
    stderr naming the command, exit code 2 (click's own panel took six lines)."""
    import subprocess
    import sys

    cases = [(["evaluate", "iris", "-c", "nb-weka", "--runs", "abc"], "toolkit evaluate: Invalid value for '--runs'"),
             (["evaluate"], "toolkit evaluate: Missing argument 'datasets'"),
             (["evaluat", "iris"], "No such command 'evaluat'. Did you mean 'evaluate'?"),
             # click raises these without the command's context: the message named no command
             (["evaluate", "iris", "-c", "nb-weka", "--runs"],
              "toolkit evaluate: Option '--runs' requires an argument. (see '"),
             (["--cache"], "toolkit: Option '--cache' requires an argument. (see 'toolkit -h')")]
    for args, needle in cases:
        done = subprocess.run([sys.executable, "-m", "toolkit", *args], capture_output=True, text=True, timeout=120)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and needle in lines[0], (args, done.stderr)
        assert lines[0].startswith("Error: ")
    ok = subprocess.run([sys.executable, "-m", "toolkit", "--version"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and ok.stdout.startswith("toolkit ")


def test_dataset_arguments_name_the_formats_the_commands_read(tmp_path):
    """info, evaluate, explain, train and vocab-curve read CSV and LIBSVM files too, but their help said 'an ARFF
    file' (README and docs/formats.md list all three): the help names the formats, and a CSV file is read."""
    import typer.main

    group = typer.main.get_command(app)
    for name in ("info", "evaluate", "explain", "train", "vocab-curve"):
        argument = next(p for p in group.commands[name].params if p.name in ("dataset", "datasets"))
        assert ".csv" in argument.help and ".libsvm" in argument.help, (name, argument.help)
    csv = tmp_path / "d.csv"
    csv.write_text("a,b,class\n1,2,x\n3,4,y\n5,6,x\n")
    result = CliRunner().invoke(app, ["info", str(csv)])
    assert result.exit_code == 0 and "instances   3" in result.stdout, result.output
