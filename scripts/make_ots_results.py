"""Write docs/results/ots.md (with ots-trace.png and ots-pr.png): the OTS paper's Table 1 on OHSUMED and R52.

One command, from the repository root::

    python scripts/make_ots_results.py [--shared ../shared/datasets] [--runs 10] [--jobs 2]

Tasks: every OHSUMED category (ohsumed-23 train + test pooled: 7,400 abstracts, 23 categories) and
every Reuters-21578 R52 topic below 10 % of the documents (train + test pooled: 9,100 stories, 50
topics), each one against the rest. Splits: ``--runs`` seeded stratified splits per task with two
thirds of each class for training (the paper: one such split). Text becomes word counts on each
training part (English stop words removed, no stemming, as the paper; it also used two-word
phrases, which the word-count step does not make); the BIM binarises them.

Columns, as the paper's Table 1: WTS Bayes (nb-bim, tau = 1, on the whole training part), WTS Bayes
OptCut (nb-bim:threshold=loo), OTS Bayes (nb-bim after --es ots), Ran STS Bayes (nb-bim after --es
random-sts, as many random negatives as the OTS), OTS CMLS (cmls on the OTS, presence features,
C = 1), and, for context, WTS CMLS (cmls on the whole training part). Cells are the average precision on the test part, mean over the splits; "OTS LCL" is the
one-sided 95 % lower confidence limit of OTS Bayes over the splits (Student's t, the paper's Table 2
statistic). Raw records go to results/ots-<task>.jsonl (resumable; not committed).
"""

from __future__ import annotations

import argparse
import multiprocessing
import re
import sys
import time
from pathlib import Path

import numpy as np

import toolkit
from toolkit.evaluation import stats
from toolkit.evaluation.harness import Protocol
from toolkit.evaluation.results import Results

ROOT = Path(__file__).resolve().parent.parent
CORPORA = {
    "ohsumed": ("OHSUMED, 23 MeSH disease categories", ["ohsumed-23-train.arff.gz", "ohsumed-23-test.arff.gz"],
                None),
    "r52": ("Reuters-21578 R52, topics below 10 %", ["reuters21578-r52-train.arff.gz",
                                                     "reuters21578-r52-test.arff.gz"], 0.1),
    # word-count versions of an OHSUMED subset (Han & Karypis), for quick checks: --corpora oh0
    "oh0": ("oh0 (OHSUMED subset, word counts)", ["oh0.wc.arff"], None),
}
# the OTS is searched with evaluate=wts (every training document ranked; see docs/plugins.md, "ots");
# "OTS Bayes (STS LOO)" is the selector's default, algorithms.md 4.1 step 3c as written, for comparison
OTS = "ots:evaluate=wts"
COLUMNS = [("wts", "WTS Bayes", "nb-bim", None), ("optcut", "WTS Bayes OptCut", "nb-bim:threshold=loo", None),
           ("ots", "OTS Bayes", "nb-bim", OTS), ("ran", "Ran STS Bayes", "nb-bim", "random-sts:evaluate=wts"),
           ("cmls", "OTS CMLS", "cmls:weighting=binary", OTS),
           ("ots_sts", "OTS Bayes (STS LOO)", "nb-bim", "ots"),
           # not in the paper's Table 1 (CMLS on 11 M documents was out of reach there): context
           ("wcmls", "WTS CMLS", "cmls:weighting=binary", None)]
TEXT = "word-counts:stop_words=english"
PAPER = {"wts": 0.165, "optcut": 0.460, "ots": 0.485, "ran": 0.155, "cmls": 0.515, "ots_sts": float("nan"),
         "wcmls": float("nan")}
FIGURE_TASKS = ["r52:cocoa", "r52:coffee", "r52:crude", "ohsumed:C04", "ohsumed:C06", "ohsumed:C22"]
PR_TASK = "r52:cocoa"
SMALL = 30  # tasks with fewer training positives are reported apart


def pipelines(text: str = TEXT) -> list[toolkit.Pipeline]:
    return [toolkit.Pipeline(clf, example_selector=es, text=text, tune=False, name=label)
            for _, label, clf, es in COLUMNS]


def text_step(task: toolkit.Dataset) -> str:
    """The word-count step for string data, nothing for data that are counts already."""
    return TEXT if task.features.mask("string").any() else "auto"


def use_columns(keys: list[str]) -> None:
    """Keep only these columns (for quick checks)."""
    COLUMNS[:] = [c for c in COLUMNS if c[0] in keys]


def load_tasks(shared: Path, corpus: str) -> list[toolkit.Dataset]:
    _, files, below = CORPORA[corpus]
    parts = [toolkit.load_arff(shared / "text" / f) for f in files]
    pooled = parts[0]
    for part in parts[1:]:
        pooled = pooled.concat(part)
    pooled.path = f"{corpus}.arff"  # task names: ohsumed:C04, r52:cocoa
    pooled.sha256 = "+".join(p.sha256 or p.content_sha256() for p in parts)
    classes = list(pooled.classes) if below is None else pooled.rare_classes(below)
    return [pooled.one_vs_rest(c) for c in classes]


def protocol(runs: int) -> Protocol:
    return Protocol(repetitions=runs, test_fraction=1 / 3, stratified=True)


def _evaluate(args: tuple[toolkit.Dataset, int, str]) -> str:
    task, runs, out = args
    toolkit.evaluate(task, pipelines=pipelines(text_step(task)), protocol=protocol(runs), metrics=["average-precision", "pr-curve"],
                     out=out, resume=True)
    return task.name


def run_corpus(shared: Path, corpus: str, runs: int, jobs: int) -> tuple[Results, list[toolkit.Dataset]]:
    tasks = load_tasks(shared, corpus)
    out_dir = ROOT / "results"
    out_dir.mkdir(exist_ok=True)
    files = [str(out_dir / f"ots-{corpus}-{re.sub(r'[^A-Za-z0-9_.-]', '_', t.task)}.jsonl") for t in tasks]
    work = [(t, runs, f) for t, f in zip(tasks, files)]
    # one process per task (not per repetition), so that OTS Bayes, random STS and OTS CMLS on the
    # same training part share one OTS search (memoised in the process)
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            for name in pool.imap_unordered(_evaluate, work):
                print(f"  {name} done", file=sys.stderr, flush=True)
    else:
        for item in work:
            print(f"  {_evaluate(item)} done", file=sys.stderr, flush=True)
    return Results.from_files(files), tasks


def _mean(values: list[float]) -> float:
    v = [x for x in values if x == x]
    return float(np.mean(v)) if v else float("nan")


def _keys() -> list[str]:
    return [key for key, *_ in COLUMNS]


def summarise(results: Results, tasks: list[toolkit.Dataset], runs: int) -> list[dict]:
    rows = []
    by_name = {t.name: t for t in tasks}
    for name in results.datasets():
        row: dict = {"task": name}
        for key, label, _, _ in COLUMNS:
            row[key] = results.values(name, label, "average-precision")
        ots_recs = results.cell(name, "OTS Bayes")
        row["ots_size"] = _mean([r["extra"]["n_selected_examples"] for r in ots_recs]) if ots_recs else float("nan")
        task = by_name[name]
        splits = protocol(runs).splits(task)
        row["n_pos"] = int(task.class_counts()[1])
        row["n_train_pos"] = float(np.mean([np.sum(task.y[s.train] == 1) for s in splits]))
        row["n_train"] = float(np.mean([len(s.train) for s in splits]))
        rows.append(row)
    return rows


def task_table(rows: list[dict]) -> list[str]:
    names = {key: label for key, label, *_ in COLUMNS}
    header = ["task", "C1 (all)", "C1 (train)", "OTS size", "OTS / C1"]
    for key in _keys():
        header.append(names[key])
        if key == "ots":
            header.append("OTS LCL")
    lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
    for r in rows:
        cells = [r["task"], str(r["n_pos"]), f"{r['n_train_pos']:.0f}", f"{r['ots_size']:.0f}",
                 f"{r['ots_size'] / r['n_train_pos']:.1f}"]
        for key in _keys():
            cells.append(f"{_mean(r[key]):.3f}")
            if key == "ots":
                lcl = stats.lower_confidence_limit([x for x in r["ots"] if x == x])
                cells.append("n/a" if lcl != lcl else f"{lcl:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def averages(rows: list[dict]) -> dict[str, float]:
    return {key: _mean([_mean(r[key]) for r in rows]) for key in _keys()}


def head_to_head(rows: list[dict], a: str, b: str) -> tuple[int, int, float]:
    """Tasks where a's mean AP beats b's, the reverse, and the two-sided sign-test p."""
    wins = sum(_mean(r[a]) > _mean(r[b]) for r in rows)
    losses = sum(_mean(r[a]) < _mean(r[b]) for r in rows)
    return wins, losses, stats.sign_test(wins, losses, "two-sided")


def threshold_crossings(results: Results, tasks: list[toolkit.Dataset], runs: int) -> tuple[int, int, int]:
    """How many OTS lie within one step of a class ratio where the weight of a word absent from
    one class, log((N^- + 1)/(N^+ + 1)), crosses +tau or -tau (tau = 1, alpha = 1): N^- = e (N^+ + 1) - 1
    or N^- = (N^+ + 1)/e - 1. Returns (all OTS, near +tau, near -tau)."""
    import math

    total = high = low = 0
    by_name = {t.name: t for t in tasks}
    for name in results.datasets():
        task = by_name[name]
        splits = protocol(runs).splits(task)
        for record in results.cell(name, "OTS Bayes"):
            n_pos = int(np.sum(task.y[splits[record["repetition"]].train] == 1))
            step = max(1, int(np.floor(0.01 * n_pos + 0.5)))
            n_neg = record["extra"]["n_selected_examples"] - n_pos
            total += 1
            if abs(n_neg - (math.e * (n_pos + 1) - 1)) <= step + 1:
                high += 1
            elif abs(n_neg - ((n_pos + 1) / math.e - 1)) <= step + 1:
                low += 1
    return total, high, low


def trace_figure(shared: Path, corpora: list[str], path: Path) -> list[str]:
    """The OTS search on the first split's training part of a few tasks (the paper's Figure 3)."""
    from toolkit.plugins.ots.trace_plot import plot_traces

    traces, lines = {}, []
    for corpus in corpora:
        for task in load_tasks(shared, corpus):
            if task.name not in FIGURE_TASKS and corpus in ("r52", "ohsumed"):
                continue
            split = protocol(1).splits(task)[0]
            fitted = toolkit.Pipeline("nb-bim", example_selector=OTS, text=text_step(task), tune=False).fit(
                task.subset(split.train), seed=split.seed)
            trace = fitted.example_selector.trace_
            traces[task.name] = trace
            n_pos = trace["size"][0] - trace["n_negatives"][0]
            lines.append(f"| {task.name} | {n_pos} | {trace['step']} | {len(trace['size'])} | {trace['best_size']} "
                         f"| {trace['best_size'] / n_pos:.1f} | {trace['best_average_precision']:.3f} |")
    plot_traces(traces, str(path), "OTS search, first split: leave-one-out AP on the training part")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--corpora", default="ohsumed,r52")
    parser.add_argument("--columns", default=",".join(c[0] for c in COLUMNS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    use_columns([c.strip() for c in args.columns.split(",")])
    shared = Path(args.shared)
    started = time.time()
    corpora = [c.strip() for c in args.corpora.split(",") if c.strip()]
    all_rows: dict[str, list[dict]] = {}
    records = []
    crossings = [0, 0, 0]
    for corpus in corpora:
        print(f"{corpus}: evaluating", file=sys.stderr, flush=True)
        results, tasks = run_corpus(shared, corpus, args.runs, args.jobs)
        records += results.records
        all_rows[corpus] = summarise(results, tasks, args.runs)
        if "ots" in _keys():
            crossings = [a + b for a, b in zip(crossings, threshold_crossings(results, tasks, args.runs))]
    names = {key: label for key, label, *_ in COLUMNS}
    every = [r for rows in all_rows.values() for r in rows]

    lines = ["# Optimal training sets (Sohn et al. 2008, Table 1) on OHSUMED and Reuters R52", "",
             f"Written by `python scripts/make_ots_results.py --runs {args.runs}` (toolkit {toolkit.__version__}). "
             f"{len(every)} one-vs-rest tasks, {args.runs} stratified 2/3-1/3 splits each; average precision on "
             "the test part (mean over the splits). See the script's docstring for the exact setup.", ""]
    lines += ["## Averages over the tasks", "",
              "| tasks | " + " | ".join(names[k] for k in _keys()) + " |", "| --- |" + " ---: |" * len(_keys())]
    groups = [(f"{CORPORA[c][0]} ({len(rows)})", rows) for c, rows in all_rows.items()]
    groups.append((f"**all tasks ({len(every)})**", every))
    big = [r for r in every if r["n_train_pos"] >= SMALL]
    small = [r for r in every if r["n_train_pos"] < SMALL]
    groups += [(f"tasks with >= {SMALL} training positives ({len(big)})", big),
               (f"tasks with < {SMALL} training positives ({len(small)})", small)]
    for label, rows in groups:
        if rows:
            means = averages(rows)
            lines.append(f"| {label} | " + " | ".join(f"{means[k]:.3f}" for k in _keys()) + " |")
    lines.append("| the paper: 20 MeSH terms, 1,032-122,815 positives in 11 M documents | "
                 + " | ".join("-" if PAPER[k] != PAPER[k] else f"{PAPER[k]:.3f}" for k in _keys()) + " |")
    lines.append("")

    overall = averages(every)
    lines += ["## The paper's claims, checked", ""]
    if {"ots", "wts"} <= set(_keys()):
        for label, rows in (("all tasks", every), (f">= {SMALL} training positives", big)):
            if not rows:
                continue
            m = averages(rows)
            w, l, p = head_to_head(rows, "ots", "wts")
            lines.append(f"* OTS Bayes against WTS Bayes ({label}): {m['ots']:.3f} vs {m['wts']:.3f}, "
                         f"{m['ots'] / m['wts']:.2f} times (paper: 0.485 vs 0.165, 2.94 times); better on {w} tasks, "
                         f"worse on {l} (two-sided sign test p = {p:.2g}).")
    if {"ran", "wts"} <= set(_keys()):
        w, l, p = head_to_head(every, "ran", "wts")
        lines.append(f"* Ran STS Bayes against WTS Bayes: {overall['ran']:.3f} vs {overall['wts']:.3f} (paper: 0.155 "
                     f"vs 0.165, close); better on {w} tasks, worse on {l} (p = {p:.2g}).")
    if {"cmls", "ots"} <= set(_keys()):
        for label, rows in (("all tasks", every), (f">= {SMALL} training positives", big)):
            if not rows:
                continue
            m = averages(rows)
            w, l, p = head_to_head(rows, "cmls", "ots")
            lines.append(f"* OTS CMLS against OTS Bayes ({label}): {m['cmls']:.3f} vs {m['ots']:.3f}, "
                         f"{100 * (m['cmls'] / m['ots'] - 1):+.0f} % (paper: +6 %); better on {w} tasks, worse on {l} "
                         f"(p = {p:.2g}).")
    if {"wcmls", "cmls", "ots"} <= set(_keys()):
        w, l, p = head_to_head(every, "wcmls", "ots")
        lines.append(f"* Not in the paper: CMLS on the whole training part (WTS CMLS) {overall['wcmls']:.3f}, against "
                     f"{overall['ots']:.3f} for OTS Bayes and {overall['cmls']:.3f} for OTS CMLS; better than OTS Bayes "
                     f"on {w} tasks, worse on {l} (p = {p:.2g}). The OTS is chosen for the BIM and is a poor training "
                     f"set for CMLS.")
    if {"ots_sts", "ots", "wts"} <= set(_keys()):
        w, l, p = head_to_head(every, "ots", "ots_sts")
        lines.append(f"* The selector's default search, algorithms.md 4.1 as written (leave-one-out AP of the STS members "
                     f"only): OTS Bayes (STS LOO) {overall['ots_sts']:.3f}, against {overall['ots']:.3f} when every "
                     f"training document is ranked (`ots:evaluate=wts`, the OTS columns above) and {overall['wts']:.3f} "
                     f"for WTS Bayes; evaluate=wts is better on {w} tasks, worse on {l} (p = {p:.2g}). With M = 1 % of "
                     f"the positives the first STS is almost all positives, so its leave-one-out AP is near 1 whatever "
                     f"the model, and the STS-only search tends to keep it.")
    if {"ots", "optcut"} <= set(_keys()):
        w, l, p = head_to_head(every, "ots", "optcut")
        lines.append(f"* OTS Bayes against WTS Bayes OptCut: {overall['ots']:.3f} vs {overall['optcut']:.3f}; better on "
                     f"{w} tasks, worse on {l} (paper: OTS better on 15 of 20; 0.485 vs 0.460).")
    lines.append("")

    total, high, low = crossings
    lines += ["## The OTS search (the paper's Figure 3)", "",
              "Leave-one-out AP of the STS against its size on the first split's training part (sizes as multiples "
              "of the positives; the dot marks the OTS).", "",
              f"The curves jump where N⁻/N⁺ passes about 1/e and e (sizes 1 + 1/e ≈ 1.37 and 1 + e ≈ 3.72 times the "
              f"positives): there the weight of a word absent from one class, log((N⁻ + 1)/(N⁺ + 1)) with α = 1, "
              f"crosses −τ or +τ (τ = 1), so the many rare words start or stop counting. Of the {total} OTS found "
              f"({len(every)} tasks × {args.runs} splits), {high} lie within one step M of the +τ crossing and {low} "
              f"within one step of the −τ crossing: the search mostly picks the class ratio at which the "
              f"smoothing weight of one-class words is about to cross the threshold. WTS Bayes, with N⁻/N⁺ from "
              f"5 to 3,000, counts a word seen in only k negatives and no positive as evidence *for* C1 (its weight "
              f"log((N⁻ − k + 1)/((N⁺ + 1)(k + 1))) exceeds τ while N⁻/N⁺ > e(k + 1)), which is why it ranks so "
              f"badly; OptCut's larger τ and the OTS's balanced class sizes both remove that effect.", "",
              "![OTS search](ots-trace.png)", "",
              "| task | C1 (train) | M | rounds | OTS size | OTS / C1 | best LOO AP |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    try:
        lines += trace_figure(shared, corpora, ROOT / "docs" / "results" / "ots-trace.png")
    except toolkit.ToolkitError as exc:
        lines.append(f"(no figure: {exc})")
    lines.append("")
    try:
        from toolkit.plugins.metrics.pr_plot import plot_pr_curves, pr_curves_from_records

        curves = pr_curves_from_records(records, PR_TASK, 0)
        plot_pr_curves(curves, str(ROOT / "docs" / "results" / "ots-pr.png"), f"{PR_TASK}, first split")
        lines += [f"Precision-recall curves on {PR_TASK}, first split:", "", "![PR curves](ots-pr.png)", ""]
    except toolkit.ToolkitError as exc:
        lines += [f"(no precision-recall figure: {exc})", ""]

    for corpus, rows in all_rows.items():
        lines += [f"## {CORPORA[corpus][0]}", "", *task_table(rows), ""]
    busy: dict[str, float] = {}
    for r in records:
        if r.get("status") == "ok":
            seconds = sum(v for k, v in r["timing"].items() if k.endswith("_seconds"))
            busy[r["pipeline"]["name"]] = busy.get(r["pipeline"]["name"], 0.0) + seconds
    lines.append(f"Run time on a 2-core machine: {sum(busy.values()) / 60:.0f} min of fitting and predicting over the "
                 f"{len(records)} evaluations (task × pipeline × split), one core each, run in {args.jobs} processes ("
                 + ", ".join(f"{name} {sec / 60:.0f} min" for name, sec in busy.items())
                 + "; the OTS search is counted once per split, under whichever OTS pipeline ran first). "
                 f"Raw records in results/*.jsonl resume; this invocation took {(time.time() - started) / 60:.0f} min.")
    (ROOT / "docs" / "results" / "ots.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
