"""An opt-in cache of parsed datasets (``toolkit --cache DIR`` or ``TOOLKIT_CACHE=DIR``).

A dataset is stored under the SHA-256 of the file's bytes, the reader version, the load options and the
file's name (from which a loader may take the relation), so a changed file, a new reader, other options
or another name never hit an old entry. The format is safe to read
from anywhere: a zip of ``meta.json`` and ``.npy`` arrays read with ``allow_pickle=False`` (no
pickle, no code). The second load of a large file costs reading its arrays. A damaged or foreign
entry is ignored (and replaced), never trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.data.attributes import Attribute, AttributeList
from toolkit.data.dataset import Dataset

__all__ = ["READER_VERSION", "cache_dir", "set_cache_dir", "cached_load", "file_sha256", "entry_path"]

#: bump whenever a read can return something else for the same file and options
READER_VERSION = "toolkit-reader-5"  # 5: Dataset.inferred_header kept (an older entry would read as declared);
#                                       4: DATE values as Java reads them (Julian before 1582, S fields, X zones)
_FORMAT = 1
_explicit: Path | None = None


def set_cache_dir(path: str | os.PathLike[str] | None) -> None:
    """Use ``path`` as the cache for this process (the CLI's ``--cache``); None falls back to the environment."""
    global _explicit
    _explicit = None if path is None else Path(path).expanduser()


def cache_dir() -> Path | None:
    """The cache folder in force: ``--cache``, else ``TOOLKIT_CACHE``, else None (no cache)."""
    if _explicit is not None:
        return _explicit
    env = os.environ.get("TOOLKIT_CACHE", "").strip()
    return Path(env).expanduser() if env else None


def file_sha256(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def entry_path(folder: Path, sha256: str, options: Any, name: str = "") -> Path:
    """The entry of a file's bytes (``sha256``), loaded with ``options`` under the file name ``name``."""
    key = hashlib.sha256(json.dumps([READER_VERSION, sha256, repr(options), name]).encode()).hexdigest()
    return folder / key[:2] / f"{key}.zip"


def cached_load(path: str | os.PathLike[str], options: Any, load: Callable[[], Dataset]) -> Dataset:
    """``load()``, or the stored result of an earlier ``load()`` of the same bytes with the same options
    under the same file name: a loader may take fields from the name (CSV and LIBSVM take the relation
    from it), so two files of the same bytes under two names are two entries. The result equals
    ``load()`` in every field; ``path`` is the path given."""
    folder = cache_dir()
    if folder is None:
        return load()
    sha = file_sha256(path)
    entry = entry_path(folder, sha, options, os.path.basename(os.fspath(path)))
    ds = _read_entry(entry, str(path), sha)
    if ds is not None:
        return ds
    ds = load()
    try:
        _write_entry(entry, ds)
    except OSError as exc:  # a read-only or full cache never stops a load
        from toolkit.errors import warn

        warn(f"cannot write the dataset cache {folder}: {exc.strerror or exc}")
    return ds


# ---------------------------------------------------------------------------- format

def _attribute_meta(attr: Attribute) -> dict[str, Any]:
    out: dict[str, Any] = {"name": attr.name, "kind": attr.kind}
    if attr.values:
        out["values"] = list(attr.values)
    if attr.date_format is not None:
        out["date_format"] = attr.date_format
    if attr.relation is not None:
        out["relation"] = [_attribute_meta(a) for a in attr.relation]
    return out


def _attribute_from(meta: dict[str, Any]) -> Attribute:
    relation = meta.get("relation")
    return Attribute(meta["name"], meta["kind"], tuple(meta.get("values", ())), meta.get("date_format"),
                     None if relation is None else AttributeList(_attribute_from(a) for a in relation))


def _put(zf: zipfile.ZipFile, name: str, array: np.ndarray) -> None:
    with zf.open(name + ".npy", "w", force_zip64=True) as fh:
        np.lib.format.write_array(fh, np.ascontiguousarray(array), allow_pickle=False)


def _get(zf: zipfile.ZipFile, name: str) -> np.ndarray:
    with zf.open(name + ".npy") as fh:
        return np.lib.format.read_array(fh, allow_pickle=False)


def _dump(zf: zipfile.ZipFile, prefix: str, ds: Dataset) -> dict[str, Any]:
    attrs = ds.attributes
    special = sorted(attrs._special)
    meta: dict[str, Any] = {
        "relation": ds.relation, "class_index": ds.class_index, "sparse": ds.is_sparse,
        "inferred_header": ds.inferred_header,
        "shape": list(ds.X.shape), "names": attrs._blob,
        "special": {str(i): _attribute_meta(attrs[i]) for i in special},
        "strings": {str(c): t for c, t in ds.strings.items()}, "has_y": ds.y is not None,
        "bags": {str(c): [_dump(zf, f"{prefix}b{c}_{k}/", bag) for k, bag in enumerate(bags)]
                 for c, bags in ds.bags.items()},
    }
    _put(zf, prefix + "offsets", attrs._offsets)
    _put(zf, prefix + "kinds", attrs._kinds)
    if ds.is_sparse:
        X = sp.csr_matrix(ds.X)
        for part in ("data", "indices", "indptr"):
            _put(zf, prefix + part, getattr(X, part))
    else:
        _put(zf, prefix + "X", np.asarray(ds.X))
    if ds.y is not None:
        _put(zf, prefix + "y", ds.y)
    _put(zf, prefix + "weights", ds.weights)
    return meta


def _load(zf: zipfile.ZipFile, prefix: str, meta: dict[str, Any], path: str | None, sha: str | None) -> Dataset:
    special = {int(i): _attribute_from(m) for i, m in meta["special"].items()}
    attributes = AttributeList._from_parts(meta["names"], _get(zf, prefix + "offsets"), _get(zf, prefix + "kinds"),
                                           special)
    shape = tuple(meta["shape"])
    if meta["sparse"]:
        X: Any = sp.csr_matrix((_get(zf, prefix + "data"), _get(zf, prefix + "indices"), _get(zf, prefix + "indptr")),
                               shape=shape, copy=False)
    else:
        X = _get(zf, prefix + "X").reshape(shape)
    bags = {int(c): [_load(zf, f"{prefix}b{c}_{k}/", m, None, None) for k, m in enumerate(items)]
            for c, items in meta["bags"].items()}
    return Dataset(relation=meta["relation"], attributes=attributes, X=X,
                   y=_get(zf, prefix + "y") if meta["has_y"] else None, class_index=meta["class_index"],
                   weights=_get(zf, prefix + "weights"), strings={int(c): t for c, t in meta["strings"].items()},
                   bags=bags, path=path, sha256=sha, inferred_header=bool(meta.get("inferred_header", False)))


def _write_entry(entry: Path, ds: Dataset) -> None:
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = entry.with_name(f".{entry.name}.{os.getpid()}.tmp")
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
            meta = _dump(zf, "", ds)
            zf.writestr("meta.json", json.dumps({"format": _FORMAT, "reader": READER_VERSION, "dataset": meta,
                                                 "sha256": ds.sha256}))
        os.replace(tmp, entry)
    finally:
        if tmp.exists():
            tmp.unlink()


def _read_entry(entry: Path, path: str, sha: str) -> Dataset | None:
    if not entry.is_file():
        return None
    try:
        with zipfile.ZipFile(entry) as zf:
            meta = json.loads(zf.read("meta.json"))
            if meta.get("format") != _FORMAT or meta.get("reader") != READER_VERSION:
                return None
            # the sha256 field as the loader gave it (the CSV and LIBSVM readers give none)
            return _load(zf, "", meta["dataset"], path, meta.get("sha256", sha))
    except Exception:  # noqa: BLE001 - any failure to read an entry means: not cached
        return None  # damaged or foreign: read the file instead (and replace the entry)
