"""Decoding a kernel that allocates many tiles up front is linear in their number: the
sentinel-fill test of each ``nisa.alloc`` (:func:`written_first`) walks the ops after it
once per block, not once per alloc (nki-library's attention_cte allocates ~80k placed tiles
in a row: the quadratic walk took minutes)."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.runtime.isa_memory import written_first

N = 64


@nki.jit
def upfront(x):
    """N placed tiles allocated in a row (addresses modulo 8 slots); the last is loaded
    and stored, the first is read through a view before anything writes it."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tiles = [nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, address=(0, 4096 + (i % 8) * 256))
             for i in range(N)]
    nisa.dma_copy(dst=tiles[-1], src=x)
    nisa.dma_copy(dst=out, src=tiles[-1])
    return out


def _allocs(ck):
    from nki_mlir.compiler import parse_module
    from nki_mlir.dialects import nisa as nisa_d
    m = parse_module(ck.ir("nisa"))
    return [op for op in m.walk() if isinstance(op, nisa_d.AllocOp)
            and op.result.type.memory_space.space.data == "sbuf"]


class _CountingDict(dict):
    sets = 0

    def __setitem__(self, k, v):
        self.sets += 1
        super().__setitem__(k, v)


def test_written_first_memo_gives_the_plain_answers_and_walks_each_op_once():
    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    ck = nki.compile(upfront, x, use_cache=False)
    allocs = _allocs(ck)
    assert len(allocs) >= N
    plain = [written_first(a) for a in allocs]
    skips = _CountingDict()
    memo = [written_first(a, skips=skips) for a in allocs]
    assert memo == plain
    assert plain.count("nisa.dma_copy") == 1
    # every op walked over is memoised once: O(ops), not O(allocs * ops)
    n_ops = len(list(allocs[0].parent.ops))
    assert skips.sets == len(skips) <= n_ops
    assert len(skips) >= N - 8            # the unused tiles' allocs were walked over


def test_many_upfront_tiles_run():
    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    np.testing.assert_array_equal(nki.simulate(upfront)(x), x)


@nki.jit
def written_late(x, k):
    """Tile ``a`` is allocated, then ``k`` other tiles (other bytes) are loaded and stored
    (``2 k`` instructions apart from ``a``), then ``a`` is written whole and stored."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, address=(0, 0))
    for i in nl.static_range(k):
        t = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, address=(0, 8192 + (i % 4) * 256))
        nisa.dma_copy(dst=t, src=x)
        nisa.dma_copy(dst=out, src=t)
    nisa.dma_copy(dst=a, src=x)
    nisa.dma_copy(dst=out, src=a)
    return out


def test_written_first_passes_over_a_bounded_number_of_apart_instructions():
    from nki_mlir.driver.compile import compile_kernel
    from nki_mlir.runtime import blocks, isa_memory
    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    cap = isa_memory._APART_SCAN
    answers = {}
    for k in (cap // 2, cap // 2 + 1):
        ck = compile_kernel(written_late.fn, (x, k), {}, stage="placed", use_cache=False)
        from nki_mlir.compiler import parse_module
        module = parse_module(ck.own_ir("nisa"))
        (fop,) = [op for op in module.walk() if op.name == "func.func"]
        a = next(op for op in fop.walk() if op.name == "nisa.alloc"
                 and op.attributes.get("nkim.offset") is not None
                 and op.attributes["nkim.offset"].value.data == 0
                 and op.result.type.memory_space.space.data == "sbuf")
        block = a.parent_block()          # (alloc sinking put it next to its writer:
        a.detach()                         # move it back to the top, as a kernel writes it)
        block.insert_op_before(a, block.first_op)
        answers[k] = isa_memory.written_first(a, blocks.plan(fop))
        from nki_mlir.runtime.interpreter import decode
        np.testing.assert_array_equal(decode(module, "written_late").run([x])[0], x)
    # cap instructions apart from `a` are passed over; one more and the fill stays
    assert answers == {cap // 2: "nisa.dma_copy", cap // 2 + 1: None}
