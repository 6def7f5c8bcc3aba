"""toolkit: naive-Bayes-family and linear classifiers on ARFF data, evaluated the WEKA way.

The public API. Names that need numpy or scipy are imported lazily (PEP 562), so that
``import toolkit`` and the CLI's start stay fast::

    import toolkit as tk
    ds = tk.load_arff("iris")
    clf = tk.get_classifier("nb-weka").fit(ds.X, ds.y, schema=tk.Schema.from_dataset(ds))
    results = tk.evaluate(ds, classifiers=["nb-weka", "bma-nb"], runs=10, seed=1)
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from toolkit._moved import install_moved_module_aliases
from toolkit.errors import (
    ArffFormatError,
    CapabilityError,
    DatasetError,
    ModelFileError,
    ParameterError,
    PluginError,
    ResultsFileError,
    ToolkitError,
    ToolkitWarning,
    UnknownComponentError,
)
from toolkit.plugin_host.capabilities import Capabilities
from toolkit.plugin_host.hookspecs import hookimpl

__version__ = "0.2.0"
#: The distribution name on the package index ("toolkit" there is an unrelated project); the import
#: name and the command stay ``toolkit``.
DISTRIBUTION = "arff-toolkit"

_LAZY: dict[str, str] = {
    "Dataset": "toolkit.data.dataset",
    "Attribute": "toolkit.data.dataset",
    "LoadOptions": "toolkit.config",
    "load_arff": "toolkit.loading",
    "load_dataset": "toolkit.loading",
    "resolve_dataset": "toolkit.loading",
    "save_arff": "toolkit.loading",
    "get_classifier": "toolkit.plugin_host.components",
    "get_feature_selector": "toolkit.plugin_host.components",
    "get_example_selector": "toolkit.plugin_host.components",
    "get_evaluator": "toolkit.plugin_host.components",
    "get_registry": "toolkit.plugin_host.components",
    "Schema": "toolkit.api",
    "Predictions": "toolkit.api",
    "ClassifierBase": "toolkit.api",
    "ProbabilisticClassifier": "toolkit.api",
    "FeatureSelectorBase": "toolkit.api",
    "ExampleSelectorBase": "toolkit.api",
    "Pipeline": "toolkit.models.pipeline",
    "evaluate": "toolkit.evaluation.api",
    "compare": "toolkit.evaluation.api",
    "binary_tasks": "toolkit.evaluation.api",
    "Results": "toolkit.evaluation.results",
    "save_model": "toolkit.models.model_file",
    "load_model": "toolkit.models.model_file",
    "train": "toolkit.models.training",
    "predict": "toolkit.models.training",
    "explain": "toolkit.evaluation.api",
    "describe": "toolkit.evaluation.api",
    "write_report": "toolkit.reporting",
    # what those return or raise, for type hints and except clauses
    "Comparison": "toolkit.evaluation.report",
    "SavedModel": "toolkit.models.model_file",
    "FittedPipeline": "toolkit.models.pipeline",
    "SufficientStatistics": "toolkit.api",
    "RunFailed": "toolkit.evaluation.harness",
    "WorkerDied": "toolkit.evaluation.harness",
    "ComponentFailed": "toolkit.errors",
}

install_moved_module_aliases()

__all__ = [
    "__version__", "DISTRIBUTION", "hookimpl", "Capabilities",
    "ToolkitError", "DatasetError", "ArffFormatError", "UnknownComponentError", "ParameterError",
    "CapabilityError", "PluginError", "ModelFileError", "ResultsFileError", "ToolkitWarning",
    *_LAZY, "stats",
]


#: submodules reachable as attributes (``tk.stats.friedman(...)``), imported on first use
_LAZY_MODULES: dict[str, str] = {"stats": "toolkit.evaluation.stats"}


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        value = import_module(_LAZY_MODULES[name])
        globals()[name] = value
        return value
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolkit' has no attribute '{name}'")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
