"""Write docs/results/ots.md (and two PNGs): the OTS paper's Table 1 on OHSUMED and Reuters-21578 R52.

One command, from the repository root::

    python scripts/make_ots_results.py [--shared ../shared/datasets] [--runs 5] [--jobs 2]

Tasks: every OHSUMED category (ohsumed-23 train + test pooled, 7,400 abstracts, 23 categories) and
every R52 topic below 10 % of the documents (train + test pooled, 9,100 stories, 50 topics), each one
against the rest. Splits: ``--runs`` seeded stratified splits per task, two thirds of each class for
training (the paper: one such split). Text becomes word counts on each training part (the pipeline's
vectoriser); the BIM binarises them.

Columns, as the paper's Table 1: WTS Bayes (nb-bim, tau = 1, whole training part), WTS Bayes OptCut
(nb-bim:threshold=loo), OTS Bayes (--es ots), random-STS Bayes (--es random-sts, same size as the
OTS), OTS CMLS (cmls on the OTS); average precision on the test part, mean over the splits, with the
one-sided 95 % lower confidence limit of OTS Bayes (the paper's Table 2 statistic).

Raw records go to results/ots-<corpus>.jsonl (resumable; not committed).
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
    "ohsumed": ("OHSUMED (23 MeSH disease categories)", ["ohsumed-23-train.arff.gz", "ohsumed-23-test.arff.gz"], None),
    "r52": ("Reuters-21578 R52 (topics below 10 %)", ["reuters21578-r52-train.arff.gz",
                                                      "reuters21578-r52-test.arff.gz"], 0.1),
    # word-count versions of OHSUMED subsets (Han & Karypis), for quick checks: --corpora oh0
    "oh0": ("oh0 (OHSUMED subset, word counts)", ["oh0.wc.arff"], None),
}
COLUMNS = [("wts", "WTS Bayes", "nb-bim", None), ("optcut", "WTS Bayes OptCut", "nb-bim:threshold=loo", None),
           ("ots", "OTS Bayes", "nb-bim", "ots"), ("ran", "Ran STS Bayes", "nb-bim", "random-sts"),
           ("cmls", "OTS CMLS", "cmls:weighting=binary", "ots")]
#: the paper removed stop words and did not stem (it also used two-word phrases, which the word-count
#: step does not make)
TEXT = "word-counts:stop_words=english"
PAPER = {"wts": 0.165, "optcut": 0.460, "ots": 0.485, "ran": 0.155, "cmls": 0.515}


def pipelines() -> list[toolkit.Pipeline]:
    return [toolkit.Pipeline(clf, example_selector=es, text=TEXT, tune=False, name=label)
            for _, label, clf, es in COLUMNS]


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


def _evaluate(args: tuple[toolkit.Dataset, int, str]) -> str:
    task, runs, out = args
    toolkit.evaluate(task, pipelines=pipelines(), runs=runs, stratified=True, test_fraction=1 / 3,
                     metrics=["average-precision"], out=out, resume=True, tune=False)
    return task.name


def run_corpus(shared: Path, corpus: str, runs: int, jobs: int) -> Results:
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
    return Results.from_files(files)


def summarise(results: Results) -> list[dict]:
    rows = []
    for name in results.datasets():
        row: dict = {"task": name}
        for key, label, _, _ in COLUMNS:
            values = results.values(name, label, "average-precision")
            row[key] = values
        ots_recs = results.cell(name, "OTS Bayes")
        row["ots_size"] = float(np.mean([r["extra"]["n_selected_examples"] for r in ots_recs])) if ots_recs else None
        row["n_train"] = float(np.mean([r["n_train"] for r in ots_recs])) if ots_recs else None
        rows.append(row)
    return rows


def _mean(values: list[float]) -> float:
    v = [x for x in values if x == x]
    return float(np.mean(v)) if v else float("nan")


def _keys() -> list[str]:
    return [key for key, *_ in COLUMNS]


def train_positives(task: toolkit.Dataset, runs: int) -> float:
    """Mean number of positives in the training parts (the harness's stratified splits)."""
    splits = Protocol(repetitions=runs, test_fraction=1 / 3, stratified=True).splits(task)
    return float(np.mean([np.sum(task.y[s.train] == 1) for s in splits]))


def table(rows: list[dict], positives: dict[str, int]) -> list[str]:
    names = {key: label for key, label, *_ in COLUMNS}
    header = ["task", "C1 (all)", "C1 (train)", "OTS size"]
    for key in _keys():
        header.append(names[key])
        if key == "ots":
            header.append("OTS Bayes LCL")
    lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
    for r in rows:
        cells = [r["task"], str(positives.get(r["task"], "")), f"{r['n_train_pos']:.0f}", f"{r['ots_size']:.0f}"]
        for key in _keys():
            cells.append(f"{_mean(r[key]):.3f}")
            if key == "ots":
                lcl = stats.lower_confidence_limit([x for x in r["ots"] if x == x])
                cells.append("n/a" if lcl != lcl else f"{lcl:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def averages(rows: list[dict]) -> dict[str, float]:
    return {key: _mean([_mean(r[key]) for r in rows]) for key in _keys()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--corpora", default="ohsumed,r52")
    parser.add_argument("--columns", default=",".join(c[0] for c in COLUMNS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    use_columns([c.strip() for c in args.columns.split(",")])
    shared = Path(args.shared)
    started = time.time()
    corpora = [c.strip() for c in args.corpora.split(",") if c.strip()]
    all_rows: dict[str, list[dict]] = {}
    positives: dict[str, int] = {}
    for corpus in corpora:
        print(f"{corpus}: evaluating", file=sys.stderr, flush=True)
        train_pos = {}
        for task in load_tasks(shared, corpus):
            positives[task.name] = int(task.class_counts()[1])
            train_pos[task.name] = train_positives(task, args.runs)
        all_rows[corpus] = summarise(run_corpus(shared, corpus, args.runs, args.jobs))
        for row in all_rows[corpus]:
            row["n_train_pos"] = train_pos[row["task"]]
    elapsed = time.time() - started

    names = {key: label for key, label, *_ in COLUMNS}
    lines = ["# Optimal training sets (Sohn et al. 2008, Table 1) on OHSUMED and Reuters R52", "",
             "Written by `python scripts/make_ots_results.py` (toolkit " + toolkit.__version__ + ").", ""]
    lines += ["## Averages of average precision over the tasks", "",
              "| corpus | " + " | ".join(names[k] for k in _keys()) + " |",
              "| --- |" + " ---: |" * len(_keys())]
    every = [r for rows in all_rows.values() for r in rows]
    groups = [(CORPORA[c][0] + f" ({len(rows)} tasks)", rows) for c, rows in all_rows.items()]
    groups.append((f"all tasks ({len(every)})", every))
    for label, rows in groups:
        means = averages(rows)
        lines.append(f"| {label} | " + " | ".join(f"{means[k]:.3f}" for k in _keys()) + " |")
    lines.append("| the paper (20 MeSH terms, MEDLINE) | " + " | ".join(f"{PAPER[k]:.3f}" for k in _keys()) + " |")
    lines.append("")
    for corpus, rows in all_rows.items():
        lines += [f"## {CORPORA[corpus][0]}", "", *table(rows, positives), ""]
    lines.append(f"Run time: {elapsed / 60:.0f} min on this machine ({args.jobs} processes).")
    (ROOT / "docs" / "results" / "ots.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
