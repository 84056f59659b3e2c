"""A decoded kernel holds few objects the cyclic garbage collector tracks: guards, queue
wrappers, kept subview / reinterpret_cast runs and placed-alloc runs are slotted objects
(one each), not closures (a function, its cell tuple and one cell per captured name).  An
unrolled nki-library kernel holds hundreds of thousands of ops, and every full collection
walks what it holds."""
import gc

import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.runtime.alloc_run import PlacedAlloc, PlacedAllocPO
from nki_mlir.runtime.env import Guarded, Queued, program_order
from nki_mlir.runtime.kept_views import KeptCast, KeptSubview


@nki.jit
def tiles(a):
    """out = a + 1, per 128-column block through rotating SBUF tiles (subviews of a and out)."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.static_range(4):
        t = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[:, nl.ds(i * 128, 128)])
        u = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=u, data=t, op0=nl.add, operand0=1.0)
        nisa.dma_copy(dst=out[:, nl.ds(i * 128, 128)], src=u)
    return out


def _decoded():
    a = np.arange(128 * 512, dtype=np.float32).reshape(128, 512)
    ck = nki.compile(tiles, a, use_cache=False)
    from nki_mlir.runtime.interpreter import decode
    module = ck._nisa_module()
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        prog = decode(module)
        made = gc.get_objects(0)    # (what the decode made: older objects are in gen. 2)
    finally:
        if was:
            gc.enable()
    return prog, made, a


def test_decoded_ops_are_slotted_objects_not_closures():
    prog, made, a = _decoded()
    kinds = {type(o) for o in made}
    assert {Guarded, Queued, KeptSubview, PlacedAlloc, PlacedAllocPO} <= kinds
    fns = [o for o in made if type(o).__name__ == "function"]
    names = {f.__qualname__ for f in fns}
    # no closure of the op kinds that are objects now
    assert not names & {"guard.<locals>.run", "wrap.<locals>.run", "wrap.<locals>.run_guarded",
                        "_kept.<locals>.run", "subview.<locals>.<lambda>",
                        "reinterpret_cast.<locals>.run", "_placed_po.<locals>.run",
                        "alloc.<locals>.run"}
    cells = sum(type(o).__name__ == "cell" for o in made)
    # (12 instructions: 404 tracked objects and 126 cells; 1046 and 602 as closures)
    assert cells <= 12 * prog.instruction_count, (cells, prog.instruction_count)
    assert len(made) <= 40 * prog.instruction_count, (len(made), prog.instruction_count)
    out, = prog.run([a])
    np.testing.assert_array_equal(out, a + np.float32(1))


def test_program_order_unwraps_the_guard_objects():
    prog, _, _ = _decoded()
    body, ops = program_order(prog._body)
    assert not any(type(f) in (Guarded, Queued) for f in body)
    assert all(type(f) is not Guarded for f in ops)
    assert any(type(getattr(f, "__self__", None)) is PlacedAllocPO for f in body)


def test_kept_cast_is_one_object():
    assert KeptCast.__slots__ and not hasattr(KeptCast(0, None, 1, None, None, None, None, 0),
                                              "__dict__")
