"""Results of the linear classifiers: LIBLINEAR LR/SVM against the thesis's Table 3, and CMLS on text.

One command (from the repository root)::

    python scripts/make_linear_results.py                 # both parts
    python scripts/make_linear_results.py --part text     # only the CMLS text table

``--part uci`` writes ``docs/results/linear.md``: LIBLINEAR logistic regression and SVM on the
thesis's 20 UCI datasets, (a) under the thesis protocol (algorithms.md 5.1.3: one reported fold,
seed 10, the 36-point C x B grid, WEKA-wrapper index encoding of nominal attributes, eps 0.001,
LR ``-s 0`` and SVM ``-s 1`` as the thesis's WEKA wrapper ran them) next to the published Table 3
cells (algorithms.md 6.1), and (b) under the toolkit's default protocol (10 repetitions, seed 1,
default plugin options). Where our fold-9 count differs from the published one, the script refits
every grid point tied on validation and lists the test counts they reach, to tell a tie-break
difference from a real one.

``--part text`` writes ``docs/results/cmls_text.md``: CMLS (on counts and on word presence)
against multinomial naive Bayes (``nb-multinomial``, if a plugin registers it; the table says so
when none does) on sparse word-count datasets, default protocol with 10 repetitions.

Raw records go to ``results/linear/*.jsonl`` (ignored by git) and are reused on a re-run
(``--fresh`` starts over). Datasets are read from ``../shared/datasets`` relative to the
repository root, or ``--datasets DIR`` / ``$TOOLKIT_SHARED_DATASETS``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import toolkit as tk  # noqa: E402
from toolkit.evaluation import stats  # noqa: E402
from toolkit.evaluation.harness import Protocol  # noqa: E402
from toolkit.models.pipeline import Pipeline  # noqa: E402

# thesis Table 3 (algorithms.md 6.1): file stem -> (thesis name, n, n_test, LR errors, SVM errors)
TABLE3: list[tuple[str, str, int, int, int | None, int | None]] = [
    ("anneal", "anneal", 898, 89, 6, 16),
    ("autos", "autos", 205, 20, 5, 11),
    ("vote", "vote", 435, 43, 2, 2),
    ("sick", "sick", 3772, 377, 10, 17),
    ("credit-a", "crx", 690, 69, 13, 15),
    ("mushroom", "mushroom", 8124, 812, 24, 33),
    ("heart-statlog", "heartstat", 270, 27, 5, 3),
    ("segment", "segment", 2310, 231, 25, 34),
    ("labor", "labor", 57, 5, 0, 0),
    ("vowel", "vowel", 990, 99, 44, 47),
    ("audiology", "audiology", 226, 22, 2, 3),
    ("iris", "iris", 150, 15, 1, 1),
    ("zoo", "zoo", 101, 10, 0, 0),
    ("lymph", "lymph", 148, 14, 2, 2),
    ("soybean", "soybean", 683, 68, 7, 8),
    ("balance-scale", "balance-scale", 625, 62, 10, 8),
    ("glass", "glass", 214, 21, 7, 10),
    ("letter", "letter", 20000, 2000, None, None),
    ("hepatitis", "hepatitis", 155, 15, 9, 7),
    ("haberman", "haberman", 306, 30, 11, 10),
]

TEXT_SETS = ["tr11.wc.arff", "tr12.wc.arff", "tr23.wc.arff", "tr31.wc.arff.gz", "tr41.wc.arff.gz",
             "tr45.wc.arff.gz", "oh0.wc.arff", "oh5.wc.arff", "oh10.wc.arff", "oh15.wc.arff", "wap.wc.arff.gz",
             "re0.cluto.arff.gz", "k1b.cluto.arff.gz", "la1.cluto.arff.gz"]

THESIS_LR = "liblinear-lr:nominal_encoding=index,tol=0.001,solver=0"
THESIS_SVM = "liblinear-svm:nominal_encoding=index,tol=0.001,solver=1"
# the Java port's dual: no switch to the primal at the iteration cap (algorithms.md 2.9, revision 2)
THESIS_SVM_JAVA = "liblinear-svm:nominal_encoding=index,tol=0.001,solver=1,dual_fallback=false"
DEFAULT_LR = "liblinear-lr"
DEFAULT_SVM = "liblinear-svm"


# ------------------------------------------------------------------------------------------ helpers
def _pct(e: float) -> str:
    return f"{100 * e:.2f}"


def _cell(errors: int | None, n_test: int, n_total: int) -> str:
    if errors is None:
        return "STUCK"
    e = errors / n_test
    return f"{_pct(e)}±{_pct(stats.thesis_ci(e, n_total))} ({errors})"


def _run(datasets: list[Path], pipelines: list[Any], protocol: Protocol, out: Path, fresh: bool, jobs: int,
         metrics: list[str]) -> tk.Results:
    out.parent.mkdir(parents=True, exist_ok=True)
    if fresh and out.exists():
        out.unlink()

    def progress(done: int, total: int, what: str) -> None:
        print(f"  [{done}/{total}] {what}", file=sys.stderr, flush=True)

    return tk.evaluate([str(p) for p in datasets], pipelines=pipelines, protocol=protocol, metrics=metrics,
                       out=out, resume=True, jobs=jobs, progress=progress)


def _by_cell(results: tk.Results) -> dict[tuple[str, str], list[dict[str, Any]]]:
    cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in results.ok():
        cells.setdefault((r["dataset"]["name"], r["pipeline"]["name"]), []).append(r)
    for v in cells.values():
        v.sort(key=lambda r: r["repetition"])
    return cells


def _seconds(recs: list[dict[str, Any]]) -> float:
    return sum(sum(v for k, v in r["timing"].items() if k.endswith("_seconds")) for r in recs)


def _tie_counts(path: Path, spec: str, record: dict[str, Any]) -> tuple[int, list[int]]:
    """Test error counts reached by every grid point tied at the best validation count."""
    trace = record["tuning"]
    best = min(t["validation_errors"] for t in trace)
    tied = [t["params"] for t in trace if t["validation_errors"] == best]
    ds = tk.load_arff(path)
    split = Protocol(name="thesis").splits(ds)[0]
    pipe = Pipeline(spec)
    train, test = ds.subset(split.train), ds.subset(split.test)
    counts = []
    for params in tied:
        pred = pipe.fit(train, params, seed=split.seed).predict(test, keep_model=False)
        counts.append(int(np.sum(pred.y_pred != pred.y_true)))
    return len(tied), sorted(set(counts))


def _env() -> str:
    import liblinear  # noqa: F401
    from importlib.metadata import version

    return (f"Python {platform.python_version()}, numpy {np.__version__}, liblinear-official "
            f"{version('liblinear-official')}, toolkit {tk.__version__}, {os.cpu_count()} CPUs, "
            f"{platform.machine()}")


# ------------------------------------------------------------------------------------------ UCI part
ORDER_SEEDS = [1, 2, 3, 4, 5]


def seed_sensitivity(stems: list[str], paths: dict[str, Path], names: dict[str, str], published: dict[str, Any],
                     table: list[Any], cache: Path, fresh: bool, jobs: int) -> list[str]:
    """The no-fallback SVM's fold-9 count under other random orders of the dual (random_state = 1..5 instead
    of the split's seed): an unconverged iterate depends on the order, so one count is one draw."""
    if not stems:
        return []
    sizes = {stem: (n, n_test) for stem, _, n, n_test, *_ in table}
    pipes = [Pipeline(f"{THESIS_SVM_JAVA},random_state={seed}") for seed in ORDER_SEEDS]
    res = _run([paths[s] for s in stems], pipes, Protocol(name="thesis"), cache / "uci-thesis-orders.jsonl", fresh,
               jobs, ["error"])
    cells = _by_cell(res)
    out = ["Sensitivity of the no-fallback column to the dual's random order: the same thesis protocol with "
           f"`random_state` = {', '.join(map(str, ORDER_SEEDS))} (the column above uses the split's seed), fold-9 "
           "error counts, and how many of the orders land inside the thesis CI of the published count:", "",
           "| dataset | published | counts over the orders | inside the CI |", "| --- | --- | --- | --- |"]
    for stem in stems:
        n, n_test = sizes[stem]
        pub = published[stem]
        got = [cells[stem, p.name][0]["metrics"]["errors"] if (stem, p.name) in cells else None for p in pipes]
        inside = sum(g is not None and abs(g - pub) / n_test <= stats.thesis_ci(pub / n_test, n) for g in got)
        out.append(f"| {names[stem]} | {pub} | {', '.join('—' if g is None else str(g) for g in got)} | "
                   f"{inside} of {len(got)} |")
    return out + [""]

def uci_part(shared: Path, out_dir: Path, cache: Path, jobs: int, runs: int, fresh: bool,
             only: set[str] | None = None) -> None:
    table = [row for row in TABLE3 if not only or row[0] in only]
    paths = {stem: shared / "uci" / f"{stem}.arff" for stem, *_ in table}
    missing = [str(p) for p in paths.values() if not p.exists()]
    if missing:
        sys.exit(f"missing datasets: {', '.join(missing)}")
    files = list(paths.values())
    reused = not fresh and any((cache / f).exists() for f in ("uci-thesis.jsonl", "uci-default.jsonl"))
    t0 = time.perf_counter()
    print("thesis protocol ...", file=sys.stderr)
    thesis = _run(files, [Pipeline(THESIS_LR), Pipeline(THESIS_SVM), Pipeline(THESIS_SVM_JAVA)], Protocol(name="thesis"),
                  cache / "uci-thesis.jsonl", fresh, jobs, ["error"])
    print("default protocol ...", file=sys.stderr)
    default = _run(files, [Pipeline(DEFAULT_LR), Pipeline(DEFAULT_SVM)], Protocol(repetitions=runs, seed=1),
                   cache / "uci-default.jsonl", fresh, jobs, ["error"])
    t2 = time.perf_counter()
    th, de = _by_cell(thesis), _by_cell(default)

    lines = ["# LIBLINEAR logistic regression and SVM on the thesis's 20 UCI datasets", "",
             "Generated by `python scripts/make_linear_results.py --part uci` "
             f"({_env()}). Do not edit by hand.", ""]
    lines += ["## Thesis protocol against the thesis's Table 3", "",
              "Protocol of algorithms.md 5.1.3: `java.util.Random(10)` shuffle, WEKA 10-fold arithmetic, fold 9 "
              "tested, fold 0 validates, the 36-point grid C x B in {0.01, 0.1, 1, 10, 20, 100}^2 (C outer, "
              "first best point kept), refit on the nine non-test folds. Options as the thesis's WEKA wrapper: "
              "nominal attributes as value indices (`nominal_encoding=index`), missing values replaced by "
              "training mean/mode, no scaling, eps = 0.001, LR = `-s 0`, SVM = `-s 1` (both bias `-B b` from "
              "the grid). Two SVM columns: C LIBLINEAR's `-s 1`, which switches to the primal `-s 2` when the dual "
              "reaches its iteration cap (the toolkit's default), and `dual_fallback=false`, the dual capped at "
              "1,000 iterations with its last iterate kept, as the Java port 1.92 behind the thesis's WEKA wrapper "
              "ran it (algorithms.md 2.9, revision 2; scikit-learn's LinearSVC(dual=True, max_iter=1000)). "
              "Cells: error % ± thesis CI `2.228·sqrt(e(1−e)/n)` (error count). "
              "`=` same count; `tie` the published count is reached by another grid point tied on "
              "validation (a tie-break difference); `within CI` / `>CI` the difference is within / exceeds the thesis CI.", "",
              "| dataset | n | n_test | LR thesis | LR ours | | SVM thesis | SVM ours (fallback) | | "
              "SVM ours (no fallback) | | run s (LR / SVM / no fallback) |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    summary = {"LR": Counter(), "SVM": Counter(), "SVM no fallback": Counter()}
    flags: dict[tuple[str, str], str] = {}
    notes: list[str] = []
    for stem, name, n, n_test, lr_pub, svm_pub in table:
        row = [name if name == stem else f"{name} (`{stem}`)", str(n), str(n_test)]
        secs = []
        for label, spec, pub in (("LR", THESIS_LR, lr_pub), ("SVM", THESIS_SVM, svm_pub),
                                 ("SVM no fallback", THESIS_SVM_JAVA, svm_pub)):
            published = [] if label == "SVM no fallback" else [_cell(pub, n_test, n)]
            recs = th.get((stem, Pipeline(spec).name), [])
            if not recs:
                row += published + ["—", ""]
                secs.append("—")
                continue
            rec = recs[0]
            ours = rec["metrics"]["errors"]
            secs.append(f"{_seconds(recs):.1f}")
            flag = ""
            if pub is None:
                flag = "completes"
                summary[label]["completes (thesis: STUCK)"] += 1
            elif ours == pub:
                flag = "="
                summary[label]["="] += 1
            else:
                n_tied, reach = _tie_counts(paths[stem], spec, rec)
                beyond = abs(ours - pub) / n_test > stats.thesis_ci(pub / n_test, n)
                if pub in reach:
                    flag = "tie"
                    summary[label]["tie"] += 1
                else:
                    flag = ">CI" if beyond else "within CI"
                    summary[label][">CI" if beyond else "within CI"] += 1
                chosen = ", ".join(f"{k.split('.')[-1]}={v}" for k, v in rec["chosen_params"].items())
                notes.append(f"* {name} {label}: ours {ours}, published {pub}; {n_tied} grid point(s) tied on "
                             f"validation (chosen {chosen}) reach test counts {reach}.")
            flags[stem, label] = flag
            row += published + [_cell(ours, n_test, n), flag]
        row.append(" / ".join(secs))
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Summary: " + "; ".join(f"{k}: " + ", ".join(f"{v} {c}" for c, v in sorted(cnt.items()))
                                        for k, cnt in summary.items()), ""]
    beyond = [stem for stem, *_ in table if flags.get((stem, "SVM")) == ">CI"]
    moved = [stem for stem in beyond if flags.get((stem, "SVM no fallback")) in ("=", "tie", "within CI")]
    still = [stem for stem in beyond if stem not in moved]
    new_beyond = [stem for stem, *_ in table if flags.get((stem, "SVM no fallback")) == ">CI" and stem not in beyond]
    names = {stem: name for stem, name, *_ in table}
    counts = {(stem, label): th[stem, Pipeline(spec).name][0]["metrics"]["errors"]
              for stem, *_ in table for label, spec in (("SVM", THESIS_SVM), ("SVM no fallback", THESIS_SVM_JAVA))
              if (stem, Pipeline(spec).name) in th}
    published = {stem: svm_pub for stem, _, _, _, _, svm_pub in table}
    closer = [stem for stem in beyond if (stem, "SVM no fallback") in counts and
              abs(counts[stem, "SVM no fallback"] - published[stem]) < abs(counts[stem, "SVM"] - published[stem])]
    moves = ", ".join(f"{names[s]} {counts[s, 'SVM']} → {counts.get((s, 'SVM no fallback'), '—')} ({published[s]})"
                      for s in beyond)
    lines += [f"Error counts of those cells, fallback → no fallback (published): {moves}; algorithms.md 2.9's "
              "independent run of the same option measured anneal 5 → 14 (16), autos 6 → 13 (11), sick 11 → 28 "
              "(17), crx 10 → 13 (15), glass 8 → 12 (10), and no move on segment or mushroom. Without the fallback "
              f"the count is closer to the published one in {len(closer)} of the {len(beyond)} cells.", ""]
    lines += [f"**The SVM cells beyond the thesis CI with C LIBLINEAR's fallback: {len(beyond)} "
              f"({', '.join(names[s] for s in beyond)}). Without the fallback {len(moved)} of them move inside the CI "
              f"or onto the published count ({', '.join(f'{names[s]}: ' + flags[s, 'SVM no fallback'] for s in moved) or 'none'}); "
              f"{len(still)} stay beyond it ({', '.join(names[s] for s in still) or 'none'}).** "
              + (f"Cells that were inside the CI with the fallback and fall beyond it without: "
                 f"{', '.join(names[s] for s in new_beyond)}." if new_beyond else
                 "No cell that was inside the CI with the fallback falls beyond it without."), ""]
    lines += seed_sensitivity(beyond + new_beyond, paths, names, published, table, cache, fresh, jobs)
    if notes:
        lines += ["Differing cells (validation ties refitted):", ""] + notes + [""]
    lines += ["Why cells can differ beyond tie-breaks (see also algorithms.md 6.1):", "",
              "* The thesis ran the Java port of LIBLINEAR 1.92 inside WEKA; we run C LIBLINEAR "
              "(liblinear-official). For `-s 0` the Java port uses a trust-region Newton method and the C "
              "library 2.4x a line-search Newton method; at eps = 0.001 both stop near, not at, the optimum, "
              "and index-coded nominal attributes and unscaled numeric ones make the problems ill-conditioned, "
              "so models, and then a few test predictions, differ.",
              "* For `-s 1` (dual coordinate descent) C LIBLINEAR 2.x switches to the primal solver `-s 2` "
              "when the dual solver reaches its iteration limit (\"WARNING: reaching max number of iterations, "
              "Switching to use -s 2\"); the Java 1.92 port has no such fallback and returns the unconverged "
              "dual iterate. On the thesis's training folds of anneal, autos, credit-a, mushroom, segment and "
              "sick (index encoding, eps 0.001, C in {0.01, 1, 100}) the fallback fired 62 times in 18 trainings "
              "(counted with liblinear's messages on). This is why the published SVM errors are far above LR's "
              "on those datasets while the fallback's are close to LR's; the no-fallback column tests it. The dual "
              "solvers also draw their random order from different generators (Java `Random`, C `rand()`, "
              "scikit-learn's generator for the no-fallback column), and an unconverged iterate depends on that "
              "order, so exact counts are not expected to match (algorithms.md 2.9: the target is the direction "
              "and the CI).", ""]

    lines += [f"## Default protocol ({runs} repetitions)", "",
              f"algorithms.md 5.1.2: {runs} repetitions, seed 1, 10 % test, first 10 % of the rest validates the "
              "same 36-point grid, refit on the training part. Toolkit defaults: WEKA NominalToBinary one-hot "
              "encoding, mean/mode imputation, no scaling, LIBLINEAR's default eps, LR `-s 0`, SVM `solver=auto` "
              "(= `-s 2`, the primal solver of the same objective, on all 20 datasets since instances outnumber "
              "features). "
              "Cells: mean error % ± 95 % CI over the repetitions (t_{0.975,R−1}·s/√R); the most frequently "
              "chosen (C, B); total seconds for all repetitions (tuning + refit + test).", "",
              "| dataset | LR error % | LR usual (C, B) | SVM error % | SVM usual (C, B) | s (LR / SVM) |",
              "| --- | --- | --- | --- | --- | --- |"]
    for stem, name, *_ in table:
        row = [name]
        secs = []
        for spec in (DEFAULT_LR, DEFAULT_SVM):
            recs = de.get((stem, Pipeline(spec).name), [])
            if not recs:
                row += ["—", "—"]
                secs.append("—")
                continue
            errs = [r["metrics"]["error"] for r in recs]
            mean, _, ci = stats.mean_ci(errs)
            usual = Counter((r["chosen_params"].get("clf.C"), r["chosen_params"].get("clf.B")) for r in recs)
            (c, b), k = usual.most_common(1)[0]
            row += [f"{_pct(mean)} ± {_pct(ci)} ({len(recs)})", f"({c:g}, {b:g}) ×{k}"]
            secs.append(f"{_seconds(recs):.0f}")
        row.append(" / ".join(secs))
        lines.append("| " + " | ".join(row) + " |")

    letter_th = {lab: th.get(("letter", Pipeline(spec).name), [])
                 for lab, spec in (("LR", THESIS_LR), ("SVM", THESIS_SVM), ("SVM no fallback", THESIS_SVM_JAVA))}
    letter_de = {lab: de.get(("letter", Pipeline(spec).name), []) for lab, spec in (("LR", DEFAULT_LR), ("SVM", DEFAULT_SVM))}
    lines += ["", "## letter (20,000 instances): the runs the thesis reported as STUCK", ""]
    for lab in letter_th:
        for proto, recs in (("thesis protocol", letter_th[lab]), ("default protocol", letter_de.get(lab, []))):
            if not recs:
                continue
            tune = sum(r["timing"]["tune_seconds"] for r in recs) / len(recs)
            fit = sum(r["timing"]["fit_seconds"] for r in recs) / len(recs)
            err = sum(r["metrics"]["error"] for r in recs) / len(recs)
            lines.append(f"* {lab}, {proto}: {len(recs)} run(s); per run {tune:.0f} s tuning the 36 grid points + "
                         f"{fit:.1f} s refit; error {_pct(err)} %.")
    lines += ["", f"Compute time in the records (tuning + refit + test, summed over all runs): thesis protocol "
              f"{_seconds(thesis.ok()):.0f} s, default protocol {_seconds(default.ok()):.0f} s; with jobs={jobs} "
              f"the wall time is about half. This invocation took {t2 - t0:.0f} s "
              + ("(records already in `results/linear/` were reused; `--fresh` recomputes them). " if reused else
                 "from scratch (no earlier records). ")
              + "Timings were taken on a shared machine and are indicative only.", ""]
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "linear.md").write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {out_dir / 'linear.md'}", file=sys.stderr)


# ------------------------------------------------------------------------------------------ text part
CMLS_VARIANTS = [("cmls", "CMLS counts"), ("cmls:weighting=binary", "CMLS binary")]
NB_M = "nb-multinomial"


def text_part(shared: Path, out_dir: Path, cache: Path, jobs: int, runs: int, fresh: bool,
              only: set[str] | None = None) -> None:
    sets = [name for name in TEXT_SETS if not only or name.split(".")[0] in only]
    files = [shared / "text" / name for name in sets if (shared / "text" / name).exists()]
    absent = [name for name in sets if not (shared / "text" / name).exists()]
    has_nb = NB_M in tk.get_registry().names("classifier")
    variants = [(Pipeline(spec), label) for spec, label in CMLS_VARIANTS]
    pipelines = [p for p, _ in variants] + ([Pipeline(NB_M)] if has_nb else [])
    t0 = time.perf_counter()
    res = _run(files, pipelines, Protocol(repetitions=runs, seed=1), cache / "text-cmls.jsonl", fresh, jobs,
               ["error", "accuracy", "average-precision"])
    wall = time.perf_counter() - t0
    cells = _by_cell(res)
    lines = ["# CMLS on sparse word-count datasets", "",
             "Generated by `python scripts/make_linear_results.py --part text` "
             f"({_env()}). Do not edit by hand.", "",
             f"Default protocol (algorithms.md 5.1.2): {runs} repetitions, seed 1, 10 % test, every method on "
             "the same splits. CMLS tunes C in {0.01, 0.1, 1, 10, 100} on the first 10 % of the training part "
             "(bias 1, tolerance 1e-3), on the word counts as given (`cmls`) or on word presence "
             "(`cmls:weighting=binary`, the features BIM uses). Cells: mean accuracy % ± 95 % CI over the "
             "repetitions, then the mean one-vs-rest average precision of the decision scores.", ""]
    if has_nb:
        lines += [f"`{NB_M}` (default parameters) is registered and runs on the same splits. Last columns: "
                  "CMLS against NB-M, `≥`/`<` by mean accuracy, `v`/`*` significantly better/worse "
                  "(corrected resampled t-test, α = 0.05).", ""]
    else:
        lines += [f"**`{NB_M}` is not registered in this environment**, so its columns are empty; re-run "
                  "`python scripts/make_linear_results.py --part text` once the multinomial NB plugin is "
                  "installed (CMLS records are reused).", ""]
    head = ["dataset", "n", "features", "classes"] + [lab for _, lab in variants] + ["NB-M"]
    head += [f"{lab} vs NB-M" for _, lab in variants]
    lines += ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    tally = {lab: [0, 0] for _, lab in variants}
    for path in files:
        ds = tk.load_arff(path)
        name = ds.name
        row = [name, str(ds.n_instances), str(ds.n_features), str(len(ds.classes))]
        acc: dict[str, list[float]] = {}
        for pipe in pipelines:
            recs = cells.get((name, pipe.name), [])
            acc[pipe.name] = [r["metrics"]["accuracy"] for r in recs]
            if recs:
                m, _, ci = stats.mean_ci(acc[pipe.name])
                ap = np.nanmean([r["metrics"]["average-precision"] for r in recs])
                row.append(f"{_pct(m)} ± {_pct(ci)} (AP {ap:.3f})")
            else:
                row.append("—")
        if not has_nb:
            row += ["—"] * (1 + len(variants))
        else:
            b = acc.get(NB_M, [])
            for pipe, lab in variants:
                a = acc.get(pipe.name, [])
                if not a or len(a) != len(b):
                    row.append("—")
                    continue
                rec = cells[(name, pipe.name)][0]
                test = stats.corrected_ttest(a, b, rec["n_test"] / rec["n_train"])
                better = float(np.mean(a)) >= float(np.mean(b))
                mark = ("v" if better else "*") if test.p_value < 0.05 else ""
                tally[lab][0 if better else 1] += 1
                row.append(f"{'≥' if better else '<'}{mark} (p = {test.p_value:.3f})")
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    if has_nb:
        for lab, (w, l) in tally.items():
            lines.append(f"* {lab}: mean accuracy ≥ NB-M on {w} of {w + l} datasets.")
    if absent:
        lines.append(f"Not found (skipped): {', '.join(absent)}.")
    lines += ["", "Compute time in the records (tuning + refit + test, summed over all runs): "
              + ", ".join(f"{p.name} {_seconds([r for r in res.ok() if r['pipeline']['name'] == p.name]):.0f} s"
                          for p in pipelines)
              + f"; this invocation took {wall:.0f} s with jobs={jobs} (records already in `results/linear/` are "
              f"reused, `--fresh` recomputes them).", ""]
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "cmls_text.md").write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {out_dir / 'cmls_text.md'}", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("all", "uci", "text"), default="all")
    parser.add_argument("--datasets", type=Path,
                        default=Path(os.environ.get("TOOLKIT_SHARED_DATASETS", ROOT.parent / "shared" / "datasets")))
    parser.add_argument("--out-dir", type=Path, default=ROOT / "docs" / "results")
    parser.add_argument("--cache", type=Path, default=ROOT / "results" / "linear")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--fresh", action="store_true", help="ignore records of earlier runs")
    parser.add_argument("--only", default="", help="comma-separated dataset stems (a quick partial run)")
    args = parser.parse_args(argv)
    only = {x.strip() for x in args.only.split(",") if x.strip()} or None
    if not args.datasets.exists():
        sys.exit(f"{args.datasets}: no such folder (use --datasets DIR)")
    if args.part in ("all", "uci"):
        uci_part(args.datasets, args.out_dir, args.cache, args.jobs, args.runs, args.fresh, only)
    if args.part in ("all", "text"):
        text_part(args.datasets, args.out_dir, args.cache, args.jobs, args.runs, args.fresh, only)


if __name__ == "__main__":
    main()
