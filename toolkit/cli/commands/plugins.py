"""``toolkit plugins``: installed plugins, their hooks, components and failures."""

from __future__ import annotations

import json
from typing import Any

import typer

from toolkit.cli.output import out

__all__ = ["register", "plugins_data"]


def plugins_data(show_all: bool = False, hooks: list[str] | None = None) -> dict[str, Any]:
    """The plugin listing as data (the CLI formats it)."""
    from toolkit.plugin_host.manager import default_manager

    manager = default_manager()
    registry = manager.registry
    entries = []
    for info in manager.plugins.values():
        if info.builtin and not show_all:
            continue
        if hooks and not set(hooks) & set(info.hooks):
            continue
        entries.append({
            "name": info.name,
            "distribution": info.distribution,
            "version": info.version,
            "module": info.module,
            "builtin": info.builtin,
            "source": info.source,
            "hooks": info.hooks,
            "components": registry.by_plugin(info.name),
        })
    failed = [{"name": f.name, "target": f.target, "distribution": f.distribution, "version": f.version,
               "error": f.error} for f in manager.failed]
    return {"schema": "toolkit.plugins/1", "plugins": entries, "failed": failed}


def plugins(
    show_all: bool = typer.Option(False, "--all", help="Include the built-in plugins."),
    hook: list[str] = typer.Option([], "--hook", help="Only plugins implementing this hook (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="One JSON document on stdout."),
) -> None:
    """Installed plugins: distribution, version, hooks, components; failed ones with the reason."""
    from toolkit.errors import ParameterError
    from toolkit.plugin_host import hookspecs

    known = sorted(n for n, f in vars(hookspecs).items() if hasattr(f, f"{hookspecs.PROJECT_NAME}_spec"))
    for name in hook:
        if name not in known:
            raise ParameterError(f"--hook {name}: no such hook (the hooks are {', '.join(known)})")
    data = plugins_data(show_all, hook)
    if as_json:
        out(json.dumps(data, indent=2))
        return
    if not data["plugins"]:
        out("no third-party plugin loaded" + (f" ({len(data['failed'])} failed, below)" if data["failed"] else "")
            + " (--all shows the built-ins)")
    for p in data["plugins"]:
        dist = f"{p['distribution']} {p['version'] or ''}".strip() if p["distribution"] else "(no distribution)"
        out(f"{p['name']}  [{dist}]{'  built-in' if p['builtin'] else ''}")
        out(f"  hooks: {', '.join(p['hooks'])}")
        for kind, names in p["components"].items():
            out(f"  {kind}: {', '.join(names)}")
    for f in data["failed"]:
        out(f"FAILED {f['name']}  [{f['distribution'] or 'no distribution'}]: {f['error']}")


def register(app: typer.Typer) -> None:
    app.command("plugins")(plugins)
