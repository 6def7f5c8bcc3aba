"""Keep freed memory for the next repetition instead of handing it back to the kernel.

A run is hundreds of short repetitions, each allocating and freeing arrays of one to a few MB.
glibc's malloc serves such sizes with ``mmap`` (or trims them off the heap top) and the next
repetition faults the same amount back in, page by page, zero-filled: on the main job (20 UCI
datasets, nb-weka + bma-nb) that was 170,000 page faults and a sixth of the CPU time in the kernel,
and two workers zero-filling at once share one memory bus. Raising the ``mmap`` and trim thresholds
serves those sizes from the heap, whose pages stay mapped; the peak resident size does not grow (the
freed blocks are reused, not added to), and blocks above the threshold still go back to the system.

Only glibc is tuned (elsewhere ``mallopt`` is absent or a no-op). ``TOOLKIT_MALLOC=default`` or any
``MALLOC_*_`` environment variable of glibc's own leaves the allocator as it is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

__all__ = ["MMAP_THRESHOLD", "TRIM_THRESHOLD", "tune_allocator"]

#: blocks up to this size come from the heap (glibc's default adapts from 128 KiB up to 32 MiB)
MMAP_THRESHOLD = 16 << 20
#: free memory at the heap top kept up to this size (glibc's default: twice the adapted mmap threshold)
TRIM_THRESHOLD = 64 << 20

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_tuned: bool | None = None


def _left_to_user() -> bool:
    if os.environ.get("TOOLKIT_MALLOC", "").strip().lower() == "default":
        return True
    return any(name.startswith("MALLOC_") and name.endswith("_") for name in os.environ)


def tune_allocator() -> bool:
    """Set this process's malloc thresholds for many short repetitions (once; inherited by forked
    workers). Returns whether they are set."""
    global _tuned
    if _tuned is not None:
        return _tuned
    _tuned = False
    if not sys.platform.startswith("linux") or _left_to_user():
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # glibc only: musl's mallopt does nothing
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    _tuned = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    return _tuned
