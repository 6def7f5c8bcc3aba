"""``toolkit convert IN OUT``: between ARFF, CSV and LIBSVM (and their ``.gz``), formats from the names."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from toolkit.cli.output import CLASS_OPTION_HELP, check_not_an_input, class_attribute as class_value, err

__all__ = ["register", "convert"]

_FORMATS = {".arff": "arff", ".csv": "csv", ".libsvm": "libsvm", ".svm": "libsvm", ".svmlight": "libsvm"}


def format_of(name: str) -> str:
    """``arff``, ``csv`` or ``libsvm`` from a file name (a ``.gz`` suffix is looked through); another
    suffix names a format a plugin's load_dataset / save_dataset hook may handle (they say if none does)."""
    from pathlib import Path

    from toolkit.errors import DatasetError

    suffixes = [s.lower() for s in Path(name).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    if not suffixes:
        raise DatasetError(f"{name}: cannot tell the format from the name; use .arff, .csv, .libsvm, .svm "
                           f"or .svmlight (each optionally with .gz), or a suffix a format plugin handles")
    return _FORMATS.get(suffixes[-1], suffixes[-1].lstrip("."))


def _split(values: list[str]) -> list[str]:
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def convert(
    source: str = typer.Argument(..., help="Input: .arff, .csv, .libsvm/.svm/.svmlight (optionally .gz), or a bundled name."),
    target: str = typer.Argument(..., help="Output file; its name gives the format (and .gz compresses)."),
    class_attribute: Optional[str] = typer.Option(None, "--class", "-C", help=CLASS_OPTION_HELP),
    nominal: list[str] = typer.Option([], "--nominal", help="CSV input: these columns are nominal (names or 1-based "
                                      "positions, comma-separated; repeatable)."),
    string: list[str] = typer.Option([], "--string", help="CSV input: these columns are strings."),
    numeric: list[str] = typer.Option([], "--numeric", help="CSV input: these columns are numeric."),
    date: list[str] = typer.Option([], "--date", help="CSV input: these columns are dates (see --date-format)."),
    date_format: Optional[str] = typer.Option(None, "--date-format", help="CSV input: Java SimpleDateFormat "
                                              "pattern of the dates (default yyyy-MM-dd'T'HH:mm:ss)."),
    sparse: Optional[bool] = typer.Option(None, "--sparse/--dense", help="ARFF output: sparse or dense rows "
                                          "(default: as read)."),
    n_features: Optional[int] = typer.Option(None, "--n-features", help="LIBSVM input: its number of features "
                                             "(default: its highest index; a file whose highest index is far "
                                             "beyond the values it holds needs it)."),
) -> None:
    """Convert a dataset between ARFF, CSV and LIBSVM (and formats that plugins add)."""
    from toolkit.config import LoadOptions, SaveOptions
    from toolkit.loading import load_dataset, resolve_dataset, save_dataset

    cls = class_value(class_attribute)
    resolved = str(resolve_dataset(source))
    # a name without a suffix is read as ARFF, as by every command (info read it; convert refused it)
    fmt_in = format_of(resolved) if Path(resolved).suffixes else "arff"
    fmt_out = format_of(target)
    check_not_an_input(target, {"dataset": source})
    forced = {"nominal": _split(nominal), "string": _split(string), "numeric": _split(numeric), "date": _split(date)}
    seen: dict[str, str] = {}
    for kind, columns in forced.items():
        for column in columns:
            if seen.setdefault(column, kind) != kind:   # the reader kept one of the two without a word
                from toolkit.errors import ParameterError

                raise ParameterError(f"--{seen[column]} and --{kind} both name column '{column}'; give it one type")
    format_options = tuple((k, tuple(v)) for k, v in forced.items() if v)
    if date_format is not None:
        from toolkit.errors import ParameterError

        # it was ignored without a word: it reads the --date columns, and '' fell back to the default
        if not date_format.strip():
            raise ParameterError("--date-format is empty; give a Java SimpleDateFormat pattern, e.g. yyyy-MM-dd")
        if not forced["date"]:
            raise ParameterError(f"--date-format {date_format} reads the columns that --date names; give --date")
        format_options += (("date_format", date_format),)
    if format_options and fmt_in != "csv":
        from toolkit.errors import ParameterError

        given = ", ".join("--" + k.replace("_", "-") for k, _ in format_options)
        raise ParameterError(f"{given}: CSV input only; {source} is {fmt_in}, whose header declares its types")
    if sparse is not None and fmt_out in ("csv", "libsvm"):
        from toolkit.errors import ParameterError

        # the input options are refused for another format; this one was ignored without a word
        raise ParameterError(f"--{'sparse' if sparse else 'dense'}: ARFF output only; {target} is {fmt_out}, "
                             f"whose rows have one form")
    if n_features is not None:
        from toolkit.errors import ParameterError

        if fmt_in != "libsvm":
            raise ParameterError(f"--n-features: LIBSVM input only; {source} is {fmt_in}")
        if n_features < 1:
            raise ParameterError(f"--n-features must be a whole number >= 1, not {n_features}")
        format_options += (("n_features", n_features),)
    ds = load_dataset(source, LoadOptions(class_attribute=cls, format_options=format_options))
    save_dataset(ds, target, SaveOptions(sparse=sparse))
    err(f"{ds.n_instances} instances, {len(ds.attributes)} attributes: {source} ({fmt_in}) -> {target} ({fmt_out})")


def register(app: typer.Typer) -> None:
    app.command("convert")(convert)
