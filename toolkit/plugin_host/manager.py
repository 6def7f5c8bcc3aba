"""The plugin manager: loads every plugin, one at a time, and builds the component registry.

Plugins come from the entry-point group ``toolkit.plugins`` (the built-ins are declared there
too, in our own pyproject.toml), then from modules named in ``TOOLKIT_PLUGINS`` and ``*.py`` files
of a plugins folder. A plugin that fails to import is recorded, reported once as a warning naming
its distribution, and skipped; ``TOOLKIT_STRICT_PLUGINS=1`` raises instead.

Switches, read at load time: ``TOOLKIT_DISABLE_PLUGIN_AUTOLOAD`` (no third-party entry points),
``TOOLKIT_LOAD_PLUGINS=dist,...`` (only these distributions), ``TOOLKIT_BLOCK_PLUGINS=name,...``,
``TOOLKIT_STRICT_PLUGINS``, ``TOOLKIT_TRACE_PLUGINS``.

This module imports no numpy: ``toolkit --help`` stays fast.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pluggy

from toolkit.plugin_host import hookspecs
from toolkit.config import env_flag, env_list
from toolkit.errors import PluginError, PluginLoadError, warn
from toolkit.plugin_host.registry import KINDS, Registry

__all__ = ["BUILTIN_PLUGINS", "ENTRY_POINT_GROUP", "PluginInfo", "FailedPlugin", "PluginManager",
           "get_plugin_manager", "default_manager", "reset_default_manager"]

ENTRY_POINT_GROUP = "toolkit.plugins"
OWN_DISTRIBUTION = "arff-toolkit"

#: Built-in plugins: entry-point name -> module. The same list is declared in pyproject.toml
#: (a test keeps them equal). Used when no distribution metadata is installed (a bare source
#: tree), and as a guard so that switching autoload off never drops a built-in.
BUILTIN_PLUGINS: dict[str, str] = {
    "arff": "toolkit.plugins.arff",
    "naive-bayes": "toolkit.plugins.naive_bayes",
    "text": "toolkit.plugins.text",
    "linear": "toolkit.plugins.linear",
    "ots": "toolkit.plugins.ots",
    "metrics": "toolkit.plugins.metrics",
    "csv": "toolkit.plugins.csv",
    "libsvm": "toolkit.plugins.libsvm",
}


@dataclass
class PluginInfo:
    """A plugin that loaded."""

    name: str
    module: str
    distribution: str | None
    version: str | None
    builtin: bool
    source: str  # "entry-point", "builtin", "env", "dir"
    hooks: list[str] = field(default_factory=list)


@dataclass
class FailedPlugin:
    """A plugin that did not load, with the reason."""

    name: str
    target: str
    distribution: str | None
    version: str | None
    error: str


class PluginManager:
    """pluggy's manager plus what the toolkit records about each plugin, and the registry."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.plugins: dict[str, PluginInfo] = {}
        self.failed: list[FailedPlugin] = []
        self._registry: Registry | None = None

    @property
    def hook(self) -> Any:
        return self.pm.hook

    # ------------------------------------------------------------------ loading
    def register(self, plugin: Any, name: str, *, distribution: str | None = None,
                 version: str | None = None, builtin: bool = False, source: str = "object") -> None:
        """Register a plugin object or module under ``name``; blocked names are skipped."""
        if self.pm.is_blocked(name):
            return
        if self.pm.is_registered(plugin):
            return
        self.pm.register(plugin, name=name)
        hooks = sorted(h.name for h in (self.pm.get_hookcallers(plugin) or []))
        module = getattr(plugin, "__name__", type(plugin).__name__)
        self.plugins[name] = PluginInfo(name, module, distribution, version, builtin, source, hooks)
        self._registry = None

    def _fail(self, name: str, target: str, distribution: str | None, version: str | None,
              exc: BaseException) -> None:
        if env_flag("TOOLKIT_STRICT_PLUGINS"):
            raise PluginLoadError(name, distribution, exc) from exc
        record = FailedPlugin(name, target, distribution, version, f"{type(exc).__name__}: {exc}")
        self.failed.append(record)
        dist = f"{distribution} {version}" if distribution else "(no distribution)"
        warn(f"plugin {dist} (entry point '{name}') failed to import: {record.error}; it is disabled. "
             f"Set TOOLKIT_STRICT_PLUGINS=1 to raise.")

    def load_entry_points(self, autoload: bool = True) -> None:
        only = env_list("TOOLKIT_LOAD_PLUGINS")
        no_autoload = not autoload or env_flag("TOOLKIT_DISABLE_PLUGIN_AUTOLOAD")
        for ep in _entry_points():
            dist = ep.dist.name if ep.dist is not None else None
            version = ep.dist.version if ep.dist is not None else None
            builtin = _normal(dist) == OWN_DISTRIBUTION and ep.name in BUILTIN_PLUGINS
            if not builtin:
                if no_autoload:
                    continue
                if only is not None and _normal(dist) not in {_normal(d) for d in only}:
                    continue
            if self.pm.is_blocked(ep.name) or (dist and self.pm.is_blocked(dist)):
                continue
            if ep.name in self.plugins:
                continue
            try:
                plugin = ep.load()
                self.register(plugin, ep.name, distribution=dist, version=version, builtin=builtin,
                              source="entry-point")
            except (Exception, SystemExit) as exc:  # a broken plugin must not stop the host (nor its sys.exit)
                self._fail(ep.name, ep.value, dist, version, exc)

    def load_builtins(self) -> None:
        """Import any built-in not already loaded through its entry point."""
        from toolkit import __version__

        for name, module in BUILTIN_PLUGINS.items():
            if name in self.plugins or self.pm.is_blocked(name):
                continue
            try:
                plugin = importlib.import_module(module)
                self.register(plugin, name, distribution=OWN_DISTRIBUTION, version=__version__,
                              builtin=True, source="builtin")
            except (Exception, SystemExit) as exc:
                self._fail(name, module, OWN_DISTRIBUTION, __version__, exc)

    def load_env_modules(self) -> None:
        for module in env_list("TOOLKIT_PLUGINS") or []:
            try:
                plugin = importlib.import_module(module)
                self.register(plugin, module, source="env")
            except (Exception, SystemExit) as exc:
                self._fail(module, module, None, None, exc)

    def load_directory(self, folder: str | Path) -> None:
        """Load every ``*.py`` file of ``folder`` as a one-off plugin."""
        for path in sorted(Path(folder).glob("*.py")):
            name = f"plugins-dir:{path.stem}"
            try:
                spec = importlib.util.spec_from_file_location(f"toolkit_plugins_dir_{path.stem}", path)
                assert spec is not None and spec.loader is not None
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                self.register(module, name, source="dir")
            except (Exception, SystemExit) as exc:
                self._fail(name, str(path), None, None, exc)

    # ------------------------------------------------------------------ registry
    @property
    def registry(self) -> Registry:
        """Components of all loaded plugins; built on first use (the register hooks run then)."""
        if self._registry is None:
            self._registry = self._build_registry()
        return self._registry

    def _build_registry(self) -> Registry:
        """Every plugin's components, the built-ins first (so that a name a third-party plugin takes again is
        its clash, not theirs). A third-party plugin that fails in a register hook (an exception, a name
        registered twice) is disabled and recorded with the others that failed: its components are
        forgotten and the rest of the toolkit works (TOOLKIT_STRICT_PLUGINS=1 raises instead)."""
        registry = Registry()
        broken: set[str] = set()
        for kind, (hook_name, _human, _plural) in KINDS.items():
            caller = getattr(self.pm.hook, hook_name)
            impls = sorted(caller.get_hookimpls(), key=lambda i: not self._is_builtin(i.plugin_name))
            if env_flag("TOOLKIT_TRACE_PLUGINS"):  # called one by one below, not through pluggy's monitored caller
                print(f"[toolkit] hook {hook_name} -> {[i.plugin_name for i in impls]}", file=sys.stderr)
            for impl in impls:
                if impl.plugin_name in broken:
                    continue
                info = self.plugins.get(impl.plugin_name)
                dist = None
                if info is not None and info.distribution:
                    dist = f"{info.distribution} {info.version}" if info.version else info.distribution
                register = registry.register_callable(kind, impl.plugin_name, dist)
                args = {name: register for name in impl.argnames}
                try:
                    impl.function(**args)
                except Exception as exc:
                    text = str(exc) if isinstance(exc, PluginError) else f"{type(exc).__name__}: {exc}"
                    error = PluginError(f"plugin '{impl.plugin_name}' failed in {hook_name}: {text}")
                    if self._is_builtin(impl.plugin_name) or env_flag("TOOLKIT_STRICT_PLUGINS"):
                        raise error from exc
                    registry.remove_plugin(impl.plugin_name)
                    broken.add(impl.plugin_name)
                    self._disable(impl.plugin_name, f"failed in {hook_name}: {text}")
        return registry

    def _is_builtin(self, plugin_name: str) -> bool:
        info = self.plugins.get(plugin_name)
        return bool(info is not None and info.builtin)

    def _disable(self, plugin_name: str, why: str) -> None:
        """Unregister a loaded plugin that cannot work, record it among the failed ones and warn."""
        info = self.plugins.pop(plugin_name, None)
        plugin = self.pm.get_plugin(plugin_name)
        if plugin is not None:
            self.pm.unregister(plugin)
        self.failed.append(FailedPlugin(plugin_name, info.module if info else plugin_name,
                                        info.distribution if info else None, info.version if info else None, why))
        dist = f"{info.distribution} {info.version}" if info and info.distribution else "(no distribution)"
        warn(f"plugin {dist} ('{plugin_name}') {why}; it is disabled. Set TOOLKIT_STRICT_PLUGINS=1 to raise.")

    def check_pending(self) -> None:
        """A plugin implementing a hook the toolkit does not have (a misspelled name) is disabled and recorded,
        not fatal: --help and ``toolkit plugins`` must work whatever is installed (strict mode raises)."""
        unknown: dict[str, list[str]] = {}
        for name in list(self.pm.hook.__dict__):
            if name.startswith("_"):
                continue
            caller = getattr(self.pm.hook, name)
            if not hasattr(caller, "has_spec") or caller.has_spec():
                continue
            for impl in caller.get_hookimpls():
                if not impl.optionalhook:
                    unknown.setdefault(impl.plugin_name, []).append(name)
        for plugin_name, hooks in unknown.items():
            why = (f"implements {', '.join(sorted(hooks))}, which is no hook of the toolkit (a misspelled name? "
                   f"docs/plugin-hooks.md lists the hooks)")
            if env_flag("TOOLKIT_STRICT_PLUGINS") or self._is_builtin(plugin_name):
                raise PluginError(f"plugin '{plugin_name}' {why}")
            self._disable(plugin_name, why)
        try:
            self.pm.check_pending()
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"a plugin implements an unknown hook: {exc}") from None


def _normal(name: str | None) -> str:
    return (name or "").lower().replace("_", "-")


def _entry_points() -> Iterable[importlib.metadata.EntryPoint]:
    return importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)


def get_plugin_manager(autoload: bool = True, plugins_dir: str | Path | None = None,
                       block: Iterable[str] = ()) -> PluginManager:
    """A fresh, fully loaded plugin manager (tests build their own; the CLI uses the default)."""
    manager = PluginManager()
    if env_flag("TOOLKIT_TRACE_PLUGINS"):  # before loading, so that the register hooks are traced too
        def before(hook_name: str, impls: Any, kwargs: Any) -> None:
            print(f"[toolkit] hook {hook_name} -> {[i.plugin_name for i in impls]}", file=sys.stderr)

        def after(outcome: Any, hook_name: str, impls: Any, kwargs: Any) -> None:
            pass

        manager.pm.add_hookcall_monitoring(before, after)
    blocked = list(block) + (env_list("TOOLKIT_BLOCK_PLUGINS") or [])
    for name in blocked:
        manager.pm.set_blocked(name)
    manager.load_entry_points(autoload=autoload)
    manager.load_builtins()
    manager.load_env_modules()
    if plugins_dir is not None:
        manager.load_directory(plugins_dir)
    manager.check_pending()
    if blocked:
        _warn_unknown_blocked(blocked, plugins_dir)
    return manager


def _warn_unknown_blocked(blocked: Iterable[str], plugins_dir: str | Path | None) -> None:
    """A --block name that no plugin has blocks nothing: a typo would leave the plugin running unnoticed."""
    known = set(BUILTIN_PLUGINS) | set(env_list("TOOLKIT_PLUGINS") or [])
    for ep in _entry_points():
        known.add(ep.name)
        if ep.dist is not None:
            known.update({ep.dist.name, _normal(ep.dist.name)})
    if plugins_dir is not None:
        known.update(f"plugins-dir:{p.stem}" for p in Path(plugins_dir).glob("*.py"))
    for name in blocked:
        if name not in known and _normal(name) not in known:
            warn(f"--block {name}: no plugin has that name, so nothing is blocked (`toolkit plugins` lists them)")


_default: PluginManager | None = None


def default_manager() -> PluginManager:
    """The process-wide manager used by the Python API and the CLI."""
    global _default
    if _default is None:
        _default = get_plugin_manager()
    return _default


def reset_default_manager(manager: PluginManager | None = None) -> None:
    """Replace (or drop) the process-wide manager; tests and ``--plugins-dir`` use this."""
    global _default
    _default = manager
