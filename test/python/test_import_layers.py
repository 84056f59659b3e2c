"""Import layers of ``nki_mlir``, checked on an import graph built from every module's AST.

Every import counts: module-level ones, deferred (function-level) ones, those under
``if TYPE_CHECKING:`` and ``importlib.import_module`` / ``importlib.util.find_spec`` calls with
a literal (or ``f"{__package__}..."``) name.  ``from pkg import name`` is an import of the
submodule ``pkg.name`` when there is one, else of ``pkg``.  Checked:

- every module belongs to a layer (:data:`LAYERS`, longest matching prefix);
- a module imports modules of its own layer and of the layers its layer may read
  (:data:`MAY_IMPORT`): tools above the public API, the public API above the driver, the
  driver above the instruction definitions, those above the frontend, passes, perf and
  runtime, those above the dialects, and the dialects above the base modules (errors, dtypes,
  targets, ...);
- the import graph has no cycle (no strongly connected component of more than one module),
  leaving out only the package root's lazy accessor to ``nki_mlir.compat`` (:data:`ACCESSORS`);
- an ``import_module`` call whose argument is not a literal names its possible modules in
  :data:`DYNAMIC`, so no import hides from these checks.

The layer picture is drawn in ``docs/architecture.md``.
"""
from __future__ import annotations

import ast
import pathlib
import sys
from dataclasses import dataclass

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = "nki_mlir"

#: layer of a module: the entry with the longest prefix of its dotted name
LAYERS: dict[str, str] = {
    # command-line tools and autotuning: applications of the public API
    "nki_mlir.tools": "tools",
    "nki_mlir.autotune": "tools",
    # the public API: ``import nki_mlir as nki`` and the NKI / Beta 1 modules
    "nki_mlir": "api",
    "nki_mlir.language": "api",
    "nki_mlir.isa": "api",
    "nki_mlir.isa_constants": "api",
    "nki_mlir.typing": "api",
    "nki_mlir.beta1": "api",
    "nki_mlir.compat": "api",
    "nki_mlir.collectives": "api",
    # the driver: jit, kernel objects, the compile pipeline and cache, legacy entry points
    "nki_mlir.driver": "driver",
    "nki_mlir.compiler": "driver",
    "nki_mlir.kernel": "driver",
    "nki_mlir.entry": "driver",
    # the instruction definitions: one record per instruction, read into every stage below
    "nki_mlir.instructions": "instructions",
    # the stages
    "nki_mlir.frontend": "frontend",
    "nki_mlir.passes": "passes",
    "nki_mlir.perf": "perf",
    "nki_mlir.runtime": "runtime",
    "nki_mlir.dialects": "dialects",
    # leaf modules every layer may read
    "nki_mlir.errors": "base",
    "nki_mlir.diagnostics": "base",
    "nki_mlir.dtypes": "base",
    "nki_mlir.isa_names": "base",
    "nki_mlir.progress": "base",
    "nki_mlir.interop": "base",
    "nki_mlir.targets": "base",
    "nki_mlir.version": "base",
    "nki_mlir.options": "base",
    "nki_mlir.dialect_extensions": "base",
}

_BELOW_DRIVER = ["instructions", "frontend", "passes", "perf", "runtime", "dialects", "base"]
#: the layers each layer may import besides its own
MAY_IMPORT: dict[str, list[str]] = {
    "tools": ["api", "driver", *_BELOW_DRIVER],
    "api": ["driver", *_BELOW_DRIVER],
    "driver": _BELOW_DRIVER,
    "instructions": _BELOW_DRIVER[1:],
    "frontend": ["dialects", "base"],
    "passes": ["dialects", "base"],
    "perf": ["runtime", "dialects", "base"],
    "runtime": ["dialects", "base"],
    "dialects": ["base"],
    "base": [],
}

#: ``import_module(<expression>)`` calls: (module, argument source) -> the nki_mlir modules
#: the call may import
DYNAMIC: dict[tuple[str, str], list[str]] = {
    # ``compat.install``: the modules behind the ``nki`` / ``neuronxcc.nki`` aliases
    ("nki_mlir.compat", "target"): [
        "nki_mlir", "nki_mlir.language", "nki_mlir.isa", "nki_mlir.typing", "nki_mlir.isa_constants",
        "nki_mlir.dtypes", "nki_mlir.collectives", "nki_mlir.beta1", "nki_mlir.beta1.language",
        "nki_mlir.beta1.isa", "nki_mlir.beta1.compiler"],
    # ``nki_mlir.__getattr__``: the submodules loaded on first use (``_LAZY_MODULES``)
    ("nki_mlir", "f'.{name}'"): ["nki_mlir.language", "nki_mlir.isa", "nki_mlir.typing",
                                 "nki_mlir.collectives", "nki_mlir.compat"],
    # the autotuner's worker imports the user's kernel module
    ("nki_mlir.autotune.space", "ref.module"): [],
}

#: edges of the package root's lazy attribute accessor (``nki_mlir.__getattr__``) to a module
#: above it: ``nki_mlir.compat`` imports the root to alias it as ``nki``, and the root only
#: hands it to a user who writes ``nki_mlir.compat`` without importing it (no code of the
#: root uses it).  Left out of the cycle check, and only these.
ACCESSORS: set[tuple[str, str]] = {("nki_mlir", "nki_mlir.compat")}


@dataclass(frozen=True)
class Edge:
    src: str
    dst: str
    line: int


def _modules() -> dict[str, pathlib.Path]:
    mods = {}
    for path in sorted((ROOT / PKG).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


MODULES = _modules()
#: ``nki_mlir.instructions`` imports every module of the package (each holds definitions)
DYNAMIC[("nki_mlir.instructions", "f'{__name__}.{_m.name}'")] = sorted(
    m for m in MODULES if m.startswith("nki_mlir.instructions."))


def _owner(name: str) -> str | None:
    """The module ``name`` names, or the nearest enclosing package that exists."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _literal_name(node: ast.expr, package: str) -> str | None:
    """The module name of an ``import_module`` argument: a literal, or an f-string of
    literals and ``__package__`` / ``__name__`` (relative names resolved); else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        text = ""
        for part in node.values:
            if isinstance(part, ast.Constant):
                text += part.value
            elif (isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name)
                  and part.value.id in ("__package__", "__name__")):
                text += package
            else:
                return None
    else:
        return None
    if text.startswith("."):
        text = package + text
    return text


def _imports(mod: str, path: pathlib.Path) -> tuple[list[Edge], list[tuple[str, int]]]:
    """Edges from ``mod`` to the nki_mlir modules it imports, and the argument source and
    line of each ``import_module`` call whose target is not a literal."""
    tree = ast.parse(path.read_text(), str(path))
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    names: list[tuple[str, int]] = []
    dynamic: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for a in node.names:
                full = f"{base}.{a.name}"
                names.append((full if full in MODULES else base, node.lineno))
        elif isinstance(node, ast.Call):
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if fname in ("import_module", "find_spec", "__import__") and node.args:
                name = _literal_name(node.args[0], package)
                if name is None:
                    dynamic.append((ast.unparse(node.args[0]), node.lineno))
                else:
                    names.append((name, node.lineno))
    first: dict[str, int] = {}
    for name, line in names:
        if name.split(".")[0] != PKG:
            continue
        dst = _owner(name)
        if dst is not None and dst != mod:
            first[dst] = min(line, first.get(dst, line))
    return [Edge(mod, dst, line) for dst, line in sorted(first.items())], dynamic


def _graph() -> tuple[dict[str, list[Edge]], dict[str, list[tuple[str, int]]]]:
    graph, dynamic = {}, {}
    for mod, path in MODULES.items():
        edges, dyn = _imports(mod, path)
        for arg, line in dyn:
            edges += [Edge(mod, d, line) for d in DYNAMIC.get((mod, arg), [])]
        graph[mod] = edges
        if dyn:
            dynamic[mod] = dyn
    return graph, dynamic


GRAPH, DYNAMIC_FOUND = _graph()


def layer_of(mod: str) -> str | None:
    best = None
    for prefix in LAYERS:
        if (mod == prefix or mod.startswith(prefix + ".")) and (best is None or len(prefix) > len(best)):
            best = prefix
    return LAYERS[best] if best is not None else None


def cycles(graph: dict[str, list[Edge]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for e in it:
                w = e.dst
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(comp)
    return found


def _describe(comp: set[str]) -> str:
    inner = [f"  {e.src}:{e.line} -> {e.dst}" for m in sorted(comp) for e in GRAPH[m] if e.dst in comp]
    return f"{len(comp)} modules:\n" + "\n".join(inner)


def test_every_module_has_a_layer():
    missing = [m for m in MODULES if layer_of(m) is None]
    assert not missing, f"modules outside every layer (add them to LAYERS): {missing}"


def test_dynamic_imports_are_declared():
    found = {(m, arg) for m, calls in DYNAMIC_FOUND.items() for arg, _ in calls}
    undeclared = sorted(found - set(DYNAMIC))
    assert not undeclared, f"import_module calls with a computed name (declare them in DYNAMIC): {undeclared}"
    stale = sorted(set(DYNAMIC) - found)
    assert not stale, f"DYNAMIC entries with no such call: {stale}"


def layer_violations() -> dict[tuple[str, str], Edge]:
    bad = {}
    for mod, edges in GRAPH.items():
        src = layer_of(mod)
        for e in edges:
            dst = layer_of(e.dst)
            if dst != src and dst not in MAY_IMPORT[src]:
                bad.setdefault((e.src, e.dst), e)
    return bad


def test_layers_import_one_way():
    bad = [f"  {e.src}:{e.line} ({layer_of(e.src)}) -> {e.dst} ({layer_of(e.dst)})"
           for _, e in sorted(layer_violations().items())]
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_no_import_cycles():
    found = cycles({m: [e for e in edges if (e.src, e.dst) not in ACCESSORS]
                    for m, edges in GRAPH.items()})
    assert not found, "import cycles:\n" + "\n".join(_describe(c) for c in found)


def test_the_graph_is_the_package():
    """The graph holds every module and the imports that make the package work (a checker
    that found no edges would pass the tests above vacuously)."""
    assert len(GRAPH) == len(MODULES) > 100
    assert any(e.dst == "nki_mlir.driver.compile" for e in GRAPH["nki_mlir.driver.jit"])
    assert any(e.dst == "nki_mlir.dialects.effects" for e in GRAPH["nki_mlir.runtime.queues"])
    assert sum(len(edges) for edges in GRAPH.values()) > 500


def test_the_checker_sees_deferred_and_dynamic_imports(tmp_path):
    """The graph builder finds a function-level import, a TYPE_CHECKING import and an
    ``import_module`` of ``f"{__package__}.x"``, and the cycle finder the cycle they make."""
    src = tmp_path / "m.py"
    src.write_text("from typing import TYPE_CHECKING\n"
                   "if TYPE_CHECKING:\n    from nki_mlir import errors\n"
                   "def f():\n    from .runtime import cache\n"
                   "    import importlib\n    return importlib.import_module(f'{__package__}.perf')\n")
    edges, dyn = _imports("nki_mlir.fake", src)
    assert {e.dst for e in edges} == {"nki_mlir.errors", "nki_mlir.runtime.cache", "nki_mlir.perf"}
    assert dyn == []
    src.write_text("import importlib\nm = importlib.import_module(name)\n")
    assert _imports("nki_mlir.fake", src) == ([], [("name", 2)])
    g = {"a": [Edge("a", "b", 1)], "b": [Edge("b", "c", 1)], "c": [Edge("c", "a", 1)], "d": []}
    assert cycles(g) == [{"a", "b", "c"}]


if __name__ == "__main__":   # print the cycles and violations
    for comp in cycles(GRAPH):
        print(_describe(comp))
    for (s, d), e in sorted(layer_violations().items()):
        print(f"{s}:{e.line} ({layer_of(s)}) -> {d} ({layer_of(d)})")
    sys.exit(pytest.main([__file__, "-q"]))
