"""Accuracy against vocabulary size for several feature selectors (Schneider 2004's figures).

For every outer split the text is vectorised on the training part, each selector scores the
training vocabulary once, and the classifier is refit on the top ``k`` words for every size ``k``
(ranking by ``scores_`` with ties to the lower index, exactly what the selector's own ``k`` would
keep). This is the harness's protocol (random resampling with ``seed + r``, a fixed test set, or
k-fold cross-validation as Schneider ran 20 Newsgroups) without re-vectorising and re-scoring per
size. Nothing is learned from a test part.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.api import FeatureSelectorBase, Predictions, Schema, accepts_argument
from toolkit.config import LoadOptions
from toolkit.data.dataset import Dataset
from toolkit.errors import ParameterError, ToolkitError
from toolkit.evaluation.resampling import MAX_REPETITIONS, check_seed
from toolkit.plugin_host.registry import ComponentSpec, parse_component

__all__ = ["CurveResult", "vocabulary_curve", "parse_sizes", "DEFAULT_SIZES", "DEFAULT_CURVE_CLASSIFIER"]

DEFAULT_SIZES: tuple[int | None, ...] = (20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, None)
#: Schneider's classifier: multinomial NB with Laplace smoothing and the class-frequency prior
DEFAULT_CURVE_CLASSIFIER = "nb-multinomial:epsilon=1,prior=mle"
#: KL, dKL and MI of both event models: the baseline's event model decides the 20 Newsgroups comparison
#: (algorithms.md 3.2, revision 2), so both are reported beside KL and dKL
DEFAULT_SELECTORS: tuple[str, ...] = ("kl", "dkl", "mi", "mi:event_model=token")


def parse_sizes(text: str | Sequence[Any]) -> list[int | None]:
    """``"100,200,full"`` -> [100, 200, None]; ``full``/``all``/``none`` mean the whole vocabulary."""
    items = text.split(",") if isinstance(text, str) else list(text)
    out: list[int | None] = []
    for item in items:
        s = str(item).strip().lower()
        if not s:
            continue
        if s in ("full", "all", "none"):
            out.append(None)
            continue
        try:
            value = int(s)
        except ValueError:
            raise ParameterError(f"vocabulary size '{item}' is not a positive integer or 'full'") from None
        if value < 1:
            raise ParameterError(f"vocabulary size must be positive, not {value}")
        out.append(value)
    if not out:
        raise ParameterError("no vocabulary size given; e.g. 100,1000,full")
    return out


@dataclass
class CurveResult:
    """One record per (dataset, selector, size, repetition) with the metric and the words kept."""

    records: list[dict[str, Any]]
    selectors: list[str]
    sizes: list[int | None]
    metric: str
    protocol: dict[str, Any] = field(default_factory=dict)

    @property
    def datasets(self) -> list[str]:
        return list(dict.fromkeys(r["dataset"] for r in self.records))

    def values(self, dataset: str, selector: str, size: int | None) -> list[float]:
        rows = [r for r in self.records if r["dataset"] == dataset and r["selector"] == selector and r["size"] == size]
        rows.sort(key=lambda r: r["repetition"])
        return [r["value"] for r in rows]

    def n_features(self, dataset: str, size: int | None) -> int:
        counts = [r["n_features"] for r in self.records if r["dataset"] == dataset and r["size"] == size]
        return int(round(float(np.mean(counts)))) if counts else 0

    def summary(self) -> list[dict[str, Any]]:
        """Mean and sample standard deviation per (dataset, selector, size)."""
        out = []
        for ds in self.datasets:
            for size in self.sizes:
                for sel in self.selectors:
                    v = np.asarray(self.values(ds, sel, size), dtype=np.float64)
                    out.append({"dataset": ds, "selector": sel, "size": size,
                                "n_features": self.n_features(ds, size),
                                "mean": float(v.mean()) if len(v) else float("nan"),
                                "sd": float(v.std(ddof=1)) if len(v) > 1 else float("nan"), "n": int(len(v))})
        return out

    def _shown_sizes(self, dataset: str) -> list[int | None]:
        """Sizes with distinct numbers of words (a size above the vocabulary repeats 'full')."""
        full = self.n_features(dataset, None) if None in self.sizes else None
        shown, seen = [], set()
        for size in self.sizes:
            n = self.n_features(dataset, size)
            if (size is not None and n == full) or n in seen:
                continue
            seen.add(n)
            shown.append(size)
        return shown

    def paired_test(self, dataset: str, a: str, b: str, size: int | None) -> float:
        """One-sided paired t-test p-value for "a beats b" (Schneider's test): a higher value when the metric
        is better higher (accuracy), a lower one when lower is better (error); NaN with < 2 splits."""
        from toolkit.evaluation.report import greater_is_better
        from toolkit.evaluation.stats import paired_ttest

        va, vb = self.values(dataset, a, size), self.values(dataset, b, size)
        if len(va) < 2 or len(va) != len(vb):
            return float("nan")
        if not greater_is_better(self.metric):
            va, vb = vb, va
        return paired_ttest(va, vb, alternative="greater").p_value

    def as_dict(self) -> dict[str, Any]:
        return {"schema": "toolkit.vocab-curve/1", "metric": self.metric, "selectors": self.selectors,
                "sizes": self.sizes, "protocol": self.protocol, "summary": self.summary(),
                "records": self.records}

    def format(self, fmt: str = "markdown", baseline: str | None = None, alpha: float = 0.05) -> str:
        """A table per dataset: rows = vocabulary size, columns = selectors (mean ± sd in %).

        With repetitions, a selector's cell is marked ``v`` when it beats ``baseline`` (one-sided
        paired t-test at ``alpha``) and ``*`` when the baseline beats it.
        """
        if fmt not in ("markdown", "table", "csv"):
            raise ParameterError(f"format must be markdown, table or csv, not '{fmt}'")
        if baseline is None:
            baseline = "mi" if "mi" in self.selectors else self.selectors[-1]
        scale = 100.0 if self.metric in ("accuracy", "error") else 1.0
        blocks = []
        for ds in self.datasets:
            header = ["words"] + self.selectors
            rows = []
            for size in self._shown_sizes(ds):
                label = f"full ({self.n_features(ds, size)})" if size is None else str(self.n_features(ds, size))
                if size is not None and self.n_features(ds, size) < size:
                    label += " (all)"
                cells = [label]
                for sel in self.selectors:
                    v = np.asarray(self.values(ds, sel, size), dtype=np.float64)
                    if not len(v):
                        cells.append("")
                        continue
                    text = f"{scale * v.mean():.2f}"
                    if len(v) > 1:
                        text += f" ± {scale * v.std(ddof=1):.2f}"
                    if sel != baseline and baseline in self.selectors and len(v) > 1:
                        if self.paired_test(ds, sel, baseline, size) <= alpha:   # WEKA's p <= alpha
                            text += " v"
                        elif self.paired_test(ds, baseline, sel, size) <= alpha:
                            text += " *"
                    cells.append(text)
                rows.append(cells)
            if fmt == "csv":
                lines = [",".join(["dataset"] + header)] + [",".join([ds] + r) for r in rows]
            elif fmt == "markdown":
                lines = [f"**{ds}** ({self.metric}, %)" if scale == 100.0 else f"**{ds}** ({self.metric})", "",
                         "| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
                lines += ["| " + " | ".join(r) + " |" for r in rows]
            else:
                widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
                lines = [ds, "  ".join(h.ljust(w) for h, w in zip(header, widths))]
                lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
            blocks.append("\n".join(lines))
        note = ""
        if fmt != "csv" and any(len(self.values(d, s, z)) > 1 for d in self.datasets for s in self.selectors
                                for z in self.sizes):
            note = (f"\n\nmean ± sd over repetitions; v / * = significantly better / worse than {baseline} "
                    f"(one-sided paired t-test, alpha = {alpha})")
        return "\n\n".join(blocks) + note

    def plot(self, path: str | os.PathLike[str]) -> None:
        """Metric against vocabulary size (log scale), one panel per dataset; needs matplotlib."""
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise ParameterError("plotting needs matplotlib: pip install 'arff-toolkit[plot]'") from None
        names = self.datasets
        cols = min(3, len(names))
        rows = math.ceil(len(names) / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.6 * rows), squeeze=False)
        for ax, ds in zip(axes.ravel(), names):
            for sel in self.selectors:
                xs, ys, es = [], [], []
                for size in self._shown_sizes(ds):
                    v = np.asarray(self.values(ds, sel, size), dtype=np.float64)
                    if len(v):
                        xs.append(self.n_features(ds, size))
                        ys.append(v.mean())
                        es.append(v.std(ddof=1) if len(v) > 1 else 0.0)
                ax.errorbar(xs, ys, yerr=es, marker="o", markersize=3, capsize=2, label=sel)
            ax.set_xscale("log")
            ax.set_title(ds)
            ax.set_xlabel("vocabulary size")
            ax.set_ylabel(self.metric)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
        for ax in axes.ravel()[len(names):]:
            ax.axis("off")
        fig.tight_layout()
        from toolkit.plotting import save_figure

        save_figure(fig, path, dpi=110)   # written whole or not at all, and closed


def _component(kind: str, text: str, registry: Any) -> tuple[str, ComponentSpec, dict[str, Any]]:
    name, grid = parse_component(text)
    spec = registry.get(kind, name)
    from toolkit.plugin_host.registry import check_params

    check_params(spec, grid)
    multi = [k for k, v in grid.items() if len(v) != 1]
    if multi:
        raise ParameterError(f"'{text}': a vocabulary curve takes one value per parameter, not a grid ({multi[0]})")
    return text, spec, {k: v[0] for k, v in grid.items()}


def _build(spec: ComponentSpec, params: dict[str, Any], seed: int) -> Any:
    params = dict(params)
    if "random_state" in spec.parameters() and "random_state" not in params:
        params["random_state"] = int(seed)
    return spec.create(**params)


def vocabulary_curve(datasets: Any, *, selectors: Sequence[str] = DEFAULT_SELECTORS,
                     sizes: Sequence[int | None] | str = DEFAULT_SIZES,
                     classifier: str = DEFAULT_CURVE_CLASSIFIER, text: Any = "auto", test: Any = None,
                     runs: int = 5, test_fraction: float = 0.2, seed: int = 1,
                     metric: str | Callable[[Predictions], float] = "accuracy",
                     class_attribute: str | int | None = -1, folds: int | None = None,
                     progress: Callable[[int, int, str], None] | None = None) -> CurveResult:
    """Metric of ``classifier`` on the top-k words of every selector, for every size k.

    :param datasets: one or more datasets (objects, paths or bundled names).
    :param selectors: registered feature selectors with a ``scores_`` attribute (``kl``, ``dkl``,
        ``mi``, ``kl:variant=exact``, ...); one that lacks ``scores_`` is refit for every size.
    :param sizes: vocabulary sizes (None = all words), or a string like ``"100,1000,full"``.
    :param test: fixed test datasets, one per dataset (e.g. 20 Newsgroups bydate); otherwise
        ``runs`` random splits with ``test_fraction`` held out (seeds ``seed .. seed+runs-1``).
    :param folds: k-fold cross-validation instead of random splits: the instances are permuted with
        ``default_rng(seed)`` and cut into ``folds`` parts of WEKA's sizes; fold f is tested once
        (repetition f, split seed ``seed + f``).
    :param metric: a registered evaluator name, or a function of :class:`toolkit.api.Predictions`
        returning a number (its ``__name__`` names the metric).
    """
    from toolkit.plugin_host.components import get_registry
    from toolkit.evaluation.api import expand_dataset_args, load_datasets, load_test_sets
    from toolkit.evaluation.resampling import kfold_parts, random_splits

    registry = get_registry()
    size_list = parse_sizes(sizes) if isinstance(sizes, str) else list(sizes)
    if not selectors:
        raise ParameterError("name at least one feature selector (kl, dkl, mi)")
    sel_specs = [_component("feature-selector", s, registry) for s in selectors]
    _, clf_spec, clf_params = _component("classifier", classifier, registry)
    if callable(metric):
        evaluator, metric_fn = None, metric
        metric_name = getattr(metric, "__name__", "metric")
    else:
        evaluator = registry.get("evaluator", metric)
        metric_fn, metric_name = evaluator.create(), metric
    if folds is not None and (isinstance(folds, bool) or int(folds) != folds or folds < 2):
        raise ParameterError(f"folds must be a whole number >= 2, not {folds!r}")
    if folds is not None and test is not None:
        raise ParameterError("give either fixed test sets or folds, not both")
    check_seed(seed)
    if test is None and folds is None and (isinstance(runs, bool) or not isinstance(runs, (int, np.integer))
                                           or not 1 <= runs <= MAX_REPETITIONS):
        raise ParameterError(f"runs must be a whole number from 1 to {MAX_REPETITIONS:,}, not {runs!r}")
    items = [datasets] if isinstance(datasets, (Dataset, str, os.PathLike)) else list(datasets)
    items, folder = expand_dataset_args(items)
    options = LoadOptions(class_attribute=class_attribute)
    loaded = load_datasets(items, options, skip_unusable=folder)
    tests: list[Dataset] | None = None
    if test is not None:
        test_items = [test] if isinstance(test, (Dataset, str, os.PathLike)) else list(test)
        # a CSV or LIBSVM test set renumbered by name onto its training set's header (as evaluate --test)
        tests = load_test_sets(test_items, loaded, options)
        if len(tests) != len(loaded):
            raise ParameterError(f"give one test set per dataset ({len(loaded)} datasets, {len(tests)} test sets)")
        for ds, test_ds in zip(loaded, tests):   # codes were matched by position: swapped class values read 0 %
            ds.check_same_header(test_ds)
    text_step = None
    if text not in (None, "auto"):
        from toolkit.models.pipeline import _make_step

        text_step = _make_step("text", text, registry)
    # what evaluate checks before its first repetition: each selector and the classifier against each dataset
    # (whole-number counts, nominal or missing values, ...), naming the dataset
    from toolkit.models.pipeline import Pipeline

    for ds in loaded:
        ds.require_nominal_class()
        for selector in selectors:
            try:
                Pipeline(classifier, feature_selector=selector, text=text, tune=False).check_data(ds)
            except ToolkitError as exc:
                message = str(exc)
                raise type(exc)(message if message.startswith(ds.name) else f"{ds.name}: {message}") from None
    records: list[dict[str, Any]] = []
    # each split as index arrays (or the fixed test set); its two datasets are made when it runs, so one
    # pair at a time is held, not a copy of the data per repetition
    parts: list[tuple[Dataset, list[tuple[int, int, Any, Any]]]] = []
    for i, ds in enumerate(loaded):
        ds.require_nominal_class()
        if tests is not None:
            parts.append((ds, [(0, seed, None, tests[i])]))
        elif folds is not None:
            perm = np.random.default_rng(seed).permutation(ds.n_instances)
            parts.append((ds, [(f, seed + f, fit, held_out)
                               for f, (fit, held_out) in enumerate(kfold_parts(perm, int(folds)))]))
        else:
            splits = random_splits(ds.n_instances, runs, seed, test_fraction, 0.1)
            parts.append((ds, [(s.repetition, s.seed, s.train, s.test) for s in splits]))
    total = sum(len(p) for _, p in parts) * len(sel_specs)
    done = 0
    for ds, splits in parts:
        for repetition, split_seed, train_rows, test_rows in splits:
            train = ds if train_rows is None else ds.subset(train_rows)
            test_ds = test_rows if isinstance(test_rows, Dataset) else ds.subset(test_rows)
            X_tr, schema, X_te = _prepare(train, test_ds, text_step, split_seed)
            y_tr = np.asarray(train.y, dtype=np.int64)
            y_te = np.asarray(test_ds.y, dtype=np.int64)
            for label, spec, params in sel_specs:
                selector = _build(spec, {**params, **({"k": None} if "k" in spec.parameters() else {})}, split_seed)
                scores = None
                if hasattr(selector, "fit"):
                    if accepts_argument(selector.fit, "schema"):
                        selector.fit(X_tr, y_tr, schema=schema)
                    else:
                        selector.fit(X_tr, y_tr)
                    scores = getattr(selector, "scores_", None)
                for size in size_list:
                    if scores is not None:
                        cols = FeatureSelectorBase.top_k(np.asarray(scores, dtype=np.float64), size)
                    else:
                        sel = _build(spec, {**params, "k": size}, split_seed)
                        sel.fit(X_tr, y_tr)
                        cols = np.asarray(sel.support_)
                        cols = np.flatnonzero(cols) if cols.dtype == bool else np.sort(cols)
                    value = _score(clf_spec, clf_params, split_seed, X_tr, y_tr, X_te, y_te, schema, cols,
                                   metric_fn, evaluator)
                    records.append({"dataset": ds.name, "selector": label, "size": size,
                                    "n_features": int(len(cols)), "repetition": repetition,
                                    "split_seed": split_seed, "value": value, "n_train": int(X_tr.shape[0]),
                                    "n_test": int(X_te.shape[0])})
                done += 1
                if progress is not None:
                    progress(done, total, f"{ds.name} / {label}")
    if tests is not None:
        protocol: dict[str, Any] = {"name": "fixed"}
    elif folds is not None:
        protocol = {"name": "cross-validation", "folds": int(folds), "seed": seed}
    else:
        protocol = {"name": "random", "runs": runs, "test_fraction": test_fraction, "seed": seed}
    protocol["classifier"] = classifier
    return CurveResult(records, [s[0] for s in sel_specs], size_list, metric_name, protocol)


def _prepare(train: Dataset, test: Dataset, text_step: Any, seed: int) -> tuple[Any, Schema, Any]:
    if text_step is None and train.features.mask("string").any():
        from toolkit.models.pipeline import default_text_step

        text_step = default_text_step()
    if text_step is not None:
        vectorizer = text_step.build({}, seed)
        X_tr, schema = vectorizer.fit_transform_dataset(train)
        return X_tr, schema, vectorizer.transform_dataset(test)
    return train.X, Schema.from_dataset(train), test.X


def _columns(X: Any, cols: np.ndarray) -> Any:
    out = X[:, cols]
    return sp.csr_matrix(out) if sp.issparse(out) else out


def _score(spec: ComponentSpec, params: dict[str, Any], seed: int, X_tr: Any, y_tr: np.ndarray, X_te: Any,
           y_te: np.ndarray, schema: Schema, cols: np.ndarray, metric_fn: Any, evaluator: Any) -> float:
    clf = _build(spec, params, seed)
    Xa, Xb = _columns(X_tr, cols), _columns(X_te, cols)
    keep = y_tr >= 0
    kwargs = {"schema": schema.select(cols)} if accepts_argument(clf.fit, "schema") else {}
    clf.fit(Xa[np.flatnonzero(keep)] if not keep.all() else Xa, y_tr[keep], **kwargs)
    # scores and probabilities as the harness's predictions carry them (a ranking evaluator ranks by the
    # log posterior odds when the probabilities are the softmax of the scores)
    if spec.capabilities.probabilities and hasattr(clf, "decision_and_proba"):
        scores, proba = (np.asarray(a, dtype=np.float64) for a in clf.decision_and_proba(Xb))
    else:
        scores = np.asarray(clf.decision_function(Xb), dtype=np.float64)
        proba = (np.asarray(clf.predict_proba(Xb), dtype=np.float64)
                 if spec.capabilities.probabilities and hasattr(clf, "predict_proba") else None)
    classes = np.asarray(clf.classes_, dtype=np.int64)
    y_pred = classes[np.argmax(scores, axis=1)]
    pred = Predictions(y_true=y_te, y_pred=y_pred, proba=proba, scores=scores, classes=schema.classes,
                       model=clf, X=Xb)
    value = metric_fn(pred)
    return float(value) if isinstance(value, (int, float, np.floating)) else float("nan")
