"""Worker processes that cannot outlive the run that started them.

A ``kill -9`` of the parent gives it no chance to stop its workers; left alone they live on,
reparented and sleeping. Each worker therefore asks the kernel for SIGKILL when its parent dies
(Linux ``prctl(PR_SET_PDEATHSIG)``) and, everywhere, watches its parent id once a second and exits
when it changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

__all__ = ["die_with_parent"]

_PR_SET_PDEATHSIG = 1


def _watch(parent: int, interval: float) -> None:
    while True:
        time.sleep(interval)
        if os.getppid() != parent:
            os._exit(1)


def die_with_parent(interval: float = 1.0) -> None:
    """Make this process exit when the process that forked it dies, however it dies."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent or parent == 1:  # the parent died before we asked
        os._exit(1)
    threading.Thread(target=_watch, args=(parent, interval), daemon=True, name="toolkit-parent-watch").start()
