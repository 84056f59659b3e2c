"""A Python function's source, parsed once, with node -> ``file:line:col`` mapping."""
from __future__ import annotations

import ast
import enum
import functools
import hashlib
import inspect
import os
import sys
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any

from ..errors import NKISyntaxError, SourceLoc

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CACHE: dict[Any, "FunctionSource"] = {}


@dataclass
class FunctionSource:
    """The parsed ``def`` of a Python function and the namespaces it reads."""

    fn: Any
    node: ast.FunctionDef
    file: str
    line_offset: int  # add to ast line numbers
    col_offset: int  # add to ast column offsets (dedent)
    globals: dict[str, Any]
    closure: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def of(fn: Any) -> "FunctionSource | None":
        """Parse ``fn``'s source (cached); None for functions without Python source."""
        code = getattr(fn, "__code__", None)
        if code is None:
            return None
        key = (code, id(getattr(fn, "__globals__", None)))
        if key in _CACHE:
            cached = _CACHE[key]
            cached.closure = _closure_vars(fn)
            return cached
        try:
            lines, start = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            return None
        raw = "".join(lines)
        text = textwrap.dedent(raw)
        indent = len(lines[0]) - len(lines[0].lstrip()) if text != raw else 0
        file = inspect.getsourcefile(fn) or code.co_filename
        try:
            tree = ast.parse(text)
        except SyntaxError as exc:
            raise NKISyntaxError(f"cannot parse the kernel source: {exc.msg}",
                                 SourceLoc(file, start + (exc.lineno or 1) - 1, (exc.offset or 0) + indent))
        node = tree.body[0]
        if isinstance(node, ast.AsyncFunctionDef):
            raise NKISyntaxError("async functions cannot be NKI kernels",
                                 SourceLoc(file, start + node.lineno - 1, node.col_offset + indent + 1))
        if not isinstance(node, ast.FunctionDef):
            return None
        src = FunctionSource(fn, node, file, start - 1, indent, getattr(fn, "__globals__", {}),
                             _closure_vars(fn))
        _CACHE[key] = src
        return src

    def loc(self, node: ast.AST) -> SourceLoc:
        line = getattr(node, "lineno", self.node.lineno) + self.line_offset
        col = getattr(node, "col_offset", 0) + self.col_offset + 1
        return SourceLoc(self.file, line, col)

    @functools.cached_property
    def is_user_code(self) -> bool:
        """True for functions outside nki-mlir and the standard library / site-packages."""
        return _is_user_file(self.file)


def _is_user_file(file: str) -> bool:
    """A source file outside nki-mlir and the standard library / site-packages."""
    if not file:
        return False
    f = os.path.abspath(file)
    if f.startswith(_PKG_DIR):
        return False
    return not any(f.startswith(p) for p in _std_prefixes())


def _closure_vars(fn: Any) -> dict[str, Any]:
    code = fn.__code__
    cells = fn.__closure__ or ()
    out = {}
    for name, cell in zip(code.co_freevars, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            pass
    return out


@functools.lru_cache(maxsize=1)
def _std_prefixes() -> tuple[str, ...]:
    import sysconfig
    paths = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return tuple(os.path.abspath(p) for p in paths if p) + (os.path.abspath(sys.prefix) + os.sep + "lib",)


_HASHES: dict[tuple[str, int, int], str] = {}


def file_hash(path: str) -> str:
    """SHA-256 of a source file's bytes ('' if unreadable).

    Memoised on (path, mtime, size): every kernel call computes its cache key, so an
    unchanged file is hashed once per process.
    """
    try:
        st = os.stat(path)
        key = (path, st.st_mtime_ns, st.st_size)
        if key not in _HASHES:
            with open(path, "rb") as fh:
                _HASHES[key] = hashlib.sha256(fh.read()).hexdigest()
        return _HASHES[key]
    except OSError:
        return ""


def referenced_values_digest(fn: Any) -> str:
    """SHA-256 over the data the kernel reads from its globals and closure at compile time.

    The source hash alone misses values computed at import or run time (a NumPy array
    passed to ``nl.shared_constant``, a tile size read from a config dict): the kernel's
    names (``co_names`` / ``co_freevars``, also those of user helper functions it calls)
    that hold arrays, numbers, strings, dtypes or containers of them are hashed by value.
    Modules, functions and NKI builtins are identified by the source hash already.
    """
    h = hashlib.sha256()
    seen: set[int] = set()
    memo: dict[int, int] = {}   # containers and objects already hashed (see _feed)

    def visit_fn(f: Any) -> None:
        code = getattr(f, "__code__", None)
        if code is None or id(code) in seen:
            return
        seen.add(id(code))
        src = FunctionSource.of(f)
        if src is None or not src.is_user_code:
            return
        # which function (helpers in other files too): rebinding a name to another function
        # of the same file changes the key
        h.update(f"fn {src.file} {file_hash(src.file)} {code.co_qualname} "
                 f"{code.co_firstlineno}".encode())
        env = {**getattr(f, "__globals__", {}), **_closure_vars(f)}
        for name in (*code.co_names, *code.co_freevars):
            if name in env:
                value = env[name]
                if callable(value) and hasattr(value, "__code__"):
                    visit_fn(value)
                else:
                    h.update(name.encode() + b"=")
                    _feed(h, value, 0, memo)

    visit_fn(getattr(fn, "__wrapped__", fn))
    return h.hexdigest()


def _feed(h: "hashlib._Hash", value: Any, depth: int, memo: dict[int, int] | None = None) -> None:
    """Hash ``value`` by content into ``h``.

    Containers and configuration objects are hashed once per digest: ``memo`` maps the id
    of each one already fed to its visit number, and a second reference to it (a shared
    sub-object, or a cycle back to an enclosing one) is hashed as ``@<number>``, like
    pickle's memo.  The encoding stays a faithful serialisation of the object graph, and
    its cost is linear in the graph's size (object graphs with cycles and shared
    sub-objects used to be walked once per path, up to depth 24).
    """
    import numpy as np
    if memo is None:
        memo = {}
    if depth > 24:   # too deep to hash by content: a key that never matches
        h.update(os.urandom(16))   # another, so a different value is never mistaken for it
    elif isinstance(value, np.ndarray):
        h.update(f"nd{value.dtype.str}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (bool, int, float, complex, str, bytes, np.generic, np.dtype, type(None))):
        h.update(repr(value).encode())
    elif isinstance(value, (tuple, list, dict)) or (
            hasattr(value, "__dict__") and not callable(value)
            and not isinstance(value, (types.ModuleType, type, enum.Enum))):
        if id(value) in memo:
            h.update(f"@{memo[id(value)]}".encode())
            return
        memo[id(value)] = len(memo)
        if isinstance(value, (tuple, list)):
            h.update(b"(")
            for v in value:
                _feed(h, v, depth + 1, memo)
            h.update(b")")
        elif isinstance(value, dict):
            _feed_items(h, value, depth, memo)
        else:  # a configuration object: its class and its (class and instance) attributes
            cls = type(value)
            h.update(f"obj {cls.__module__}.{cls.__qualname__}".encode())
            state = {k: v for k, v in vars(cls).items()
                     if not k.startswith("__") and not callable(v)
                     and not isinstance(v, (property, staticmethod, classmethod))}
            state.update(vars(value))
            _feed_items(h, state, depth, memo)
    elif isinstance(value, types.ModuleType):   # by name and source, never by its mutable state
        file = getattr(value, "__file__", None) or ""
        h.update(f"module {value.__name__} {file_hash(file) if _is_user_file(file) else ''}".encode())
    elif isinstance(value, type):
        file = getattr(sys.modules.get(value.__module__), "__file__", None) or ""
        h.update(f"class {value.__module__}.{value.__qualname__} "
                 f"{file_hash(file) if _is_user_file(file) else ''}".encode())
    elif isinstance(value, enum.Enum):
        h.update(f"enum {type(value).__module__}.{type(value).__qualname__}.{value.name}".encode())
    else:
        h.update(type(value).__qualname__.encode())


def _feed_items(h: "hashlib._Hash", d: dict, depth: int, memo: dict[int, int]) -> None:
    """A dict's items in ``repr(key)`` order (the dict itself is not memoised here: it may
    be a temporary whose id is reused)."""
    h.update(b"{")
    for k in sorted(d, key=repr):
        h.update(repr(k).encode())
        _feed(h, d[k], depth + 1, memo)
    h.update(b"}")


def value_digest(value: Any) -> str:
    """SHA-256 of a compile-time value by content (used for kernel-argument cache keys)."""
    h = hashlib.sha256()
    _feed(h, value, 0)
    return h.hexdigest()


def uses_beta1(fn: Any) -> bool:
    """Whether ``fn`` is written against NKI Beta 1: its module imported ``neuronxcc.nki``
    (any of its globals or closure values is a module of :mod:`nki_mlir.beta1`)."""
    import types
    spaces = [getattr(fn, "__globals__", {}), _closure_vars(fn)]
    for space in spaces:
        for v in space.values():
            if isinstance(v, types.ModuleType) and v.__name__.startswith("nki_mlir.beta1"):
                return True
    return False
