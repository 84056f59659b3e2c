"""A rolled loop that passed its check drops what only a retry reads (the frame, the locals
copy and fingerprint, the trace state from before it): each locals copy held the iterators of
the loops before it, so a trace with thousands of loops kept them all alive until a full
garbage collection (nki_mlir.frontend.loops.RolledLoop._release)."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.frontend import loops


def _two_loops(a):
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(2):
        nisa.dma_copy(dst=t[:, i * 32:(i + 1) * 32], src=a[:, i * 32:(i + 1) * 32])
    for j in nl.sequential_range(2):
        nisa.dma_copy(dst=out[:, j * 32:(j + 1) * 32], src=t[:, j * 32:(j + 1) * 32])
    return out


def test_a_closed_rolled_loop_keeps_no_retry_state(monkeypatch):
    made = []
    init = loops.RolledLoop.__init__

    def spy(self, *args, **kwargs):
        init(self, *args, **kwargs)
        made.append(self)
    monkeypatch.setattr(loops.RolledLoop, "__init__", spy)
    a = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    ck = nki.compile(nki.jit(_two_loops), a, use_cache=False)
    assert ck.own_ir("nki").count("scf.for") == 2
    np.testing.assert_array_equal(ck(a), a)
    assert len(made) == 2 and all(it.step == 2 for it in made)
    for it in made:
        assert it.frame is None and it.before is None and it.fp_before is None
        assert it.states is None and it.decisions is None and it.pending is None
