"""Construction of the Typer application, its global options and the error edge."""

from __future__ import annotations

import gc
import inspect
import sys
import warnings
from pathlib import Path
from typing import Any, Optional


import typer
from typer.core import TyperGroup

from toolkit import __version__
from toolkit.config import debug_enabled, set_debug, set_process_ends
from toolkit.cli.output import err, one_line, out
from toolkit.errors import ToolkitError, ToolkitWarning

__all__ = ["app", "build_app", "main"]  # noqa: F822 - app is built on first use (__getattr__)

_shown_warnings: set[str] = set()


def _show_warning(message: Any, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    text = str(message)
    if text in _shown_warnings:
        return
    _shown_warnings.add(text)
    if issubclass(category, ToolkitWarning):
        err(one_line(text), prefix="Warning: ", color="yellow")
    else:
        err(one_line(f"{category.__name__}: {text}"), prefix="Warning: ", color="yellow")




class ToolkitGroup(TyperGroup):
    """Catches the toolkit's errors below every command, including plugin commands."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        # Typer's rich mode keeps a docstring's single line breaks in the commands panel, so a summary
        # wrapped at 110 columns in the source showed broken mid-sentence; join them (plugins' too).
        for command in self.commands.values():
            if command.short_help is None and command.help:
                first = inspect.cleandoc(command.help).partition("\f")[0].split("\n\n")[0]
                if not first.startswith("\b"):
                    command.short_help = " ".join(first.split())
        super().format_help(ctx, formatter)

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        """Usage errors (a bad option value, a missing argument, an unknown command) as one line on
        stderr with exit code 2, like every other error of the toolkit, instead of click's boxed panel."""
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        exceptions = _click_exceptions()
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except exceptions.ClickException as exc:
            if type(exc).__name__ == "NoArgsIsHelpError":   # no arguments: the help, as typer shows it
                exc.show()
                sys.exit(exc.exit_code)
            ctx = getattr(exc, "ctx", None)
            where = ("" if not isinstance(exc, exceptions.UsageError) else ctx.command_path if ctx is not None
                     else self.name or "toolkit")   # an option of the toolkit itself, before any command
            hint = f" (see '{where} -h')" if where else ""
            text = " ".join(exc.format_message().split())
            err(f"{where + ': ' if where else ''}{text}{hint}", prefix="Error: ", color="red")
            sys.exit(exc.exit_code)
        except (typer.Abort, getattr(exceptions, "Abort", typer.Abort)):
            err("aborted", prefix="Error: ", color="red")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _click_exceptions().UsageError as exc:
            # click's parser raises some usage errors (an option without its value) without the command's
            # context: give them the command's, so that the message names it as every other usage error
            sub = self.get_command(ctx, ctx.invoked_subcommand) if ctx.invoked_subcommand else None
            if exc.ctx is None and sub is not None:
                exc.ctx = typer.Context(sub, info_name=ctx.invoked_subcommand, parent=ctx)
            raise
        except ToolkitError as exc:
            if debug_enabled():
                raise
            err(one_line(str(exc)), prefix="Error: ", color="red")
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            err("interrupted", prefix="Error: ", color="red")
            raise typer.Exit(130) from None
        except MemoryError:
            # not the input's fault as such, and not a bug: what ran needs more memory than this machine
            # gives; finished results are already written (--out), so a smaller run or --resume can go on
            if debug_enabled():
                raise
            command = " ".join(filter(None, (ctx.command_path, ctx.invoked_subcommand)))
            err(f"out of memory in '{command}': the data or the run is too large for this machine "
                f"(a smaller input, fewer --jobs, or a cluster; TOOLKIT_DEBUG=1 shows where)", prefix="Error: ",
                color="red")
            raise typer.Exit(1) from None


def _click_exceptions() -> Any:
    """The exceptions of the click typer runs on: its own copy since typer 0.29, the click package before."""
    try:
        from typer._click import exceptions
    except ImportError:  # typer < 0.29
        from click import exceptions  # type: ignore[no-redef]
    return exceptions


def _version_callback(value: bool) -> None:
    if not value:
        return
    from toolkit.plugin_host.manager import default_manager

    out(f"toolkit {__version__}")
    seen = set()
    for info in default_manager().plugins.values():
        if info.distribution and not info.builtin and info.distribution not in seen:
            seen.add(info.distribution)
            out(f"  plugin {info.distribution} {info.version or ''}".rstrip())
    raise typer.Exit(0)


def _main_callback(
    version: Optional[bool] = typer.Option(None, "--version", callback=_version_callback, is_eager=True,
                                           help="Print the toolkit's and plugins' versions and exit."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks instead of one-line errors."),
    plugins_dir: Optional[Path] = typer.Option(None, "--plugins-dir", help="Also load *.py plugins from DIR.",
                                               exists=True, file_okay=False, dir_okay=True),
    block: list[str] = typer.Option([], "--block", help="Do not load the plugin NAME (repeatable)."),
    cache: Optional[Path] = typer.Option(None, "--cache", metavar="DIR", file_okay=False,
                                         help="Keep parsed datasets in DIR (by content hash; also TOOLKIT_CACHE=DIR)."),
) -> None:
    """Naive-Bayes-family and linear classifiers on ARFF data, evaluated the WEKA way."""
    set_debug(debug)
    from toolkit.data.cache import set_cache_dir

    set_cache_dir(cache)  # for this invocation only (None: TOOLKIT_CACHE or no cache), as --debug
    if (plugins_dir is not None or block) and _preloaded != (_resolved(plugins_dir), tuple(block)):
        from toolkit.plugin_host.manager import get_plugin_manager, reset_default_manager

        reset_default_manager(get_plugin_manager(plugins_dir=plugins_dir, block=block))


def build_app(load_plugin_commands: bool = True) -> typer.Typer:
    """A fresh application with the built-in commands and every plugin's ``register_commands``."""
    application = typer.Typer(
        cls=ToolkitGroup,
        no_args_is_help=True,
        rich_markup_mode="rich",
        context_settings={"help_option_names": ["-h", "--help"]},
        pretty_exceptions_show_locals=False,
        add_completion=True,
    )
    application.callback()(_main_callback)
    from toolkit.cli.commands import register_builtin_commands

    register_builtin_commands(application)
    if load_plugin_commands:
        from toolkit.plugin_host.manager import default_manager

        default_manager().hook.register_commands(app=application)
    return application


def _install_warning_display() -> None:
    warnings.showwarning = _show_warning  # type: ignore[assignment]
    warnings.simplefilter("default", ToolkitWarning)


_install_warning_display()

#: The (--plugins-dir, --block) that :func:`main` set up before building its application.
_preloaded: tuple[Path | None, tuple[str, ...]] | None = None
_VALUE_OPTIONS = ("--plugins-dir", "--block", "--cache")


def _resolved(path: Path | str | None) -> Path | None:
    return None if path is None else Path(path).resolve()


def _plugin_options(argv: list[str]) -> tuple[Path | None, tuple[str, ...]]:
    """--plugins-dir and --block among the options before the command name: the plugins they choose must
    be known before the application is built, since plugins add commands (and a blocked one must not)."""
    plugins_dir: Path | None = None
    block: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--" or not arg.startswith("-"):
            break
        name, eq, value = arg.partition("=")
        if name in _VALUE_OPTIONS:
            if not eq:
                i += 1
                if i >= len(argv):
                    break
                value = argv[i]
            if name == "--plugins-dir":
                plugins_dir = Path(value)
            elif name == "--block":
                block.append(value)
        i += 1
    return plugins_dir, tuple(block)


def main() -> Any:
    """Console-script entry point: chooses the plugins (--plugins-dir, --block), then builds and runs the
    application, so that a plugin directory's commands exist and a blocked plugin's do not."""
    global _preloaded
    set_process_ends()
    plugins_dir, block = _plugin_options(sys.argv[1:])
    if (plugins_dir is not None and plugins_dir.is_dir()) or block:  # else the option's own check reports it
        from toolkit.plugin_host.manager import get_plugin_manager, reset_default_manager

        try:
            reset_default_manager(get_plugin_manager(plugins_dir=plugins_dir if plugins_dir is not None
                                                     and plugins_dir.is_dir() else None, block=list(block)))
        except ToolkitError as exc:
            if debug_enabled():
                raise
            err(one_line(str(exc)), prefix="Error: ", color="red")
            sys.exit(exc.exit_code)
        _preloaded = (_resolved(plugins_dir) if plugins_dir is not None and plugins_dir.is_dir() else None, block)
    try:
        return build_app()()
    finally:
        # the process ends here: the objects it made need no garbage collection at shutdown, where one
        # pass over every module's objects took ~40 ms of each command (files are closed by then)
        gc.freeze()


def __getattr__(name: str) -> Any:
    """``app`` is built on first use (importing this module loads no plugin)."""
    if name == "app":
        value = build_app()
        globals()["app"] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
