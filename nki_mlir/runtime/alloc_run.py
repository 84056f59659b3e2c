"""The run objects of a placed on-chip ``nisa.alloc`` (built by :func:`.isa_memory.alloc`):
bind the tile's typed view of the machine memory (one per copy of a rotating tile), fill
it with the never-written sentinel and clear its PSUM matmul flags when needed.

They are objects with slots rather than closures: a decoded kernel holds two per alloc, and
a closure is a function, a tuple and one cell per captured name -- objects every full
collection of the cyclic garbage collector walks (an unrolled kernel holds tens of
thousands of allocs).  A decoded body holds their bound ``run`` methods (as fast to call
as a closure).  Semantics: NKI docs, ``nki.language`` memory hierarchy (SBUF / PSUM
tiles) and ``nki.isa.nc_matmul`` (PSUM accumulation flags).
"""
from __future__ import annotations

from .env import STATE


class PlacedAlloc:
    """The run of a placed ``nisa.alloc`` (``op``: its :class:`~nki_mlir.diagnostics.OpSite`):
    slot ``s`` gets copy ``c`` (``env[cslot]`` modulo ``copies``; 0 without a copy index) of
    the tile, the view of ``space`` at partition ``p0`` and offset ``off + c * stride`` of
    ``shape`` / ``dt`` kept with the state's memory by ``(token, c)`` (inside the block
    ``in_block[c]``), and ``fslot`` its flags (PSUM).  In program order ``fill(data)``
    writes the sentinels (None: the next instruction writes the tile whole) and ``clear``
    clears the flags; ``fwd`` (an :mod:`.out_forward` plan, or None) binds an output view
    instead when one is ready.  In queue mode no sentinels are written (pending instances
    of the previous occupant may still use the bytes); the flags reset is ordered with the
    matmuls on the tensor queue (and not needed when the next instruction clears them
    writing the tile whole: a matmul on the tile is ordered after that write, or the hazard
    checks report it).  ``decl``: the declared dtype of a bf16 / fp8 tile stored as float32
    ``dt`` (``NKI_PRECISE_FP=0``, :meth:`.memory.Memory.wide_region`), else None."""

    __slots__ = ("op", "s", "fslot", "token", "cslot", "copies", "space", "p0", "off",
                 "stride", "shape", "dt", "in_block", "fill", "clear", "fwd", "decl")

    def __init__(self, op, s, fslot, token, cslot, copies, space, p0, off, stride, shape, dt,
                 in_block, fill, clear, fwd=None, decl=None):
        self.op, self.s, self.fslot, self.token, self.cslot = op, s, fslot, token, cslot
        self.copies, self.space, self.p0, self.off, self.stride = copies, space, p0, off, stride
        self.shape, self.dt, self.in_block, self.fill, self.clear = shape, dt, in_block, fill, clear
        self.fwd, self.decl = fwd, decl

    def _bind(self, env, mem):
        """Bind the copy's view (and flags); returns ``(data, flags)``."""
        cslot = self.cslot
        c = 0 if cslot is None else int(env[cslot]) % self.copies
        v = mem.views.get((self.token, c))
        if v is None:
            v = mem.view(self.token, c, self.space, self.p0, self.off + c * self.stride,
                         self.shape, self.dt, self.in_block[c], self.decl)
        data, flags = v
        env[self.s] = data
        if flags is not None:
            env[self.fslot] = flags
        return data, flags

    def run(self, env):
        st = env[STATE]
        fill = self.fill
        fwd = self.fwd
        if fwd is not None and st.queues is None and st.launch is None:
            v = fwd.bind(env)
            if v is not None:
                env[self.s] = v
                if fill is not None:
                    fill(v)
                return
        data, flags = self._bind(env, st.mem)
        qr = st.queues
        if qr is None:
            if fill is not None:
                fill(data)
            if self.clear:
                st.mem.set_flags(flags, False)
            return
        if self.clear:
            qr.pseudo("tensor", lambda _env, f=flags, m=st.mem: m.set_flags(f, False), None)
        if qr.hazards is not None:
            qr.hazards.on_alloc(self.op, self.s, data, self.space)

    __call__ = run


class PlacedAllocPO(PlacedAlloc):
    """:class:`PlacedAlloc` without an output view to bind, as a program-order run runs it
    (:func:`.env.program_order`): without the queue-mode and forwarding tests."""

    __slots__ = ()

    def run(self, env):
        mem = env[STATE].mem
        data, flags = self._bind(env, mem)
        if self.fill is not None:
            self.fill(data)
        if self.clear:
            mem.set_flags(flags, False)

    __call__ = run
