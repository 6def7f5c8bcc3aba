"""Old module paths of the core, kept importable after the modules were grouped into packages.

``import toolkit.pipeline`` (or ``from toolkit.sklearn_adapter import estimator``) still works: a
meta-path finder answers for the old name with the module at its new place, so both names are the
same module object (isinstance checks and module state agree). New code should use the new paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any

__all__ = ["MOVED_MODULES", "install_moved_module_aliases"]

#: old dotted name -> new dotted name (the layout of version 0.2)
MOVED_MODULES: dict[str, str] = {
    "toolkit.hookspecs": "toolkit.plugin_host.hookspecs",
    "toolkit.manager": "toolkit.plugin_host.manager",
    "toolkit.registry": "toolkit.plugin_host.registry",
    "toolkit.capabilities": "toolkit.plugin_host.capabilities",
    "toolkit.components": "toolkit.plugin_host.components",
    "toolkit.pipeline": "toolkit.models.pipeline",
    "toolkit.training": "toolkit.models.training",
    "toolkit.modelio": "toolkit.models.model_file",
    "toolkit.sklearn_adapter": "toolkit.models.sklearn_adapter",
}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec: Any) -> ModuleType:
        module = importlib.import_module(self.target)
        sys.modules[spec.name] = module
        return module

    def exec_module(self, module: ModuleType) -> None:  # already executed under its new name
        return None


class _MovedModuleFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        new = MOVED_MODULES.get(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(new))


def install_moved_module_aliases() -> None:
    """Install the finder once per process."""
    if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedModuleFinder())
