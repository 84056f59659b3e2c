"""Let the tracer see every loop of a kernel: its ``for`` / ``while`` statements are rewritten.

``for T in ITER: BODY`` becomes ``for T in __nki_loop__(ITER, key, can_roll, carried,
targets, names): BODY`` (a loop that may stay rolled inside a ``try`` that can run it again in
place, :func:`retrying_for`) and ``while TEST:`` becomes ``while __nki_while__(TEST, key, can_roll):``
(AutoGraph's idea, reduced to the one decision we need: see :mod:`.loops`); ``isinstance(a,
b)`` becomes ``__nki_isinstance__(a, b)`` (a loop index is an ``int``: :mod:`.py_builtins`).  Everything
else is the kernel's own code, compiled from its own source with its own file name, line
numbers and columns, run with its own globals and closure cells.

The static facts passed along per loop:

- ``key``: ``file:line:col`` of the ``for`` (one decision per source loop);
- ``can_roll``: no ``break`` at this loop's level, no ``return`` / ``yield`` in the body;
- ``carried``: names the body may read before it writes them and also writes (candidates
  for loop-carried Python values, checked at trace time);
- ``targets``: the names the ``for`` target binds;
- ``names``: every name the body mentions (the variables whose objects the rolled loop's
  check fingerprints, :func:`.loops.watched`), or None (every local variable) when the body
  calls ``locals``, ``vars``, ``eval`` or ``exec``.
"""
from __future__ import annotations

import ast
import copy
import types
from typing import Any

from .reachable import reachable_functions
from .source import FunctionSource

_HELPERS = ("__nki_loop__", "__nki_while__", "__nki_annotated__", "__nki_pow__", "__nki_lshift__",
            "__nki_isinstance__", "__nki_may_retry__", "__nki_retry__", "__nki_missing__",
            "__nki_fstr__")
_GUARDED = {ast.Pow: "__nki_pow__", ast.LShift: "__nki_lshift__"}   # see .guards
_CODE_CACHE: dict[Any, types.CodeType | None] = {}


def traced_function(fn: Any) -> Any:
    """``fn`` with its loops rewritten for the tracer (``fn`` itself if it has no source)."""
    code = getattr(fn, "__code__", None)
    if code is None or code in _REWRITTEN:     # (a helper :func:`rewrite_helpers` swapped)
        return fn
    key = (code, id(getattr(fn, "__globals__", None)))
    if key not in _CODE_CACHE:
        _CODE_CACHE[key] = _rewrite(fn)
    inner = _CODE_CACHE[key]
    if inner is None:
        return fn
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    helpers = {name: types.CellType(f) for name, f in _helper_functions().items()}
    closure = tuple(cells[n] if n in cells else helpers[n] for n in inner.co_freevars)
    new = types.FunctionType(inner, fn.__globals__, fn.__name__, fn.__defaults__, closure or None)
    new.__kwdefaults__ = getattr(fn, "__kwdefaults__", None)
    return new


def _helper_functions() -> dict[str, Any]:
    """What the rewritten code calls, by the names in ``_HELPERS``."""
    from .beta1.trace import check_annotation
    from .guards import nki_lshift, nki_pow
    from .loop_retry import MISSING, may_retry, retry
    from .loops import nki_loop, nki_while
    from .py_builtins import nki_isinstance
    from .symbolic_str import nki_fstr
    return {"__nki_fstr__": nki_fstr, "__nki_loop__": nki_loop, "__nki_while__": nki_while,
            "__nki_annotated__": check_annotation, "__nki_pow__": nki_pow,
            "__nki_lshift__": nki_lshift, "__nki_isinstance__": nki_isinstance,
            "__nki_may_retry__": may_retry, "__nki_retry__": retry, "__nki_missing__": MISSING}


# ------------------------------------------------------------- helper functions
_HELPER_CACHE: dict[types.CodeType, types.CodeType | None] = {}
#: the rewritten codes of :data:`_HELPER_CACHE`: a function running one already has its loops
#: rewritten (a sub-kernel's function, swapped by :func:`rewrite_helpers`, then called inline)
_REWRITTEN: set[types.CodeType] = set()


def rewrite_helpers(kernel: Any) -> list[tuple[Any, types.CodeType]]:
    """Give the user functions the kernel can reach (:func:`.reachable.reachable_functions`:
    helpers in its module and in helper modules, methods of user classes, sub-kernels)
    rewritten loops for the duration of a trace, by swapping their ``__code__``; returns
    what :func:`restore_helpers` puts back.

    Only functions whose code has a ``for`` loop or calls ``isinstance`` are rewritten
    (``isinstance(a, b)`` -> ``__nki_isinstance__(a, b)``, :mod:`.py_builtins`); their loop helpers are
    reached as module globals (``__nki_loop__``), so the free variables, and so the closure,
    stay those of the original.  A function whose source cannot be read keeps its code
    (its loops run as Python loops: unrolled, still exact).
    """
    swaps: list[tuple[Any, types.CodeType]] = []
    helpers = _helper_functions()
    for fn in reachable_functions(kernel):
        new = _HELPER_CACHE.get(fn.__code__, _MISSING)
        if new is _MISSING:
            new = _HELPER_CACHE[fn.__code__] = _rewrite(fn, inject=False)
            if new is not None:
                _REWRITTEN.add(new)
        if new is None or new.co_freevars != fn.__code__.co_freevars:
            continue
        g = fn.__globals__
        for name, f in helpers.items():
            g.setdefault(name, f)
        swaps.append((fn, fn.__code__))
        fn.__code__ = new
    return swaps


def restore_helpers(swaps: list[tuple[Any, types.CodeType]]) -> None:
    for fn, code in reversed(swaps):
        fn.__code__ = code


_MISSING: Any = object()


def _rewrite(fn: Any, inject: bool = True) -> types.CodeType | None:
    """The code of ``fn`` with its loops rewritten; the loop helpers are free variables
    (``inject``: for the kernel's own fresh function) or module globals (helpers).

    A rolled loop's in-place retry (:func:`retrying_for`) nests its ``for`` in a ``while``
    and a ``try``: a function whose loops nest deeply enough then passes CPython's limit of
    20 statically nested blocks.  Its loops are then rewritten without that wrapper (a loop
    that cannot stay rolled retraces the whole kernel instead: slower, same result)."""
    src = FunctionSource.of(fn)
    if src is None:
        return None
    try:
        return _rewritten(fn, src, inject, retrying=True)
    except SyntaxError as e:
        if "nested blocks" not in str(e.msg):
            raise
        return _rewritten(fn, src, inject, retrying=False)


def _rewritten(fn: Any, src: FunctionSource, inject: bool, retrying: bool) -> types.CodeType:
    node = copy.deepcopy(src.node)
    node.decorator_list = []
    for n in ast.walk(node):
        if hasattr(n, "lineno"):
            n.lineno += src.line_offset
            n.end_lineno = (n.end_lineno or n.lineno - src.line_offset) + src.line_offset
            n.col_offset += src.col_offset
            if n.end_col_offset is not None:
                n.end_col_offset += src.col_offset
    _Rewriter(src.file, retrying).visit(node)
    params = [ast.arg(arg=n) for n in (*fn.__code__.co_freevars, *(_HELPERS if inject else ()))]
    outer = ast.FunctionDef(
        name="__nki_outer__", args=ast.arguments(posonlyargs=[], args=params, vararg=None,
                                                 kwonlyargs=[], kw_defaults=[], kwarg=None,
                                                 defaults=[]),
        body=[node, ast.Return(ast.Name(node.name, ast.Load()))], decorator_list=[], returns=None,
        type_comment=None)
    ast.copy_location(outer, node)
    module = ast.Module(body=[outer], type_ignores=[])
    ast.fix_missing_locations(module)
    top = compile(module, src.file, "exec")
    outer_code = next(c for c in top.co_consts if isinstance(c, types.CodeType))
    return next(c for c in outer_code.co_consts
                if isinstance(c, types.CodeType) and c.co_name == node.name)


#: builtins through which a loop body can reach a local variable it does not name
_REACH_ANY_LOCAL = frozenset(("locals", "vars", "eval", "exec"))


class _Rewriter(ast.NodeTransformer):
    def __init__(self, file: str, retrying: bool = True):
        self.file = file
        self.retrying = retrying    # rolled loops in a retrying_for (else plain, see _rewrite)

    def _key(self, node: ast.AST) -> str:
        return f"{self.file}:{node.lineno}:{node.col_offset + 1}"

    def visit_For(self, node: ast.For) -> ast.For | list[ast.stmt]:
        # the static facts of the kernel's own body, before its inner loops are rewritten
        targets = tuple(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
        carried = tuple(sorted(_carried(node.body) - set(targets)))
        can_roll = _can_roll(node.body)
        names = bound_names(node.body)
        mentioned = {n.id for s in node.body for n in ast.walk(s) if isinstance(n, ast.Name)}
        # (a body calling locals() / vars() / eval / exec may reach any local: all watched)
        watched = None if mentioned & _REACH_ANY_LOCAL else tuple(sorted(mentioned))
        self.generic_visit(node)
        args = [node.iter, ast.Constant(self._key(node)), ast.Constant(can_roll),
                ast.Constant(carried), ast.Constant(targets), ast.Constant(watched)]
        call = ast.copy_location(ast.Call(ast.Name("__nki_loop__", ast.Load()), args, []), node.iter)
        if not (self.retrying and can_roll and isinstance(node.target, ast.Name)):
            node.iter = call        # not run again in place (a failed roll retraces the kernel)
            return node
        return retrying_for(node, call, names)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AnnAssign:
        """``x: nt.tensor[...] = v`` -> ``x: ... = __nki_annotated__(v, <annotation>, "x")``
        (Python never evaluates a local variable's annotation)."""
        self.generic_visit(node)
        if node.value is not None and isinstance(node.target, ast.Name):
            call = ast.Call(ast.Name("__nki_annotated__", ast.Load()),
                            [node.value, copy.deepcopy(node.annotation), ast.Constant(node.target.id)], [])
            node.value = ast.copy_location(call, node.value)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        """``a ** b`` / ``a << b`` -> a guarded call (:mod:`.guards`)."""
        self.generic_visit(node)
        name = _GUARDED.get(type(node.op))
        if name is None:
            return node
        return ast.copy_location(ast.Call(ast.Name(name, ast.Load()), [node.left, node.right], []), node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        """``x **= b`` / ``x <<= b`` on a plain name -> ``x = <guarded call>``."""
        self.generic_visit(node)
        name = _GUARDED.get(type(node.op))
        if name is None or not isinstance(node.target, ast.Name):
            return node
        call = ast.Call(ast.Name(name, ast.Load()), [ast.Name(node.target.id, ast.Load()), node.value], [])
        return ast.copy_location(ast.Assign([node.target], ast.copy_location(call, node)), node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        """``isinstance(a, b)`` -> ``__nki_isinstance__(a, b)`` (:mod:`.py_builtins`)."""
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id == "isinstance" and len(node.args) == 2 \
                and not node.keywords:
            node.func = ast.copy_location(ast.Name("__nki_isinstance__", ast.Load()), f)
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        """``f"a{x!r:>4}"`` -> ``__nki_fstr__("a", (x, 114, ">4", "x"))``
        (:mod:`.symbolic_str`)."""
        self.generic_visit(node)
        if not any(isinstance(v, ast.FormattedValue) for v in node.values):
            return node
        args: list[ast.expr] = []
        for v in node.values:
            if not isinstance(v, ast.FormattedValue):
                args.append(v)
                continue
            spec = v.format_spec if v.format_spec is not None else ast.Constant(None)
            args.append(ast.copy_location(ast.Tuple(
                [v.value, ast.Constant(v.conversion), spec, ast.Constant(ast.unparse(v.value))],
                ast.Load()), v))
        return ast.copy_location(ast.Call(ast.Name("__nki_fstr__", ast.Load()), args, []), node)

    def visit_While(self, node: ast.While) -> ast.While:
        self.generic_visit(node)
        args = [node.test, ast.Constant(self._key(node)), ast.Constant(_can_roll(node.body))]
        node.test = ast.copy_location(ast.Call(ast.Name("__nki_while__", ast.Load()), args, []),
                                      node.test)
        return node


def retrying_for(node: ast.For, call: ast.Call, bound: set[str]) -> list[ast.stmt]:
    """``for T in ITER: BODY else: ORELSE`` (no ``break`` at its level, no ``return``) as
    a ``for`` that :mod:`.loop_retry` can run again in place::

        __nki_it = __nki_loop__(ITER, ...)
        if __nki_may_retry__(__nki_it, None):      # a rolled loop
            <save the variables BODY binds>
        while True:
            try:
                for T in __nki_it: BODY
            except BaseException as __nki_e:
                if not __nki_may_retry__(__nki_it, __nki_e): raise
                <put the variables back>
                __nki_it = __nki_retry__(__nki_it, __nki_e)
                continue
            break
        ORELSE                     # the loop has no break: its else always runs
    """
    tag = f"{node.lineno}_{node.col_offset}"
    it, exc = f"__nki_it_{tag}", f"__nki_e_{tag}"
    names = sorted(n for n in bound | {node.target.id} if not n.startswith("__nki_"))
    save = {n: f"__nki_s_{tag}_{n}" for n in names}
    saves = [f"try:\n    {s} = {n}\nexcept NameError:\n    {s} = __nki_missing__" for n, s in save.items()]
    back = [f"if {s} is __nki_missing__:\n    try:\n        del {n}\n    except NameError:\n"
            f"        pass\nelse:\n    {n} = {s}" for n, s in save.items()]
    restore = "\n".join(back).replace("\n", "\n        ")
    body = "\n".join(saves).replace("\n", "\n    ") or "pass"
    src = [f"{it} = None", f"if __nki_may_retry__({it}, None):\n    {body}"]
    src.append(f"while True:\n    try:\n        pass\n    except BaseException as {exc}:\n"
               f"        if not __nki_may_retry__({it}, {exc}):\n            raise\n"
               f"        {restore}\n        {it} = __nki_retry__({it}, {exc})\n        continue\n"
               f"    break")
    stmts = ast.parse("\n".join(src)).body
    for st in stmts:                     # the generated code is located at the ``for``
        for n in ast.walk(st):
            if "lineno" in n._attributes:
                ast.copy_location(n, node)
    stmts[0].value = call
    inner = ast.copy_location(ast.For(node.target, ast.Name(it, ast.Load()), node.body, [],
                                      node.type_comment), node)
    ast.copy_location(inner.iter, node)
    stmts[-1].body[0].body = [inner]     # while True: try: <the for>
    return [*stmts, *node.orelse]


def bound_names(stmts: list[ast.stmt]) -> set[str]:
    """The local variables ``stmts`` may bind or delete (not those of nested functions,
    classes, lambdas or comprehension targets)."""
    out: set[str] = set()

    def visit(n: ast.AST, in_comp: bool) -> None:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
            for d in n.decorator_list:
                visit(d, in_comp)
            return
        if isinstance(n, ast.Lambda):
            return
        if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            in_comp = True
        if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and not in_comp:
            out.add(n.id)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names if a.name != "*")
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            out.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            out.add(n.rest)
        for c in ast.iter_child_nodes(n):
            visit(c, in_comp)
    for s in stmts:
        visit(s, False)
    return out


# ------------------------------------------------------------------- analyses
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _can_roll(body: list[ast.stmt]) -> bool:
    """No ``break`` at this level and no ``return`` / ``yield`` in the body."""
    def visit(n: ast.AST, loop_level: bool) -> bool:
        if isinstance(n, _SCOPES):
            return True
        if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(n, ast.Break) and loop_level:
            return False
        nested = isinstance(n, (ast.For, ast.While, ast.AsyncFor))
        return all(visit(c, loop_level and not nested) for c in ast.iter_child_nodes(n))
    return all(visit(s, True) for s in body)


def _carried(body: list[ast.stmt]) -> set[str]:
    """Names the body may read before writing them and also writes."""
    exposed: set[str] = set()
    stored: set[str] = set()
    _block(body, set(), exposed, stored)
    return exposed & stored


def _loads(node: ast.AST | None, defined: set[str], exposed: set[str], stored: set[str]) -> None:
    if node is None:
        return
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load) and n.id not in defined:
                exposed.add(n.id)
        elif isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
            stored.add(n.target.id)


def _store(target: ast.AST, defined: set[str], exposed: set[str], stored: set[str]) -> None:
    if isinstance(target, ast.Name):
        defined.add(target.id)
        stored.add(target.id)
    elif isinstance(target, (ast.Tuple, ast.List)):
        for e in target.elts:
            _store(e, defined, exposed, stored)
    elif isinstance(target, ast.Starred):
        _store(target.value, defined, exposed, stored)
    else:  # t[k] = ..., obj.attr = ...: reads t / obj and k
        _loads(target, defined, exposed, stored)


def _block(stmts: list[ast.stmt], defined: set[str], exposed: set[str], stored: set[str]) -> set[str]:
    for s in stmts:
        defined = _stmt(s, defined, exposed, stored)
    return defined


def _stmt(s: ast.stmt, defined: set[str], exposed: set[str], stored: set[str]) -> set[str]:
    d = set(defined)
    if isinstance(s, ast.Assign):
        _loads(s.value, d, exposed, stored)
        for t in s.targets:
            _store(t, d, exposed, stored)
    elif isinstance(s, ast.AugAssign):
        _loads(s.target if isinstance(s.target, ast.Name) else s.target, d, exposed, stored)
        if isinstance(s.target, ast.Name):
            exposed.add(s.target.id) if s.target.id not in d else None
        _loads(s.value, d, exposed, stored)
        _store(s.target, d, exposed, stored)
    elif isinstance(s, ast.AnnAssign):
        _loads(s.value, d, exposed, stored)
        if s.value is not None:
            _store(s.target, d, exposed, stored)
    elif isinstance(s, (ast.For, ast.AsyncFor)):
        _loads(s.iter, d, exposed, stored)
        inner = set(d)
        _store(s.target, inner, exposed, stored)
        _block(s.body, inner, exposed, stored)
        _block(s.orelse, set(d), exposed, stored)
    elif isinstance(s, ast.While):
        _loads(s.test, d, exposed, stored)
        _block(s.body, set(d), exposed, stored)
        _block(s.orelse, set(d), exposed, stored)
    elif isinstance(s, ast.If):
        _loads(s.test, d, exposed, stored)
        d = _block(s.body, set(d), exposed, stored) & _block(s.orelse, set(d), exposed, stored)
    elif isinstance(s, (ast.With, ast.AsyncWith)):
        for item in s.items:
            _loads(item.context_expr, d, exposed, stored)
            if item.optional_vars is not None:
                _store(item.optional_vars, d, exposed, stored)
        d = _block(s.body, d, exposed, stored)
    elif isinstance(s, ast.Try):
        _block(s.body, set(d), exposed, stored)
        for h in s.handlers:
            _block(h.body, set(d), exposed, stored)
        _block(s.orelse, set(d), exposed, stored)
        _block(s.finalbody, set(d), exposed, stored)
    elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        _loads(s, d, exposed, stored)  # a closure reads the names it uses when called
        d.add(s.name)
        stored.add(s.name)
    elif isinstance(s, (ast.Import, ast.ImportFrom)):
        for a in s.names:
            name = (a.asname or a.name).split(".")[0]
            d.add(name)
            stored.add(name)
    else:
        _loads(s, d, exposed, stored)
    return d
