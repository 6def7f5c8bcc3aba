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

    forced = {kind: tuple(options.format_option(kind, ())) for kind in ("nominal", "string", "numeric", "date")}
    return read_csv(path, class_attribute=options.class_attribute, sparse=options.sparse,
                    encoding=options.encoding, date_format=options.format_option("date_format"), **forced)


@hookimpl
def save_dataset(dataset, path: Path, options):  # type: ignore[no-untyped-def]
    name = str(path).lower()
    if not (name.endswith(".csv") or name.endswith(".csv.gz")):
        return None
    from toolkit.plugins.csv.reader import write_csv

    write_csv(dataset, path)
    return True
