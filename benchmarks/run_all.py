"""Run every benchmark script in this folder, one after the other, with its default settings.

Each script runs in a process of its own, as when it is run alone: a script that changes its process
(the harness sets glibc's malloc thresholds where it runs repetitions, for one) must not speed up or
slow down the scripts after it.

    python benchmarks/run_all.py [--json FILE] [NAME ...]

NAME picks scripts by file stem (``nb_letter bma``). ``--json FILE`` writes every interleaved-pairs
figure the scripts recorded (benchmarks/_common.record: the timings of both sides, the per-pair ratios,
their median and min-max, the load average of each pair, the goal) and the load average at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="write the recorded figures here")
    parser.add_argument("--table", metavar="JSON", help="print the figures of a --json file as a markdown table "
                                                        "(benchmarks/README.md) and run nothing")
    parser.add_argument("names", nargs="*", help="script stems to run (default: all)")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    import _common

    if args.table:
        print(_common.markdown_table(json.loads(Path(args.table).read_text(encoding="utf-8"))["pairs"]))
        return

    print(f"python {platform.python_version()}, {os.cpu_count()} cores, load average {_common.load_average():.2f}")
    started = time.perf_counter()
    entries: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="toolkit-bench-") as scratch:
        for script in sorted(HERE.glob("*.py")):
            if script.name.startswith("_") or script.name == "run_all.py":
                continue
            if args.names and script.stem not in args.names:
                continue
            print(f"===== {script.stem}", flush=True)
            left = Path(scratch) / f"{script.stem}.json"
            env = dict(os.environ, **{_common.RECORD_FILE_ENV: str(left)})
            # each script's defaults, not run_all's arguments; its own process
            code = subprocess.run([sys.executable, str(script)], env=env).returncode
            if code != 0:
                print(f"  {script.stem} exited with {code}")
            if left.exists():
                entries.extend(json.loads(left.read_text(encoding="utf-8")))
            print(flush=True)
    print(f"all done in {time.perf_counter() - started:.0f} s; load average {_common.load_average():.2f}")
    if args.json:
        _common.write_json(args.json, entries)
        print(f"figures written to {args.json}")


if __name__ == "__main__":
    main()
