"""Built-in loader for LIBSVM / svmlight files (``.libsvm``, ``.svm``, ``.svmlight``, and ``.gz``)."""

from __future__ import annotations

from pathlib import Path

from toolkit import hookimpl

SUFFIXES = (".libsvm", ".svm", ".svmlight", ".libsvm.gz", ".svm.gz", ".svmlight.gz")


@hookimpl
def load_dataset(path: Path, options):  # type: ignore[no-untyped-def]
    if not str(path).lower().endswith(SUFFIXES):
        return None
    from toolkit.plugins.libsvm.svmlight import read_libsvm

    return read_libsvm(path, sparse=options.sparse, encoding=options.encoding,
                       class_attribute=options.class_attribute, n_features=options.format_option("n_features"))


@hookimpl
def save_dataset(dataset, path: Path, options):  # type: ignore[no-untyped-def]
    if not str(path).lower().endswith(SUFFIXES):
        return None
    from toolkit.plugins.libsvm.svmlight import write_libsvm

    write_libsvm(dataset, path)
    return True
