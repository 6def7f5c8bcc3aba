"""Bundled datasets resolve from any kind of install: a plain folder, a namespace package split over
folders (a wheel install: ``files()`` is a MultiplexedPath whose ``str()`` is no path), a zip."""

from __future__ import annotations

import sys
import zipfile

import pytest

from toolkit.loading import _bundled_files

ARFF = "@relation r\n@attribute a numeric\n@attribute class {x,y}\n@data\n1,x\n2,y\n"


@pytest.fixture
def on_path(tmp_path, monkeypatch):
    def add(entry):
        monkeypatch.syspath_prepend(str(entry))
    yield add
    for name in [m for m in sys.modules if m.startswith("bundled_probe")]:
        del sys.modules[name]


def test_namespace_package_over_two_folders(tmp_path, on_path):
    for folder, name in (("one", "a.arff"), ("two", "b.arff.gz")):
        pkg = tmp_path / folder / "bundled_probe" / "data"
        pkg.mkdir(parents=True)
        (pkg / name).write_bytes(ARFF.encode())
        (pkg / "notes.txt").write_text("not a dataset")
        on_path(tmp_path / folder)
    found = _bundled_files("bundled_probe.data")
    assert sorted(found) == ["a.arff", "b.arff.gz"]
    assert all(p.is_file() and p.read_bytes() == ARFF.encode() for p in found.values())


def test_zip_install(tmp_path, on_path):
    archive = tmp_path / "site.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("bundled_probe/__init__.py", "")
        zf.writestr("bundled_probe/data/__init__.py", "")
        zf.writestr("bundled_probe/data/z.arff", ARFF)
    on_path(archive)
    found = _bundled_files("bundled_probe.data")
    assert list(found) == ["z.arff"]
    assert found["z.arff"].read_text() == ARFF  # extracted to a real file


def test_missing_package_is_no_bundled_data():
    assert _bundled_files("no_such_package_anywhere.data") == {}


def test_bundled_names_load():
    import toolkit as tk

    assert tk.load_arff("iris").n_instances == 150
