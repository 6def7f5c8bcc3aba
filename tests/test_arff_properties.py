"""Property tests: random valid datasets survive write -> read; damaged input raises only ToolkitError."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strategies import datasets
from toolkit.data import arff
from toolkit.errors import ToolkitError


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(datasets())
def test_write_then_read_gives_the_same_dataset(ds):
    text = arff.to_text(ds)
    back = arff.read_text(text, class_attribute=ds.class_index)
    assert ds.difference(back) is None, text


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(datasets(), st.booleans())
def test_dense_and_sparse_forms_carry_the_same_content(ds, sparse):
    back = arff.read_text(arff.to_text(ds, sparse=sparse), class_attribute=ds.class_index)
    if ds.n_instances:  # with no rows, nothing in an ARFF file tells sparse from dense
        assert back.is_sparse == sparse
    assert ds.difference(back) is None


_VALID = arff.to_text(arff.read_text(
    "@relation 'r r'\n@attribute a numeric\n@attribute 'b b' {x,'y y',z}\n@attribute s string\n"
    "@attribute d date\n@attribute class {p,n}\n@data\n1.5,x,'hi there',2001-01-01T00:00:00,p\n"
    "?,'y y','a\\'b',?,n,{2}\n{0 3,1 z,4 n}\n"))


def _mutate(text: str, rng: random.Random, steps: int) -> str:
    chars = list(text)
    alphabet = list("{}',\"%?@\\ \n\t0123456789abcxyz-") + ["@data", "@attribute", "{0 ", "\x00", "\u00e9"]
    for _ in range(steps):
        op = rng.randrange(4)
        pos = rng.randrange(len(chars) + 1)
        if op == 0 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif op == 1:
            chars.insert(pos, rng.choice(alphabet))
        elif op == 2 and chars:
            chars[min(pos, len(chars) - 1)] = rng.choice(alphabet)
        else:
            chars = chars[:pos]
    return "".join(chars)


@settings(max_examples=300)
@given(st.integers(0, 2**32 - 1), st.integers(1, 8))
def test_damaged_input_raises_only_toolkit_errors(seed, steps):
    text = _mutate(_VALID, random.Random(seed), steps)
    try:
        arff.read_text(text)
    except ToolkitError:
        pass


@given(st.binary(max_size=300))
def test_random_bytes_raise_only_toolkit_errors(tmp_path_factory, blob):
    path = tmp_path_factory.mktemp("fuzz") / "f.arff"
    path.write_bytes(blob)
    try:
        arff.read(path)
    except ToolkitError:
        pass


@given(st.text(max_size=200))
def test_random_text_raises_only_toolkit_errors(text):
    try:
        arff.read_text(text)
    except ToolkitError:
        pass
