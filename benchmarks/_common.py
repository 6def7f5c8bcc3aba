"""Helpers shared by the benchmark scripts: where the shared datasets are, and a best-of timer."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TOOLKIT_SHARED_DATASETS", ROOT.parent / "shared" / "datasets"))


def shared(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        print(f"skipped: {path} is absent (set TOOLKIT_SHARED_DATASETS)")
        sys.exit(0)
    return path


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    """Smallest wall time of ``repeat`` calls (the least disturbed by other load)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)
