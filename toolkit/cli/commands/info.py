"""``toolkit info DATASET``: what a dataset holds."""

from __future__ import annotations

import itertools
from typing import Optional

import typer

from toolkit.cli.output import CLASS_OPTION_HELP, class_attribute as class_value, json_text, out

__all__ = ["register", "info"]


def info(
    dataset: str = typer.Argument(..., help="A dataset file (.arff, .csv, .libsvm, each optionally .gz) or a bundled "
                                              "name such as iris."),
    class_attribute: Optional[str] = typer.Option(None, "--class", "-C", help=CLASS_OPTION_HELP),
    as_json: bool = typer.Option(False, "--json", help="One JSON document on stdout."),
) -> None:
    """Relation, instances, attributes by kind, missing values, class distribution, sparsity."""
    from toolkit import describe, load_dataset
    from toolkit.config import LoadOptions

    options = LoadOptions(class_attribute=class_value(class_attribute))
    ds = load_dataset(dataset, options)
    summary = describe(ds)
    if as_json:
        out(json_text(summary))
        return
    out(_format(summary))


def _format(s: dict) -> str:
    from toolkit.evaluation.cells import aligned, display_width, plain_cell

    lines = [
        f"dataset     {plain_cell(s['dataset'])}  ({plain_cell(s['path'])})",
        f"relation    {plain_cell(s['relation'])}",
        f"instances   {s['instances']}",
        "attributes  {}  ({})".format(s["attributes"], ", ".join(f"{v} {k}" for k, v in s["attribute_kinds"].items())),
        f"storage     {'sparse (CSR)' if s['sparse'] else 'dense'}, {100 * s['density']:.2f}% non-zero",
        f"missing     {100 * s['missing_cells']:.2f}% of feature values",
    ]
    if s["weighted"]:
        lines.append("weights     instance weights present")
    cls = s["class"]
    if cls is None:
        lines.append("class       none")
    elif cls["kind"] == "nominal":
        lines.append(f"class       {plain_cell(cls['name'])} (nominal, {cls['classes']} classes"
                     + (f", {cls['missing']} missing)" if cls["missing"] else ")"))
        total = sum(cls["distribution"].values()) or 1
        # a name with a line break or a tab stays in its row; a wide character takes two columns
        shown = [(plain_cell(k), v) for k, v in itertools.islice(cls["distribution"].items(), _CLASSES_SHOWN)]
        width = max((display_width(k) for k, _ in shown), default=0)
        for label, count in shown:
            lines.append(f"  {aligned(label, width)}  {count:>7}  {100 * count / total:5.1f}%")
        if len(cls["distribution"]) > _CLASSES_SHOWN:
            lines.append(f"  ({len(cls['distribution']) - _CLASSES_SHOWN:,} more classes; --json lists them)")
    else:
        lines.append(f"class       {plain_cell(cls['name'])} (numeric)")
    attrs = s["feature_attributes"]
    if s["features"] <= 60:
        lines.append("")
        names = [plain_cell(a["name"]) for a in attrs]
        width = max([len("attribute")] + [display_width(name) for name in names])
        lines.append(f"  {'attribute':<{width}}  {'kind':<12}  missing")
        for a, name in zip(attrs, names):
            kind = a["kind"] + (f"({a['values']})" if "values" in a else "")
            lines.append(f"  {aligned(name, width)}  {kind:<12}  {100 * a['missing']:6.2f}%")
    else:
        listed = "" if s["feature_attributes_listed"] == s["features"] else f" the first {s['feature_attributes_listed']:,}"
        lines.append(f"  ({s['features']:,} feature attributes; --json lists{listed or ' them'})")
    return "\n".join(lines)


#: classes listed in the plain output (a declared class list can hold millions of values)
_CLASSES_SHOWN = 60


def register(app: typer.Typer) -> None:
    app.command("info")(info)
