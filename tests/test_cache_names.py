"""The dataset cache and file names: CSV and LIBSVM take the relation from the file's name, so two files
of the same bytes under two names must not share an entry (the second reported the first's relation);
a cached load equals an uncached one in every field. Expected relations are the names the test gave."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from toolkit.cli import app
from toolkit.loading import load_dataset

runner = CliRunner()


@pytest.mark.parametrize("names,text", [(("alpha.csv", "beta.csv"), "a,b\n1,x\n2,y\n"),
                                        (("s1.libsvm", "s2.libsvm"), "1 1:1\n-1 2:1\n")])
def test_a_cached_load_equals_an_uncached_one_for_files_of_the_same_bytes(tmp_path, monkeypatch, names, text):
    from toolkit.data import cache

    paths = []
    for name in names:
        (tmp_path / name).write_text(text)
        paths.append(tmp_path / name)
    uncached = [load_dataset(p) for p in paths]
    assert [d.relation for d in uncached] == [n.split(".")[0] for n in names]  # the name gives the relation
    monkeypatch.setenv("TOOLKIT_CACHE", str(tmp_path / "cache"))
    try:
        for _ in range(2):  # the first round fills the cache, the second reads it
            for path, plain in zip(paths, uncached):
                got = load_dataset(path)
                assert got.difference(plain) is None, got.difference(plain)
                assert (got.relation, got.path, got.sha256) == (plain.relation, plain.path, plain.sha256)
        assert len(list((tmp_path / "cache").rglob("*.zip"))) == 2
    finally:
        cache.set_cache_dir(None)


def test_the_cache_on_the_command_line_reports_each_files_relation(tmp_path):
    for name in ("alpha.csv", "beta.csv"):
        (tmp_path / name).write_text("a,b\n1,x\n2,y\n")
    folder = str(tmp_path / "cache")
    for name in ("alpha", "beta"):
        result = runner.invoke(app, ["--cache", folder, "info", str(tmp_path / f"{name}.csv")])
        assert result.exit_code == 0, result.output
        assert f"relation    {name}\n" in result.stdout
