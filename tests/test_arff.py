"""ARFF reading and writing: syntax WEKA accepts, the toolkit's fixes, and exact values."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import scipy.sparse as sp

from toolkit.data import arff
from toolkit.data.arff_syntax import quote, tokenize
from toolkit.errors import ArffFormatError, DatasetError

HEADER = "@relation r\n@attribute a numeric\n@attribute b {x,y,'z z'}\n@attribute c string\n@attribute class {p,n}\n@data\n"


def read(text: str, **kw):
    return arff.read_text(text, **kw)


def test_dense_values_codes_and_missing():
    ds = read(HEADER + "1.5,x,hello,p\n?,'z z','a b',n\n-2e3,?,?,?\n")
    assert ds.relation == "r"
    assert [a.kind for a in ds.attributes] == ["numeric", "nominal", "string", "nominal"]
    assert ds.class_attribute.name == "class"
    np.testing.assert_array_equal(ds.X[:, 0], [1.5, np.nan, -2000.0])
    np.testing.assert_array_equal(ds.X[:, 1], [0.0, 2.0, np.nan])
    assert [ds.string_value(2, v) for v in ds.X[:, 2]] == ["hello", "a b", None]
    assert ds.y.tolist() == [0, 1, -1]
    assert ds.weights.tolist() == [1.0, 1.0, 1.0]


def test_quoted_question_mark_is_a_value_not_missing():
    """anneal.arff declares '?' as a nominal value; quoted it is that value (as WEKA reads it)."""
    ds = read("@relation r\n@attribute a {'?',b}\n@attribute c {p,n}\n@data\n'?',p\n?,n\nb,p\n")
    np.testing.assert_array_equal(ds.X[:, 0], [0.0, np.nan, 1.0])


def test_escapes_octal_and_quotes_follow_java_streamtokenizer():
    text = "@relation r\n@attribute s string\n@attribute c {p}\n@data\n'a\\'b\\nc\\tq\\101\\\\ \\%',p\n\"dq \\\"x\\\"\",p\n"
    ds = read(text)
    assert ds.string_value(0, ds.X[0, 0]) == "a'b\nc\tqA\\ %"
    assert ds.string_value(0, ds.X[1, 0]) == 'dq "x"'


def test_instance_weights_dense_and_sparse():
    ds = read("@relation r\n@attribute a numeric\n@attribute c {p,n}\n@data\n1,p,{0.5}\n2,n\n3,p {2}\n")
    assert ds.weights.tolist() == [0.5, 1.0, 2.0]
    sparse = read("@relation r\n@attribute a numeric\n@attribute c {p,n}\n@data\n{0 1,1 n},{0.25}\n{1 p}\n")
    assert sparse.is_sparse
    assert sparse.weights.tolist() == [0.25, 1.0]
    assert sparse.y.tolist() == [1, 0]


def test_sparse_rows_become_csr_with_nominal_zero_as_first_value():
    text = ("@relation r\n@attribute a numeric\n@attribute b {u,v,w}\n@attribute c numeric\n@attribute class {p,n}\n"
            "@data\n{0 3,2 ?}\n{1 w,3 n}\n{}\n")
    ds = read(text)
    assert sp.isspmatrix_csr(ds.X)
    dense = ds.X.toarray()
    np.testing.assert_array_equal(dense[0], [3.0, 0.0, np.nan])
    np.testing.assert_array_equal(dense[1], [0.0, 2.0, 0.0])
    np.testing.assert_array_equal(dense[2], [0.0, 0.0, 0.0])
    assert ds.y.tolist() == [0, 1, 0]  # omitted class = first value
    assert ds.n_instances == 3  # trailing empty row is kept (liac-arff's COO loses it)


def test_weka_syntax_liac_arff_refuses():
    text = ("\ufeff% comment\n@RELATION 'my rel'\n@ATTRIBUTE\tlegs\tINTEGER [0,9]\n"
            "@attribute r REAL (0, 1] % a range\n@attribute total { low, high} % low < 100\n"
            "@attribute when date \"yyyy-MM-dd HH:mm:ss\"\n@attribute d2 DATE\n@data\n"
            "4,0.5,high,'2001-04-03 12:12:12',2001-04-03T00:00:01 % trailing comment\n")
    ds = read(text)
    assert ds.relation == "my rel"
    assert [a.kind for a in ds.attributes] == ["numeric", "numeric", "nominal", "date", "date"]
    assert ds.attributes[3].date_format == "yyyy-MM-dd HH:mm:ss"
    # milliseconds since the epoch, UTC; checked with GNU date: `date -u -d "2001-04-03 12:12:12" +%s`
    assert ds.X[0, 3] == 986299932000.0
    assert ds.X[0, 4] == 986256001000.0


def test_crlf_and_old_mac_line_ends():
    body = "@relation r\n@attribute a numeric\n@attribute c {p,n}\n@data\n1,p\n2,n\n"
    for sep in ("\r\n", "\r"):
        ds = read(body.replace("\n", sep))
        assert ds.X[:, 0].tolist() == [1.0, 2.0]


def test_class_attribute_by_name_index_or_none():
    text = "@relation r\n@attribute k {a,b}\n@attribute x numeric\n@data\na,1\nb,2\n"
    assert read(text).class_attribute.name == "x"
    ds = read(text, class_attribute="k")
    assert ds.class_index == 0 and ds.y.tolist() == [0, 1] and ds.X[:, 0].tolist() == [1.0, 2.0]
    assert read(text, class_attribute=0).class_index == 0
    assert read(text, class_attribute=None).class_attribute is None
    with pytest.raises(DatasetError, match="no attribute named 'nope'"):
        read(text, class_attribute="nope")


def test_string_last_attribute_means_no_class_by_default():
    ds = read("@relation r\n@attribute c {p,n}\n@attribute t string\n@data\np,hi\n")
    assert ds.class_attribute is None


def test_gzip_is_read_by_content(tmp_path):
    path = tmp_path / "plain-name.arff"  # no .gz suffix: detected by the magic bytes
    with gzip.open(path, "wt") as fh:
        fh.write(HEADER + "1,x,s,p\n")
    assert arff.read(path).n_instances == 1


@pytest.mark.parametrize("value", ["", "?", "a b", "it's", 'say "hi"', "50%", "a,b", "{x}", "back\\slash",
                                   "tab\there", "new\nline", "\x01ctl", "\u00a0nbsp", "ünï", "trailing "])
def test_quote_roundtrips_through_the_tokenizer(value):
    tokens = tokenize(quote(value))
    assert len(tokens) == 1 and tokens[0].kind == "quoted" or (tokens[0].kind == "word" and value == quote(value))
    assert tokens[0].text == value


def test_write_read_roundtrip_all_kinds(tmp_path):
    text = (HEADER.replace("@attribute class", "@attribute d date\n@attribute class")
            + "1.25,x,'s 1',2020-01-02T03:04:05,p,{3}\n?,'z z',?,?,n\n")
    ds = read(text)
    for name, sparse in (("a.arff", None), ("b.arff.gz", None), ("c.arff", True), ("d.arff", False)):
        arff.write(ds, tmp_path / name, sparse=sparse)
        back = arff.read(tmp_path / name)
        assert ds.difference(back) is None, name


def test_write_is_atomic_and_reports_unwritable_paths(tmp_path):
    ds = read(HEADER + "1,x,s,p\n")
    with pytest.raises(DatasetError, match="cannot write"):
        arff.write(ds, tmp_path / "missing-dir" / "x.arff")


def test_duplicate_nominal_value_is_refused_with_line():
    with pytest.raises(ArffFormatError, match=r":2: attribute 'a' declares the nominal value 'x' twice"):
        read("@relation r\n@attribute a {x,y,x}\n@data\nx\n")


def test_dataset_subset_and_select_features():
    ds = read(HEADER + "1,x,s,p\n2,y,t,n\n3,'z z',u,p\n")
    sub = ds.subset([2, 0])
    assert sub.X[:, 0].tolist() == [3.0, 1.0] and sub.y.tolist() == [0, 0]
    cols = ds.select_features([2, 0])
    assert [a.name for a in cols.features] == ["c", "a"]
    assert cols.class_attribute.name == "class"
    assert cols.string_value(0, cols.X[1, 0]) == "t"


def test_concat_merges_string_tables():
    a = read(HEADER + "1,x,s,p\n")
    b = read(HEADER + "2,y,t,n\n3,y,s,p\n")
    both = a.concat(b)
    assert [both.string_value(2, v) for v in both.X[:, 2]] == ["s", "t", "s"]
    assert both.y.tolist() == [0, 1, 0]
