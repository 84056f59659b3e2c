"""``neuronxcc.nki.compiler`` (``ncc``): Beta 1 allocation and scheduling controls.

Semantics: NKI migration guide (nki/migration) ("Direct allocation, Beta 1") and the Beta 1 API pages
``nki.compiler.sbuf.{auto_alloc, alloc, mod_alloc}``, ``nki.compiler.psum.{...}``,
``nki.compiler.{enable_stack_allocator, force_auto_alloc, skip_middle_end_transformations}``
(Neuron SDK 2.26, ``general/nki/api/nki/compiler/``).

Allocations are passed as ``buffer=`` of ``nl.ndarray`` and map onto nki-mlir's direct
allocation, ``nl.ndarray(..., address=(partition, byte_offset))`` (the ``nisa-allocate``
pass honours the address after checking the start-partition rule, PSUM bank boundaries,
capacity and overlaps, and reports violations at the ``nl.ndarray`` line):

- ``ncc.sbuf.auto_alloc()`` / ``ncc.psum.auto_alloc()``, and ``ncc.sbuf`` / ``ncc.psum``
  themselves: the same as ``nl.sbuf`` / ``nl.psum`` (automatic placement).
- ``ncc.sbuf.mod_alloc(base_addr=B, base_partition=P)``: the tensor's single tile at
  ``address=(P, B)`` (``B`` in bytes per partition).
- ``ncc.psum.mod_alloc(base_bank=K, base_addr=A, base_partition=P)``: ``address=(P,
  K * 2048 + A)`` (a PSUM bank is 2 KiB per partition, ``nl.tile_size.psum_bank_fmax_bytes``).
- ``ncc.sbuf.alloc(func)``: ``func((), pdim_size, fdim_size)`` is evaluated at compile time
  (``fdim_size`` in bytes per partition) and must return ``(start_partition, byte_addr)``;
  ``ncc.psum.alloc(func)`` must return ``(bank_id, start_partition, byte_addr)``.  ``func``
  may be a helper defined in the kernel or its module (it is inlined like any helper).

Block dimensions (``nl.ndarray((B, nl.par_dim(P), F), buffer=ncc.sbuf.mod_alloc(...))``,
see ``frontend/beta1/block_dims.py``): block ``i`` lives in slot ``i % S`` of ``S`` physical
tiles placed one after the other from the base address, ``S`` from ``num_free_tiles``
(SBUF and PSUM, one tile's bytes apart; ``()`` means 1: every block at the base) or
``num_bank_tiles`` (PSUM, one bank apart).  ``num_par_tiles`` other than 1, PSUM bank and
free tiles together, and ``alloc(func)`` with several blocks are located ``NKIError`` errors
("not implemented").  Tensors with an allocation cannot be created with an initial value
(``nl.zeros(..., buffer=ncc.sbuf.mod_alloc(...))``:
``err_tensor_creation_on_scratchpad_with_init_value_not_supported``).

Decorators (usable on plain functions and on ``@nki.jit`` kernels, in either order, and
outside kernels): ``enable_stack_allocator`` and ``skip_middle_end_transformations`` are
accepted no-ops (nki-mlir's ``nisa-allocate`` already places every tensor by liveness and
there are no middle-end transformations to skip); ``force_auto_alloc`` makes the kernel
ignore its direct allocations (every tensor is placed automatically), as documented;
``multi_buffer(factor=2)`` is an accepted no-op (the allocator gives loop-carried tiles
the copies it needs).  ``ncc.no_reorder()`` is ``nl.no_reorder()`` (``with
ncc.no_reorder():``).  ``ncc.allocation_scope()`` is accepted outside kernels; inside a
kernel it is reported as not supported yet.
"""
from __future__ import annotations

from typing import Any

from ..frontend.beta1.ncc_marks import FORCE_AUTO_ALLOC_ATTR, AllocationScope
from ..frontend.builtins import Builtin as _B
#: bytes per partition of one PSUM bank (nl.tile_size.psum_bank_fmax_bytes)
from ..targets import PSUM_BANK_BYTES

__all__ = ["sbuf", "psum", "enable_stack_allocator", "force_auto_alloc",
           "skip_middle_end_transformations", "multi_buffer", "no_reorder", "allocation_scope",
           "Allocation"]


class Allocation:
    """A ``buffer=`` value from ``ncc.sbuf`` / ``ncc.psum`` (see the module docstring).

    Attributes:
        nki_buffer_name: ``"sbuf"`` or ``"psum"`` (what ``nl.ndarray`` allocates in).
        form: the call that made it, for messages (``ncc.sbuf.mod_alloc(base_addr=0)``).
    """

    def __init__(self, space: str, form: str, kind: str, params: dict[str, Any]):
        self.nki_buffer_name = space
        self.form, self.kind, self.params = form, kind, params

    @property
    def is_direct(self) -> bool:
        """True for ``alloc`` / ``mod_alloc`` (a fixed address), False for ``auto_alloc``."""
        return self.kind != "auto"

    def __repr__(self) -> str:
        return self.form

    # ---------------------------------------------------------------- compile time
    def nki_address(self, cg, api: str, raw_shape: Any, shape: tuple[int, ...], dtype) -> tuple[int, int] | None:
        """The ``(partition, byte_offset)`` of the tensor's tile, or None (automatic).

        Called by the ``nl.ndarray`` handler with the trace context ``cg`` (errors are located at
        the current line).

        Raises:
            NKIError: multi-tile (block-dimension) allocations, an allocation function that
                is not callable or does not return the documented tuple of ints.
        """
        from ..errors import NKIError, NKITypeError
        if not self.is_direct or getattr(cg.b, "force_auto_alloc", False):
            return None
        blocks = _block_dims(raw_shape)
        if self.kind != "mod" and any(int(d) != 1 for d in blocks):
            raise cg.b.error(f"{api}: buffer={self.form}: a tensor with block dimensions "
                             f"{list(blocks)} (several tiles) placed by an allocation function is "
                             f"not supported by nki-mlir; use mod_alloc or one tile per tensor",
                             NKIError, category="not implemented")
        from .. import dtypes
        pdim = int(shape[len(blocks)]) if len(shape) > len(blocks) else 1
        free = 1
        for d in shape[len(blocks) + 1:]:
            free *= int(d)
        fdim_bytes = free * dtypes.as_dtype(dtype).itemsize
        if self.kind == "mod":
            self.nki_block_slots(cg, api, blocks, shape[len(blocks):], dtype)  # checks the form
            p = self.params
            if self.nki_buffer_name == "psum":
                return int(p["base_partition"]), int(p["base_bank"]) * PSUM_BANK_BYTES + int(p["base_addr"])
            return int(p["base_partition"]), int(p["base_addr"])
        # alloc(func): evaluate func((), pdim_size, fdim_size) like a helper call
        func = self.params["func"]
        try:
            got = cg.call(cg.b.loc, func, [(), pdim, fdim_bytes], {})
        except NKIError:
            raise
        except Exception as exc:
            from ..frontend.frames import traceback_user_frame
            if traceback_user_frame(exc.__traceback__)[1]:
                raise       # raised by nki-mlir's code: the tracer reports an internal error
            raise cg.b.error(f"{api}: buffer={self.form}: the allocation function raised "
                             f"{type(exc).__name__}: {exc}", NKIError,
                             category="compile-time evaluation error") from None
        want = 3 if self.nki_buffer_name == "psum" else 2
        shape_txt = ("(bank_id, start_partition, byte_addr)" if want == 3
                     else "(start_partition, byte_addr)")
        from ..frontend.values import is_int
        if not (isinstance(got, (tuple, list)) and len(got) == want and all(is_int(v) for v in got)):
            raise cg.b.error(f"{api}: buffer={self.form}: the allocation function must return "
                             f"{shape_txt} as compile-time ints for the tile index (), got {got!r}",
                             NKITypeError)
        if want == 3:
            bank, part, off = (int(v) for v in got)
            return part, bank * PSUM_BANK_BYTES + off
        return int(got[0]), int(got[1])


    def nki_block_slots(self, cg, api: str, blocks: tuple[int, ...], tile: tuple[int, ...],
                        dtype) -> tuple[tuple[int, ...], int | None]:
        """``(slots, slot_bytes)`` of a ``mod_alloc`` tensor with block dims ``blocks`` and
        tiles of shape ``tile``: block ``(i0, i1, ...)`` lives in slot ``(i0 % S0, i1 % S1,
        ...)`` (``num_free_tiles`` / ``num_bank_tiles``; ``()`` is all 1: every block at the
        base address), slots ``slot_bytes`` bytes per partition apart (None: one tile's
        bytes; one PSUM bank for ``num_bank_tiles``).

        Raises:
            NKIError: ``num_par_tiles`` other than 1 (blocks on different partitions), PSUM
                ``num_bank_tiles`` and ``num_free_tiles`` both above 1, a tiles tuple whose
                length is not the number of block dims.
        """
        from ..errors import NKIError
        p = self.params

        def tiles(key: str) -> tuple[int, ...]:
            got = tuple(int(t) for t in p.get(key, ()))
            if not got:
                return (1,) * len(blocks)
            if len(got) != len(blocks) and any(t != 1 for t in got):
                raise cg.b.error(f"{api}: buffer={self.form}: {key}={got} needs one entry per "
                                 f"block dim {list(blocks)}", NKIError)
            return got if len(got) == len(blocks) else (1,) * len(blocks)

        if any(t != 1 for t in p.get("num_par_tiles", ())):
            raise cg.b.error(f"{api}: buffer={self.form}: num_par_tiles (blocks placed on different "
                             f"partitions) is not supported by nki-mlir; blocks share the "
                             f"partitions and take slots along the free dim (num_free_tiles)",
                             NKIError, category="not implemented")
        free = tiles("num_free_tiles")
        if self.nki_buffer_name == "psum":
            banks = tiles("num_bank_tiles")
            if any(b != 1 for b in banks):
                if any(f != 1 for f in free):
                    raise cg.b.error(f"{api}: buffer={self.form}: num_bank_tiles and num_free_tiles "
                                     f"both above 1 are not supported by nki-mlir", NKIError,
                                     category="not implemented")
                return tuple(min(b, n) for b, n in zip(banks, blocks)), PSUM_BANK_BYTES
        return tuple(min(f, n) for f, n in zip(free, blocks)), None


def _block_dims(raw_shape: Any) -> tuple[int, ...]:
    """The dims left of ``nl.par_dim`` in a Beta 1 shape (none when there is no par_dim or
    it is the first dim)."""
    if not isinstance(raw_shape, (tuple, list)):
        return ()
    for i, d in enumerate(raw_shape):
        if type(d).__name__ == "ParDim":
            return tuple(int(x) for x in raw_shape[:i])
    return ()


def _ints(name: str, v: Any) -> tuple[int, ...]:
    if v is None:
        return ()
    from ..frontend.values import is_int
    vals = tuple(v) if isinstance(v, (tuple, list)) else (v,)
    if not all(is_int(x) for x in vals):
        raise TypeError(f"{name} must be a tuple of ints, got {v!r}")
    return tuple(int(x) for x in vals)


def _int(name: str, v: Any) -> int:
    from ..frontend.values import is_int
    if not is_int(v):
        raise TypeError(f"{name} must be an int, got {v!r}")
    return int(v)


class _Space:
    """``ncc.sbuf`` / ``ncc.psum``: the allocation functions of one on-chip memory.  The
    object itself is also a ``buffer=`` value (automatic allocation)."""

    def __init__(self, name: str):
        self.nki_buffer_name = name
        self.is_direct = False

    def __repr__(self) -> str:
        return f"ncc.{self.nki_buffer_name}"

    def nki_address(self, cg, api, raw_shape, shape, dtype):
        return None

    def auto_alloc(self) -> Allocation:
        """Automatic placement (the same as ``buffer=nl.sbuf`` / ``nl.psum``)."""
        return Allocation(self.nki_buffer_name, f"ncc.{self.nki_buffer_name}.auto_alloc()", "auto", {})

    def alloc(self, func) -> Allocation:
        """Place the tile where ``func((), pdim_size, fdim_size)`` says (see the module
        docstring for the tuple it must return)."""
        if func is None:
            raise TypeError(f"ncc.{self.nki_buffer_name}.alloc(func): func is required")
        name = getattr(func, "__name__", None) or getattr(getattr(func, "node", None), "name", "func")
        return Allocation(self.nki_buffer_name, f"ncc.{self.nki_buffer_name}.alloc({name})", "func",
                          {"func": func})


class _SbufSpace(_Space):
    def mod_alloc(self, *, base_addr, base_partition=0, num_par_tiles=(), num_free_tiles=()) -> Allocation:
        """``ncc.sbuf.mod_alloc``: the tile at partition ``base_partition``, byte
        ``base_addr`` of each partition (``num_*_tiles`` must be empty or all 1)."""
        p = {"base_addr": _int("base_addr", base_addr),
             "base_partition": _int("base_partition", base_partition),
             "num_par_tiles": _ints("num_par_tiles", num_par_tiles),
             "num_free_tiles": _ints("num_free_tiles", num_free_tiles)}
        form = f"ncc.sbuf.mod_alloc(base_addr={p['base_addr']}" + (
            f", base_partition={p['base_partition']}" if p["base_partition"] else "") + _tiles_txt(p) + ")"
        return Allocation("sbuf", form, "mod", p)


class _PsumSpace(_Space):
    def mod_alloc(self, *, base_bank, base_addr=0, base_partition=0, num_bank_tiles=(),
                  num_par_tiles=(), num_free_tiles=()) -> Allocation:
        """``ncc.psum.mod_alloc``: the tile in bank ``base_bank`` at byte ``base_addr`` of
        the bank, partition ``base_partition`` (``num_*_tiles`` empty or all 1)."""
        p = {"base_bank": _int("base_bank", base_bank), "base_addr": _int("base_addr", base_addr),
             "base_partition": _int("base_partition", base_partition),
             "num_bank_tiles": _ints("num_bank_tiles", num_bank_tiles),
             "num_par_tiles": _ints("num_par_tiles", num_par_tiles),
             "num_free_tiles": _ints("num_free_tiles", num_free_tiles)}
        form = f"ncc.psum.mod_alloc(base_bank={p['base_bank']}" + (
            f", base_addr={p['base_addr']}" if p["base_addr"] else "") + (
            f", base_partition={p['base_partition']}" if p["base_partition"] else "") + _tiles_txt(p) + ")"
        return Allocation("psum", form, "mod", p)


def _tiles_txt(p: dict) -> str:
    return "".join(f", {k}={p[k]}" for k in ("num_bank_tiles", "num_par_tiles", "num_free_tiles")
                   if p.get(k))


sbuf = _SbufSpace("sbuf")
psum = _PsumSpace("psum")


# ------------------------------------------------------------------------- decorators


def _kernel_function(obj):
    """The Python function of ``obj`` (a plain function or an ``@nki.jit`` Kernel)."""
    return getattr(obj, "fn", obj)


def enable_stack_allocator(func=None, log_level=50):
    """Accepted no-op: nki-mlir's ``nisa-allocate`` already places tensors by liveness
    (Beta 1 ``nki.compiler.enable_stack_allocator``).  Usable as ``@enable_stack_allocator``
    or ``@enable_stack_allocator(log_level=...)``."""
    if func is None:
        return lambda f: f
    return func


def skip_middle_end_transformations(func=None):
    """Accepted no-op: nki-mlir has no middle-end transformations to skip (Beta 1
    ``nki.compiler.skip_middle_end_transformations``)."""
    if func is None:
        return lambda f: f
    return func


def force_auto_alloc(func=None):
    """Ignore the kernel's direct allocations (``ncc.sbuf.mod_alloc`` / ``alloc`` and the
    PSUM forms): every tensor is placed automatically (Beta 1
    ``nki.compiler.force_auto_alloc``).  ``nl.ndarray(address=...)`` is not affected."""
    def mark(f):
        try:
            setattr(_kernel_function(f), FORCE_AUTO_ALLOC_ATTR, True)
        except (AttributeError, TypeError):
            pass
        return f
    return mark if func is None else mark(func)


def multi_buffer(func=None, factor=2):
    """Accepted no-op (``ncc.multi_buffer(factor=2)``): the allocator gives tiles in loops
    the copies they need.  Usable as ``@multi_buffer``, ``@multi_buffer(factor=3)`` or
    ``multi_buffer(f, factor)``."""
    if isinstance(func, int) and not isinstance(func, bool):
        func = None
    if func is None:
        return lambda f: f
    return func


class _ScopeBuiltin(_B):
    """``ncc.allocation_scope``: compiled by the frontend inside kernels; outside them a
    no-op context manager."""

    def __call__(self, *args: Any, **kwargs: Any) -> AllocationScope:
        return AllocationScope()


no_reorder = _B("ncc.no_reorder", doc="``with ncc.no_reorder():`` (the same as ``nl.no_reorder``).")
allocation_scope = _ScopeBuiltin("ncc.allocation_scope",
                                 doc="``with ncc.allocation_scope():`` (Beta 1); a no-op outside kernels.")
