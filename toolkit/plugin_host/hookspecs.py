"""Hook specifications: the whole contract between the toolkit and its plugins.

A plugin is a module (or object) with functions decorated ``@toolkit.hookimpl`` whose names are
the hooks below. Plugins are found through the entry-point group ``toolkit.plugins``; the
built-ins use that group too. Implementations may accept fewer arguments than a spec lists,
but must not give the ones they use default values (pluggy then does not pass them).

This module imports only the standard library and pluggy, so the CLI starts quickly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    import typer

    from toolkit.config import LoadOptions, RunConfig, SaveOptions
    from toolkit.data.dataset import Dataset
    from toolkit.plugin_host.registry import Register

__all__ = ["hookspec", "hookimpl", "PROJECT_NAME"]

PROJECT_NAME = "toolkit"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def register_classifiers(register: Register) -> None:
    """Register classifiers.

    Call ``register(name, factory, description=..., param_grid=..., capabilities=...,
    references=...)`` once per classifier; return nothing. ``factory`` is a class (or function)
    taking keyword-only hyperparameters; every key of ``param_grid`` must be one of them.

    :param register: the registry's callable; it validates each entry at once and raises
        :class:`toolkit.errors.PluginError` naming the plugin when something is wrong.

    .. versionadded:: 0.1
    """


@hookspec
def register_feature_selectors(register: Register) -> None:
    """Register feature selectors.

    A feature selector is fit on a training part only (``fit(X, y, schema=None)``), then keeps
    a subset of columns: ``support_`` (column indices), ``scores_`` and ``transform(X)``.

    :param register: as for :func:`register_classifiers`.

    .. versionadded:: 0.1
    """


@hookspec
def register_example_selectors(register: Register) -> None:
    """Register example (training-set) selectors.

    ``select(X, y, random_state=seed)`` returns the indices of the training examples to keep,
    or ``(indices, weights)``. The harness calls it on the training part only.

    :param register: as for :func:`register_classifiers`.

    .. versionadded:: 0.1
    """


@hookspec
def register_evaluators(register: Register) -> None:
    """Register evaluators (metrics).

    An evaluator is a callable ``evaluator(predictions) -> float | dict`` receiving a
    :class:`toolkit.api.Predictions` (true and predicted labels, probabilities, scores).
    Register it with ``greater_is_better`` and ``needs_proba``; ``scalar=False`` for a value that is a
    table, and ``max_classes=N`` when it cannot take datasets of more classes (its value grows as K x K):
    the harness then refuses such a dataset before the first repetition.

    :param register: as for :func:`register_classifiers`.

    .. versionadded:: 0.1
    """


@hookspec
def register_commands(app: typer.Typer) -> None:
    """Add sub-commands to the ``toolkit`` command line.

    Use ``@app.command()`` or ``app.add_typer(...)``; Typer only (it vendors Click, so raw Click
    commands cannot be attached). Keep imports inside the command function so that the CLI
    starts quickly.

    :param app: the root ``typer.Typer`` application.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def load_dataset(path: Path, options: LoadOptions) -> Dataset | None:
    """Load a dataset from ``path``, or return None to let the next loader try.

    Calls stop at the first result that is not None. The built-in ARFF loader runs last
    (``trylast=True``), so a plugin can claim other formats (CSV, LIBSVM, ...) by suffix.

    :param path: the file to load (bare dataset names are already resolved to a path).
    :param options: class attribute, sparse or dense, text encoding.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def save_dataset(dataset: Dataset, path: Path, options: SaveOptions) -> bool | None:
    """Write ``dataset`` to ``path`` in the format its name says, or return None to let the next
    writer try.

    Calls stop at the first result that is not None. The built-in ARFF writer runs last; the
    built-in CSV and LIBSVM plugins claim their suffixes, as a third-party format plugin would.

    :param dataset: the dataset to write.
    :param path: the file to write (a ``.gz`` suffix means gzip).
    :param options: sparse or dense rows, format options.

    .. versionadded:: 0.2
    """


@hookspec(historic=True)
def toolkit_configure(config: RunConfig) -> None:
    """Receive the effective run configuration (seed, jobs, output folder) at the start of every evaluation
    run (each ``toolkit.evaluate`` / ``toolkit evaluate``; other commands do not call it).

    Historic: a plugin registered later is called at once with every configuration given before.

    :param config: the :class:`toolkit.config.RunConfig` of this run.

    .. versionadded:: 0.1
    """
