"""Safe model files (``.tkm``): train once, predict later, without pickle, and nothing trusted unchecked.

A model file (format 2) is a zip archive with exactly three members:

* ``toolkit-model.json``: the format, its version, the size of each other member and one sha256
  over every other member (names, sizes and bytes), checked before anything else is parsed;
* ``meta.json``: versions, the components (registered names and parameters, plugin and
  distribution), the training header (so a prediction file with another header is refused, naming
  the first differing attribute), the class list, the JSON half of every component's state;
* ``arrays.npz``: the array half of the state (uncompressed inside; the archive deflates it), read
  with ``allow_pickle=False`` after each array's declared size was checked against its bytes.

Reading is bounded: a member may not inflate past 64 times its compressed size (nor past a fixed
cap), JSON nesting and sizes are limited, and state is restored only through each component's
declared ``_state_schema``; after loading, the model predicts two synthetic rows so that an edited,
inconsistent state (shapes that do not fit, NaN) is refused here rather than failing later. Values of
the right type and shape that are merely wrong (a negated variance in a file whose checksum was
recomputed by hand) are not found: the checksum guards against damage, not against an editor who
knows the format. Every problem is a
:class:`ModelFileError` naming the file. Files of format 1 (whose meta.json no checksum covers) are
refused unless the caller opts in (``allow_format_1=True``, ``--allow-format-1``).

Loading rebuilds each component from the registry (``factory(**params)``) and restores its state,
so predictions are bit-identical to those of the model that was saved. Reasons not to pickle: it
runs code on load, and liblinear models hold ctypes pointers that cannot be pickled at all.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import zipfile
import zlib
from datetime import datetime, timezone
from typing import Any

import numpy as np

from toolkit.atomic_write import replaced_atomically
from toolkit.data.attributes import KIND_NAMES, AttributeList
from toolkit.data.dataset import Attribute, Dataset
from toolkit.errors import CapabilityError, ModelFileError, ParameterError, ToolkitError
from toolkit.json_limits import parse_cost_problem

__all__ = ["FORMAT", "FORMAT_VERSION", "save_model", "load_model", "SavedModel", "header_difference",
           "MAX_INFLATION", "MAX_MEMBER_BYTES", "MAX_JSON_DEPTH"]

FORMAT = "toolkit-model"
FORMAT_VERSION = 2
_ROLES = ("text", "feature_selector", "classifier")
_HEADER = "toolkit-model.json"
_MEMBERS = ("meta.json", "arrays.npz")
_V1_MEMBERS = {"meta.json", "arrays.npz"}
#: a member may inflate to at most this many times its compressed size ...
MAX_INFLATION = 64
#: ... and never past this many bytes
MAX_MEMBER_BYTES = 4 << 30
#: deepest JSON nesting a model file may hold (a legitimate meta.json nests about 6 deep)
MAX_JSON_DEPTH = 64
_MIN_ALLOWANCE = 1 << 20  # tiny members may always inflate to 1 MiB
_CHUNK = 1 << 20


def _attribute_json(attr: Attribute) -> dict[str, Any]:
    out: dict[str, Any] = {"name": attr.name, "kind": attr.kind}
    if attr.kind == "nominal":
        out["values"] = list(attr.values)
    if attr.kind == "date":
        out["date_format"] = attr.date_format
    return out


def _header_json(ds: Dataset) -> dict[str, Any]:
    return {"relation": ds.relation, "class_index": ds.class_index, "attributes": ds.attributes.to_records()}


def _first_difference(stored: list[dict[str, Any]], attrs: AttributeList) -> int | None:
    """Position of the first attribute (among the first min(len) of both) whose name, kind, values or date
    format differ; list comparisons and only the nominal and date attributes as objects (a 100,000-word
    header is checked in milliseconds)."""
    n = min(len(stored), len(attrs))
    stored_names = [a["name"] for a in stored[:n]]
    stored_kinds = [a["kind"] for a in stored[:n]]
    have_names = attrs.names()[:n]
    have_kinds = [KIND_NAMES[k] for k in attrs.kind_codes[:n].tolist()]
    first = None
    if stored_names != have_names or stored_kinds != have_kinds:
        first = next(i for i in range(n) if stored_names[i] != have_names[i] or stored_kinds[i] != have_kinds[i])
    objects = {i for i, _ in attrs.special_items() if i < n}
    objects.update(i for i, kind in enumerate(stored_kinds) if kind not in ("numeric", "string"))
    for i in sorted(objects):
        if first is not None and i >= first:
            break
        if stored[i] != _attribute_json(attrs[i]):
            return i
    if first is None:  # plain attributes equal in name and kind: equal unless the stored record has more keys
        first = next((i for i in range(n) if len(stored[i]) != 2 and stored_kinds[i] in ("numeric", "string")), None)
    return first


def header_difference(header: dict[str, Any], ds: Dataset) -> str | None:
    """The first difference between a stored training header and a dataset's header (None if equal)."""
    stored = header["attributes"]
    attrs = ds.attributes
    if ds.inferred_header and len(stored) != len(attrs):
        # a CSV's extra column was reported as the class values' order (its own rows' order)
        i = None
    else:
        i = _first_difference(stored, attrs)
    if i is not None:
        def describe(a: dict[str, Any]) -> str:
            if a["kind"] == "nominal":
                shown = ",".join(a["values"][:6]) + (",..." if len(a["values"]) > 6 else "")
                return f"'{a['name']}' nominal {{{shown}}}"
            if a["kind"] == "date":
                return f"'{a['name']}' date '{a.get('date_format')}'"
            return f"'{a['name']}' {a['kind']}"
        have, want = _attribute_json(attrs[i]), stored[i]
        detail = ""
        if have["kind"] == want["kind"] == "nominal" and have["name"] == want["name"]:
            # the lists are shown cut at 6 values: say where they part (a 7th value renamed looked equal)
            a, b = list(have["values"]), list(want.get("values") or [])
            k = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), None)
            if k is not None:
                detail = f" (value {k + 1} is '{a[k]}', the model's '{b[k]}')"
            elif len(a) > len(b):
                detail = f" ({len(a)} values, the model {len(b)}: '{a[len(b)]}' is new)"
            else:
                detail = f" ({len(a)} values, the model {len(b)}: '{b[len(a)]}' is missing)"
        return f"attribute {i + 1} is {describe(have)}, the model expects {describe(want)}{detail}"
    if len(stored) != len(attrs):
        if len(attrs) > len(stored):
            return f"it has {len(attrs)} attributes, the model {len(stored)} (first extra: '{attrs.name(len(stored))}')"
        return f"it has {len(attrs)} attributes, the model {len(stored)} (first missing: '{stored[len(attrs)]['name']}')"
    if ds.class_index is not None and header["class_index"] != ds.class_index:
        return (f"its class attribute is {ds.class_index if ds.class_index is None else repr(attrs.name(ds.class_index))}, "
                f"the model's is '{stored[header['class_index']]['name']}'")
    return None


def _component_state(obj: Any, role: str, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    if not hasattr(obj, "get_state"):
        raise ModelFileError(f"the {role.replace('_', ' ')} {type(obj).__name__} cannot be saved: it has no get_state()")
    meta, arr = obj.get_state()
    for key, value in arr.items():
        value = np.asarray(value)
        if value.dtype == object:
            raise ModelFileError(f"{type(obj).__name__}.{key} is an object array; model files hold numbers only")
        arrays[f"{role}/{key}"] = value
    return meta


def _class_weights(ds: Dataset) -> list[float]:
    """Summed instance weights per class of the training data (the priors of WEKA's evaluation summary)."""
    y = np.asarray(ds.y)
    known = y >= 0  # class codes; a Dataset built by hand may hold them as floats
    return np.bincount(y[known].astype(np.int64), weights=np.asarray(ds.weights, dtype=np.float64)[known],
                       minlength=len(ds.classes)).tolist()


def save_model(fitted: Any, ds: Dataset, path: str | os.PathLike[str], training: dict[str, Any] | None = None) -> None:
    """Write a fitted pipeline (``Pipeline.fit`` result) trained on ``ds`` to ``path``. ``training``
    replaces entries of the stored training summary (a partitioned fit passes the header as ``ds``, and
    its row count and class weights here)."""
    from toolkit import __version__
    from toolkit.models.pipeline import FittedPipeline

    if not isinstance(fitted, FittedPipeline):   # a bare classifier was an AttributeError ('pipeline')
        raise ParameterError(f"save_model takes a fitted pipeline (what toolkit.train or Pipeline(...).fit "
                             f"returns), not {type(fitted).__name__}")
    classes = tuple(fitted.schema.classes) if fitted.schema is not None else None
    if classes is not None and classes != tuple(ds.classes):
        # another dataset than the one fitted on was said to be a file "altered or written by an incompatible plugin"
        shown = ", ".join(classes[:5]) + (", ..." if len(classes) > 5 else "")
        raise ModelFileError(f"{path}: not written: the model was fitted on the classes {shown}, and {ds.name} has "
                             f"others; give the dataset it was trained on")
    fitted_on = getattr(fitted, "input_schema", None)
    if fitted_on is not None and fitted_on.features != ds.features:
        # the header stored is ds's: a dataset of the same classes but other values was written, and the file
        # then refused the real training data and read codes of the other header
        difference = header_difference({"attributes": fitted_on.features.to_records(), "class_index": None},
                                       Dataset(ds.relation, ds.features, ds.X[:0], None, None, ds.weights[:0]))
        raise ModelFileError(f"{path}: not written: the model was fitted on other attributes than {ds.name}'s "
                             f"({difference or 'another header'}); give the dataset it was trained on")
    pipeline = fitted.pipeline
    arrays: dict[str, np.ndarray] = {}
    components: dict[str, Any] = {}
    state: dict[str, Any] = {}
    parts = {"text": (fitted.text_step or pipeline.text, fitted.vectorizer), "feature_selector": (pipeline.feature_selector,
                                                                               fitted.feature_selector),
             "classifier": (pipeline.classifier, fitted.classifier)}
    for role, (step, obj) in parts.items():
        if obj is None:
            continue
        if step is None or step.spec is None:
            name = getattr(step, "name", type(obj).__name__)
            raise ModelFileError(f"the {role.replace('_', ' ')} '{name}' was given as an object, not a registered "
                                 f"name; only registered components can be saved and rebuilt")
        params = obj.get_params() if hasattr(obj, "get_params") else {}
        components[role] = {"name": step.spec.name, "kind": step.spec.kind, "params": _jsonable(params),
                            "plugin": step.spec.plugin, "distribution": step.spec.distribution}
        state[role] = _component_state(obj, role, arrays)
    if fitted.support is not None:
        arrays["pipeline/support"] = np.asarray(fitted.support, dtype=np.int64)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # stored inside; the archive deflates it (one bounded inflation on load)
    blob = buffer.getvalue()
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "toolkit_version": __version__,
        "numpy_version": np.__version__,
        "pipeline": pipeline.name,
        "components": components,
        "classes": list(ds.classes),
        "header": _header_json(ds),
        "training": {"dataset": ds.name, "dataset_sha256": ds.sha256, "n_instances": ds.n_instances,
                     "class_weights": _class_weights(ds),
                     "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"), **(training or {})},
        "state": state,
    }
    # compact: json's C encoder runs only without indent, and a 100,000-word header took seconds indented
    meta_bytes = json.dumps(meta, separators=(",", ":"), allow_nan=True).encode("utf-8")
    members = {"meta.json": meta_bytes, "arrays.npz": blob}
    head = {"format": FORMAT, "format_version": FORMAT_VERSION, "toolkit_version": __version__,
            "members": {name: len(data) for name, data in members.items()},
            "sha256": _checksum(members)}
    for name, data in members.items():
        if len(data) > MAX_MEMBER_BYTES:
            raise ModelFileError(f"{path}: the model's {name} holds {len(data):,} bytes, more than the "
                                 f"{MAX_MEMBER_BYTES:,} a model file may hold (it could not be loaded)")
    # rebuilt as a load would rebuild it, before anything is written: a component whose saved state does not
    # restore it (a plugin's incomplete _state_schema, a predict that fails) made a file that train wrote and
    # predict refused. From the same meta.json text and the arrays in memory (reading the file back doubled
    # the time and memory of saving a large model)
    try:
        for key, value in arrays.items():   # what _load_arrays refuses in a file, refused before writing one
            problem = _array_problem(key, value.dtype, value.shape, len(blob))
            if problem:
                raise _fail(os.fspath(path), problem)
        _build(os.fspath(path), _parse_json(meta_bytes, os.fspath(path), "meta.json"), dict(arrays), FORMAT_VERSION)
    except _CannotPredict as exc:
        # e.g. values so large that no spread can be estimated: the data's doing, said as such (it was
        # reported as a file "altered or written by an incompatible plugin", "a plugin bug")
        raise ModelFileError(f"{path}: not written: {str(exc).split(': ', 1)[-1]}") from None
    except Exception as exc:
        why = str(exc).split(": ", 1)[-1] if isinstance(exc, ModelFileError) else f"{type(exc).__name__}: {exc}"
        owners = sorted({f"'{c['name']}' of plugin {c.get('plugin')}" for c in components.values()})
        raise ModelFileError(f"{path}: not written: the model saved would not load back ({why[:300]}); the "
                             f"state of {', '.join(owners)} does not restore it (a plugin bug)") from None
    with replaced_atomically(path, ModelFileError) as tmp:
        # loading refuses a member inflating past MAX_INFLATION times its compressed size (a zip bomb); a
        # mostly-zero array (a vocabulary mostly unseen in training) deflates further than that, so such a
        # member is stored as it is, and the file always loads. Deflated once: the archive is written again
        # only in that rare case.
        stored: set[str] = set()
        while True:
            # level 1: float arrays barely deflate at any level, and level 6 took 6x as long on them
            with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
                zf.writestr(_HEADER, json.dumps(head, indent=1))
                for name, data in members.items():
                    zf.writestr(name, data, compress_type=zipfile.ZIP_STORED if name in stored else zipfile.ZIP_DEFLATED)
                unbounded = {info.filename for info in zf.infolist() if info.filename in members
                             and info.compress_type == zipfile.ZIP_DEFLATED
                             and info.file_size > max(_MIN_ALLOWANCE, (MAX_INFLATION // 2) * info.compress_size)}
            if not unbounded:
                break
            stored |= unbounded


def _checksum(members: dict[str, bytes]) -> str:
    """One sha256 over every member in order: name, size and bytes of each."""
    h = hashlib.sha256()
    for name in _MEMBERS:
        data = members[name]
        h.update(name.encode() + b"\0" + str(len(data)).encode() + b"\0")
        h.update(data)
    return h.hexdigest()


def _jsonable(params: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in params.items():
        if isinstance(value, np.generic):
            value = value.item()
        try:
            json.dumps(value)
        except TypeError:
            raise ModelFileError(f"parameter {key}={value!r} is not a JSON value and cannot be saved") from None
        out[key] = value
    return out


class SavedModel:
    """A model read back from a file: predicts datasets with the training header."""

    def __init__(self, path: str, meta: dict[str, Any], fitted: Any):
        self.path = path
        self.meta = meta
        self.fitted = fitted
        self._attributes: AttributeList | None = None   # the training header, built on first use

    @property
    def classes(self) -> list[str]:
        return self.meta["classes"]

    def check_header(self, ds: Dataset) -> None:
        problem = header_difference(self.meta["header"], ds)
        if problem:
            trained = self.meta["training"]["dataset"]
            raise ModelFileError(f"{self.path} was trained on '{trained}' "
                                 f"({len(self.meta['header']['attributes'])} attributes); {ds.name} does not fit: "
                                 f"{problem}")

    def read(self, dataset: Dataset | str | os.PathLike[str]) -> Dataset:
        """A dataset (or a file or bundled name, read) with the training header: checked against it whatever
        its class attribute (the first differing attribute is named), then with the training class. A CSV or
        LIBSVM file's inferred header is first renumbered onto the training one by value names
        (:func:`toolkit.data.conform`): its codes follow its own rows."""
        from toolkit.data.conform import conform, libsvm_width

        header = self._header()
        if isinstance(dataset, Dataset):
            ds = dataset
        else:
            from toolkit.config import LoadOptions
            from toolkit.loading import load_dataset

            width = libsvm_width(header)   # a LIBSVM file without the highest index is narrower
            ds = load_dataset(dataset, LoadOptions(class_attribute=None, format_options=(
                () if width is None else (("n_features", width),))))
        ds = conform(ds.with_class(None), header)
        self.check_header(ds)
        return ds.with_class(self.meta["header"]["class_index"])

    def _header(self) -> AttributeList:
        if self._attributes is None:
            self._attributes = AttributeList.from_records(self.meta["header"]["attributes"])
        return self._attributes

    def predict(self, ds: Dataset | str | os.PathLike[str]) -> Any:
        """:class:`toolkit.api.Predictions` for ``ds`` (its class values may be missing): a dataset, or a
        path or bundled name, read with the training header's class attribute as ``toolkit.predict`` does."""
        if not isinstance(ds, (Dataset, str, os.PathLike)):
            raise TypeError(f"predict takes a Dataset, a path or a bundled name, not {type(ds).__name__}")
        # a Dataset was checked with its own class attribute (a model trained with --class first refused
        # the file's default class, where toolkit.predict took it)
        return self.fitted.predict(self.read(ds))


def _fail(path: str, why: str) -> ModelFileError:
    return ModelFileError(f"{path}: {why}")


class _CannotPredict(ModelFileError):
    """The probe's predictions refused by the model itself (CapabilityError): the fitted model cannot
    predict (its training data made it so), which is no damage and no plugin bug."""


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: str, limit: int | None = None) -> bytes:
    """A member's bytes, inflating at most ``limit`` (default: 64x its compressed size, at least 1 MiB,
    never past MAX_MEMBER_BYTES), whatever its header claims."""
    if limit is None:
        limit = min(MAX_MEMBER_BYTES, max(_MIN_ALLOWANCE, MAX_INFLATION * info.compress_size))
    if info.file_size > limit:
        raise _fail(path, f"{info.filename} would inflate to {info.file_size} bytes from {info.compress_size} "
                          f"(more than the {limit}-byte limit: damaged, or a zip bomb)")
    parts: list[bytes] = []
    total = 0
    with zf.open(info) as fh:
        while True:
            chunk = fh.read(min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise _fail(path, f"{info.filename} inflates past the {limit}-byte limit "
                                  f"(from {info.compress_size} compressed: damaged, or a zip bomb)")
            parts.append(chunk)
    return b"".join(parts)


#: byte class for the nesting check: 1 quote, 2 backslash, 3 opening bracket, 4 closing bracket, 0 other
_JSON_BYTES = np.zeros(256, dtype=np.uint8)
_JSON_BYTES[0x22], _JSON_BYTES[0x5C] = 1, 2
_JSON_BYTES[[0x5B, 0x7B]], _JSON_BYTES[[0x5D, 0x7D]] = 3, 4


def _json_depth_ok(text: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether brackets nest at most ``limit`` deep, strings skipped, vectorised over the few bytes that
    matter (quotes, backslashes, brackets; a byte loop took seconds on the meta of a wide vocabulary). A quote
    ends a string unless an odd run of backslashes precedes it."""
    raw = np.frombuffer(text, dtype=np.uint8)
    pos = np.flatnonzero(_JSON_BYTES[raw])
    cls = _JSON_BYTES[raw[pos]]
    quote = cls == 1
    slash = cls == 2
    if slash.any():
        # a quote at q is escaped when the backslashes right before it (at q-1, q-2, ...) are an odd run
        at = pos[slash]
        starts = np.concatenate(([True], np.diff(at) != 1))          # first backslash of each run
        run_start = np.maximum.accumulate(np.where(starts, np.arange(at.size), 0))
        run_length = np.arange(at.size) - run_start + 1              # backslashes ending at at[i]
        q = pos[quote]
        k = np.searchsorted(at, q - 1)
        hit = k < at.size
        hit[hit] = at[k[hit]] == q[hit] - 1
        escaped = np.zeros(q.size, dtype=bool)
        escaped[hit] = run_length[k[hit]] % 2 == 1
        real = quote.copy()
        real[np.flatnonzero(quote)[escaped]] = False
        quote = real
    outside = np.cumsum(quote, dtype=np.int64) % 2 == 0  # a closing quote counts as outside; it is no bracket
    step = np.where(outside & (cls == 3), 1, np.where(outside & (cls == 4), -1, 0))
    return int(np.cumsum(step).max(initial=0)) <= limit


def _parse_json(data: bytes, path: str, member: str) -> Any:
    if not _json_depth_ok(data):
        raise _fail(path, f"{member} nests deeper than {MAX_JSON_DEPTH} levels; not a model file")
    problem = parse_cost_problem(data)
    if problem:
        raise _fail(path, f"{member}: {problem}; not a model file")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise _fail(path, f"{member} is not valid JSON ({str(exc)[:120]})") from None


def _array_problem(name: str, dtype: np.dtype, shape: tuple[int, ...], total: int,
                   in_a_file: bool = False) -> str | None:
    """What a model file may not hold in an array of ``arrays.npz`` (``total`` bytes): objects, or an extent
    beyond every array's bytes; None when the array is fine. Checked at load and before a save."""
    if dtype.hasobject:
        return f"arrays.npz holds an object array ({name}); model files hold numbers only"
    if any(n > total for n in shape):
        # only an empty array can have an extent beyond the bytes of every array (shape (0, 10**15)); a
        # component would size its work by it (nb-weka's probe asked for 56 PiB)
        return (f"arrays.npz member {name!r} declares the shape {shape}, an extent beyond the {total} bytes of "
                f"all arrays" + (": damaged or altered" if in_a_file else ""))
    return None


def _load_arrays(blob: bytes, path: str, deflated: bool = False) -> dict[str, np.ndarray]:
    """Arrays of ``arrays.npz``, each .npy header checked against its member's size before reading.
    ``deflated``: members may be compressed (format 1's savez_compressed), each inflating to at most
    MAX_INFLATION times its bytes (at least 1 MiB)."""
    from numpy.lib import format as npy

    try:
        inner = zipfile.ZipFile(io.BytesIO(blob))
        arrays: dict[str, np.ndarray] = {}
        for info in inner.infolist():
            compressed = deflated and info.compress_type == zipfile.ZIP_DEFLATED
            if (info.compress_type != zipfile.ZIP_STORED and not compressed) or not info.filename.endswith(".npy"):
                raise _fail(path, f"arrays.npz member {info.filename!r} is not a stored .npy array")
            # a stored member's bytes lie inside arrays.npz: sizes claimed beyond it (its own directory says
            # what it likes) would let a .npy header claim as much, and numpy allocates the claim before
            # reading (a 2 KB file claiming 745 GiB ended in a MemoryError traceback)
            allowed = max(_MIN_ALLOWANCE, MAX_INFLATION * info.compress_size) if compressed else info.compress_size
            if info.file_size > allowed or (not compressed and info.file_size != info.compress_size) \
                    or info.header_offset + info.compress_size > len(blob):
                raise _fail(path, f"arrays.npz member {info.filename!r} claims {info.file_size} bytes, more "
                                  f"than arrays.npz holds ({len(blob)}): damaged or altered")
            with inner.open(info) as fh:
                version = npy.read_magic(fh)
                if version == (1, 0):
                    shape, fortran, dtype = npy.read_array_header_1_0(fh)
                elif version == (2, 0):
                    shape, fortran, dtype = npy.read_array_header_2_0(fh)
                else:
                    raise _fail(path, f"arrays.npz member {info.filename!r} has .npy version {version}")
                problem = _array_problem(info.filename, dtype, shape, len(blob), in_a_file=True)
                if problem:
                    raise _fail(path, problem)
                nbytes = int(np.prod(shape, dtype=np.float64)) * dtype.itemsize
                if nbytes > info.file_size:
                    raise _fail(path, f"arrays.npz member {info.filename!r} declares {nbytes} bytes in "
                                      f"{info.file_size}: damaged or altered")
            with inner.open(info) as fh:
                arrays[info.filename[:-4]] = npy.read_array(fh, allow_pickle=False)
        return arrays
    except ModelFileError:
        raise
    except (zipfile.BadZipFile, ValueError, EOFError, OSError, zlib.error) as exc:
        raise _fail(path, f"arrays.npz is damaged ({type(exc).__name__}: {str(exc)[:120]})") from None


def _read_archive(path: str, allow_format_1: bool) -> tuple[dict[str, Any], dict[str, np.ndarray], int]:
    """(meta, arrays, format version) after every check of the container."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None   # no such file: said below, as zipfile finds it
    if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        # a pipe (<(cat m.tkm)) was "damaged or not a model file", and a FIFO without a writer hung the open
        raise _fail(path, "is not a regular file (a pipe or a device): a model file is read by seeking in it; "
                          "give the file itself")
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise _fail(path, "no such model file") from None
    except IsADirectoryError:
        raise _fail(path, "is a folder, not a model file") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, NotImplementedError) as exc:
        # NotImplementedError: a damaged "version needed" field ("zip file version 25.5") was a traceback
        raise _fail(path, f"damaged or not a model file ({type(exc).__name__}: {str(exc)[:120]})") from None
    with zf:
        try:
            infos = {info.filename: info for info in zf.infolist()}
            names = set(infos)
            if names == _V1_MEMBERS:
                return _read_format_1(zf, infos, path, allow_format_1)
            if names != {_HEADER, *_MEMBERS}:
                shown = sorted(names)[:5]
                raise _fail(path, f"not a toolkit model file (members {shown}, expected {_HEADER}, meta.json "
                                  f"and arrays.npz)")
            head = _parse_json(_read_member(zf, infos[_HEADER], path, limit=1 << 16), path, _HEADER)
            if not isinstance(head, dict) or head.get("format") != FORMAT:
                raise _fail(path, f"not a toolkit model file ({_HEADER} does not say format: {FORMAT})")
            if head.get("format_version") != FORMAT_VERSION:
                from toolkit import __version__

                raise _fail(path, f"model format {head.get('format_version')!r} is not supported by toolkit "
                                  f"{__version__} (it reads format {FORMAT_VERSION})")
            sizes = head.get("members")
            if not isinstance(sizes, dict) or set(sizes) != set(_MEMBERS):
                raise _fail(path, f"{_HEADER} does not list the members")
            members = {name: _read_member(zf, infos[name], path) for name in _MEMBERS}
        except ModelFileError:
            raise
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError) as exc:
            raise _fail(path, f"damaged ({type(exc).__name__}: {str(exc)[:120]})") from None
    if _checksum(members) != head.get("sha256") or any(sizes[n] != len(members[n]) for n in _MEMBERS):
        raise _fail(path, "its contents do not match the checksum in toolkit-model.json: the file was damaged "
                          "or altered")
    meta = _parse_json(members["meta.json"], path, "meta.json")
    if not isinstance(meta, dict):
        raise _fail(path, "meta.json is not an object")
    return meta, _load_arrays(members["arrays.npz"], path), FORMAT_VERSION


def _read_format_1(zf: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo], path: str,
                   allow_format_1: bool) -> tuple[dict[str, Any], dict[str, np.ndarray], int]:
    """Format 1 (toolkit 0.1): only arrays.npz is covered by a checksum (in meta.json)."""
    meta = _parse_json(_read_member(zf, infos["meta.json"], path), path, "meta.json")
    written = meta.get("toolkit_version", "?") if isinstance(meta, dict) else "?"
    if not allow_format_1:
        raise _fail(path, f"model format 1 (written by toolkit {written}): its meta.json, with the class list "
                          f"and the parameters, is covered by no checksum; retrain it with this version, or "
                          f"read it anyway with --allow-format-1 (Python: allow_format_1=True)")
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or meta.get("format_version") != 1:
        raise _fail(path, "not a toolkit model file of format 1")
    blob = _read_member(zf, infos["arrays.npz"], path)
    if hashlib.sha256(blob).hexdigest() != meta.get("arrays_sha256"):
        raise _fail(path, "arrays.npz does not match the checksum in meta.json: the file was damaged or altered")
    # checked as format 2's are: a 1.5 KB file declaring a 10^6 x 10^6 array asked numpy for 7 TiB
    return meta, _load_arrays(blob, path, deflated=True), 1


def _probe(fitted: Any, attrs: AttributeList, class_index: int | None, path: str) -> None:
    """Predict two synthetic rows shaped like the training header (zeros and first nominal values; then
    ones, last nominal values and a non-empty text), so that a state whose parts do not fit together is
    refused at load time."""
    features = attrs if class_index is None else attrs.take(np.delete(np.arange(len(attrs)), int(class_index)))
    kinds = features.kind_codes
    last = np.where((kinds == KIND_NAMES.index("numeric")) | (kinds == KIND_NAMES.index("string")), 1.0, 0.0)
    nominal = kinds == KIND_NAMES.index("nominal")
    last[nominal] = features.n_values()[nominal] - 1
    numeric = kinds == KIND_NAMES.index("numeric")
    string_columns = np.flatnonzero(kinds == KIND_NAMES.index("string"))
    n_classes = len(fitted.schema.classes)

    def predict(X: np.ndarray, texts: list[str]) -> None:
        n = len(X)
        y = np.zeros(n, dtype=np.int64) if class_index is not None else None
        ds = Dataset("probe", attrs, X, y, class_index, np.ones(n), strings={int(j): texts for j in string_columns})
        pred = fitted.predict(ds, keep_model=False)
        values = [pred.y_pred] + ([pred.proba] if pred.proba is not None else [])
        if not all(np.all(np.isfinite(v)) for v in values) or not np.all(
                (pred.y_pred >= 0) & (pred.y_pred < n_classes)):
            raise ValueError("non-finite or out-of-range prediction")
        # one probability per class of the header, and a classifier that knows as many classes: a state
        # cut or extended by a row still predicted, with its columns shifted against the labels
        if pred.proba is not None and np.shape(pred.proba) != (n, n_classes):
            raise ValueError(f"probabilities of shape {np.shape(pred.proba)} for {n} rows and {n_classes} classes")
        known = getattr(fitted.classifier, "classes_", None)
        if known is not None and len(known) != n_classes:
            raise ValueError(f"the classifier holds {len(known)} classes, the header {n_classes}")
        # the pipeline fits on the class codes 0..K-1: another list (negated, repeated) predicts codes that
        # name no class, which the probe's two rows may not meet
        codes = np.asarray(known) if known is not None else None
        if codes is not None and codes.dtype.kind in "iuf" and not np.array_equal(codes, np.arange(n_classes)):
            raise ValueError(f"the classifier's classes are {codes[:5].tolist()}..., not the codes 0..{n_classes - 1}")

    try:
        predict(np.vstack([np.zeros(len(features)), last]), ["", "probe"])
        if (numeric | nominal).any():
            # every numeric and nominal value missing: the state that fills or skips them (cmls's prep_fill_)
            # is used too; a pipeline that refuses missing values says so (CapabilityError), which is no failure
            missing = np.zeros((1, len(features)))
            missing[0, numeric | nominal] = np.nan
            try:
                predict(missing, ["probe"])
            except CapabilityError:
                pass
    except CapabilityError as exc:
        raise _CannotPredict(f"{path}: the model cannot predict ({str(exc)[:300]})") from None
    except Exception as exc:
        raise _fail(path, f"its state does not make a working model ({type(exc).__name__}: {str(exc)[:160]}); "
                          f"the file was altered or written by an incompatible plugin") from None


def load_model(path: str | os.PathLike[str], *, allow_format_1: bool = False) -> SavedModel:
    """Read a model file, refusing damaged, tampered or incompatible files with a clear error."""
    path = os.fspath(path)
    meta, arrays, version = _read_archive(path, allow_format_1)
    return _build(path, meta, arrays, version)


def _build(path: str, meta: dict[str, Any], arrays: dict[str, np.ndarray], version: int) -> SavedModel:
    """The model a file's meta.json and arrays describe, checked part by part and by a probe prediction."""
    from toolkit.errors import warn
    from toolkit.models.pipeline import FittedPipeline, Pipeline, Step
    from toolkit.plugin_host.components import get_registry

    try:
        if meta.get("format") != FORMAT or meta.get("format_version") != version:
            raise _fail(path, "meta.json does not match the file's format")
        registry = get_registry()
        header = meta["header"]
        # every nominal attribute with its list of values, as the writer stores it (the header comparison
        # reads it; AttributeList.from_records takes a missing list as no values)
        for number, record in enumerate(header["attributes"], 1):
            if isinstance(record, dict) and record.get("kind") == "nominal" and not isinstance(record.get("values"), list):
                raise _fail(path, f"meta.json's attribute {number} is nominal without a list of values")
        attrs = AttributeList.from_records(header["attributes"])
        class_index = header["class_index"]
        if class_index is not None and not (isinstance(class_index, int) and not isinstance(class_index, bool)
                                            and 0 <= class_index < len(attrs)):
            raise _fail(path, f"meta.json's class index {class_index!r} is not the position of one of its "
                              f"{len(attrs)} attributes")
        classes = meta["classes"]
        if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
            raise _fail(path, "meta.json's class list is malformed")
        training = meta["training"]
        weights = training.get("class_weights") if isinstance(training, dict) else None
        if not (isinstance(training, dict) and isinstance(training.get("dataset", ""), str)
                and (weights is None or (isinstance(weights, list) and len(weights) == len(classes) and all(
                    isinstance(w, (int, float)) and not isinstance(w, bool) and w >= 0 for w in weights)))):
            raise _fail(path, f"meta.json's training summary is malformed (an object with the dataset's name and "
                              f"{len(classes)} class weights)")
        if class_index is not None:
            declared = list(attrs[class_index].values)
            if declared != classes:
                raise _fail(path, "the class list does not match the training header's class attribute")
        components = meta["components"]
        steps = {}
        objects = {}
        for role in _ROLES:
            comp = components.get(role)
            if comp is None:
                continue
            if role == "text":
                from toolkit.models.text_step import text_step_spec

                spec = text_step_spec(comp["name"])
            else:
                try:
                    spec = registry.get(comp["kind"], comp["name"])
                except ToolkitError:
                    from toolkit.plugin_host.manager import default_manager

                    plugin = comp.get("plugin")
                    if isinstance(plugin, str) and default_manager().pm.is_blocked(plugin):
                        raise _fail(path, f"the {comp['kind']} '{comp['name']}' comes from the plugin '{plugin}', "
                                          f"which is blocked (--block / TOOLKIT_BLOCK_PLUGINS)") from None
                    raise _fail(path, f"the {comp['kind']} '{comp['name']}' is not installed; install the plugin "
                                      f"distribution {comp.get('distribution') or plugin}") from None
            if spec.distribution != comp.get("distribution") and comp.get("distribution"):
                warn(f"{path}: saved with {comp['distribution']}, now {spec.distribution}; predictions may differ")
            params = comp["params"]
            if not isinstance(params, dict):
                raise _fail(path, f"the {role.replace('_', ' ')}'s parameters are malformed")
            # a parameter renamed since the file was written (a component's renamed_parameters: old -> new)
            renamed = getattr(spec.factory, "renamed_parameters", None) or {}
            params = {renamed.get(k, k): v for k, v in params.items()}
            obj = spec.create(**params)
            from toolkit.api import validate_component

            validate_component(obj, comp["name"])
            prefix = role + "/"
            role_state = meta["state"][role]
            if not isinstance(role_state, dict):
                raise _fail(path, f"the {role.replace('_', ' ')}'s state is malformed")
            obj._set_state(role_state, {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)})
            objects[role] = obj
            steps[role] = Step(role, comp["name"], params=dict(params), spec=spec)
        if "classifier" not in objects:
            raise _fail(path, "the file holds no classifier")
        unused = [k for k in arrays if k.split("/", 1)[0] not in objects and k != "pipeline/support"]
        if unused:
            raise _fail(path, f"arrays.npz holds arrays of no component ({unused[0]})")
        pipeline = Pipeline(steps["classifier"], feature_selector=steps.get("feature_selector"),
                            text=steps.get("text"), tune=False, name=meta.get("pipeline"))
        fitted = FittedPipeline(pipeline, {})
        fitted.classifier = objects["classifier"]
        fitted.feature_selector = objects.get("feature_selector")
        fitted.vectorizer = objects.get("text")
        if "pipeline/support" in arrays:
            support = arrays["pipeline/support"]
            if support.dtype.kind not in "iu" or support.ndim != 1:
                raise _fail(path, "the feature support is malformed")
            fitted.support = support
        from toolkit.api import Schema

        features = attrs if class_index is None else attrs.take(np.delete(np.arange(len(attrs)), int(class_index)))
        fitted.schema = Schema(features, tuple(classes))
    except ModelFileError:
        raise
    except ToolkitError as exc:
        raise _fail(path, f"meta.json does not describe a valid model ({str(exc)[:200]})") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise _fail(path, f"meta.json is incomplete or altered ({type(exc).__name__}: {str(exc)[:160]})") from None
    _probe(fitted, attrs, class_index, path)
    return SavedModel(path, meta, fitted)
