"""Every public name and parameter of current NKI's API exists in nki-mlir.

The authority is AWS's API stubs of current NKI (``aws-neuron-sdk/nki/api/nki/``: every
public name, signature and docstring), read from the shared corpus when it is present;
the test skips, saying why, where it is not (a user's machine has no ``../shared``).
"""
from __future__ import annotations

import ast
import importlib
import inspect
import os

import pytest

import nki_mlir.compat

STUBS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "corpus",
                     "aws-neuron-sdk", "nki", "api", "nki")
MODULES = {"nki": "__init__.py", "nki.isa": "isa/__init__.py",
           "nki.language": "language/__init__.py", "nki.collectives": "collectives/__init__.py"}

pytestmark = pytest.mark.skipif(not os.path.isdir(STUBS),
                                reason="the shared corpus (AWS's NKI API stubs) is not present")


def _stub_names(path: str) -> dict[str, ast.AST]:
    tree = ast.parse(open(path).read())
    out: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
    return {k: v for k, v in out.items() if not k.startswith("_")}


def _params(fn_node: ast.FunctionDef) -> list[str]:
    a = fn_node.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    return [n for n in names if n != "self"]


def _cases():
    out = []
    for mod, rel in MODULES.items():
        path = os.path.join(STUBS, rel)
        if os.path.exists(path):
            for name, node in _stub_names(path).items():
                out.append((mod, name, node))
    return out


@pytest.fixture(scope="module", autouse=True)
def aliases():
    nki_mlir.compat.install()


def test_every_stub_module_imports():
    for mod in MODULES:
        importlib.import_module(mod)


@pytest.mark.parametrize("mod,name,node", _cases() or [("nki", "-", None)],
                         ids=[f"{m}.{n}" for m, n, _ in _cases()] or ["none"])
def test_name_and_parameters(mod, name, node):
    if node is None:
        pytest.skip("no stubs")
    m = importlib.import_module(mod)
    assert hasattr(m, name), f"{mod}.{name} is missing"
    if isinstance(node, ast.FunctionDef):
        obj = getattr(m, name)
        want = _params(node)
        sig = getattr(obj, "__signature__", None)
        if sig is None:
            try:
                sig = inspect.signature(obj)
            except (TypeError, ValueError):
                pytest.fail(f"{mod}.{name} has no inspectable signature")
        have = [p for p in sig.parameters if p not in ("self", "cg")]
        var = any(p.kind in (p.VAR_KEYWORD,) for p in sig.parameters.values())
        missing = [p for p in want if p not in have and not var]
        assert not missing, f"{mod}.{name}: parameters {missing} are missing (have {have})"
