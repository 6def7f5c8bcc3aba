"""Static import rules of the source tree, checked by tests/test_layout.py (an AST walk, no imports run).

* Plugins: a module of ``plugins/<family>/`` may import its own family, the standard library, third-party
  packages, and the core's public modules (:data:`PUBLIC_CORE`); never another family and never a
  private core module. That is exactly what a third-party plugin can rely on.
* Core: the import graph of ``toolkit/`` (module-level and function-level imports; ``if TYPE_CHECKING``
  blocks excluded) has no cycle, and the data layer imports nothing above it (:data:`DATA_MAY_NOT_IMPORT`).
"""

from __future__ import annotations

import ast
from pathlib import Path

#: what a plugin, built-in or third-party, may import from the core (docs/plugins.md lists the same)
PUBLIC_CORE = frozenset({
    "toolkit", "toolkit.api", "toolkit.errors", "toolkit.cli", "toolkit.plotting", "toolkit.testing",
    "toolkit.data", "toolkit.data.arff", "toolkit.evaluation.ranking", "toolkit.evaluation.measures",
    "toolkit.evaluation.distributed",
})
#: packages the data layer (toolkit.data) must not import: data knows nothing of pipelines, the
#: plugin host, the harness or the command line
DATA_MAY_NOT_IMPORT = ("toolkit.api", "toolkit.models", "toolkit.plugin_host", "toolkit.evaluation",
                       "toolkit.cli", "toolkit.loading", "toolkit.testing")


def module_name(root: Path, path: Path, package: str) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([package, *parts]) if parts else package


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported_modules(path: Path, this_module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, dotted module) of every import in the file; ``from a import b`` gives ``a.b`` when b may
    be a submodule and ``a`` otherwise (both are returned: the caller decides what exists)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for sub in child.orelse:
                    visit_stmt(sub)
                continue
            visit_stmt(child)

    def visit_stmt(child: ast.AST) -> None:
        if isinstance(child, ast.Import):
            found.extend((child.lineno, alias.name) for alias in child.names)
        elif isinstance(child, ast.ImportFrom):
            if child.level:
                base = this_module.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (child.level - 1)]
                module = ".".join(base + ([child.module] if child.module else []))
            else:
                module = child.module or ""
            found.append((child.lineno, module))
            found.extend((child.lineno, f"{module}.{alias.name}") for alias in child.names)
        visit(child)

    visit(tree)
    return found


def _modules(root: Path, package: str) -> dict[str, Path]:
    return {module_name(root, p, package): p for p in sorted(root.rglob("*.py"))}


def plugin_violations(plugins_root: Path, core_modules: set[str]) -> list[str]:
    """Imports in ``plugins_root`` (laid out as ``toolkit.plugins``) that break the plugin rule."""
    problems = []
    for name, path in _modules(plugins_root, "toolkit.plugins").items():
        parts = name.split(".")
        family = parts[2] if len(parts) > 2 else None
        for line, target in imported_modules(path, name, path.name == "__init__.py"):
            where = f"{path.relative_to(plugins_root)}:{line}"
            if target.startswith("toolkit.plugins."):
                other = target.split(".")[2]
                if other != family and target.split(".")[2:3] != [""]:
                    problems.append(f"{where} imports {target}, of the family '{other}'")
            elif target == "toolkit.plugins":
                continue
            elif target == "toolkit" or target.startswith("toolkit."):
                if target in PUBLIC_CORE:
                    continue
                parent = target.rsplit(".", 1)[0]
                if target not in core_modules and parent in PUBLIC_CORE:
                    continue  # `from toolkit import Capabilities`: a name, not a module
                problems.append(f"{where} imports {target}, which is not part of the core's public API")
    return problems


def core_graph(core_root: Path) -> dict[str, set[str]]:
    """Module -> core modules it imports (names that are not modules resolve to their module)."""
    modules = _modules(core_root, "toolkit")
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges = set()
        for _line, target in imported_modules(path, name, path.name == "__init__.py"):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                edges.add(target)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def core_plugin_imports(core_root: Path) -> list[str]:
    """Imports of ``toolkit.plugins`` anywhere in the core: the core knows no plugin."""
    problems = []
    for name, path in _modules(core_root, "toolkit").items():
        for line, target in imported_modules(path, name, path.name == "__init__.py"):
            if target == "toolkit.plugins" or target.startswith("toolkit.plugins."):
                problems.append(f"{path.relative_to(core_root)}:{line} imports {target}")
    return sorted(set(problems))


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    problems = []
    for module, targets in sorted(graph.items()):
        if module == "toolkit.data" or module.startswith("toolkit.data."):
            for t in sorted(targets):
                if any(t == bad or t.startswith(bad + ".") for bad in DATA_MAY_NOT_IMPORT):
                    problems.append(f"{module} imports {t}")
    return problems
