"""Shared test fixtures: the shared dataset folder, hypothesis profiles, CLI runner settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("TOOLKIT_SHARED_DATASETS", ROOT.parent / "shared" / "datasets"))

settings.register_profile("ci", max_examples=50, deadline=None, derandomize=True, database=None)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# CLI output must not depend on the terminal running the tests
os.environ.setdefault("COLUMNS", "200")
os.environ["NO_COLOR"] = "1"
os.environ.pop("TOOLKIT_DEBUG", None)


def shared_path(*parts: str) -> Path:
    """A path under ../shared/datasets; the calling test is skipped when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is absent (the shared datasets live beside the clone in CI)")
    return path


@pytest.fixture
def shared() -> Path:
    return shared_path()


#: Python source defining ``peak()``: this process's peak resident memory in kB so far (VmHWM). Measure a
#: child's growth with it, never with ``ru_maxrss``: that one keeps across exec the peak of the forked copy
#: of the (large) test process, so a growth below that peak reads as none and the check cannot fail.
PEAK_KB = ("import re as _re\n"
           "def peak():\n"
           "    return int(_re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read()).group(1))\n")
