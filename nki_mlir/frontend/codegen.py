"""The AST walker: specialises a kernel's Python body into ``nki`` dialect IR.

Like Triton's code generator, an ``ast.NodeVisitor`` walks the kernel source with
explicit scopes; the kernel is never executed by Python.  Compile-time values are
evaluated (NKI Beta 2's "specialization", NKI language guide (nki/get-started/nki-language-guide)); tensor operations
become IR.  ``nl.affine_range`` / ``nl.sequential_range`` loops become ``scf.for`` (one
body); Python ``range`` / ``nl.static_range`` loops and ``if`` on compile-time values are
unrolled / resolved.  Helper functions are inlined.  Anything outside the NKI subset is an
:class:`~nki_mlir.errors.NKISyntaxError` at the construct's line and column.
"""
from __future__ import annotations

import ast
import builtins
import operator
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType, StringAttr
from xdsl.ir import Block, Region

from ..errors import NKIError, NKISyntaxError, NKITypeError, SourceLoc
from .builder import IRBuilder
from .builtins import HANDLERS, Builtin
from .isa_control import (DynamicRange, NoReorder, Register, emit_dynamic_for, emit_no_reorder,
                          emit_register_while, register_operator_error, register_truth_error)
from .source import FunctionSource
from .index_expr import IndexExpr, Mask
from .values import DynSlice, Index, LoopRange, Tensor, TensorMethod, as_index, is_int, simplify

#: Python builtins a kernel may call at compile time.
_PY_BUILTINS = {n: getattr(builtins, n) for n in (
    "range", "len", "min", "max", "abs", "int", "float", "bool", "str", "tuple", "list", "dict",
    "enumerate", "zip", "reversed", "sorted", "sum", "any", "all", "divmod", "pow", "round",
    "isinstance", "print", "slice", "map", "filter", "type", "hasattr", "getattr", "repr",
    "ValueError", "TypeError", "AssertionError", "RuntimeError", "NotImplementedError", "Ellipsis",
    "None", "True", "False")}

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
           ast.BitOr: operator.or_, ast.BitAnd: operator.and_, ast.BitXor: operator.xor,
           ast.MatMult: operator.matmul}
_CMPOPS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
           ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
           ast.NotIn: lambda a, b: a not in b}

_UNROLL_LIMIT = 100_000
#: comparisons of loop indices that make a (rank-0) mask
_LOOP_CMP = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}


class _Return(Exception):
    def __init__(self, value: Any):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


@dataclass
class InlineFunction:
    """A helper ``def`` seen inside a kernel: inlined at each call with its defining scope."""

    node: ast.FunctionDef
    source: FunctionSource
    closure: dict[str, Any]


class FunctionCodegen(ast.NodeVisitor):
    """Walks one function body (the kernel or an inlined helper) into the shared builder."""

    def __init__(self, b: IRBuilder, src: FunctionSource, scope: dict[str, Any],
                 enclosing: dict[str, Any] | None = None, depth: int = 0):
        self.b = b
        self.src = src
        self.scope = scope
        self.enclosing = enclosing or {}
        self.depth = depth
        self.ir_loop_depth = 0

    # ================================================================ diagnostics
    def loc(self, node: ast.AST) -> SourceLoc:
        return self.src.loc(node)

    def fail(self, node: ast.AST, message: str, cls: type[NKIError] = NKISyntaxError, **kw) -> NKIError:
        return cls(message, self.loc(node), **kw)

    def _located(self, node: ast.AST, exc: BaseException) -> NKIError:
        if isinstance(exc, NKIError):
            if exc.loc is None:
                exc.loc = self.loc(node)
                exc.args = (exc.format(),)
            return exc
        return NKIError(f"{type(exc).__name__}: {exc}", self.loc(node),
                        category="compile-time evaluation error")

    # ================================================================= statements
    def run_body(self, stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            self.visit_stmt(stmt)

    def visit_stmt(self, node: ast.stmt) -> None:
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            raise self.fail(node, f"'{type(node).__name__}' statements are not supported in NKI "
                                  f"kernels; allowed: assignments, calls, for, if, while on "
                                  f"compile-time values, assert, return, def")
        self.b.loc = self.loc(node)
        try:
            method(node)
        except (_Return, _Break, _Continue):
            raise
        except NKIError as exc:
            raise self._located(node, exc) from None
        except RecursionError:
            raise self.fail(node, "recursion too deep while inlining helper functions", NKIError)
        except Exception as exc:  # compile-time Python errors in the user's code
            raise self._located(node, exc) from None

    def stmt_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        self.eval(node.value)

    def stmt_Pass(self, node: ast.Pass) -> None:
        pass

    def stmt_Assign(self, node: ast.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
            from .masks import assign_masked
            if isinstance(node.value, ast.Call) and assign_masked(self, node.targets[0], node.value):
                return  # t[...] = call(..., mask=m): writes only the masked part of t
            target = node.targets[0]
            container = self.eval(target.value)
            view = self._tensor_target(target, container)
            if view is not None:  # t[...] = value (Beta 1): the view first, then the value
                from .assign import assign_into
                assign_into(self, view, self.eval(node.value))
                return
            value = self.eval(node.value)
            container[self.eval(target.slice)] = value  # a compile-time list / dict item
            return
        value = self.eval(node.value)
        for target in node.targets:
            self.assign(target, value)

    def _tensor_target(self, target: ast.Subscript, container: Any) -> Tensor | None:
        """The view ``t[idx]`` when ``target`` subscripts a tensor (``container``), else None."""
        if isinstance(container, (IndexExpr, Mask)):
            raise self.fail(target, "an nl.arange / nl.mgrid index expression cannot be assigned to; "
                                    "materialise it as a tile with nisa.iota first",
                            NKITypeError, code="err_cannot_assign_to_index")
        if not isinstance(container, Tensor):
            return None
        self.check_visible(target, container)
        from .indexing import index_tensor
        return index_tensor(self, target, container, self.eval(target.slice))

    def stmt_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            value = self.eval(node.value)
            from .kernel_checks import check_annotated_value  # `x: nt.tensor[...] = value`
            check_annotated_value(self, node, value)
            self.assign(node.target, value)

    def stmt_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Subscript):
            container = self.eval(node.target.value)
            view = self._tensor_target(node.target, container)
            if view is not None:  # t[...] += value (Beta 1): accumulate in place
                from .tile_ops import augmented_assign
                augmented_assign(self, node, view)
                return
            key = self.eval(node.target.slice)
            container[key] = self.binop(node, type(node.op), container[key], self.eval(node.value))
            return
        current = self.eval(_as_load(node.target))
        if isinstance(current, Tensor) and current.on_chip and self.b.beta1:
            from .tile_ops import augmented_assign  # Beta 1 `psum_tile += nl.matmul(...)`: in place
            augmented_assign(self, node, current)
            return
        value = self.binop(node, type(node.op), current, self.eval(node.value))
        self.assign(node.target, value)

    def assign(self, target: ast.expr, value: Any) -> None:
        if isinstance(target, ast.Name):
            self._name_tensor(value, target.id)
            self.scope[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if isinstance(value, Tensor):
                raise self.fail(target, "cannot unpack a tensor", NKITypeError)
            try:
                values = list(value)
            except TypeError:
                raise self.fail(target, f"cannot unpack {type(value).__name__}", NKITypeError)
            if len(values) != len(target.elts):
                raise self.fail(target, f"expected {len(target.elts)} values to unpack, got "
                                        f"{len(values)}", NKITypeError)
            for t, v in zip(target.elts, values):
                self.assign(t, v)
        elif isinstance(target, ast.Subscript):
            container = self.eval(target.value)
            if isinstance(container, (Tensor, IndexExpr, Mask)):
                raise self.fail(target, "cannot assign into a tensor or index expression here "
                                        "(unpacking into a subscript)")
            container[self.eval(target.slice)] = value
        else:
            raise self.fail(target, f"cannot assign to {type(target).__name__}")

    def _name_tensor(self, value: Any, name: str) -> None:
        """Give an unnamed allocation the variable name it is first bound to (for diagnostics)."""
        from .naming import name_tensor
        name_tensor(value, name)

    def stmt_Return(self, node: ast.Return) -> None:
        raise _Return(None if node.value is None else self.eval(node.value))

    def stmt_Assert(self, node: ast.Assert) -> None:
        cond = self.eval(node.test)
        if not self.truth(node.test, cond):
            msg = self.eval(node.msg) if node.msg is not None else ast.unparse(node.test)
            raise self.fail(node, f"assertion failed: {msg}", NKIError, category="assertion")

    def stmt_Raise(self, node: ast.Raise) -> None:
        exc = self.eval(node.exc) if node.exc is not None else None
        raise self.fail(node, f"kernel raised {exc!r}", NKIError, category="kernel error")

    def stmt_If(self, node: ast.If) -> None:
        cond = self.eval(node.test)
        self.run_body(node.body if self.truth(node.test, cond) else node.orelse)

    def truth(self, node: ast.AST, value: Any) -> bool:
        if isinstance(value, Mask) and all(e.rank == 0 for e, _ in value.constraints):
            raise self.fail(node, "a loop index's value is not known at compile time, so it cannot "
                                  "be used as a condition; use nl.static_range or range() to unroll "
                                  "the loop (or pass the comparison as mask=)",
                            code="err_dynamic_control_flow_not_supported")
        if isinstance(value, (IndexExpr, Mask)):
            raise self.fail(node, "an nl.arange / nl.mgrid expression (or a mask built from one) has "
                                  "no single truth value; conditions must be compile-time values "
                                  "(use it as mask= instead)",
                            code="err_control_flow_condition_depending_on_arange")
        if isinstance(value, Tensor):
            raise self.fail(node, "a tensor's value is not known at compile time, so it cannot be "
                                  "used as a condition; if/while conditions must be compile-time "
                                  "values", code="err_dynamic_control_flow_not_supported")
        if isinstance(value, Register):
            raise register_truth_error(self, node)
        if isinstance(value, Index):
            raise self.fail(node, "a loop index's value is not known at compile time, so it cannot "
                                  "be used as a condition; use nl.static_range or range() to unroll "
                                  "the loop", code="err_dynamic_control_flow_not_supported")
        return bool(value)

    def stmt_While(self, node: ast.While) -> None:
        if node.orelse:
            raise self.fail(node, "while ... else is not supported")
        for count in range(_UNROLL_LIMIT):
            cond = self.eval(node.test)
            if isinstance(cond, Register) and count == 0:  # runtime while (NKI language guide (nki/get-started/nki-language-guide))
                return emit_register_while(self, node, cond)
            if not self.truth(node.test, cond):
                return
            try:
                self.run_body(node.body)
            except _Break:
                return
            except _Continue:
                continue
        raise self.fail(node, f"while loop did not finish within {_UNROLL_LIMIT} compile-time iterations")

    def stmt_Break(self, node: ast.Break) -> None:
        if self.ir_loop_depth:
            raise self.fail(node, "break is not allowed in device loops (nl.affine_range, "
                                  "nl.sequential_range, nl.dynamic_range, fori_loop, while_loop)")
        raise _Break()

    def stmt_Continue(self, node: ast.Continue) -> None:
        if self.ir_loop_depth:
            raise self.fail(node, "continue is not allowed in device loops (nl.affine_range, "
                                  "nl.sequential_range, nl.dynamic_range, fori_loop, while_loop)")
        raise _Continue()

    def stmt_For(self, node: ast.For) -> None:
        if node.orelse:
            raise self.fail(node, "for ... else is not supported in NKI kernels")
        it = self.eval(node.iter)
        if isinstance(it, LoopRange):
            return self.ir_loop(node, it)
        if isinstance(it, DynamicRange):
            return emit_dynamic_for(self, node, it)
        if isinstance(it, Tensor):
            raise self.fail(node.iter, "cannot iterate over a tensor; loop over "
                                       "nl.affine_range(n) and index the tensor instead")
        try:
            items = iter(it)
        except TypeError:
            raise self.fail(node.iter, f"cannot iterate over {type(it).__name__}", NKITypeError)
        for count, item in enumerate(items):
            if count >= _UNROLL_LIMIT:
                raise self.fail(node, f"loop unrolls to more than {_UNROLL_LIMIT} iterations")
            self.assign(node.target, item)
            try:
                self.run_body(node.body)
            except _Break:
                break
            except _Continue:
                continue

    def ir_loop(self, node: ast.For, rng: LoopRange) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.fail(node.target, "the target of an nl.affine_range loop must be a single name")
        b = self.b
        lb, ub, step = (b.const_index(v) for v in (rng.start, rng.stop, rng.step))
        body = Block(arg_types=[IndexType()])
        iv = body.args[0]
        iv.name_hint = node.target.id
        loop = scf.ForOp(lb, ub, step, [], Region([body]))
        loop.attributes["nki.range"] = StringAttr(rng.kind)
        b.loop_ranges[iv] = (rng.start, rng.stop, rng.step)
        b.emit(loop, verify=False)
        self.scope[node.target.id] = Index.of(iv)
        self.ir_loop_depth += 1
        try:
            with b.at(body):
                self.run_body(node.body)
                b.loc = self.loc(node)
                b.emit(scf.YieldOp(), verify=False)
        finally:
            self.ir_loop_depth -= 1
        loop.verify_()

    def stmt_With(self, node: ast.With) -> None:
        """``with nl.no_reorder():`` (NKI language guide (nki/get-started/nki-language-guide)); Beta 1 ``with ncc.allocation_scope():``
        runs its body as is (liveness already frees its tensors at their last use)."""
        from ..beta1.compiler import AllocationScope
        ctx = self.eval(node.items[0].context_expr) if len(node.items) == 1 else None
        if isinstance(ctx, AllocationScope) and node.items[0].optional_vars is None:
            return self.run_body(node.body)
        if len(node.items) != 1 or node.items[0].optional_vars is not None or \
                not isinstance(ctx, NoReorder):
            raise self.fail(node, "the only 'with' statement allowed in a kernel is "
                                  "'with nl.no_reorder():'")
        emit_no_reorder(self, node)

    def stmt_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.decorator_list:
            raise self.fail(node, "decorated functions cannot be defined inside a kernel")
        self.scope[node.name] = InlineFunction(node, self.src, self.scope)

    # ================================================================= expressions
    def eval(self, node: ast.expr) -> Any:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            what = {"Lambda": "lambda expressions", "Await": "await", "Yield": "yield",
                    "YieldFrom": "yield from", "NamedExpr": "assignment expressions (:=)",
                    "SetComp": "set comprehensions"}.get(type(node).__name__, type(node).__name__)
            raise self.fail(node, f"{what} are not supported in NKI kernels; define a helper "
                                  f"function with def instead" if what == "lambda expressions" else
                                  f"{what} are not supported in NKI kernels")
        return method(node)

    def expr_Constant(self, node: ast.Constant) -> Any:
        return node.value

    def expr_Name(self, node: ast.Name) -> Any:
        name = node.id
        for space in (self.scope, self.enclosing, self.src.closure, self.src.globals):
            if name in space:
                return space[name]
        if name in _PY_BUILTINS:
            return _PY_BUILTINS[name]
        raise self.fail(node, f"name '{name}' is not defined", NKIError, category="name error")

    def expr_Attribute(self, node: ast.Attribute) -> Any:
        obj = self.eval(node.value)
        if isinstance(obj, Tensor):
            return self.tensor_attr(node, obj, node.attr)
        if isinstance(obj, Index):
            raise self.fail(node, f"a loop index has no attribute '{node.attr}'")
        try:
            return getattr(obj, node.attr)
        except AttributeError:
            raise self.fail(node, f"{_kind(obj)} has no attribute '{node.attr}'", NKIError,
                            category="attribute error")

    def tensor_attr(self, node: ast.AST, t: Tensor, attr: str) -> Any:
        from ..language import _buffer_by_name
        simple = {"shape": t.shape, "dtype": t.dtype, "ndim": t.ndim, "size": t.size,
                  "name": t.name, "strides": t.strides, "offset": t.offset}
        if attr in simple:
            return simple[attr]
        if attr == "buffer":
            return _buffer_by_name(t.buffer)
        if "tensor." + attr in HANDLERS:
            return TensorMethod(attr, t)
        raise self.fail(node, f"tensor has no attribute '{attr}' supported by nki-mlir "
                              f"(supported: {', '.join(list(simple) + ['buffer'])})", NKITypeError)

    def expr_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self._elts(node.elts))

    def expr_List(self, node: ast.List) -> list:
        return list(self._elts(node.elts))

    def expr_Set(self, node: ast.Set) -> set:
        return set(self._elts(node.elts))

    def _elts(self, elts: list[ast.expr]) -> list[Any]:
        out: list[Any] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(self.eval(e.value))
            else:
                out.append(self.eval(e))
        return out

    def expr_Dict(self, node: ast.Dict) -> dict:
        out: dict = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                out.update(self.eval(v))
                continue
            key = self.eval(k)
            if not isinstance(key, str):
                raise self.fail(k, f"dict keys in NKI kernels must be strings, got {_kind(key)}")
            out[key] = self.eval(v)
        return out

    def expr_JoinedStr(self, node: ast.JoinedStr) -> str:
        parts = []
        for v in node.values:
            if isinstance(v, ast.FormattedValue):
                spec = self.eval(v.format_spec) if v.format_spec is not None else ""
                val = self.eval(v.value)
                if v.conversion == ord("r"):
                    val = repr(val)
                elif v.conversion == ord("s"):
                    val = str(val)
                parts.append(format(val, spec))
            else:
                parts.append(self.eval(v))
        return "".join(parts)

    def expr_Slice(self, node: ast.Slice) -> slice:
        f = lambda x: None if x is None else self.eval(x)  # noqa: E731
        return slice(f(node.lower), f(node.upper), f(node.step))

    def expr_IfExp(self, node: ast.IfExp) -> Any:
        return self.eval(node.body if self.truth(node.test, self.eval(node.test)) else node.orelse)

    def expr_BoolOp(self, node: ast.BoolOp) -> Any:
        result: Any = None
        for v in node.values:
            result = self.eval(v)
            if isinstance(result, (Tensor, IndexExpr, Mask)):
                raise self._ambiguous(v, "and" if isinstance(node.op, ast.And) else "or")
            truth = self.truth(v, result)
            if isinstance(node.op, ast.And) and not truth:
                return result
            if isinstance(node.op, ast.Or) and truth:
                return result
        return result

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Any:
        v = self.eval(node.operand)
        if isinstance(v, Register):
            raise (register_truth_error if isinstance(node.op, ast.Not) else register_operator_error)(self, node)
        if isinstance(v, Index):
            if isinstance(node.op, ast.USub):
                return v.scale(-1)
            if isinstance(node.op, ast.UAdd):
                return v
            raise self.fail(node, "only + and - apply to a loop index")
        if isinstance(v, (IndexExpr, Mask)):
            if isinstance(node.op, ast.USub) and isinstance(v, IndexExpr):
                return v.scale(-1)
            if isinstance(node.op, ast.UAdd) and isinstance(v, IndexExpr):
                return v
            raise (self._ambiguous(node, "not") if isinstance(node.op, ast.Not) else
                   self.fail(node, "only + and - apply to an index expression", NKITypeError))
        if isinstance(v, Tensor):
            if isinstance(node.op, ast.Not):
                raise self._ambiguous(node, "not")
            from .tile_ops import unary_operator
            return unary_operator(self, node, node.op, v)
        if isinstance(node.op, ast.Not):
            return not self.truth(node.operand, v)
        return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert}[type(node.op)](v)

    def _ambiguous(self, node: ast.AST, what: str) -> NKIError:
        return self.fail(node, f"'{what}' needs a single truth value, but a tile (or index "
                               f"expression) has many; use the element-wise forms & | ~ "
                               f"(nl.logical_and / logical_or / logical_not)", NKITypeError,
                         code="err_ambiguous_tensor_truth_value")

    def _tensor_operator(self, node: ast.AST) -> NKIError:
        return self.fail(node, "Python operators on tensors are NKI Beta 1 syntax; in Beta 2 use "
                               "an instruction with a dst (nisa.tensor_tensor, nisa.tensor_scalar) "
                               "or an nl function (nl.add, nl.multiply, ...)")

    def expr_BinOp(self, node: ast.BinOp) -> Any:
        return self.binop(node, type(node.op), self.eval(node.left), self.eval(node.right))

    def binop(self, node: ast.AST, op: type, a: Any, b: Any) -> Any:
        if isinstance(a, (IndexExpr, Mask)) or isinstance(b, (IndexExpr, Mask)):
            from .tile_ops import index_operator
            return index_operator(self, node, op, a, b)
        if isinstance(a, Tensor) or isinstance(b, Tensor):
            from .tile_ops import tile_operator
            return tile_operator(self, node, op, a, b)
        if isinstance(a, Register) or isinstance(b, Register):
            raise register_operator_error(self, node)
        if isinstance(a, Index) or isinstance(b, Index):
            return self.index_binop(node, op, a, b)
        return _BINOPS[op](a, b)

    def index_binop(self, node: ast.AST, op: type, a: Any, b: Any) -> Any:
        name = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.FloorDiv: "floordiv",
                ast.Mod: "mod"}.get(op, op.__name__)
        for v in (a, b):
            if not (isinstance(v, Index) or is_int(v)):
                raise self.fail(node, f"a loop index can only be combined with integers, not "
                                      f"{_kind(v)}", NKITypeError)
        try:
            return self.b.index_arith(name, a, b)
        except NKIError as exc:
            raise self.fail(node, exc.message, type(exc)) from None

    def expr_Compare(self, node: ast.Compare) -> Any:
        left = self.eval(node.left)
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp)
            if isinstance(op, (ast.Is, ast.IsNot)):  # Python identity, on compile-time values
                if (left is right) != isinstance(op, ast.Is):
                    return False
                left = right
                continue
            if len(node.ops) == 1 and isinstance(op, tuple(_LOOP_CMP)) and \
                    any(isinstance(v, Index) for v in (left, right)) and \
                    all(isinstance(v, Index) or is_int(v) for v in (left, right)):
                # a loop-index comparison: a mask= gating the whole instruction (Beta 1)
                return Mask(((IndexExpr((), (), as_index(left).sub(right)), _LOOP_CMP[type(op)]),))
            if any(isinstance(v, (IndexExpr, Tensor)) for v in (left, right)) and len(node.ops) == 1:
                from .tile_ops import compare_operator
                return compare_operator(self, node, type(op), left, right)
            for v in (left, right):
                if isinstance(v, Register):
                    raise register_operator_error(self, node)
                if isinstance(v, (Tensor, Index)):
                    self.truth(node, v)
            if not _CMPOPS[type(op)](left, right):
                return False
            left = right
        return True

    def expr_Subscript(self, node: ast.Subscript) -> Any:
        obj = self.eval(node.value)
        key = self.eval(node.slice)
        if isinstance(obj, Tensor):
            from .indexing import index_tensor
            self.check_visible(node, obj)
            return index_tensor(self, node, obj, key)
        if isinstance(obj, IndexExpr) or getattr(obj, "name", None) == "nl.mgrid":
            from .tile_ops import subscript_index
            return subscript_index(self, node, obj, key)
        if isinstance(key, Index) or (isinstance(key, tuple) and any(isinstance(k, Index) for k in key)):
            raise self.fail(node, "a compile-time list or tuple cannot be indexed with a loop index")
        return obj[key]

    def expr_Starred(self, node: ast.Starred) -> Any:
        raise self.fail(node, "starred expressions are only allowed in calls and literals")

    # -------------------------------------------------------------- comprehensions
    def _comprehension(self, node, make) -> Any:
        saved = dict(self.scope)
        results: list[Any] = []

        def rec(gens):
            if not gens:
                results.append(make())
                return
            g = gens[0]
            it = self.eval(g.iter)
            if isinstance(it, (Tensor, LoopRange)):
                raise self.fail(g.iter, "comprehensions can only iterate over compile-time values")
            for item in it:
                self.assign(g.target, item)
                if all(self.truth(c, self.eval(c)) for c in g.ifs):
                    rec(gens[1:])

        try:
            rec(node.generators)
        finally:
            self.scope.clear()
            self.scope.update(saved)
        return results

    def expr_ListComp(self, node: ast.ListComp) -> list:
        return self._comprehension(node, lambda: self.eval(node.elt))

    def expr_GeneratorExp(self, node: ast.GeneratorExp) -> list:
        return self._comprehension(node, lambda: self.eval(node.elt))

    def expr_DictComp(self, node: ast.DictComp) -> dict:
        return dict(self._comprehension(node, lambda: (self.eval(node.key), self.eval(node.value))))

    # ======================================================================= calls
    def expr_Call(self, node: ast.Call) -> Any:
        callee = self.eval(node.func)
        if isinstance(callee, Builtin) and any(kw.arg == "mask" for kw in node.keywords):
            from .masks import eval_masked_call  # Beta 1 mask= (views built per masked shape)
            return eval_masked_call(self, node, callee)
        args = self._elts(node.args)
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(self.eval(kw.value))
            else:
                kwargs[kw.arg] = self.eval(kw.value)
        self.b.loc = self.loc(node)
        return self.call(node, callee, args, kwargs)

    def call(self, node: ast.Call, callee: Any, args: list, kwargs: dict) -> Any:
        from ..entry import EntryKernel
        from ..kernel import Kernel, LaunchedKernel

        for v in list(args) + list(kwargs.values()):
            if isinstance(v, Tensor):
                self.check_visible(node, v)
        if isinstance(callee, TensorMethod):  # t.slice(...): handler(cg, t, ...)
            callee, args = Builtin("tensor." + callee.name), [callee.tensor, *args]
        if isinstance(callee, Builtin):
            handler = HANDLERS.get(callee.name)
            if handler is None:
                raise self.fail(node, f"{callee.name} is not supported by nki-mlir yet",
                                NKIError, category="not implemented")
            try:
                from .masks import masked_call, owns_mask
                if kwargs.get("mask") is not None and not owns_mask(handler):  # Beta 1 mask=
                    return masked_call(self, node, callee, handler, args, kwargs)
                return handler(self, *args, **kwargs)
            except TypeError as exc:
                if "argument" in str(exc):
                    raise self.fail(node, f"{callee.name}(): {_strip_fn(str(exc))}", NKITypeError)
                raise
        if isinstance(callee, EntryKernel):  # nki.baremetal / benchmark / profile wrapper
            from ..entry import unwrap
            callee = unwrap(callee)
        if isinstance(callee, LaunchedKernel):  # kernel[grid](...) inside a kernel
            raise self.fail(node, f"{callee!r}: a kernel launched on an SPMD grid / LNC cannot be "
                                  f"called from inside another kernel; call the helper without "
                                  f"brackets and without @nki.jit (helpers are inlined)",
                            NKITypeError, code="err_nested_kernel_with_spmd_grid")
        if isinstance(callee, Kernel) and callee.options.get("mode") == "trace":
            callee = callee.fn  # NKI 0.1 sub-kernel (nki.jit(mode='trace')): inlined
        if isinstance(callee, Kernel):
            raise self.fail(node, "calling an @nki.jit kernel from inside a kernel is not allowed; "
                                  "remove the decorator from the helper (helpers are inlined)")
        if isinstance(callee, InlineFunction):
            return self.inline(node, callee.node, callee.source, args, kwargs, callee.closure)
        if isinstance(callee, LoopRange):
            raise self.fail(node, "a loop range is not callable")
        if hasattr(callee, "__code__"):
            src = FunctionSource.of(callee)
            if src is not None and src.is_user_code:
                return self.inline(node, src.node, src, args, kwargs, None)
        if any(isinstance(v, Register) for v in list(args) + list(kwargs.values())):
            raise register_truth_error(self, node)
        if any(isinstance(v, (Tensor, Index)) for v in list(args) + list(kwargs.values())):
            raise self.fail(node, f"{getattr(callee, '__name__', callee)!s}() cannot take tensors or "
                                  f"loop indices; it runs at compile time", NKITypeError)
        if callee is print:
            print(*args, **kwargs)
            return None
        return callee(*args, **kwargs)

    def inline(self, node: ast.Call, fdef: ast.FunctionDef, src: FunctionSource, args: list,
               kwargs: dict, closure: dict | None) -> Any:
        if self.depth > 64:
            raise self.fail(node, "helper functions nest more than 64 deep (recursion?)")
        scope = bind_arguments(self, node, fdef, src, args, kwargs)
        frame = FunctionCodegen(self.b, src, scope, closure, self.depth + 1)
        frame.ir_loop_depth = self.ir_loop_depth
        saved = self.b.loc
        try:
            frame.run_body(fdef.body)
        except _Return as r:
            return r.value
        finally:
            self.b.loc = saved
        return None

    # ==================================================================== helpers
    def check_visible(self, node: ast.AST, t: Tensor) -> None:
        """A tensor made inside an IR loop body cannot be used after that loop."""
        blk = self.b.block
        target = t.block
        if target is None:
            return
        cur = blk
        while cur is not None:
            if cur is target:
                return
            parent = cur.parent_op()
            cur = parent.parent_block() if parent is not None else None
        raise self.fail(node, f"tensor '{t.name or '?'}' was created inside a loop body and cannot "
                              f"be used outside it; allocate it before the loop",
                        code="err_local_variable_used_out_of_scope")


def bind_arguments(cg: FunctionCodegen, node: ast.AST, fdef: ast.FunctionDef, src: FunctionSource,
                   args: list, kwargs: dict) -> dict[str, Any]:
    """Bind call arguments to a helper's parameters (defaults evaluated in its own scope)."""
    a = fdef.args
    params = [p.arg for p in a.posonlyargs + a.args]
    scope: dict[str, Any] = {}
    if len(args) > len(params) and a.vararg is None:
        raise cg.fail(node, f"{fdef.name}() takes {len(params)} positional arguments but "
                            f"{len(args)} were given", NKITypeError)
    for p, v in zip(params, args):
        scope[p] = v
    if a.vararg is not None:
        scope[a.vararg.arg] = tuple(args[len(params):])
    defaults = dict(zip(params[len(params) - len(a.defaults):], a.defaults))
    kwonly = {p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults)}
    extra: dict[str, Any] = {}
    for k, v in kwargs.items():
        if k in params or k in kwonly:
            if k in scope:
                raise cg.fail(node, f"{fdef.name}() got multiple values for argument '{k}'", NKITypeError)
            scope[k] = v
        elif a.kwarg is not None:
            extra[k] = v
        else:
            raise cg.fail(node, f"{fdef.name}() got an unexpected keyword argument '{k}'", NKITypeError)
    definer = FunctionCodegen(cg.b, src, {}, None, cg.depth)
    for p in params:
        if p not in scope:
            if p not in defaults:
                raise cg.fail(node, f"{fdef.name}() missing required argument '{p}'", NKITypeError)
            scope[p] = definer.eval(defaults[p])
    for p, d in kwonly.items():
        if p not in scope:
            if d is None:
                raise cg.fail(node, f"{fdef.name}() missing keyword-only argument '{p}'", NKITypeError)
            scope[p] = definer.eval(d)
    if a.kwarg is not None:
        scope[a.kwarg.arg] = extra
    return scope


def _as_load(target: ast.expr) -> ast.expr:
    new = ast.fix_missing_locations(ast.copy_location(
        type(target)(**{**{f: getattr(target, f) for f in target._fields}, "ctx": ast.Load()}), target))
    return new


def _kind(v: Any) -> str:
    import types
    if isinstance(v, types.ModuleType):
        return f"module '{v.__name__}'"
    if isinstance(v, Tensor):
        return "a tensor"
    if isinstance(v, Index):
        return "a loop index"
    return f"{type(v).__name__} {v!r}"


def _strip_fn(msg: str) -> str:
    return msg.split("() ", 1)[1] if "() " in msg else msg


__all__ = ["FunctionCodegen", "InlineFunction", "DynSlice", "np"]
