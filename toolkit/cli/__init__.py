"""The ``toolkit`` command line (Typer), and the helpers plugin commands share with the built-ins.

Results go to stdout, messages to stderr. A :class:`toolkit.errors.ToolkitError` anywhere below
a command becomes one ``Error: ...`` line on stderr and its exit code (2 for bad input), with no
traceback; ``--debug`` or ``TOOLKIT_DEBUG=1`` shows the traceback instead. Ctrl-C exits 130.

A plugin's ``register_commands`` hook uses :func:`err`, :func:`out` and :func:`progress_bar` from
here (the same door the built-in commands use). The application itself (``app``, ``build_app``,
``main``) is built on first access, so importing the helpers loads no plugin.

Only the standard library, typer and toolkit's light modules are imported here; numpy and the
plugins' implementations load when a command needs them.
"""

from __future__ import annotations

from typing import Any

from toolkit.cli.output import (check_not_an_input, check_output_path, class_attribute, err, out, plain_table,
                                progress_bar, write_text_output)

__all__ = ["app", "build_app", "main", "err", "out", "progress_bar", "class_attribute", "check_output_path",
           "check_not_an_input", "write_text_output", "plain_table"]


def __getattr__(name: str) -> Any:
    if name in ("app", "build_app", "main"):
        from importlib import import_module

        value = getattr(import_module("toolkit.cli.application"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'toolkit.cli' has no attribute '{name}'")
