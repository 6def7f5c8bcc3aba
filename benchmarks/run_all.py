"""Run every benchmark script in this folder, one after the other, with its default settings:
``python benchmarks/run_all.py`` (or name some: ``python benchmarks/run_all.py nb_letter bma``)."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    sys.path.insert(0, str(HERE))
    only = set(sys.argv[1:])
    for script in sorted(HERE.glob("*.py")):
        if script.name.startswith("_") or script.name == "run_all.py":
            continue
        if only and script.stem not in only:
            continue
        print(f"===== {script.stem}")
        sys.argv = [str(script)]  # each script's defaults, not run_all's arguments
        runpy.run_path(str(script), run_name="__main__")
        print()


if __name__ == "__main__":
    main()
