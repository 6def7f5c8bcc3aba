"""Data: the dataset model, ARFF reading and writing, and text vectorisation.

The names below are the data layer's public API for plugins (a format plugin builds a
:class:`Dataset` of :class:`Attribute` objects); they are imported on first use, so that importing
this package costs nothing.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Dataset", "Attribute", "AttributeList", "DateCodec", "parse_numbers", "format_number", "format_numbers",
           "resolve_class_index", "open_binary", "open_text_output", "text_encoding", "warn_dropped_weights", "is_gzip_name",
           "undecodable_line", "MAX_LINE_BYTES", "MAX_NUMBER_CHARS", "conform", "conform_to", "libsvm_width"]

_WHERE = {
    "Dataset": "toolkit.data.dataset",
    "Attribute": "toolkit.data.attributes",
    "AttributeList": "toolkit.data.attributes",
    "DateCodec": "toolkit.data.arff_dates",
    "parse_numbers": "toolkit.data.arff_syntax",
    "format_number": "toolkit.data.arff",
    "format_numbers": "toolkit.data.arff",
    "resolve_class_index": "toolkit.data.arff",
    "open_binary": "toolkit.data.arff_source",
    "open_text_output": "toolkit.data.arff_source",
    "text_encoding": "toolkit.data.arff_source",
    "is_gzip_name": "toolkit.data.arff_source",
    "undecodable_line": "toolkit.data.arff_source",
    "MAX_LINE_BYTES": "toolkit.data.arff_source",
    "MAX_NUMBER_CHARS": "toolkit.data.arff_syntax",
    "warn_dropped_weights": "toolkit.data.dataset",
    "conform": "toolkit.data.conform",
    "libsvm_width": "toolkit.data.conform",
    "conform_to": "toolkit.data.conform",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'toolkit.data' has no attribute '{name}'")
    from importlib import import_module

    return getattr(import_module(module), name)
