"""Run configuration and dataset-loading options, plain data passed to hooks."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["RunConfig", "LoadOptions", "SaveOptions", "env_flag", "env_list", "debug_enabled", "set_debug",
           "set_process_ends", "process_ends", "usable_cores", "compute_threads"]


def env_flag(name: str) -> bool:
    """True when the environment variable is set to 1/true/yes/on (read at call time, never cached)."""
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


_debug_requested = False  # the CLI's --debug, for the current invocation


def set_debug(on: bool) -> None:
    """Ask for tracebacks and plugins' debug output (the CLI's ``--debug``) until set again."""
    global _debug_requested
    _debug_requested = bool(on)


_process_ends = False  # the toolkit console script: this process exits when its command returns


def set_process_ends() -> None:
    """Say that this process exits when its command returns (the console script, not the app called from
    Python): what a run changed for good, the BLAS cap of its ``--jobs`` workers, need not be given back."""
    global _process_ends
    _process_ends = True


def process_ends() -> bool:
    return _process_ends


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system says it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def compute_threads() -> int:
    """The threads one computation of this process may run: its usable cores, at most ``OMP_NUM_THREADS``
    when that is set (the cap BLAS and OpenMP obey; each ``--jobs`` worker sets it to its share), so that
    N workers do not each start one thread per core."""
    cores = usable_cores()
    # OpenMP's list form "4,2" gives the outer level first; anything but a whole number is ignored
    first = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    cap = int(first) if first.isascii() and first.isdigit() else 0
    return max(1, min(cores, cap if cap > 0 else cores))


def debug_enabled() -> bool:
    """``--debug`` was given for this invocation, or ``TOOLKIT_DEBUG`` is set: what ``RunConfig.debug`` says."""
    return _debug_requested or env_flag("TOOLKIT_DEBUG")


def env_list(name: str) -> list[str] | None:
    """Comma-separated environment list; None when unset, [] when set to ''."""
    value = os.environ.get(name)
    if value is None:
        return None
    return [item.strip() for item in value.split(",") if item.strip()]


@dataclass(frozen=True)
class LoadOptions:
    """How to load a dataset: which attribute is the class, dense or sparse, text encoding."""

    class_attribute: str | int | None = -1
    sparse: bool | str = "auto"
    encoding: str = "utf-8"
    #: options of one format, as (name, value) pairs, e.g. (("nominal", ("colour",)),) for a CSV reader;
    #: a loader ignores the ones it does not know
    format_options: tuple[tuple[str, object], ...] = ()

    def format_option(self, name: str, default: object = None) -> object:
        return dict(self.format_options).get(name, default)


@dataclass(frozen=True)
class SaveOptions:
    """How to write a dataset: sparse or dense rows (None: as it is), and format options."""

    sparse: bool | None = None
    format_options: tuple[tuple[str, object], ...] = ()


@dataclass(frozen=True)
class RunConfig:
    """The effective configuration of one run, broadcast to plugins through ``toolkit_configure``."""

    seed: int = 1
    n_jobs: int = 1
    output_dir: Path = field(default_factory=Path.cwd)
    debug: bool = False
