"""Hypothesis strategies: random valid datasets (all attribute kinds, awkward names, missing values,
dense and sparse) and damaged ARFF text."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st

from toolkit.data.dataset import Attribute, Dataset

# awkward but legal text: quotes, commas, %, braces, spaces, backslashes, control chars, non-ASCII
AWKWARD = st.text(
    alphabet=st.one_of(
        st.sampled_from(list(" ,'\"%{}\\?\t\n\r-_.:;=|") + ["\x00", "\x01", "\x7f", "\u00e9", "\u00a0", "\u2028", "\u4e2d"]),
        st.characters(min_codepoint=32, max_codepoint=126),
    ),
    max_size=12,
)
NAMES = st.one_of(st.from_regex(r"[A-Za-z][A-Za-z0-9_-]{0,8}", fullmatch=True), AWKWARD.filter(lambda s: s != ""))
FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.integers(-10**6, 10**6).map(float),
    st.sampled_from([0.0, 1e-300, -1e308, 1e308, 0.1, 1 / 3]),
)
SECONDS = st.integers(-2208988800, 4102444799)  # 1900-01-01 .. 2099-12-31, whole seconds


@st.composite
def attributes(draw, n: int) -> list[Attribute]:
    names = draw(st.lists(NAMES, min_size=n, max_size=n, unique=True))
    out = []
    for name in names:
        kind = draw(st.sampled_from(["numeric", "numeric", "nominal", "nominal", "string", "date"]))
        if kind == "nominal":
            values = tuple(draw(st.lists(AWKWARD, min_size=1, max_size=5, unique=True)))
            out.append(Attribute(name, "nominal", values))
        elif kind == "date":
            out.append(Attribute(name, "date", date_format="yyyy-MM-dd'T'HH:mm:ss"))
        else:
            out.append(Attribute(name, kind))
    return out


@st.composite
def datasets(draw, sparse: bool | None = None) -> Dataset:
    n_attr = draw(st.integers(1, 6))
    attrs = draw(attributes(n_attr))
    # the class: a nominal attribute at a random position, or none
    nominal = [i for i, a in enumerate(attrs) if a.kind == "nominal"]
    class_index = draw(st.sampled_from(nominal + [None])) if nominal else None
    n = draw(st.integers(0, 12))
    is_sparse = draw(st.booleans()) if sparse is None else sparse
    missing_rate = draw(st.sampled_from([0.0, 0.2, 0.5]))
    columns = []
    strings: dict[int, list[str]] = {}
    feature_pos = 0
    ys = None
    for i, attr in enumerate(attrs):
        col = np.zeros(n)
        if attr.kind == "numeric":
            col = np.array([draw(FLOATS) for _ in range(n)]) if n else np.zeros(0)
            if is_sparse and n:
                col[np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))] = 0.0
        elif attr.kind == "nominal":
            col = np.array([draw(st.integers(0, len(attr.values) - 1)) for _ in range(n)], dtype=float)
        elif attr.kind == "date":
            col = np.array([draw(SECONDS) * 1000.0 for _ in range(n)])
        else:
            table = draw(st.lists(AWKWARD, min_size=1, max_size=4, unique=True))
            col = np.array([draw(st.integers(0, len(table) - 1)) for _ in range(n)], dtype=float)
            strings[feature_pos] = table
        if missing_rate and n:
            mask = np.array(draw(st.lists(st.floats(0, 1), min_size=n, max_size=n))) < missing_rate
            col[mask] = np.nan
        if i == class_index:
            ys = np.where(np.isnan(col), -1, col).astype(np.int64)
        else:
            columns.append(col)
            feature_pos += 1
    X = np.column_stack(columns) if columns else np.zeros((n, 0))
    X = X.reshape(n, len(columns))
    if is_sparse:
        X = sp.csr_matrix(X)
        X.eliminate_zeros()
    weights = np.array([draw(st.sampled_from([1.0, 1.0, 0.5, 2.0, 0.0, 1e-3])) for _ in range(n)])
    relation = draw(NAMES)
    return Dataset(relation=relation, attributes=tuple(attrs), X=X, y=ys, class_index=class_index,
                   weights=weights, strings=strings)
