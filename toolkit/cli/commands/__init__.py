"""Built-in commands, one module each; every module exposes ``register(app)``."""

from __future__ import annotations

from importlib import import_module

import typer

__all__ = ["register_builtin_commands", "COMMAND_MODULES"]

COMMAND_MODULES = ("info", "plugins", "listing", "evaluate", "compare", "report", "explain", "models",
                   "vocab_curve", "convert")


def register_builtin_commands(app: typer.Typer) -> None:
    for name in COMMAND_MODULES:
        import_module(f"toolkit.cli.commands.{name}").register(app)
