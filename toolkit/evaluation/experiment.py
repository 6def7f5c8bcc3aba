"""The statement of an experiment, the first record of every results file.

One results file holds one experiment: one protocol (its name, seed, repetitions, test and validation
fractions, stratification, inner folds), one set of metrics, one toolkit and plugin versions, and
datasets known by their content hash. ``--resume`` continues only that experiment: it may add
datasets and pipelines (an ``extension`` record says so), never change the protocol; ``compare``
refuses to pool records of different experiments.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

__all__ = ["EXPERIMENT_SCHEMA", "statement", "merge", "differences", "additions", "from_records", "describe",
           "identity"]

EXPERIMENT_SCHEMA = "toolkit.experiment/1"

#: protocol fields, in the words a user knows them by on the command line
_FIELD_NAMES = {"name": "protocol", "repetitions": "runs", "seed": "seed", "test_fraction": "test fraction",
                "validation_fraction": "validation fraction", "stratified": "stratified",
                "inner_folds": "inner folds", "folds": "folds", "reported_fold": "reported fold"}


def statement(protocol: Mapping[str, Any], datasets: Iterable[Mapping[str, Any]], pipelines: Sequence[str],
              metrics: Sequence[str], versions: Mapping[str, Any],
              pipeline_specs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The experiment record of a run (``datasets``: name, sha256 and class attribute of each;
    ``pipeline_specs``: each pipeline's description, its grid and tuning included)."""
    out = {
        "schema": EXPERIMENT_SCHEMA,
        "kind": "start",
        "protocol": dict(protocol),
        "datasets": [{k: d[k] for k in ("name", "sha256", "class") if k in d} for d in datasets],
        "pipelines": list(pipelines),
        "metrics": list(metrics),
        "versions": dict(versions),
        "timing": {"created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")},
    }
    if pipeline_specs is not None:
        out["pipeline_specs"] = {name: pipeline_specs[name] for name in pipelines}
    return out


def identity(exp: Mapping[str, Any]) -> tuple[Any, ...]:
    """What must be equal for two records to belong to one experiment."""
    versions = exp.get("versions", {})
    return (tuple(sorted(exp.get("protocol", {}).items())), tuple(exp.get("metrics", ())),
            versions.get("toolkit"), tuple(sorted((versions.get("plugins") or {}).items())))


def merge(records: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The experiment of a file: its start record with every extension's datasets and pipelines added."""
    merged: dict[str, Any] | None = None
    for rec in records:
        if merged is None:
            merged = {**rec, "datasets": list(rec.get("datasets", [])), "pipelines": list(rec.get("pipelines", []))}
            continue
        known = {d["name"] for d in merged["datasets"]}
        merged["datasets"] += [d for d in rec.get("datasets", []) if d["name"] not in known]
        merged["pipelines"] += [p for p in rec.get("pipelines", []) if p not in merged["pipelines"]]
        if "pipeline_specs" in rec:
            merged["pipeline_specs"] = {**rec["pipeline_specs"], **(merged.get("pipeline_specs") or {})}
        plugins = dict((merged.get("versions") or {}).get("plugins") or {})
        plugins.update((rec.get("versions") or {}).get("plugins") or {})
        merged["versions"] = {**(merged.get("versions") or {}), "plugins": plugins}
    return merged


def from_records(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The experiment of a file written before results files stated it (toolkit 0.1): from its records."""
    ok = [r for r in records if "protocol" in r]
    if not ok:
        return None
    first = ok[0]
    env = first.get("env", {})
    plugins: dict[str, Any] = {}
    datasets: dict[str, str] = {}
    pipelines: list[str] = []
    for r in ok:
        plugins.update(_distributions(r.get("env", {}).get("plugins") or {}))
        datasets.setdefault(r["dataset"]["name"], r["dataset"]["sha256"])
        if r["pipeline"]["name"] not in pipelines:
            pipelines.append(r["pipeline"]["name"])
    metrics = [k for k in first.get("metrics", {}) if k not in ("errors", "n_evaluated")]
    return {"schema": EXPERIMENT_SCHEMA, "kind": "inferred", "protocol": first["protocol"],
            "datasets": [{"name": n, "sha256": s} for n, s in datasets.items()], "pipelines": pipelines,
            "metrics": metrics, "versions": {"toolkit": env.get("toolkit"), "plugins": plugins}}


def _distributions(component_versions: Mapping[str, Any]) -> dict[str, Any]:
    """{distribution: version} from a record's {component: "distribution version"}."""
    out = {}
    for value in component_versions.values():
        if isinstance(value, str) and " " in value:
            dist, _, version = value.rpartition(" ")
            out[dist] = version
    return out


def _show(value: Any) -> str:
    return "none" if value is None else str(value)


def differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What makes ``new`` another experiment than ``old`` (empty: the same experiment, maybe extended)."""
    out = []
    a, b = old.get("protocol", {}), new.get("protocol", {})
    if a.get("name") != b.get("name"):
        out.append(f"protocol {a.get('name')} -> {b.get('name')}")
    else:
        for key in dict.fromkeys([*a, *b]):
            if a.get(key) != b.get(key):
                out.append(f"{_FIELD_NAMES.get(key, key)} {_show(a.get(key))} -> {_show(b.get(key))}")
    # the set of metrics, not their order: a file without its statement (toolkit 0.1, or its first line
    # deleted) is read from a record, whose metrics are in sorted-key order
    if sorted(old.get("metrics", [])) != sorted(new.get("metrics", [])):
        out.append(f"metrics {', '.join(old.get('metrics', [])) or 'none'} -> {', '.join(new.get('metrics', []))}")
    va, vb = old.get("versions", {}), new.get("versions", {})
    if va.get("toolkit") != vb.get("toolkit"):
        out.append(f"toolkit {_show(va.get('toolkit'))} -> {_show(vb.get('toolkit'))}")
    pa, pb = va.get("plugins") or {}, vb.get("plugins") or {}
    for dist in sorted(set(pa) & set(pb)):
        if pa[dist] != pb[dist]:
            out.append(f"plugin {dist} {pa[dist]} -> {pb[dist]}")
    known = {d["name"]: d for d in old.get("datasets", [])}
    # records are keyed by the data's content: the same data under a new name would run nothing and be
    # stated as a dataset whose repetitions never come (or its missing ones would come under the new name)
    by_content = {(d["sha256"], d.get("class")): d["name"] for d in old.get("datasets", [])}
    for d in new.get("datasets", []):
        was = known.get(d["name"])
        if was is None:
            twin = by_content.get((d["sha256"], d.get("class")))
            if twin is not None:
                out.append(f"dataset '{d['name']}' is the data of '{twin}' (sha256 {d['sha256'][:12]}...), whose "
                           f"results the file holds under that name: give the file as '{twin}'")
            continue
        if was["sha256"] != d["sha256"]:
            out.append(f"dataset '{d['name']}' changed (sha256 {was['sha256'][:12]}... -> {d['sha256'][:12]}...)")
        elif "class" in was and "class" in d and was["class"] != d["class"]:
            out.append(f"dataset '{d['name']}': class attribute '{was['class']}' -> '{d['class']}'")
    specs_a, specs_b = old.get("pipeline_specs") or {}, new.get("pipeline_specs") or {}
    for name in specs_a:
        if name in specs_b and specs_a[name] != specs_b[name]:
            out.append(f"pipeline '{name}': {_spec_change(specs_a[name], specs_b[name])}")
    return out


def _spec_change(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    """What differs between two descriptions of a pipeline of one name (its grid, its tuning)."""
    if a.get("tune") != b.get("tune"):
        return f"tuning {'on' if a.get('tune') else 'off'} -> {'on' if b.get('tune') else 'off'}"
    for role in dict.fromkeys([*a, *b]):
        sa, sb = a.get(role), b.get(role)
        if isinstance(sa, Mapping) and isinstance(sb, Mapping) and sa.get("grid") != sb.get("grid"):
            grid = lambda g: "; ".join(f"{k}={'|'.join(map(str, v))}" for k, v in (g or {}).items()) or "none"  # noqa: E731
            return f"{sa.get('name', role)} grid {grid(sa.get('grid'))} -> {grid(sb.get('grid'))}"
    return "another description"


def additions(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Datasets and pipelines ``new`` adds to ``old``."""
    names = {d["name"] for d in old.get("datasets", [])}
    return {"datasets": [d for d in new.get("datasets", []) if d["name"] not in names],
            "pipelines": [p for p in new.get("pipelines", []) if p not in old.get("pipelines", [])]}


def describe(exp: Mapping[str, Any]) -> str:
    """One line: the protocol and its settings (for legends and messages)."""
    p = exp.get("protocol", {})
    if p.get("name") == "thesis":
        return f"thesis protocol (java.util.Random({p.get('seed')}), {p.get('folds')} folds, fold {p.get('reported_fold')})"
    tuning = (f"{p.get('inner_folds')}-fold tuning" if p.get("inner_folds")   # the validation part is unused then
              else f"validation {p.get('validation_fraction')}")
    if p.get("name") == "fixed":
        text = f"fixed test set, {tuning}, seed {p.get('seed')}"
        return text + (", stratified" if p.get("stratified") else "")
    text = (f"{p.get('repetitions')} runs, test fraction {p.get('test_fraction')}, {tuning}, "
            f"seeds {p.get('seed')}..{p.get('seed', 0) + p.get('repetitions', 1) - 1}")
    if p.get("stratified"):
        text += ", stratified"
    return text


def environment() -> dict[str, Any]:
    import numpy
    import scipy

    from toolkit import __version__

    return {"toolkit": __version__, "python": platform.python_version(), "numpy": numpy.__version__,
            "scipy": scipy.__version__}
