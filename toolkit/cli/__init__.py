"""The ``toolkit`` command line (Typer).

Results go to stdout, messages to stderr. A :class:`toolkit.errors.ToolkitError` anywhere below
a command becomes one ``Error: ...`` line on stderr and its exit code (2 for bad input), with no
traceback; ``--debug`` or ``TOOLKIT_DEBUG=1`` shows the traceback instead. Ctrl-C exits 130.

Only the standard library, typer and toolkit's light modules are imported here; numpy and the
plugins' implementations load when a command needs them.
"""

from __future__ import annotations

from toolkit.cli.app import app, build_app, main

__all__ = ["app", "build_app", "main"]
