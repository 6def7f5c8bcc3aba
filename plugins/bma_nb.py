"""Built-in BMA naive Bayes (Wu's thesis): model averaging over all feature subsets in linear time.

Two registrations share one class: ``bma-nb`` tunes H in {0.5, 0.6, ..., 1.5} (C = H^(N+1), every
thesis experiment), ``bma-nb-zh`` tunes the (Z, H) scheme's 55 distinct bases Z +- 2^-H
(algorithms.md 2.6). The plugin also adds the ``bma-curve`` command (test error against H).
"""

from __future__ import annotations

from toolkit import Capabilities, hookimpl

_CAPS = Capabilities(numeric=True, nominal=True, sparse=True, missing=True, sample_weight=True)
_REFS = ("Ga Wu (2014), Bayesian model averaging for the naive Bayes classifier, Master's thesis, ANU, eq. 25",
         "Dash & Cooper (2002), Exact model averaging with naive Bayesian classifiers, ICML")
H_GRID = [round(0.5 + 0.1 * i, 10) for i in range(11)]


@hookimpl
def register_classifiers(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins._bma_nb_impl import BMANaiveBayes, zh_bases

    register("bma-nb", BMANaiveBayes,
             description="Naive Bayes averaged over all feature subsets (BMA, C = H^(N+1), H tuned)",
             param_grid={"H": H_GRID}, capabilities=_CAPS, references=_REFS)
    register("bma-nb-zh", BMANaiveBayes,
             description="BMA naive Bayes with the (Z, H) scheme: C = (Z +- 2^-H)^(N+1), 55 bases tuned",
             param_grid={"H": zh_bases()}, capabilities=_CAPS, references=_REFS)


@hookimpl
def register_commands(app):  # type: ignore[no-untyped-def]
    import typer

    @app.command("bma-curve")
    def bma_curve(
        datasets: list[str] = typer.Argument(..., help="ARFF files, bundled names or folders."),
        out: str = typer.Option("bma-curve.png", "--out", "-o", help="PNG to write (needs the plot extra)."),
        table: str = typer.Option("", "--table", help="Also write the numbers as markdown here."),
        runs: int = typer.Option(10, "--runs", "-r", help="Repetitions of the default protocol."),
        seed: int = typer.Option(1, "--seed", help="Repetition r uses default_rng(seed + r)."),
        jobs: int = typer.Option(1, "--jobs", "-j", help="Processes over repetitions."),
    ) -> None:
        """Test error of BMA naive Bayes against H, without tuning (the thesis's Figures 9 and 10)."""
        from toolkit.cli.app import err
        from toolkit.plugins._bma_curve import error_by_h, plot_curves, markdown_table

        curves = error_by_h(datasets, H_GRID, runs=runs, seed=seed, jobs=jobs)
        print(markdown_table(curves, H_GRID))
        if table:
            with open(table, "w", encoding="utf-8") as fh:
                fh.write(markdown_table(curves, H_GRID) + "\n")
        path = plot_curves(curves, H_GRID, out)
        err(f"figure written to {path}")
