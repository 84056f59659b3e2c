"""Broadcast DMA forwarding (nki_mlir/runtime/forward.py, ``broadcast_readers``): a tile loaded
by a stride-0 partition DMA (one input row on every partition) and read only by elementwise
ALU instructions is bound to the broadcast source view in program order and in hazard-checked
queue mode; with any other reader it is copied.  The results are the copying run's bit for
bit either way."""
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.runtime import forward, hazards


@nki.jit
def scale_shift(x, gamma, beta):
    """out = x * gamma + beta with gamma / beta [1, F] broadcast to 128 partitions."""
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.shared_hbm)
    g = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
    b = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=g, src=gamma.ap([[0, 128], [1, cols]], offset=0))
    nisa.dma_copy(dst=b, src=beta.ap([[0, 128], [1, cols]], offset=0))
    for r in nl.affine_range(rows // 128):
        t = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[nl.ds(r * 128, 128), :])
        y = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=y, data1=t, data2=g, op=nl.multiply)
        z = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=z, data1=b, data2=y, op=nl.add)
        nisa.dma_copy(dst=out[nl.ds(r * 128, 128), :], src=z)
    return out


@nki.jit
def reduce_broadcast(x, gamma):
    """Row sums of a broadcast tile (a reduction: its summation may depend on the layout)."""
    rows, cols = x.shape
    out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    g = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=g, src=gamma.ap([[0, 128], [1, cols]], offset=0))
    s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=s, op=nl.add, data=g, axis=1, keepdims=True)
    nisa.dma_copy(dst=out, src=s)
    return out


def _bound_flags(kernel, args, hazard: bool, monkeypatch) -> tuple[list, tuple]:
    """Per forwarding DMA execution, whether its tile was bound to a stride-0 source view;
    and the outputs."""
    bound: list = []
    orig_fw, orig_hz = forward.forwarding, hazards.Checker.forward

    def spy_fw(copy, d, s, shape, itemsize, **kw):
        run = orig_fw(copy, d, s, shape, itemsize, **kw)

        def counted(env):
            run(env)
            if env[s].strides[0] == 0:
                bound.append(env[d] is env[s])
        return counted

    def spy_hz(self, plan, inst, env):
        src = env[plan[1]]
        orig_hz(self, plan, inst, env)
        if src.strides[0] == 0:
            bound.append(env[plan[0]].strides[0] == 0)

    monkeypatch.setattr(forward, "forwarding", spy_fw)
    monkeypatch.setattr(hazards.Checker, "forward", spy_hz)
    prog = nki.compile(kernel, *args, use_cache=False).program
    outs = prog.run([a.copy() for a in args], hazards=hazard)
    return bound, outs


def _copied(kernel, args):
    """The outputs of the copying queue mode (no forwarding there without the checks)."""
    prog = nki.compile(kernel, *args, use_cache=False).program
    return prog.run([a.copy() for a in args], mode="queues", hazards=False)


@pytest.mark.parametrize("hazard", [False, True], ids=["program-order", "hazards"])
def test_broadcast_tiles_read_elementwise_are_bound_to_the_source(hazard, monkeypatch):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((256, 96)).astype(np.float32)
    gamma = rng.standard_normal((1, 96)).astype(np.float32)
    beta = rng.standard_normal((1, 96)).astype(np.float32)
    args = (x, gamma, beta)
    bound, outs = _bound_flags(scale_shift, args, hazard, monkeypatch)
    assert bound == [True, True]            # g and b: no copy
    ref = _copied(scale_shift, args)
    np.testing.assert_array_equal(outs[0].view(np.uint32), ref[0].view(np.uint32))
    np.testing.assert_array_equal(outs[0], x * gamma + beta)
    np.testing.assert_array_equal(gamma, args[1])   # the caller's arrays are untouched


@pytest.mark.parametrize("hazard", [False, True], ids=["program-order", "hazards"])
def test_broadcast_tiles_with_a_reduction_reader_are_copied(hazard, monkeypatch):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((128, 200)).astype(np.float32)
    gamma = rng.standard_normal((1, 200)).astype(np.float32)
    bound, outs = _bound_flags(reduce_broadcast, (x, gamma), hazard, monkeypatch)
    assert bound and not any(bound)      # the copy: never bound
    ref = _copied(reduce_broadcast, (x, gamma))
    np.testing.assert_array_equal(outs[0].view(np.uint32), ref[0].view(np.uint32))
