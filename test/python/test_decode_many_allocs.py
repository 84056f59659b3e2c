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
