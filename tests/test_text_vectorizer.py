"""The word-count text step (toolkit.models.text_step, tokenising in toolkit.data.text): vocabulary from the training part only, filters,
sparse output, schema, and its use by the pipeline, the harness and ``toolkit evaluate --text``.

Expected counts are written out by hand for tiny documents.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

import toolkit
from toolkit.data.text import ENGLISH_STOP_WORDS, tokenize
from toolkit.models.pipeline import default_text_step
from toolkit.models.text_step import WordCounts, text_step_spec
from toolkit.errors import DatasetError, ParameterError, UnknownComponentError
from toolkit.models.pipeline import Step

ARFF = """@relation mini
@attribute text string
@attribute size numeric
@attribute class {pos,neg}
@data
'The cat sat. The CAT!',3,pos
'A dog; the dog ran 42 times',4,neg
'cat and dog',5,pos
'zebra zebra cat',6,neg
?,7,pos
"""


@pytest.fixture
def mini(tmp_path):
    path = tmp_path / "mini.arff"
    path.write_text(ARFF, encoding="utf-8")
    return toolkit.load_arff(path)


def dense_counts(X, schema, words):
    cols = [next(i for i, a in enumerate(schema.features) if a.name == w) for w in words]
    return np.asarray(X[:, cols].todense())


def test_vocabulary_is_learned_on_the_training_part_and_unseen_words_are_dropped(mini):
    vec = WordCounts()
    X, schema = vec.fit_transform_dataset(mini.subset([0, 1, 2]))
    assert sp.isspmatrix_csr(X)
    # alphabetic tokens, lower-cased; "42" is not alphabetic; sorted vocabulary, then the numeric column
    assert vec.vocabulary_ == ["a", "and", "cat", "dog", "ran", "sat", "the", "times"]
    assert [a.name for a in schema.features] == vec.vocabulary_ + ["size"]
    assert schema.classes == ("pos", "neg")
    expected = np.array([
        # a and cat dog ran sat the times size
        [0, 0, 2, 0, 0, 1, 2, 0, 3],
        [1, 0, 0, 2, 1, 0, 1, 1, 4],
        [0, 1, 1, 1, 0, 0, 0, 0, 5],
    ], dtype=float)
    np.testing.assert_array_equal(X.toarray(), expected)
    # "zebra" was never seen in training: dropped; the missing text is an empty document
    Xt = vec.transform_dataset(mini.subset([3, 4]))
    np.testing.assert_array_equal(Xt.toarray(), [[0, 0, 1, 0, 0, 0, 0, 0, 6], [0, 0, 0, 0, 0, 0, 0, 0, 7]])


def test_a_different_training_part_gives_a_different_vocabulary(mini):
    a = WordCounts().fit_transform_dataset(mini.subset([0]))[1]
    b = WordCounts().fit_transform_dataset(mini.subset([3]))[1]
    assert [f.name for f in a.features] == ["cat", "sat", "the", "size"]
    assert [f.name for f in b.features] == ["cat", "zebra", "size"]


def test_filters_stop_words_top_words_min_df_and_length(mini):
    train = mini.subset([0, 1, 2, 3])
    # counts over rows 0-3: the 3, cat 4, dog 3, zebra 2, a/and/ran/sat/times 1
    vec = WordCounts(stop_words="english")
    vec.fit_transform_dataset(train)
    assert "the" not in vec.vocabulary_ and "a" not in vec.vocabulary_ and "and" not in vec.vocabulary_
    assert "the" in ENGLISH_STOP_WORDS
    vec = WordCounts(remove_top=2)           # cat (4), then dog and the (3 each; "dog" < "the")
    vec.fit_transform_dataset(train)
    assert "cat" not in vec.vocabulary_ and "dog" not in vec.vocabulary_ and "the" in vec.vocabulary_
    vec = WordCounts(min_df=2)               # document frequency: cat 3, dog 2, the 2
    vec.fit_transform_dataset(train)
    assert vec.vocabulary_ == ["cat", "dog", "the"]
    vec = WordCounts(min_length=4)
    vec.fit_transform_dataset(train)
    assert vec.vocabulary_ == ["times", "zebra"]
    vec = WordCounts(max_features=2)
    vec.fit_transform_dataset(train)
    assert vec.vocabulary_ == ["cat", "dog"]


def test_stop_word_file(mini, tmp_path):
    words = tmp_path / "stop.txt"
    words.write_text("cat\nthe\n", encoding="utf-8")
    vec = WordCounts(stop_words=str(words))
    vec.fit_transform_dataset(mini.subset([0]))
    assert vec.vocabulary_ == ["sat"]


def test_tokenizer_options():
    text = ["Subject: Hello World\nFrom: a@b.c\nLines: 3\n\nBody 12 text 3.5 x"]
    assert tokenize(text) == [["subject", "hello", "world", "from", "a", "b", "c", "lines", "body", "text", "x"]]
    assert tokenize(text, header="drop") == [["body", "text", "x"]]
    assert tokenize(text, header="subject") == [["hello", "world", "body", "text", "x"]]
    assert tokenize(text, header="from+subject") == [["hello", "world", "a", "b", "c", "body", "text", "x"]]
    assert tokenize(text, header="drop", numbers="num") == [["body", "NUM", "text", "NUM", "x"]]
    assert tokenize(text, header="drop", tokenizer="word") == [["body", "12", "text"]]
    assert tokenize(text, header="drop", lowercase=False, tokenizer="alnum") == [["Body", "12", "text", "3", "5", "x"]]
    assert tokenize(["x-y z"], token_pattern=r"[\w-]+") == [["x-y", "z"]]


def test_two_string_columns_share_one_vocabulary(tmp_path):
    path = tmp_path / "two.arff"
    path.write_text("@relation two\n@attribute title string\n@attribute body string\n@attribute c {a,b}\n"
                    "@data\n'cat','cat dog',a\n'dog','bird',b\n", encoding="utf-8")
    ds = toolkit.load_arff(path)
    X, schema = WordCounts().fit_transform_dataset(ds)
    assert [f.name for f in schema.features] == ["bird", "cat", "dog"]
    np.testing.assert_array_equal(X.toarray(), [[0, 2, 1], [1, 0, 1]])


def test_bad_parameters_are_reported(mini):
    with pytest.raises(ParameterError, match="tokenizer"):
        WordCounts(tokenizer="nope").fit_transform_dataset(mini)
    with pytest.raises(ParameterError, match="remove_top"):
        WordCounts(remove_top=-1).fit_transform_dataset(mini)
    with pytest.raises(ParameterError, match="stop_words"):
        WordCounts(stop_words="/no/such/file").fit_transform_dataset(mini)
    with pytest.raises(ParameterError, match="header"):
        WordCounts(header="!!").fit_transform_dataset(mini)
    with pytest.raises(ParameterError, match="not fitted"):
        WordCounts().transform_dataset(mini)
    numeric = toolkit.load_arff("weather.numeric")
    with pytest.raises(DatasetError, match="string attribute"):
        WordCounts().fit_transform_dataset(numeric)


def test_registry_entry_and_default_step():
    spec = text_step_spec()
    assert spec.kind == "text" and spec.name == "word-counts"
    assert isinstance(spec.create(remove_top=5), WordCounts)
    step = default_text_step()
    assert isinstance(step, Step) and step.role == "text"
    with pytest.raises(UnknownComponentError, match="word-counts"):
        text_step_spec("word-count")


def test_pipeline_fits_the_text_step_inside_training_parts(mini):
    pipe = toolkit.Pipeline("nb-multinomial:epsilon=1", text="word-counts:min_length=3")
    fitted = pipe.fit(mini.subset([0, 1, 2]))
    assert fitted.vectorizer.vocabulary_ == ["and", "cat", "dog", "ran", "sat", "the", "times"]
    pred = fitted.predict(mini.subset([3]))
    assert pred.X.shape == (1, 8)


def test_harness_fixed_split_on_string_arff_with_text_option():
    res = toolkit.evaluate("ReutersGrain-train", ["nb-multinomial:epsilon=0.01", "dcm"],
                           test="ReutersGrain-test", text="word-counts:remove_top=20",
                           metrics=["accuracy", "perplexity"])
    recs = res.ok()
    assert len(recs) == 2
    for rec in recs:
        assert rec["n_test"] == 604
        assert rec["metrics"]["accuracy"] > 0.85
        assert math.isfinite(rec["metrics"]["perplexity"]) and rec["metrics"]["perplexity"] > 1


def test_cli_evaluate_text_option():
    from toolkit.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["evaluate", "ReutersGrain-train", "--test", "ReutersGrain-test",
                                 "-c", "nb-multinomial:epsilon=1", "--text", "word-counts:stop_words=english",
                                 "-m", "accuracy", "--json", "-q"])
    assert result.exit_code == 0, result.output
    import json

    doc = json.loads(result.stdout)
    assert doc["records"][0]["pipeline"]["text"]["params"] == {"stop_words": "english"}
    bad = runner.invoke(app, ["evaluate", "ReutersGrain-train", "--test", "ReutersGrain-test",
                              "-c", "nb-multinomial", "--text", "word-counts:remove_tops=3"])
    assert bad.exit_code == 2
    assert "remove_top" in bad.stderr and "Traceback" not in bad.stderr
    unknown = runner.invoke(app, ["evaluate", "ReutersGrain-train", "-c", "nb-multinomial", "--text", "bag"])
    assert unknown.exit_code == 2 and "word-counts" in unknown.stderr
