"""Finding and loading datasets: bare names, paths, and the ``load_dataset`` hook."""

from __future__ import annotations

import atexit
import os
from contextlib import ExitStack
from importlib import resources
from pathlib import Path
from typing import Literal

from toolkit.config import LoadOptions, SaveOptions
from toolkit.data import arff
from toolkit.data.cache import cached_load
from toolkit.data.dataset import Dataset
from toolkit.errors import DatasetError

__all__ = ["load_arff", "load_dataset", "save_dataset", "resolve_dataset", "dataset_folders", "save_arff",
           "list_bundled"]

_SUFFIXES = (".arff", ".arff.gz")


def _bundled_files(package: str = "toolkit.datasets") -> dict[str, Path]:
    """The bundled datasets as real paths, from any install: a wheel or sdist (where
    ``toolkit.datasets`` is a namespace package and ``files()`` a MultiplexedPath, whose ``str()`` is
    not a path), an editable install, or a zip (each file extracted by ``as_file``)."""
    try:
        root = resources.files(package)
    except (ModuleNotFoundError, TypeError):
        return {}
    found: dict[str, Path] = {}
    try:
        entries = sorted(root.iterdir(), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError, OSError):
        return {}
    for entry in entries:
        if entry.name.endswith(_SUFFIXES) and entry.is_file():
            if isinstance(entry, Path):
                found.setdefault(entry.name, entry)
            else:  # a zip member: extracted to a temporary file kept for the process
                found.setdefault(entry.name, _STACK.enter_context(resources.as_file(entry)))
    return found


_STACK = ExitStack()
atexit.register(_STACK.close)


def dataset_folders() -> list[Path]:
    """Folders searched for bare dataset names: the bundled ``datasets/``, then ``TOOLKIT_DATASETS``."""
    folders: list[Path] = []
    parents = {path.parent for path in _bundled_files().values()}
    folders.extend(sorted(parents))
    source_tree = Path(__file__).resolve().parent.parent / "datasets"
    if source_tree.is_dir() and source_tree not in folders:
        folders.append(source_tree)
    for entry in os.environ.get("TOOLKIT_DATASETS", "").split(os.pathsep):
        if entry.strip():
            folders.append(Path(entry.strip()).expanduser())
    return folders


def list_bundled() -> list[Path]:
    """Every ARFF file in the dataset folders."""
    seen: dict[str, Path] = {}
    for folder in dataset_folders():
        if folder.is_dir():
            for path in sorted(folder.iterdir()):
                if path.name.endswith(_SUFFIXES):
                    seen.setdefault(path.name, path)
    return list(seen.values())


def resolve_dataset(name: str | os.PathLike[str]) -> Path:
    """A path as given, or a bare name (``iris``) looked up in :func:`dataset_folders`."""
    path = Path(name)
    if path.exists():
        return path
    text = str(name)
    if os.sep not in text and "/" not in text:
        candidates = [text] if text.endswith(_SUFFIXES) else [text + s for s in _SUFFIXES]
        for folder in dataset_folders():
            for candidate in candidates:
                if (folder / candidate).is_file():
                    return folder / candidate
        known = sorted({p.name.split(".arff")[0] for p in list_bundled()})
        import difflib

        close = difflib.get_close_matches(text, known, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise DatasetError(f"{text}: no such file or bundled dataset{hint} "
                           f"(bundled: {', '.join(known) or 'none'}; TOOLKIT_DATASETS adds folders)")
    raise DatasetError(f"{text}: no such file")


def load_arff(path: str | os.PathLike[str], *, class_attribute: str | int | None = -1,
              sparse: bool | Literal["auto"] = "auto", encoding: str = "utf-8") -> Dataset:
    """Load an ARFF file or bundled dataset by name (``load_arff("iris")``); cached when a cache is set."""
    resolved = resolve_dataset(path)
    options = ("arff", class_attribute, sparse, encoding)
    return cached_load(resolved, options, lambda: arff.read(resolved, class_attribute=class_attribute,
                                                            sparse=sparse, encoding=encoding))


def load_dataset(path: str | os.PathLike[str], options: LoadOptions | None = None) -> Dataset:
    """Load through the ``load_dataset`` hook, so plugins can add formats; ARFF is the fallback.

    With a cache (``--cache DIR`` or ``TOOLKIT_CACHE``) the parsed dataset is stored by content hash.
    """
    from toolkit.plugin_host.manager import default_manager

    options = options or LoadOptions()
    resolved = resolve_dataset(path)

    def load() -> Dataset:
        result = default_manager().hook.load_dataset(path=resolved, options=options)
        if result is None:
            raise DatasetError(f"{resolved}: no loader accepts this file (known: .arff, .csv, .libsvm, .svm, "
                               f".svmlight, and the same with .gz)")
        return result

    suffix = "".join(Path(resolved).suffixes[-2:]).lower()
    return cached_load(resolved, ("hook", suffix, options), load)


def save_dataset(ds: Dataset, path: str | os.PathLike[str], options: SaveOptions | None = None) -> None:
    """Write through the ``save_dataset`` hook, the format from the file name (ARFF, CSV, LIBSVM and
    whatever plugins add; ``.gz`` compresses)."""
    from toolkit.plugin_host.manager import default_manager

    target = Path(path)
    if target.is_dir():
        raise DatasetError(f"{target}: is a folder; give the file to write")
    if not target.parent.is_dir():
        raise DatasetError(f"{target}: the folder {target.parent} does not exist")
    done = default_manager().hook.save_dataset(dataset=ds, path=target, options=options or SaveOptions())
    if done is None:
        raise DatasetError(f"{target}: no writer for this file name (ARFF files end in .arff or .arff.gz, CSV in "
                           f".csv, LIBSVM in .libsvm, .svm or .svmlight; each may add .gz)")


def save_arff(ds: Dataset, path: str | os.PathLike[str], *, sparse: bool | None = None) -> None:
    """Write ``ds`` as ARFF."""
    arff.write(ds, path, sparse=sparse)
