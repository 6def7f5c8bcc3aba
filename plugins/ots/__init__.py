"""The OTS family: the binary independence model (BIM) of Sohn, Kim, Comeau & Wilbur (2008) and the
example selection built on it (algorithms.md 2.5, 3.3, 4.1-4.3).

Registrations only; the math is imported on first use:

* ``bim.py``: presence, document counts and BIM weights;
* ``leave_one_out.py``: exact leave-one-out scores from counts (the paper's Appendix B) and the
  OptCut threshold;
* ``nb_bim.py``: the ``nb-bim`` classifier; ``bim_threshold.py``: the ``bim-threshold`` selector;
* ``search.py``: the optimal-training-set search; ``selectors.py``: the ``ots`` and ``random-sts``
  example selectors;
* ``trace_plot.py``: the figure of the ``ots-trace`` command.
"""

from __future__ import annotations

from toolkit import Capabilities, hookimpl

_REFS = ("Sohn, Kim, Comeau & Wilbur (2008), Optimal training sets for Bayesian prediction of MeSH assignment, "
         "JAMIA 15(4), eq. A.5",
         "Robertson & Sparck Jones (1976), Relevance weighting of search terms, JASIS 27(3)")
_OTS_CAPS = Capabilities(numeric=True, sparse=True, multiclass=False)


@hookimpl
def register_classifiers(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins.ots.nb_bim import BIMNaiveBayes

    register("nb-bim", BIMNaiveBayes,
             description="Binary independence model naive Bayes on feature presence (two classes; rank by the "
                         "sum of weights |w| > threshold over the features of the positives)",
             capabilities=Capabilities(numeric=True, nominal=False, sparse=True, missing=False, sample_weight=True,
                                       multiclass=False),
             references=_REFS)


@hookimpl
def register_feature_selectors(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins.ots.bim_threshold import BIMThresholdSelector

    register("bim-threshold", BIMThresholdSelector,
             description="Keep features whose BIM weight |w| exceeds a threshold (default 1; 'loo' = best "
                         "leave-one-out AP)",
             capabilities=Capabilities(numeric=True, sparse=True, multiclass=False),
             references=_REFS[:1])


@hookimpl
def register_example_selectors(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins.ots.selectors import OTSSelector, RandomSTSSelector

    register("ots", OTSSelector,
             description="Optimal training set: all positives plus the closest negatives, size chosen by the "
                         "BIM's AP on the training set (leave-one-out for the STS)",
             capabilities=_OTS_CAPS, references=_REFS[:1])
    register("random-sts", RandomSTSSelector,
             description="All positives plus random negatives, as many as the OTS holds (the paper's baseline)",
             capabilities=_OTS_CAPS, references=_REFS[:1])


@hookimpl
def register_commands(app):  # type: ignore[no-untyped-def]
    import typer

    @app.command("ots-trace")
    def ots_trace(
        dataset: str = typer.Argument(..., help="ARFF file or bundled name; the search runs on all of it."),
        positive: list[str] = typer.Option([], "--positive", "-p", help="Positive class (repeatable)."),
        positive_below: float = typer.Option(None, "--positive-below", help="Every class with a share below this."),
        selector: str = typer.Option("ots", "--es", help="ots[:k=v,...] (step, threshold, evaluate, features, ...)."),
        out: str = typer.Option("", "--out", "-o", help="Also write the curves here (.png, .svg, .pdf; plot extra)."),
        class_attribute: str = typer.Option(None, "--class", "-C", help="Class attribute: name, first, last or "
                                                                        "1-based position (default: last)."),
        as_json: bool = typer.Option(False, "--json", help="The traces as one JSON document."),
        jobs: int = typer.Option(None, "--jobs", "-j", help="Searches at a time (default: the cores)."),
        backend: str = typer.Option("threads", "--backend", help="threads or processes (sharing one corpus)."),
        scheduler: str = typer.Option(None, "--scheduler", help="Dask scheduler address: one term per task, "
                                                                "each worker reads DATASET itself."),
        cluster: str = typer.Option(None, "--cluster", help="local:N: a local Dask cluster of N workers."),
    ) -> None:
        """The OTS search's AP against training-set size (the paper's Figure 3), per task: by default
        (evaluate=wts) the AP of every document, STS members by leave-one-out. Several classes run as
        searches sharing one loaded corpus and its column index."""
        import json

        import numpy as np

        from toolkit import LoadOptions, Pipeline, load_dataset
        from toolkit.cli import class_attribute as class_value
        from toolkit.cli import err
        from toolkit.cli import out as echo

        if out:
            from toolkit.plotting import check_figure_path

            check_figure_path(out)
        from toolkit.evaluation.distributed import dask_client, parse_cluster

        spec = parse_cluster(scheduler, cluster)
        ds = load_dataset(dataset, LoadOptions(class_attribute=class_value(class_attribute)))
        labels = list(ds.require_nominal_class())
        step = Pipeline("nb-bim", example_selector=selector, tune=False).example_selector
        if step.name != "ots":
            raise typer.BadParameter(f"ots-trace traces the OTS search: give ots[:k=v,...], not '{step.name}'",
                                     param_hint="--es")
        traces = {}
        if (positive or positive_below) and "positive" in step.params:
            raise typer.BadParameter("the positive class is given once: with --positive/--positive-below for "
                                     "several tasks, or as ots:positive=CODE on a two-class dataset, not both",
                                     param_hint="--es")
        if positive or positive_below:
            classes = list(dict.fromkeys(positive))
            if positive_below is not None:
                classes += [c for c in ds.rare_classes(positive_below) if c not in classes]
            if not classes:
                raise typer.BadParameter("no class has a share below --positive-below", param_hint="--positive-below")
            codes = np.asarray(ds.y, dtype=np.float64)
            counts = np.bincount(codes[codes >= 0].astype(np.int64), minlength=len(labels))
            for c in classes:
                ds.one_vs_rest(c)  # a clear error for a class that is not a value
                if counts[labels.index(c)] == 0:
                    raise typer.BadParameter(f"class '{c}' has no document in {ds.name}: the OTS starts from the "
                                             f"positives", param_hint="--positive")
            chosen = step.build({}, 0)
            if spec is not None:
                from toolkit.plugins.ots.cluster import search_terms_on_cluster

                if not ds.path:
                    raise typer.BadParameter("a Dask cluster reads the dataset from its file; give an ARFF path")
                with dask_client(spec) as client:
                    results = search_terms_on_cluster(client, ds.path, classes, class_attribute=ds.class_index,
                                                      **chosen._ots_params("ots"))
                traces = {f"{ds.name}:{c}": r.trace() for c, r in results.items()}
            else:
                # word counts of text attributes, once (the text step does not look at the class)
                X = Pipeline("nb-bim", tune=False).prepare(ds.one_vs_rest(classes[0])).X
                # the pipeline drops the rows whose class is missing: the codes must follow the same rows
                y = np.asarray(ds.y)
                y = y[y >= 0]
                chosen.select_many(X, y, [labels.index(c) for c in classes], n_jobs=jobs, backend=backend)
                traces = {f"{ds.name}:{c}": chosen.traces_[labels.index(c)] for c in classes}
        else:
            fitted = Pipeline("nb-bim", example_selector=selector, tune=False).fit(ds)
            traces[ds.name] = fitted.example_selector.trace_
        if as_json:
            echo(json.dumps({"schema": "toolkit.ots-trace/1", "traces": traces}))
        else:
            rows = [["task", "positives", "M", "rounds", "OTS size", "OTS negatives", "best AP"]]
            for name, t in traces.items():
                n_pos = t["size"][0] - t["n_negatives"][0] if t["size"] else t["best_size"]
                best = t["best_average_precision"]
                rows.append([name, str(n_pos), str(t["step"]), str(len(t["size"])), str(t["best_size"]),
                             str(t["best_size"] - n_pos), "n/a" if best is None else f"{best:.4f}"])
            from toolkit.cli import plain_table

            for line in plain_table(rows):   # a class name's line break stays in its row
                echo(line)
        if out:
            from toolkit.plugins.ots.trace_plot import plot_traces

            err(f"figure written to {plot_traces(traces, out, f'OTS search on {ds.name}')}")
