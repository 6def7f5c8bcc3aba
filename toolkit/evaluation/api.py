"""``toolkit.evaluate`` and ``toolkit.compare``: the Python API the CLI is a thin layer over."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Union

from toolkit.config import LoadOptions
from toolkit.data.dataset import Dataset
from toolkit.data.summary import LISTED_ATTRIBUTES
from toolkit.errors import DatasetError, ParameterError, ResultsFileError, warn
from toolkit.evaluation.harness import DEFAULT_METRICS, Protocol, run
from toolkit.evaluation.report import Comparison, compare_results
from toolkit.evaluation.results import Results
from toolkit.models.pipeline import Pipeline

__all__ = ["evaluate", "compare", "explain", "describe", "expand_dataset_args", "load_datasets", "binary_tasks"]

DatasetArg = Dataset | str | os.PathLike[str]


def expand_dataset_args(items: Sequence[DatasetArg]) -> tuple[list[DatasetArg], bool]:
    """Folders become their ARFF files (sorted); returns (items, whether a folder was given)."""
    out: list[DatasetArg] = []
    folder = False
    for item in items:
        if not isinstance(item, Dataset) and Path(item).is_dir():
            folder = True
            files = sorted(p for p in Path(item).iterdir() if p.name.endswith((".arff", ".arff.gz")))
            if not files:
                raise DatasetError(f"{item}: the folder holds no .arff or .arff.gz file")
            out.extend(files)
        else:
            out.append(item)
    return out, folder


ClassAttribute = Union[str, int, None, Mapping[str, Union[str, int]]]


def dataset_stem(item: str | os.PathLike[str]) -> str:
    """A dataset file's name without .arff / .arff.gz: what per-dataset options are keyed by."""
    name = Path(item).name
    for suffix in (".gz", ".arff"):
        name = name[: -len(suffix)] if name.endswith(suffix) else name
    return name


def _class_for(item: DatasetArg, class_attribute: ClassAttribute) -> str | int | None:
    """The class attribute of one dataset: ``class_attribute`` itself, or from a mapping of dataset
    names (file stems) to attributes, where "*" (default: the last attribute) covers the rest."""
    if not isinstance(class_attribute, Mapping):
        return class_attribute
    if not isinstance(item, Dataset):
        stem = dataset_stem(item)
        if stem in class_attribute:
            return class_attribute[stem]
    return class_attribute.get("*", -1)


def check_class_mapping(class_attribute: ClassAttribute, items: Sequence[DatasetArg]) -> None:
    """A per-dataset class attribute must name datasets that are there (a typo would silently fall
    back to the last attribute)."""
    if not isinstance(class_attribute, Mapping):
        return
    stems = {dataset_stem(item) for item in items if not isinstance(item, Dataset)}
    unknown = sorted(set(class_attribute) - stems - {"*"})
    if unknown:
        names = sorted(stems)
        shown = ", ".join(names[:10]) + (f", ... ({len(names)} in all)" if len(names) > 10 else "")
        raise ParameterError(f"class attribute given for dataset '{unknown[0]}', which is not among the "
                             f"datasets ({shown or 'none given by file'})")


def load_datasets(items: Sequence[DatasetArg], options: LoadOptions, skip_unusable: bool,
                  class_attribute: ClassAttribute = -1, require_class: bool = True) -> list[Dataset]:
    """Load every dataset; with ``skip_unusable`` (a folder was given), one without a nominal class
    is skipped with a warning instead of stopping the run. ``class_attribute`` (one for all, or per
    dataset name) overrides ``options.class_attribute`` when it is a mapping. ``require_class=False``
    leaves the class unchecked (a test set, checked once given its training set's header)."""
    from toolkit.loading import load_dataset

    loaded = []
    for item in items:
        if isinstance(class_attribute, Mapping):
            options = replace(options, class_attribute=_class_for(item, class_attribute))
        ds = item if isinstance(item, Dataset) else load_dataset(item, options)
        try:
            if require_class:
                ds.require_nominal_class()
        except DatasetError as exc:
            if not skip_unusable:
                raise
            warn(f"{exc}; skipped")
            continue
        loaded.append(ds)
    return loaded


def load_test_sets(items: Sequence[DatasetArg], training: Sequence[Dataset], options: LoadOptions,
                   class_attribute: ClassAttribute = -1) -> list[Dataset]:
    """The fixed test sets, one per training set: a CSV or LIBSVM file numbers its values by its own rows
    (its class labels 0/1 even read as numbers), so it is renumbered onto its training set's header by
    names (:func:`toolkit.data.conform_to`), a LIBSVM one read as wide as its training set; then each
    must have a nominal class."""
    from toolkit.data.conform import conform_to, libsvm_width

    def like(ds: Dataset | None) -> LoadOptions:
        width = None if ds is None else libsvm_width(ds.attributes)
        return options if width is None else replace(options, format_options=(("n_features", width),))

    paired: Sequence[Dataset | None] = training if len(training) == len(items) else [None] * len(items)
    tests = [test for item, ds in zip(items, paired)
             for test in load_datasets([item], like(ds), skip_unusable=False, class_attribute=class_attribute,
                                       require_class=False)]
    if len(tests) == len(training):
        tests = [conform_to(test, ds) for test, ds in zip(tests, training)]
    for test in tests:
        test.require_nominal_class()
    return tests


def binary_tasks(datasets: Sequence[Dataset], positive: str | Sequence[str] | None = None,
                 positive_below: float | None = None, *, require: bool = True) -> list[Dataset]:
    """One-vs-rest binary tasks (:meth:`Dataset.one_vs_rest`): for every dataset, one task per class in
    ``positive`` and per class whose share is below ``positive_below``; the datasets unchanged when
    neither is given. ``require``: no task at all is an error."""
    if positive is None and positive_below is None:
        return list(datasets)
    wanted = [positive] if isinstance(positive, str) else list(positive or [])
    out = []
    for ds in datasets:
        classes = list(dict.fromkeys(wanted))
        if positive_below is not None:
            classes += [c for c in ds.rare_classes(positive_below) if c not in classes]
        if not classes:
            warn(f"{ds.name}: no class has a share below {positive_below}; no task made from it")
        out.extend(ds.one_vs_rest(c) for c in classes)
    if not out and require:
        raise ParameterError("no binary task to evaluate; check --positive / --positive-below")
    return out


def make_pipelines(classifiers: Sequence[Any] | None, pipelines: Sequence[Pipeline] | None = None,
                   feature_selector: Any = None, example_selector: Any = None, tune: bool = True,
                   text: Any = "auto") -> list[Pipeline]:
    """The pipelines of a run: the given ones, then one per classifier with the shared selectors;
    refuses none at all and duplicate names."""
    # one classifier or pipeline given alone: a name was iterated letter by letter ("unknown classifier 't'")
    if isinstance(classifiers, dict):   # {name: params}: each a (name, params) component
        classifiers = list(classifiers.items())
    elif isinstance(classifiers, (str, tuple)) and classifiers and isinstance(classifiers[0], str) \
            and (isinstance(classifiers, str)
                 or (len(classifiers) == 2 and isinstance(classifiers[1], (dict, list, tuple)))):
        classifiers = [classifiers]   # one name, or one (name, params)
    elif classifiers is not None and (isinstance(classifiers, Pipeline) or hasattr(classifiers, "fit")):
        classifiers = [classifiers]
    if isinstance(pipelines, Pipeline):
        pipelines = [pipelines]
    out = list(pipelines or [])
    if classifiers is not None and not isinstance(classifiers, (list, tuple)) and not hasattr(classifiers, "__iter__"):
        classifiers = [classifiers]   # 5 was "'int' object is not iterable"
    for clf in classifiers or []:
        if not isinstance(clf, (str, tuple, Pipeline)) and not hasattr(clf, "fit"):
            raise ParameterError(f"a classifier is a registered name ('nb-weka', 'liblinear-lr:C=1'), a (name, "
                                 f"params) pair or an object with fit, not {clf!r}")
        if inspect.isclass(clf):
            raise ParameterError(f"give a {clf.__name__} object ({clf.__name__}(...)) or a registered name, not "
                                 f"the class itself")
        out.append(clf if isinstance(clf, Pipeline) else
                   Pipeline(clf, feature_selector=feature_selector, example_selector=example_selector,
                            tune=tune, text=text))
    if not out:
        raise ParameterError("no classifier given; name at least one (toolkit list classifiers shows them)")
    for pipeline in out:
        pipeline.check_untuned_grids()
    names = [p.name for p in out]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ParameterError(f"pipeline '{sorted(duplicates)[0]}' is given twice; results would be mixed up")
    return out


def evaluate(datasets: DatasetArg | Sequence[DatasetArg], classifiers: Sequence[Any] | None = None, *,
             pipelines: Sequence[Pipeline] | None = None, feature_selector: Any = None,
             example_selector: Any = None, text: Any = "auto", protocol: str | Protocol = "random",
             runs: int = 10, test_fraction: float = 0.1, validation_fraction: float = 0.1, seed: int = 1,
             stratified: bool = False, inner_folds: int | None = None,
             metrics: Sequence[str] | None = None, jobs: int = 1, out: str | os.PathLike[str] | None = None,
             resume: bool = False, store_proba: bool = False,
             test: DatasetArg | Sequence[DatasetArg] | None = None, class_attribute: ClassAttribute = -1,
             sparse: bool | str = "auto", tune: bool = True,
             progress: Callable[[int, int, str], None] | None = None,
             positive: str | Sequence[str] | None = None, positive_below: float | None = None,
             keep_going: bool = False, notes: Callable[[str], None] | None = None,
             scheduler: str | None = None, cluster: str | None = None, keep_predictions: bool = True) -> Results:
    """Run the nested resampling harness and return its records.

    :param datasets: Dataset objects, ARFF paths, bundled names, or folders of ARFF files.
    :param classifiers: names (``"nb-weka"``, ``"liblinear-lr:C=1"``) or classifier objects.
    :param protocol: "random" (algorithms.md 5.1.2), "thesis" (5.1.3), "fixed" (with ``test``),
        or a :class:`Protocol`.
    :param metrics: evaluator names; by default error, accuracy and log-loss, without the
        metrics that need probabilities when a classifier gives none (e.g. liblinear-svm).
    :param test: test datasets for fixed train/test splits (one per training dataset).
    :param class_attribute: name or index of the class attribute (default: the last), or a mapping
        from dataset names (file names without .arff / .arff.gz) to one, "*" for the others.
    :param out: JSON-lines file written as results finish; ``resume=True`` continues it.
    :param positive: evaluate binary tasks instead: this class (or each of these) against the rest,
        coded 1 (the positive class of average precision) against 0.
    :param positive_below: also one task per class whose share of the instances is below this
        (e.g. 0.1); use ``stratified=True`` to keep each class's share in every split.
    :param keep_going: a repetition that fails while running is recorded as failed; by default the run
        then stops with :class:`toolkit.evaluation.harness.RunFailed`, with ``keep_going`` it goes on.
    :param notes: receives one-line notes (what a resumed run adds and skips).
    :param keep_predictions: False returns the records without their test predictions (the results file
        keeps them): a long run then holds about a kilobyte a repetition.
    :param scheduler: run the repetitions on an existing Dask cluster (``tcp://HOST:8786``);
        ``cluster="local:N"`` starts a local one of N worker processes. Needs the ``dask`` extra.

    The whole experiment is checked before the first repetition: unknown components or parameters,
    bad parameter values, capabilities a dataset does not meet raise at once and nothing is written.
    """
    from toolkit.evaluation.distributed import parse_cluster
    from toolkit.plugin_host.components import get_registry

    if resume and out is None:   # ignored without a word; the command line refuses it too
        raise ParameterError("resume=True continues the results file given as out=...; give out")
    cluster_spec = parse_cluster(scheduler, cluster)
    items = [datasets] if isinstance(datasets, (Dataset, str, os.PathLike)) else list(datasets)
    items, folder = expand_dataset_args(items)
    options = LoadOptions(class_attribute=-1 if isinstance(class_attribute, Mapping) else class_attribute,
                          sparse=sparse)
    test_items = [] if test is None else [test] if isinstance(test, (Dataset, str, os.PathLike)) else list(test)
    check_class_mapping(class_attribute, [*items, *test_items])
    loaded = load_datasets(items, options, skip_unusable=folder, class_attribute=class_attribute)
    test_sets = None
    if test is not None:
        test_sets = load_test_sets(test_items, loaded, options, class_attribute)
        if isinstance(protocol, str):
            if protocol not in ("random", "fixed"):   # the default protocol becomes the fixed one; no other
                raise ParameterError(f"the {protocol} protocol splits the dataset itself; a fixed test set (--test) "
                                     f"is the fixed protocol: give one of them")
            protocol = "fixed"
    if positive is not None or positive_below is not None:
        # a dataset without a rare class is warned about and left out; none at all is an error
        tasks = [binary_tasks([ds], positive, positive_below, require=False) for ds in loaded]
        if not any(tasks):
            raise ParameterError("no binary task to evaluate; check --positive / --positive-below")
        if test_sets is not None:
            if len(test_sets) != len(loaded):
                raise ParameterError("the fixed protocol needs one test dataset per training dataset")
            test_sets = [test.one_vs_rest(t.task) for test, group in zip(test_sets, tasks) for t in group]
        loaded = [t for group in tasks for t in group]
    if isinstance(protocol, Protocol):
        # a Protocol object carries its own settings: the keyword ones, and a test set for any protocol but
        # the fixed one, were silently ignored (a random run reported as if on the given test set)
        given = {"runs": (runs, 10), "test_fraction": (test_fraction, 0.1),
                 "validation_fraction": (validation_fraction, 0.1), "seed": (seed, 1), "stratified": (stratified, False),
                 "inner_folds": (inner_folds, None)}
        ignored = [name for name, (value, default) in given.items() if value != default]
        if ignored:
            raise ParameterError(f"protocol is a Protocol object, which holds its own settings; "
                                 f"{', '.join(ignored)} would be ignored: give {'it' if len(ignored) == 1 else 'them'} "
                                 f"to the Protocol")
        if test is not None and protocol.name != "fixed":
            raise ParameterError(f"a test set (test=...) is the fixed protocol; the {protocol.name} protocol would "
                                 f"ignore it: use Protocol(name='fixed') or leave test out")
    if isinstance(protocol, str):
        protocol = Protocol(name=protocol, repetitions=runs, test_fraction=test_fraction,
                            validation_fraction=validation_fraction, seed=seed, stratified=stratified,
                            inner_folds=inner_folds)
    if not tune and isinstance(protocol, Protocol) and (protocol.inner_folds is not None
                                                         or protocol.validation_fraction != 0.1):
        raise ParameterError("without tuning (--no-tune) every classifier is fitted on the whole training part, so "
                             "--inner-folds and --validation-fraction would be ignored: leave them out")
    registry = get_registry()
    chosen = make_pipelines(classifiers, pipelines, feature_selector, example_selector, tune, text)
    if isinstance(metrics, str):   # one metric given alone was iterated letter by letter ("unknown evaluator 'e'")
        metrics = [metrics]
    if metrics is None:
        all_proba = all(p.classifier.capabilities.probabilities for p in chosen)
        metrics = [m for m in DEFAULT_METRICS
                   if all_proba or not getattr(registry.get("evaluator", m), "needs_proba", False)]
    evaluators = [registry.get("evaluator", m) for m in metrics]
    return run(loaded, chosen, protocol, evaluators, out=None if out is None else str(out), resume=resume,
               jobs=jobs, store_proba=store_proba, progress=progress, test_datasets=test_sets,
               keep_going=keep_going, notes=notes, cluster=cluster_spec, keep_predictions=keep_predictions)


def compare(results: Results | str | os.PathLike[str] | Sequence[Any], *, baseline: str | None = None,
            metric: str = "error", alpha: float = 0.05, test: str = "corrected-t") -> Comparison:
    """Summary table with significance marks against ``baseline`` (default: the first pipeline)."""
    if isinstance(results, Results):
        res = results
    else:
        paths = [results] if isinstance(results, (str, os.PathLike)) else list(results)
        if not paths:
            raise ResultsFileError("no results file given")
        res = Results.from_files(paths)
    held = res.metrics()
    if held and metric not in held:  # else an empty table, as if the metric were undefined everywhere
        raise ParameterError(f"metric '{metric}' is not in the results (they hold: {', '.join(held)})")
    return compare_results(res, metric=metric, baseline=baseline, alpha=alpha, test=test)


def describe(dataset: DatasetArg, *, class_attribute: str | int | None = -1,
             limit: int | None = LISTED_ATTRIBUTES) -> dict[str, Any]:
    """What ``toolkit info`` prints, as a dict, for a dataset object, a path or a bundled name: relation,
    counts, attributes by kind, missing shares, class distribution, sparsity (the first ``limit`` feature
    attributes one by one, as ``toolkit info --json``; None: all)."""
    from toolkit.data.summary import describe as summarise

    if isinstance(dataset, Dataset):
        ds = dataset
    else:
        (ds,) = load_datasets([dataset], LoadOptions(class_attribute=class_attribute), skip_unusable=False)
    return summarise(ds, limit)


def explain(dataset: DatasetArg, classifier: Any, *, class_attribute: str | int | None = -1) -> dict[str, Any]:
    """Fit ``classifier`` (no tuning) on the whole dataset and return its ``explain()`` report."""
    from toolkit.errors import CapabilityError

    if not isinstance(classifier, (str, tuple)) and (inspect.isclass(classifier) or not hasattr(classifier, "fit")):
        raise ParameterError(f"explain takes a registered name ('bma-nb') or a classifier object "
                             f"(BMANaiveBayes(...)), not {classifier!r}")

    if isinstance(classifier, str):
        from toolkit.plugin_host.registry import parse_component

        grids = [k for k, values in parse_component(classifier)[1].items() if len(values) > 1]
        if grids:
            raise ParameterError(f"explain fits one model without tuning: give {grids[0]} one value, not a grid "
                                 f"('{classifier}')")
    (ds,) = load_datasets([dataset], LoadOptions(class_attribute=class_attribute), skip_unusable=False)
    fitted = Pipeline(classifier, tune=False).fit(ds)
    model = fitted.classifier
    if not hasattr(model, "explain"):
        raise CapabilityError(f"{fitted.pipeline.classifier.name} has no explanation to give "
                              f"(bma-nb and bma-nb-zh do: per-feature inclusion weights)")
    report = dict(model.explain())
    if "model" in report:  # one class serves several registered names (bma-nb, bma-nb-zh): the name used
        report["model"] = fitted.pipeline.classifier.name
    report["dataset"] = ds.name
    report["classifier"] = fitted.pipeline.name
    return report
