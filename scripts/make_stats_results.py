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


def run_toolkit(*args: str, stdout: Path | None = None) -> None:
    """The command line, as a user types it (stdout to a file when given)."""
    command = [sys.executable, "-m", "toolkit", *args]
    print("$ toolkit " + " ".join(args), file=sys.stderr, flush=True)
    if stdout is None:
        subprocess.run(command, check=True, cwd=ROOT)
        return
    with open(stdout, "w", encoding="utf-8") as fh:
        subprocess.run(command, check=True, cwd=ROOT, stdout=fh)


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


def write_docs(run_seconds: float) -> None:
    """Step 2 (the report in five formats and the CD diagram, by ``toolkit report``) and step 3 (the numbers)."""
    import numpy as np

    import toolkit

    rel = os.path.relpath(RESULTS, ROOT)
    outs = [DOCS / f"thesis-report.{ext}" for ext in ("html", "tex", "md", "csv", "json")]
    outs += [DOCS / "thesis-cd.svg", DOCS / "thesis-cd.png"]
    run_toolkit("report", rel, *[a for o in outs for a in ("-o", os.path.relpath(o, ROOT))], "--baseline", "nb-weka")

    results = toolkit_results(rel)
    comp = toolkit.compare(results, baseline="nb-weka", metric="error")
    across = comp.across_datasets()
    kept, means = comp.means()
    ranks = toolkit.stats.ranks(means, greater_is_better=False)
    seconds: dict[str, float] = {}
    for r in results.ok():
        spent = sum(v for k, v in r["timing"].items() if k.endswith("_seconds"))
        seconds[r["pipeline"]["name"]] = seconds.get(r["pipeline"]["name"], 0.0) + spent
    compute = sum(seconds.values())
    by_pipeline = ", ".join(f"{p} {s:.0f} s" for p, s in seconds.items())
    lines = ["# Critical-difference diagram: the thesis's 20 UCI datasets x 4 classifiers", "",
             f"Written by `python scripts/make_stats_results.py` (toolkit {toolkit.__version__}); the results come from",
             "", "```bash", "toolkit compare results/thesis20 -c nb-weka -c nb-gaussian -c bma-nb -c liblinear-lr "
             + " ".join(f"-m {m}" for m in METRICS) + " --out results/thesis-4.jsonl", "```", "",
             f"(`results/thesis20/` links the 20 files of `../shared/datasets/uci`; default protocol: 10 repetitions, "
             f"10 % test, seeds 1..10, grids tuned on the first 10 % of each training part; {len(results.ok())} "
             f"repetitions, {compute:.0f} s of tuning, fitting and testing in the records, {by_pipeline}), "
             "and the report from", "", "```bash",
             f"toolkit report {rel} -o thesis-report.html -o thesis-report.tex -o thesis-report.md -o "
             "thesis-report.csv -o thesis-report.json -o thesis-cd.svg -o thesis-cd.png --baseline nb-weka", "```",
             "", "![critical-difference diagram of the test error](thesis-cd.png)", "",
             "Report: [HTML](thesis-report.html) (one self-contained file), [LaTeX](thesis-report.tex), "
             "[Markdown](thesis-report.md), [CSV, long](thesis-report.csv) and [summary](thesis-report-summary.csv), "
             "[JSON](thesis-report.json).", "", "## The numbers", "", "```text", across.format(), "```", "",
             "## Mean test error (%) and rank on each dataset (1 = best)", "",
             "| dataset | " + " | ".join(comp.pipelines) + " |", "| --- |" + " ---: |" * len(comp.pipelines)]
    for i, d in enumerate(kept):
        lines.append(f"| {d} | " + " | ".join(f"{100 * means[i, j]:.2f} ({ranks[i, j]:g})"
                                            for j in range(len(comp.pipelines))) + " |")
    lines.append("| average rank | " + " | ".join(f"{r:.3f}" for r in np.mean(ranks, axis=0)) + " |")
    lines += ["", "## Significance against nb-weka (corrected resampled t-test per dataset)", "",
              comp.to_markdown(), ""]
    (DOCS / "thesis-cd.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {DOCS / 'thesis-cd.md'}", file=sys.stderr)


def toolkit_results(path: str):  # type: ignore[no-untyped-def]
    import toolkit as tk

    return tk.Results.from_files([ROOT / path])


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
        run_toolkit("compare", os.path.relpath(folder, ROOT), *[a for p in PIPELINES for a in ("-c", p)], *metric_args,
                    "--out", os.path.relpath(RESULTS, ROOT), "--resume", "--jobs", str(args.jobs), "--quiet",
                    stdout=ROOT / "results" / "thesis-4-tables.txt")
    ran = time.time()
    if args.run_only:
        return
    write_docs(ran - started)


if __name__ == "__main__":
    main()
