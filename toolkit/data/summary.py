"""What ``toolkit info`` reports about a dataset, computed once for the CLI and the API."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.data.dataset import Dataset

__all__ = ["describe"]


#: ``feature_attributes`` lists at most this many (a LIBSVM file of 16 million columns made 5 GB of entries)
LISTED_ATTRIBUTES = 100_000


def describe(ds: Dataset, limit: int | None = LISTED_ATTRIBUTES) -> dict[str, Any]:
    """Relation, counts, attributes by kind, missing shares, class distribution and sparsity; the first
    ``limit`` feature attributes one by one (None: all of them)."""
    kinds = ds.attributes.kind_counts()
    missing = ds.missing_share()
    attributes = []
    features = ds.features
    listed = len(features) if limit is None else min(limit, len(features))
    for col in range(listed):
        attr = features[col]
        entry: dict[str, Any] = {"name": attr.name, "kind": attr.kind, "missing": float(missing[col])}
        if attr.kind == "nominal":
            entry["values"] = len(attr.values)
        attributes.append(entry)
    cls = ds.class_attribute
    info: dict[str, Any] = {
        "schema": "toolkit.info/1",
        "dataset": ds.name,
        "path": ds.path,
        "sha256": ds.sha256,
        "relation": ds.relation,
        "instances": ds.n_instances,
        "attributes": len(ds.attributes),
        "features": ds.n_features,
        "attribute_kinds": kinds,
        "sparse": ds.is_sparse,
        "weighted": bool(np.any(ds.weights != 1.0)),
        "feature_attributes": attributes,
        "feature_attributes_listed": listed,
        "class": None,
    }
    n_cells = ds.n_instances * ds.n_features
    # the share of feature values that are known and not 0: a missing value (NaN, stored in a sparse
    # matrix too) is not counted as non-zero
    values = ds.X.data if ds.is_sparse else np.asarray(ds.X)
    nonzero = int(np.count_nonzero(values)) - int(np.count_nonzero(np.isnan(values)))
    info["density"] = float(nonzero / n_cells) if n_cells else 0.0
    info["missing_cells"] = float(missing.mean()) if missing.size else 0.0
    if cls is not None:
        entry = {"name": cls.name, "kind": cls.kind, "index": ds.class_index}
        y = ds.y
        if cls.is_nominal:
            counts = np.bincount(y[y >= 0], minlength=len(cls.values)) if y.size else np.zeros(len(cls.values))
            entry["classes"] = len(cls.values)
            entry["distribution"] = {label: int(c) for label, c in zip(cls.values, counts)}
            entry["missing"] = int(np.sum(y < 0))
        else:
            known = y[~np.isnan(y)]
            entry["classes"] = "numeric"
            entry["missing"] = int(np.isnan(y).sum())
            if known.size:
                entry["min"], entry["max"] = float(known.min()), float(known.max())
                # scaled by the largest magnitude: values near 1.7e308 summed past the largest float (an
                # overflow warning, and a mean of inf written as null)
                scale = float(np.max(np.abs(known)))
                with np.errstate(invalid="ignore"):
                    entry["mean"] = float(np.mean(known / scale) * scale) if 0 < scale < np.inf else float(known.mean())
        info["class"] = entry
    return info
