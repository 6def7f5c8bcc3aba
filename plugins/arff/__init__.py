"""Built-in dataset loader for ARFF files (``.arff``, ``.arff.gz``); it runs after plugin loaders."""

from __future__ import annotations

from pathlib import Path

from toolkit import hookimpl


@hookimpl(trylast=True)
def load_dataset(path: Path, options):  # type: ignore[no-untyped-def]
    from toolkit.data import arff
    from toolkit.errors import ArffFormatError

    try:
        return arff.read(path, class_attribute=options.class_attribute, sparse=options.sparse,
                         encoding=options.encoding)
    except ArffFormatError as exc:
        name = str(path).lower()
        if name.endswith((".arff", ".arff.gz")) or exc.line is None or exc.line > 1:
            raise
        # a .tsv, .txt or .bz2 file reaches this fallback and read as ARFF fails at its first line
        raise ArffFormatError(exc.path, exc.line, exc.problem, exc.text,
                              f"{exc.hint + '; ' if exc.hint else ''}the format is chosen by the file name: "
                              f".arff, .csv, .libsvm, .svm or .svmlight (each also with .gz) and those of "
                              f"format plugins; any other name is read as ARFF") from None


@hookimpl(trylast=True)
def save_dataset(dataset, path: Path, options):  # type: ignore[no-untyped-def]
    name = str(path).lower()
    if not (name.endswith(".arff") or name.endswith(".arff.gz")):
        return None
    from toolkit.data import arff

    arff.write(dataset, path, sparse=options.sparse)
    return True
