"""The trace being run, as the modules below the tracer see it.

- :class:`TraceContext`: the state of one trace (the IR builder, the loops decided so far);
  handlers receive it as their ``cg`` argument;
- :func:`active` / :func:`require`: the trace running now (the innermost one);
- :class:`Retrace`: loops that must be unrolled, raised to trace the kernel again;
- :func:`tracer`: the tracer's entry points (:class:`Tracer`).  The values a kernel's
  Python handles (:mod:`.proxies`, Beta 1 index expressions) and the API markers
  (:mod:`.builtins`) call them while a kernel is traced; :mod:`.tracer` implements them and
  registers itself when imported, so those modules, which it imports, do not import it.
"""
from __future__ import annotations

from typing import Any, Protocol

from ..errors import NKIError, NKISyntaxError, NKITypeError, SourceLoc


class Tracer(Protocol):
    """The tracer's entry points (module-level functions of :mod:`.tracer`)."""

    def dispatch(self, name: str, args: tuple, kwargs: dict, method_of: Any = None) -> Any: ...
    def tensor_method(self, t: Any, name: str) -> Any: ...
    def subscript(self, t: Any, key: Any) -> Any: ...
    def store_subscript(self, t: Any, key: Any, value: Any) -> None: ...
    def operator(self, op: str, a: Any, b: Any) -> Any: ...
    def inplace_add(self, view: Any, value: Any) -> Any: ...
    def unary(self, op: str, a: Any) -> Any: ...
    def tensor_as_value(self, t: Any, what: str) -> None: ...
    def index_arith(self, op: str, a: Any, b: Any) -> Any: ...
    def index_compare(self, op: str, a: Any, other: Any) -> Any: ...
    def concretize(self, i: Any, what: str) -> None: ...
    def wrap(self, x: Any, keys: frozenset = frozenset()) -> Any: ...
    def unwrap(self, x: Any) -> Any: ...
    def grid_operator(self, op: str, a: Any, b: Any) -> Any: ...
    def grid_compare(self, op: str, a: Any, b: Any) -> Any: ...
    def grid_subscript(self, obj: Any, key: Any) -> Any: ...
    def grid_truth(self, what: str) -> None: ...


_TRACER: list[Tracer] = []


def register_tracer(t: Tracer) -> None:
    """Make ``t`` the tracer (:mod:`.tracer` registers itself when imported)."""
    _TRACER[:] = [t]


def tracer() -> Tracer:
    """The tracer's entry points.

    Raises:
        NKIError: (internal) :mod:`.tracer` was never imported.
    """
    if not _TRACER:
        raise NKIError("internal compiler error: the tracer is not loaded", category="internal error")
    return _TRACER[0]


_ACTIVE: list["TraceContext"] = []


#: the loop key of the launch "loop" over program instances: a symbolic program id the
#: kernel needs as a Python value names it in a :class:`Retrace`, and the kernel is traced
#: again with the instance's ids as ints (the launch "unrolled"; frontend/spmd.py)
LAUNCH_KEY = "<launch>"


class Retrace(BaseException):
    """Loops that must be unrolled (``{loop key: reason}``); an enclosing rolled loop
    (:mod:`.loop_retry`) or the whole kernel (:mod:`.trace_build`) is traced again.

    A ``BaseException`` so that a kernel's own ``except Exception`` cannot swallow it.
    """

    def __init__(self, loops: dict[str, str]):
        super().__init__(loops)
        self.loops = loops


class TraceContext:
    """The state of one trace: the IR builder and the loops decided so far.

    Handlers receive it as their ``cg`` argument: ``b`` (the :class:`IRBuilder`),
    ``fail``/``loc`` for located errors, ``check_visible``, ``call`` and ``ir_loop_depth``.
    """

    def __init__(self, b, src, unroll: dict[str, str], mode: str):
        self.b = b
        self.src = src
        self.unroll = unroll  # loop key -> why it is unrolled (decided by earlier traces)
        self.mode = mode  # "auto" | "unroll" | "roll"
        self.ir_loop_depth = 0
        self.depth = 0
        self.open_loops: list[str] = []  # keys of the rolled loops being traced, outermost first
        self.block_loop: dict[Any, str] = {}  # body block of a rolled loop -> its key
        self.open_whiles: dict[str, Any] = {}
        self.decisions: dict[str, tuple[str, str]] = {}  # loop key -> (rolled|unrolled, why)
        self.loop_seq = 0  # rolled loops entered so far (numbers them, see loops.RolledLoop)
        self.entered: dict[str, int] = {}  # loop key -> number of its latest rolled entry
        self.erased: list[Any] = []  # ops of loops traced again in place (kept: ids stay unique)
        #: id(SourceLoc) -> (the SourceLoc, the name its line binds): naming.binding_name's
        #: answers in this trace
        self.binding_names: dict[int, tuple[SourceLoc, str | None]] = {}

    def decide(self, key: str, what: str, why: str) -> None:
        """Record how the loop at ``key`` was traced (for the loop report)."""
        self.decisions[key] = (what, why)

    # ------------------------------------------------------------ diagnostics
    def loc(self, node: Any) -> SourceLoc | None:
        if isinstance(node, SourceLoc):
            return node
        if node is None or not hasattr(node, "lineno"):
            return self.b.loc
        return self.src.loc(node)

    def fail(self, node: Any, message: str, cls: type[NKIError] = NKISyntaxError, **kw) -> NKIError:
        return cls(message, self.loc(node), **kw)

    def _tensor_operator(self, node: Any) -> NKIError:
        return self.fail(node, "Python operators on tensors are NKI Beta 1 syntax; in Beta 2 use "
                               "an instruction with a dst (nisa.tensor_tensor, nisa.tensor_scalar) "
                               "or an nl function (nl.add, nl.multiply, ...)")

    def check_visible(self, node: Any, t: Any) -> None:
        """A tile made inside a loop body and used after the loop: unroll that loop (Python
        gives the last iteration's tile); a device loop (dynamic_range) cannot be unrolled.
        A view made out of its storage (``Tensor.poison``) is an error here, where it is used."""
        poison = getattr(t, "poison", None)
        if poison is not None:
            made = f" (the view made at {poison.loc})" if poison.loc is not None else ""
            raise NKITypeError(f"{poison.message}{made} is used here", self.loc(node),
                               code=poison.code)
        target = getattr(t, "block", None)
        if target is None or target is self.b.block:   # (made in the current block: visible)
            return
        enclosing = set()
        cur = self.b.block
        while cur is not None:
            enclosing.add(cur)
            parent = cur.parent_op()
            cur = parent.parent_block() if parent is not None else None
        rolled, device, cur = None, False, target
        while cur is not None and cur not in enclosing:
            if cur in self.block_loop:
                rolled = self.block_loop[cur]
            elif _is_loop_body(cur):
                device = True
            parent = cur.parent_op()
            cur = parent.parent_block() if parent is not None else None
        if cur is None or (rolled is None and not device):
            return
        if rolled is not None and not device and not self.b.beta1:  # Beta 1 keeps its scope rule
            raise Retrace({rolled: f"a tile made in its body ('{t.name or '?'}') is used after "
                                   f"the loop, at {self.loc(node)}"})
        raise self.fail(node, f"tensor '{t.name or '?'}' was created inside a loop body and cannot "
                              f"be used outside it; allocate it before the loop",
                        code="err_local_variable_used_out_of_scope")

    # ------------------------------------------------------------------ calls
    def call(self, site: Any, fn: Any, args: list, kwargs: dict) -> Any:
        """Call a Python function of the kernel (``fori_loop`` bodies) with traced values."""
        t = tracer()
        return t.unwrap(fn(*t.wrap(list(args)), **t.wrap(dict(kwargs))))

def _is_loop_body(block) -> bool:
    parent = block.parent_op()
    return parent is not None and parent.name in ("scf.for", "scf.while")


def active() -> TraceContext | None:
    return _ACTIVE[-1] if _ACTIVE else None


def require(what: str) -> TraceContext:
    ctx = active()
    if ctx is None:
        raise NKIError(f"{what} can only be used inside an @nki.jit kernel while it is "
                       f"compiled", category="API misuse", code="err_nki_api_outside_of_nki_kernel")
    return ctx
