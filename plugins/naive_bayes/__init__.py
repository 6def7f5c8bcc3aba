"""The naive Bayes family: WEKA-exact and Gaussian naive Bayes, and BMA naive Bayes built on the same
estimators (algorithms.md 2.1-2.3, 2.6).

Registrations only; the math is imported on first use:

* ``estimators.py``: the sufficient statistics both share (WEKA's discrete and normal estimators,
  Gaussian moments);
* ``classifiers.py``: ``nb-weka`` and ``nb-gaussian``;
* ``bma.py``: ``bma-nb`` (C = H^(N+1), H tuned in {0.5, ..., 1.5}) and ``bma-nb-zh`` (the (Z, H)
  scheme's 55 bases Z +- 2^-H), model averaging over all feature subsets in linear time;
* ``bma_curve.py``: the ``bma-curve`` command (test error against H, the thesis's Figures 9-10).
"""

from __future__ import annotations

from toolkit import Capabilities, hookimpl

_CAPS = Capabilities(numeric=True, nominal=True, sparse=True, missing=True, sample_weight=True)
_WEKA_REF = ("John & Langley (1995), Estimating continuous distributions in Bayesian classifiers, UAI; "
             "WEKA 3.6 weka.classifiers.bayes.NaiveBayes")
_BMA_REFS = ("Ga Wu (2014), Bayesian model averaging for the naive Bayes classifier, Master's thesis, ANU, eq. 25",
             "Dash & Cooper (2002), Exact model averaging with naive Bayesian classifiers, ICML")
H_GRID = [round(0.5 + 0.1 * i, 10) for i in range(11)]


@hookimpl
def register_classifiers(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins.naive_bayes.bma import BMANaiveBayes, zh_bases
    from toolkit.plugins.naive_bayes.classifiers import GaussianNaiveBayes, WekaNaiveBayes

    register(
        "nb-weka",
        WekaNaiveBayes,
        description="Naive Bayes exactly as WEKA 3.6 NaiveBayes (Laplace counts, NormalEstimator)",
        capabilities=_CAPS,
        references=(_WEKA_REF,),
    )
    register(
        "nb-gaussian",
        GaussianNaiveBayes,
        description="Naive Bayes with maximum-likelihood Gaussians and variance smoothing",
        param_grid={"var_smoothing": [1e-9, 1e-6, 1e-3]},
        capabilities=_CAPS,
        references=("Mitchell (1997), Machine Learning, ch. 6",),
    )
    register("bma-nb", BMANaiveBayes,
             description="Naive Bayes averaged over all feature subsets (BMA, C = H^(N+1), H tuned)",
             param_grid={"H": H_GRID}, capabilities=_CAPS, references=_BMA_REFS)
    register("bma-nb-zh", BMANaiveBayes,
             description="BMA naive Bayes with the (Z, H) scheme: C = (Z +- 2^-H)^(N+1), 55 bases tuned",
             param_grid={"H": zh_bases()}, capabilities=_CAPS, references=_BMA_REFS)


@hookimpl
def register_commands(app):  # type: ignore[no-untyped-def]
    import typer

    @app.command("bma-curve")
    def bma_curve(
        datasets: list[str] = typer.Argument(..., help="ARFF files, bundled names or folders."),
        out: str = typer.Option("bma-curve.png", "--out", "-o", help="Figure to write: .png, .svg or .pdf (needs the plot extra)."),
        table: str = typer.Option("", "--table", help="Also write the numbers as markdown here."),
        runs: int = typer.Option(10, "--runs", "-r", help="Repetitions of the default protocol."),
        seed: int = typer.Option(1, "--seed", help="Repetition r uses default_rng(seed + r)."),
        jobs: int = typer.Option(1, "--jobs", "-j", help="Processes over repetitions."),
    ) -> None:
        """Test error of BMA naive Bayes against H, without tuning (the thesis's Figures 9 and 10)."""
        from toolkit.cli import check_output_path, err, write_text_output
        from toolkit.cli import out as show
        from toolkit.plotting import check_figure_path
        from toolkit.plugins.naive_bayes.bma_curve import error_by_h, markdown_table, plot_curves

        check_figure_path(out)
        if table:   # before any work; it replaced the dataset given as --table, and a bad path failed at the end
            check_output_path(table, "--table", {("dataset" if len(datasets) == 1 else f"dataset {i + 1}"): d for i, d in enumerate(datasets)}
                              | {"figure (--out)": out})
        curves = error_by_h(datasets, H_GRID, runs=runs, seed=seed, jobs=jobs)
        show(markdown_table(curves, H_GRID))
        if table:
            write_text_output(table, markdown_table(curves, H_GRID) + "\n")
        path = plot_curves(curves, H_GRID, out)
        err(f"figure written to {path}")
