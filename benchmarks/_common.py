"""Helpers shared by the benchmark scripts: where the shared datasets are, and fair timing.

Timing rule (benchmarks/README.md): the toolkit and its anchor run in interleaved pairs, the same
number of times each, and a script reports the median of the per-pair ratios with their min-max and
the load average, so that load that comes and goes hits both sides alike.
"""

from __future__ import annotations

import atexit
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TOOLKIT_SHARED_DATASETS", ROOT.parent / "shared" / "datasets"))


def shared(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        print(f"skipped: {path} is absent (set TOOLKIT_SHARED_DATASETS)")
        sys.exit(0)
    return path


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    """Smallest wall time of ``repeat`` calls (kept for scripts that time one thing alone)."""
    return min(timed(fn) for _ in range(repeat))


def median_of(fn: Callable[[], object], repeat: int = 5) -> tuple[float, float, float]:
    """(median, min, max) wall time of ``repeat`` calls, for a figure that has no anchor."""
    times = [timed(fn) for _ in range(repeat)]
    return statistics.median(times), min(times), max(times)


def info(what: str, fn: Callable[[], object], repeat: int = 5) -> str:
    """A line for a time without an anchor: median (min-max) and the load average."""
    load = load_average()
    med, lo, hi = median_of(fn, repeat)
    line = f"{what}: {med:.3f} s (min {lo:.3f}, max {hi:.3f}, {repeat} runs; load {load:.2f})"
    print("  " + line)
    return line


def process_env() -> dict[str, str]:
    """The environment for a timed toolkit process: this one's without PYTHONDONTWRITEBYTECODE, so that
    the untimed warm-up writes the bytecode cache any normal install has (with the variable set, an
    editable install compiles every module of the toolkit again in each process: about 0.2 s)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def print_bytecode_note() -> None:
    """Say so where ``process_env`` drops the variable."""
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("  PYTHONDONTWRITEBYTECODE is set here; the timed toolkit processes run without it (their "
              "warm-up writes the .pyc files a normal install has)")


def load_average() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:  # not on every platform
        return float("nan")


@dataclass
class Pairs:
    """Interleaved timings of an anchor and the toolkit: ``anchor[i]`` and ``ours[i]`` ran back to back."""

    what: str
    anchor_name: str
    ours_name: str
    anchor: list[float] = field(default_factory=list)
    ours: list[float] = field(default_factory=list)
    load: list[float] = field(default_factory=list)

    @property
    def ratios(self) -> list[float]:
        return [o / a for o, a in zip(self.ours, self.anchor)]

    @property
    def median_ratio(self) -> float:
        return statistics.median(self.ratios)

    def line(self, goal: str = "") -> str:
        r = self.ratios
        text = (f"{self.what}: {self.ours_name} / {self.anchor_name} = {statistics.median(r):.2f} "
                f"(min {min(r):.2f}, max {max(r):.2f}, {len(r)} pairs; median {statistics.median(self.ours):.3f} s "
                f"vs {statistics.median(self.anchor):.3f} s; load {statistics.median(self.load):.2f})")
        return text + (f"  goal {goal}" if goal else "")

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(median_ratio=self.median_ratio, min_ratio=min(self.ratios), max_ratio=max(self.ratios))
        return d


def interleaved(what: str, anchor_name: str, anchor: Callable[[], object], ours_name: str,
                ours: Callable[[], object], pairs: int = 7, warmup: bool = True, gap: float = 0.0) -> Pairs:
    """Time ``anchor`` and ``ours`` in ``pairs`` interleaved pairs (which one goes first alternates);
    ``gap`` seconds of sleep before each timed call (not timed) let what one call leaves running settle
    before the next (OpenBLAS's new threads spin ~0.1 s after a ``--jobs`` run gives the cores back)."""
    if warmup:
        anchor()
        ours()
    result = Pairs(what, anchor_name, ours_name)

    def after_gap(fn: Callable[[], object]) -> float:
        if gap > 0:
            time.sleep(gap)
        return timed(fn)

    for i in range(pairs):
        result.load.append(load_average())
        if i % 2 == 0:
            a = after_gap(anchor)
            o = after_gap(ours)
        else:
            o = after_gap(ours)
            a = after_gap(anchor)
        result.anchor.append(a)
        result.ours.append(o)
    return result


_RECORDED: list[dict[str, Any]] = []


#: run_all.py sets this to a file where each script's process leaves its recorded figures at exit
RECORD_FILE_ENV = "TOOLKIT_BENCHMARK_RECORD"


def _leave_records() -> None:
    target = os.environ.get(RECORD_FILE_ENV)
    if target and _RECORDED:
        Path(target).write_text(json.dumps(_RECORDED), encoding="utf-8")


atexit.register(_leave_records)


def record(pairs: Pairs, goal: str = "") -> Pairs:
    """Print a pair's line and keep it for ``write_json`` (run_all.py --json)."""
    print("  " + pairs.line(goal))
    entry = pairs.as_dict()
    entry["goal"] = goal
    _RECORDED.append(entry)
    return pairs


def recorded() -> list[dict[str, Any]]:
    return list(_RECORDED)


def write_json(path: str | os.PathLike[str], entries: list[dict[str, Any]] | None = None) -> None:
    pairs = _RECORDED if entries is None else entries
    Path(path).write_text(json.dumps({"load_average_end": load_average(), "pairs": pairs}, indent=1) + "\n",
                          encoding="utf-8")


def markdown_table(entries: list[dict[str, Any]]) -> str:
    """The recorded figures as a markdown table (benchmarks/README.md): median ratio, min-max, pairs, load."""
    lines = ["| figure | ours / anchor | median ratio (min-max) | pairs | load | goal |",
             "| --- | --- | --- | --- | --- | --- |"]
    for e in entries:
        lines.append(f"| {e['what']} | {e['ours_name']} / {e['anchor_name']} | **{e['median_ratio']:.2f}** "
                     f"({e['min_ratio']:.2f}-{e['max_ratio']:.2f}) | {len(e['anchor'])} | "
                     f"{statistics.median(e['load']):.1f} | {e.get('goal') or ''} |")
    return "\n".join(lines)
