"""Write docs/results/thesis-cd.md, the critical-difference diagram (thesis-cd.svg / .png) and the report in
all five formats (docs/results/thesis-report.{html,tex,md,csv,json}) for the thesis's 20 UCI datasets x
{nb-weka, nb-gaussian, bma-nb, liblinear-lr}.

One command, from the repository root (it takes a while: liblinear-lr's 36-point grid and bma-nb's
H grid are tuned on every training part; the run is resumable)::

    python scripts/make_stats_results.py [--shared ../shared/datasets] [--jobs 1]

1. A folder ``results/thesis20/`` of links to the 20 files (``scripts/make_bma_results.py`` lists them),
   then exactly what a user types::

       toolkit compare results/thesis20 -c nb-weka -c nb-gaussian -c bma-nb -c liblinear-lr \\
           -m error -m accuracy -m kappa ... --out results/thesis-4.jsonl --resume

   (the default protocol: 10 repetitions, 10 % test, seeds 1..10, algorithms.md 5.1.2).
2. ``toolkit report results/thesis-4.jsonl -o docs/results/thesis-report.html -o ....tex -o ....md -o
   ....csv -o ....json`` and ``toolkit report ... --cd-diagram docs/results/thesis-cd.svg`` (and .png).
3. docs/results/thesis-cd.md: the average ranks, Friedman and Iman-Davenport statistics, the Nemenyi
   critical difference and cliques, the Holm-corrected pairwise Wilcoxon tests, as numbers.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from make_bma_results import DATASETS  # noqa: E402  (the thesis's 20 UCI datasets)

PIPELINES = ["nb-weka", "nb-gaussian", "bma-nb", "liblinear-lr"]
METRICS = ["error", "accuracy", "kappa", "mcc", "f1-macro", "roc-auc", "pr-auc", "log-loss", "brier",
           "per-class", "confusion-matrix"]
RESULTS = ROOT / "results" / "thesis-4.jsonl"
DOCS = ROOT / "docs" / "results"


def toolkit(*args: str) -> None:
    command = [sys.executable, "-m", "toolkit", *args]
    print("$ toolkit " + " ".join(args), file=sys.stderr, flush=True)
    subprocess.run(command, check=True, cwd=ROOT)


def link_folder(shared: Path) -> Path:
    folder = ROOT / "results" / "thesis20"
    folder.mkdir(parents=True, exist_ok=True)
    for name in DATASETS:
        target = (shared / "uci" / f"{name}.arff").resolve()
        if not target.is_file():
            raise SystemExit(f"{target}: missing; pass --shared")
        link = folder / f"{name}.arff"
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--skip-run", action="store_true", help="only write the reports from the results file")
    parser.add_argument("--run-only", action="store_true", help="only run the evaluation")
    args = parser.parse_args()
    started = time.time()
    folder = link_folder(Path(args.shared))
    if not args.skip_run:
        metric_args = [a for m in METRICS for a in ("-m", m)]
        toolkit("compare", os.path.relpath(folder, ROOT), *[a for p in PIPELINES for a in ("-c", p)], *metric_args,
                "--out", os.path.relpath(RESULTS, ROOT), "--resume", "--jobs", str(args.jobs), "--quiet")
    ran = time.time()
    if args.run_only:
        return
    write_docs(ran - started)


if __name__ == "__main__":
    main()
