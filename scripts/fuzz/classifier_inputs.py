"""Fuzzer: hostile small datasets through every registered classifier, as a user's file reaches them.

Random ARFF files (numeric and nominal attributes; constant, all-missing, huge, tiny, negative and
whole-number columns; duplicated rows; classes of one instance; declared classes never seen; instance
weights of 0 and fractions; missing classes; few rows; some files word counts, mostly zeros, whole numbers,
some huge or fractional, so that the text classifiers take them) are read by the ARFF reader and run by the
harness (``toolkit.evaluate``, 2 repetitions, tuning on) with each registered classifier, and with each
feature and example selector before nb-multinomial and nb-bim; each classifier is also fitted on the whole
file and asked for probabilities.

A finding is anything but these outcomes: the run refuses the data up front with a ToolkitError; a
repetition fails with a ToolkitError (``error_kind`` not "bug"); or everything runs and every probability
row is finite, within [0, 1] and sums to 1. Each finding prints the seed and the file, which is kept.

usage: python scripts/fuzz/classifier_inputs.py SECONDS SEED [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

import toolkit
from toolkit.errors import ToolkitError


def column(rng: random.Random, n: int) -> tuple[str, list[str]]:
    """An attribute declaration and its n values as ARFF text."""
    kind = rng.choice(["normal", "huge", "tiny", "constant", "missing", "whole", "negative", "nominal",
                       "nominal1", "mixed"])
    if kind.startswith("nominal"):
        k = 1 if kind == "nominal1" else rng.randint(2, 6)
        labels = [f"v{i}" for i in range(k)]
        values = [rng.choice(labels) if rng.random() > 0.1 else "?" for _ in range(n)]
        return "{" + ",".join(labels) + "}", values
    if kind == "missing":
        return "numeric", ["?"] * n
    if kind == "constant":
        c = rng.choice([0.0, 1.0, -3.5, 1e300])
        return "numeric", [repr(c)] * n
    scale = {"huge": 1e300, "tiny": 1e-300, "whole": 1.0, "negative": -1.0}.get(kind, rng.choice([1.0, 1e6, 1e-6]))
    values = []
    for _ in range(n):
        x = rng.gauss(0, 1) * scale if kind != "whole" else float(rng.randint(0, 5))
        if kind == "negative":
            x = -abs(x)
        values.append("?" if rng.random() < 0.05 else repr(x))
    return "numeric", values


def counts(rng: random.Random, n: int) -> tuple[str, list[str]]:
    """A word-count column: mostly zeros, whole numbers, sometimes huge or fractional."""
    big = rng.choice([1, 1, 1, 1000, 1e15])
    values = []
    for _ in range(n):
        x = 0.0 if rng.random() < 0.6 else float(rng.randint(1, 4)) * big
        if rng.random() < 0.03:
            x += 0.5
        values.append(repr(x))
    return "numeric", values


def dataset_text(rng: random.Random) -> str:
    n = rng.choice([2, 3, 5, 8, 13, 30, 60])
    n_attr = rng.randint(1, 6)
    declared = rng.randint(2, 5)
    classes = [f"c{i}" for i in range(declared)]
    used = classes[: rng.randint(1, declared)]
    make = counts if rng.random() < 0.4 else column   # word counts reach the text classifiers
    cols = [make(rng, n) for _ in range(n_attr)]
    weighted = rng.random() < 0.3                      # the linear classifiers refuse instance weights
    lines = ["@relation fuzz"] + [f"@attribute a{j} {decl}" for j, (decl, _) in enumerate(cols)]
    lines += ["@attribute class {" + ",".join(classes) + "}", "@data"]
    rows = []
    for i in range(n):
        label = rng.choice(used) if rng.random() > 0.05 else "?"
        row = ",".join([values[i] for _, values in cols] + [label])
        r = rng.random() if weighted else 1.0
        if r < 0.1:
            row += ",{0}"
        elif r < 0.2:
            row += "," + "{" + repr(rng.choice([0.5, 2.0, 1e-3, 7.25])) + "}"
        rows.append(row)
        if rng.random() < 0.1:
            rows.append(row)   # a duplicated row
    return "\n".join(lines + rows) + "\n"


def check_probabilities(proba: np.ndarray) -> str | None:
    proba = np.asarray(proba, dtype=np.float64)
    if proba.size == 0:
        return None
    if not np.all(np.isfinite(proba)):
        return "non-finite probability"
    if proba.min() < -1e-12 or proba.max() > 1 + 1e-12:
        return f"probability outside [0, 1]: {proba.min()} .. {proba.max()}"
    sums = proba.sum(axis=1)
    if not np.allclose(sums, 1.0, atol=1e-9):
        return f"rows sum to {sums.min()} .. {sums.max()}"
    return None


def _bug_records(label: str, run) -> list[str]:
    """Findings of one ``toolkit.evaluate`` call: a non-ToolkitError exception or a repetition recorded as a
    plugin bug (a ToolkitError refusal is a right answer)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = run()
    except ToolkitError:
        return []
    except Exception:
        return [f"{label}: evaluate raised {traceback.format_exc(limit=6)}"]
    return [f"{label}: repetition {rec.get('repetition')} bug: {rec.get('error')}" for rec in results.records
            if rec.get("status") != "ok" and rec.get("error_kind") == "bug"]


def one_case(path: Path, classifiers: list[str], selectors: list[tuple[str | None, str | None]]) -> list[str]:
    findings: list[str] = []
    try:
        ds = toolkit.load_arff(path)
    except ToolkitError:
        return findings
    for feature, example in selectors:   # each selector before the classifiers that take word counts
        findings += _bug_records(f"{feature} / {example}", lambda: toolkit.evaluate(
            [ds], ["nb-multinomial", "nb-bim"], runs=2, keep_going=True, feature_selector=feature,
            example_selector=example))
    for name in classifiers:
        findings += _bug_records(name, lambda: toolkit.evaluate([ds], [name], runs=2, keep_going=True))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pred = toolkit.Pipeline(name, tune=False).fit(ds).predict(ds, keep_model=False)
        except ToolkitError:
            continue
        except Exception:
            findings.append(f"{name}: fit/predict raised {traceback.format_exc(limit=6)}")
            continue
        problem = check_probabilities(pred.proba) if pred.proba is not None else None
        if problem:
            findings.append(f"{name}: predict on the training file: {problem}")
    return findings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seconds", type=float)
    parser.add_argument("seed", type=int)
    parser.add_argument("--keep", help="folder for the files of findings (default: a temporary one)")
    args = parser.parse_args()
    keep = Path(args.keep or tempfile.mkdtemp(prefix="fuzz-classifiers-"))
    keep.mkdir(parents=True, exist_ok=True)
    from toolkit.plugin_host.components import get_registry

    registry = get_registry()
    classifiers = registry.names("classifier")
    selectors = ([(f"{name}:k=2" if name in ("kl", "dkl", "mi") else name, None)
                  for name in registry.names("feature-selector")]
                 + [(None, name) for name in registry.names("example-selector")])
    end = time.monotonic() + args.seconds
    cases = found = 0
    while time.monotonic() < end:
        seed = args.seed + cases
        rng = random.Random(seed)
        path = keep / f"case-{seed}.arff"
        path.write_text(dataset_text(rng), encoding="utf-8")
        findings = one_case(path, classifiers, selectors)
        cases += 1
        if findings:
            found += 1
            print(f"seed {seed}: {path}")
            for f in findings:
                print("   ", f.strip().replace("\n", "\n    "))
        else:
            path.unlink()
    print(f"{cases} cases, {found} with findings ({keep})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
