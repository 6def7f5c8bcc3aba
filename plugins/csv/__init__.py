"""Built-in loader for CSV files with a header row (``.csv``, ``.csv.gz``), as WEKA's CSVLoader reads them."""

from __future__ import annotations

from pathlib import Path

from toolkit import hookimpl


@hookimpl
def load_dataset(path: Path, options):  # type: ignore[no-untyped-def]
    name = str(path).lower()
    if not (name.endswith(".csv") or name.endswith(".csv.gz")):
        return None
    from toolkit.plugins.csv.reader import read_csv

    return read_csv(path, class_attribute=options.class_attribute, sparse=options.sparse,
                    encoding=options.encoding)
