"""Built-in dataset loader for ARFF files (``.arff``, ``.arff.gz``); it runs after plugin loaders."""

from __future__ import annotations

from pathlib import Path

from toolkit import hookimpl


@hookimpl(trylast=True)
def load_dataset(path: Path, options):  # type: ignore[no-untyped-def]
    from toolkit.data import arff

    return arff.read(path, class_attribute=options.class_attribute, sparse=options.sparse,
                     encoding=options.encoding)


@hookimpl(trylast=True)
def save_dataset(dataset, path: Path, options):  # type: ignore[no-untyped-def]
    name = str(path).lower()
    if not (name.endswith(".arff") or name.endswith(".arff.gz")):
        return None
    from toolkit.data import arff

    arff.write(dataset, path, sparse=options.sparse)
    return True
