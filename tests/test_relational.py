"""Relational (multi-instance) attributes: read into bags, written so that they read back, and refused
by classifiers that cannot take them (CapabilityError naming the attribute)."""

from __future__ import annotations

import numpy as np
import pytest

from toolkit.data import arff
from toolkit.errors import CapabilityError

MUSK = """@relation musk
@attribute id {b1,b2,b3}
@attribute bag relational
  @attribute f1 numeric
  @attribute f2 {a,b}
  @attribute inner relational
    @attribute g numeric
  @end inner
@end bag
@attribute class {0,1}
@data
b1,'1,a,\\'7\\\\n8\\'\\n2,b,?',1
b2,'3,b,\\'9\\'',0
b3,?,0
b1,'{0 5}',1
"""


def test_bags_are_nested_datasets():
    for engine in ("fast", "strict"):
        ds = arff.read_text(MUSK, engine=engine)
        bag_attr = ds.attributes[1]
        assert bag_attr.kind == "relational" and [a.name for a in bag_attr.relation] == ["f1", "f2", "inner"]
        first = ds.bag(1, ds.X[0, 1])
        np.testing.assert_array_equal(first.X[:, :2], [[1, 0], [2, 1]])
        assert first.bag(2, first.X[0, 2]).X.ravel().tolist() == [7.0, 8.0]
        assert np.isnan(first.X[1, 2])
        assert ds.bag(1, ds.X[2, 1]) is None
        assert ds.bag(1, ds.X[3, 1]).X.toarray().tolist() == [[5.0, 0.0, 0.0]]
        assert ds.y.tolist() == [1, 0, 0, 1]


@pytest.mark.parametrize("sparse", [None, True, False])
def test_written_bags_read_back(sparse):
    ds = arff.read_text(MUSK)
    back = arff.read_text(arff.to_text(ds, sparse=sparse))
    assert ds.difference(back) is None


def test_a_bad_bag_is_reported_at_its_line():
    bad = MUSK.replace("b2,'3,b,\\'9\\'',0", "b2,'3,c,\\'9\\'',0")
    with pytest.raises(Exception, match=r":13: relational attribute 'bag': value 'c' is not declared"):
        arff.read_text(bad)


def test_classifiers_without_the_capability_refuse_naming_the_attribute():
    from toolkit.models.pipeline import Pipeline

    ds = arff.read_text(MUSK)
    with pytest.raises(CapabilityError, match="relational .*'bag'"):
        Pipeline("nb-weka", tune=False).fit(ds)
