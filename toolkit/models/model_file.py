"""Safe model files (``.tkm``): train once, predict later, without pickle.

A model file is a zip archive with exactly two members:

* ``meta.json``: format and versions, the components (registered names and parameters, plugin and
  distribution), the training header (so a prediction file with another header is refused, naming
  the first differing attribute), the JSON half of every component's state, and the sha256 of
  ``arrays.npz``;
* ``arrays.npz``: the array half of the state, read with ``allow_pickle=False`` so that no object
  array (and no code) can come in.

Loading rebuilds each component from the registry (``factory(**params)``) and restores its state,
so predictions are bit-identical to those of the model that was saved. Reasons not to pickle: it
runs code on load, and liblinear models hold ctypes pointers that cannot be pickled at all.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from datetime import datetime, timezone
from typing import Any

import numpy as np

from toolkit.atomic_write import replaced_atomically
from toolkit.data.attributes import AttributeList
from toolkit.data.dataset import Attribute, Dataset
from toolkit.errors import ModelFileError, ToolkitError

__all__ = ["FORMAT", "FORMAT_VERSION", "save_model", "load_model", "SavedModel", "header_difference"]

FORMAT = "toolkit-model"
FORMAT_VERSION = 1
_ROLES = ("text", "feature_selector", "classifier")
_MEMBERS = {"meta.json", "arrays.npz"}


def _attribute_json(attr: Attribute) -> dict[str, Any]:
    out: dict[str, Any] = {"name": attr.name, "kind": attr.kind}
    if attr.kind == "nominal":
        out["values"] = list(attr.values)
    if attr.kind == "date":
        out["date_format"] = attr.date_format
    return out


def _header_json(ds: Dataset) -> dict[str, Any]:
    return {"relation": ds.relation, "class_index": ds.class_index,
            "attributes": [_attribute_json(a) for a in ds.attributes]}


def header_difference(header: dict[str, Any], ds: Dataset) -> str | None:
    """The first difference between a stored training header and a dataset's header (None if equal)."""
    stored = header["attributes"]
    attrs = ds.attributes
    for i in range(min(len(stored), len(attrs))):
        want, have = stored[i], _attribute_json(attrs[i])
        if want != have:
            def describe(a: dict[str, Any]) -> str:
                if a["kind"] == "nominal":
                    shown = ",".join(a["values"][:6]) + (",..." if len(a["values"]) > 6 else "")
                    return f"'{a['name']}' nominal {{{shown}}}"
                return f"'{a['name']}' {a['kind']}"
            return f"attribute {i + 1} is {describe(have)}, the model expects {describe(want)}"
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


def save_model(fitted: Any, ds: Dataset, path: str | os.PathLike[str]) -> None:
    """Write a fitted pipeline (``Pipeline.fit`` result) trained on ``ds`` to ``path``."""
    from toolkit import __version__

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
        components[role] = {"name": step.name, "kind": step.spec.kind, "params": _jsonable(params),
                            "plugin": step.spec.plugin, "distribution": step.spec.distribution}
        state[role] = _component_state(obj, role, arrays)
    if fitted.support is not None:
        arrays["pipeline/support"] = np.asarray(fitted.support, dtype=np.int64)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
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
                     "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds")},
        "state": state,
        "arrays_sha256": hashlib.sha256(blob).hexdigest(),
    }
    text = json.dumps(meta, indent=1, allow_nan=True)
    with replaced_atomically(path, ModelFileError) as tmp:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("meta.json", text)
            zf.writestr("arrays.npz", blob)


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

    def predict(self, ds: Dataset) -> Any:
        """:class:`toolkit.api.Predictions` for ``ds`` (its class values may be missing)."""
        self.check_header(ds)
        return self.fitted.predict(ds)


def _fail(path: str, why: str) -> ModelFileError:
    return ModelFileError(f"{path}: {why}")


def load_model(path: str | os.PathLike[str]) -> SavedModel:
    """Read a model file, refusing damaged, tampered or incompatible files with a clear error."""
    from toolkit import __version__
    from toolkit.plugin_host.components import get_registry
    from toolkit.errors import warn
    from toolkit.models.pipeline import FittedPipeline, Pipeline, Step

    path = str(path)
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            if names != _MEMBERS:
                raise _fail(path, f"not a toolkit model file (members {sorted(names)}, expected meta.json and "
                                  f"arrays.npz)")
            meta_text = zf.read("meta.json")
            blob = zf.read("arrays.npz")
    except FileNotFoundError:
        raise _fail(path, "no such model file") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, KeyError) as exc:
        raise _fail(path, f"damaged or not a model file ({type(exc).__name__}: {exc})") from None
    try:
        meta = json.loads(meta_text)
    except ValueError as exc:
        raise _fail(path, f"meta.json is not valid JSON ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise _fail(path, "not a toolkit model file (meta.json has no 'format: toolkit-model')")
    if meta.get("format_version") != FORMAT_VERSION:
        raise _fail(path, f"format version {meta.get('format_version')} is not supported by toolkit "
                          f"{__version__} (it reads version {FORMAT_VERSION})")
    if hashlib.sha256(blob).hexdigest() != meta.get("arrays_sha256"):
        raise _fail(path, "arrays.npz does not match the checksum in meta.json: the file was damaged or altered")
    try:
        with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
            arrays = {key: npz[key] for key in npz.files}
    except ValueError as exc:
        raise _fail(path, f"arrays.npz holds pickled objects, which model files never contain ({exc})") from None
    except Exception as exc:
        raise _fail(path, f"arrays.npz is damaged ({type(exc).__name__}: {exc})") from None
    try:
        registry = get_registry()
        header = meta["header"]
        attrs = AttributeList(Attribute(a["name"], a["kind"], tuple(a.get("values", ())), a.get("date_format"))
                              for a in header["attributes"])
        class_index = header["class_index"]
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
                    raise _fail(path, f"the {comp['kind']} '{comp['name']}' is not installed; install the plugin "
                                      f"distribution {comp.get('distribution') or comp.get('plugin')}") from None
            if spec.distribution != comp.get("distribution") and comp.get("distribution"):
                warn(f"{path}: saved with {comp['distribution']}, now {spec.distribution}; predictions may differ")
            obj = spec.factory(**comp["params"])
            prefix = role + "/"
            obj._set_state(meta["state"][role], {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)})
            objects[role] = obj
            steps[role] = Step(role, comp["name"], params=dict(comp["params"]), spec=spec)
        if "classifier" not in objects:
            raise _fail(path, "the file holds no classifier")
    except ModelFileError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _fail(path, f"meta.json is incomplete or altered ({type(exc).__name__}: {exc})") from None
    pipeline = Pipeline(steps["classifier"], feature_selector=steps.get("feature_selector"),
                        text=steps.get("text"), tune=False, name=meta.get("pipeline"))
    fitted = FittedPipeline(pipeline, {})
    fitted.classifier = objects["classifier"]
    fitted.feature_selector = objects.get("feature_selector")
    fitted.vectorizer = objects.get("text")
    if "pipeline/support" in arrays:
        fitted.support = arrays["pipeline/support"]
    from toolkit.api import Schema

    features = attrs if class_index is None else attrs.take(np.delete(np.arange(len(attrs)), class_index))
    fitted.schema = Schema(features, tuple(meta["classes"]))
    return SavedModel(path, meta, fitted)
