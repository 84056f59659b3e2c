"""Output forwarding (nki_mlir/runtime/out_forward.py): in program order, a tile whose only
way out is one DMA into a write-only output is computed in the output view; results are
those of the copying run bit for bit (sentinels included), and tiles that are read after
their DMA, or whose output another DMA writes meanwhile, stay in SBUF."""
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.runtime import out_forward

F32 = nl.float32


@nki.jit
def tiled_add(a, b):
    """out = a + b over [R, F] in [128, 256] tiles (views of out computed in the loop)."""
    rows, cols = a.shape
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // 128):
        for j in nl.affine_range(cols // 256):
            ta = nl.ndarray((128, 256), dtype=a.dtype, buffer=nl.sbuf)
            tb = nl.ndarray((128, 256), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=ta, src=a[i * 128:(i + 1) * 128, j * 256:(j + 1) * 256])
            nisa.dma_copy(dst=tb, src=b[i * 128:(i + 1) * 128, j * 256:(j + 1) * 256])
            tc = nl.ndarray((128, 256), dtype=a.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=tc, data1=ta, data2=tb, op=nl.add)
            nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, j * 256:(j + 1) * 256], src=tc)
    return out


@nki.jit
def one_tile(x):
    """One tile: the output's alloc comes after the tile's (evaluated ahead)."""
    xt = nl.ndarray((128, 64), dtype=F32, buffer=nl.sbuf)
    nisa.dma_copy(dst=xt, src=x)
    t = nl.ndarray((128, 64), dtype=F32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=t, data=xt, op0=nl.multiply, operand0=3.0)
    out = nl.ndarray((128, 64), dtype=F32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def partial(x):
    """Half the tile written: the other half is the sentinel in the output."""
    out = nl.ndarray((128, 64), dtype=F32, buffer=nl.shared_hbm)
    xt = nl.ndarray((128, 64), dtype=F32, buffer=nl.sbuf)
    nisa.dma_copy(dst=xt, src=x)
    t = nl.ndarray((128, 64), dtype=F32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=t[:, 0:32], data=xt[:, 0:32], op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def read_after(x):
    """t is read after its DMA (stays in SBUF)."""
    out = nl.ndarray((128, 64), dtype=F32, buffer=nl.shared_hbm)
    out2 = nl.ndarray((128, 64), dtype=F32, buffer=nl.shared_hbm)
    xt = nl.ndarray((128, 64), dtype=F32, buffer=nl.sbuf)
    nisa.dma_copy(dst=xt, src=x)
    t = nl.ndarray((128, 64), dtype=F32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=t, data=xt, op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=out, src=t)
    u = nl.ndarray((128, 64), dtype=F32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out2, src=u)
    return out, out2


@nki.jit
def overwritten(x):
    """u's DMA writes the output while t is live: t stays in SBUF, so out ends as 2x (u has
    two DMAs, so it stays in SBUF too)."""
    out = nl.ndarray((128, 64), dtype=F32, buffer=nl.shared_hbm)
    out2 = nl.ndarray((128, 64), dtype=F32, buffer=nl.shared_hbm)
    xt = nl.ndarray((128, 64), dtype=F32, buffer=nl.sbuf)
    nisa.dma_copy(dst=xt, src=x)
    t = nl.ndarray((128, 64), dtype=F32, buffer=nl.sbuf)
    u = nl.ndarray((128, 64), dtype=F32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=u, data=xt, op0=nl.add, operand0=1.0)
    nisa.tensor_scalar(dst=t, data=xt, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out, src=u)
    nisa.dma_copy(dst=out2, src=u)
    nisa.dma_copy(dst=out, src=t)
    return out, out2


@nki.jit
def transposed_after(x):
    """t's transpose u is bound to t's transposed view (runtime/bind.py) and read after t's
    DMA, once another DMA has overwritten out: t must stay in SBUF."""
    out = nl.ndarray((32, 32), dtype=F32, buffer=nl.shared_hbm)
    out2 = nl.ndarray((32, 32), dtype=F32, buffer=nl.shared_hbm)
    xt = nl.ndarray((32, 32), dtype=F32, buffer=nl.sbuf)
    nisa.dma_copy(dst=xt, src=x)
    t = nl.ndarray((32, 32), dtype=F32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=t, data=xt, op0=nl.add, operand0=1.0)
    u = nl.ndarray((32, 32), dtype=F32, buffer=nl.sbuf)
    nisa.nc_transpose(dst=u, data=t, engine=nisa.engine.vector)
    nisa.dma_copy(dst=out, src=t)
    nisa.dma_copy(dst=out, src=xt)
    nisa.dma_copy(dst=out2, src=u)
    return out, out2


def _name(op) -> str:
    a = op.attributes.get("nkim.name")
    return a.data if a is not None else "?"


def _program(kernel, args, monkeypatch, forwarding: bool, **options):
    """A freshly decoded program and ``{tile name: forwarded?}`` of its decode."""
    orig = out_forward.plan
    got: dict = {}

    def spy(dec, op):
        p = orig(dec, op) if forwarding else None
        got[_name(op)] = p is not None
        return p
    monkeypatch.setattr(out_forward, "plan", spy)
    ck = nki.compile(kernel, *args, use_cache=False, **options)
    prog = ck.program
    monkeypatch.setattr(out_forward, "plan", orig)
    return prog, got


def _bits(outs):
    return [o.view(np.uint32).copy() for o in outs]


def _same_as_copying(kernel, args, monkeypatch, **options):
    """Run in program order with and without forwarding: bit-identical outputs; returns
    them, the decode's decisions and whether each forwarded alloc's execution bound."""
    binds: list = []
    orig_bind = out_forward.Plan.bind

    def counted(self, env):
        v = orig_bind(self, env)
        binds.append(v is not None)
        return v
    prog, got = _program(kernel, args, monkeypatch, True, **options)
    ref, _ = _program(kernel, args, monkeypatch, False, **options)
    monkeypatch.setattr(out_forward.Plan, "bind", counted)
    outs = prog.run([a.copy() for a in args], mode="program-order", hazards=False)
    monkeypatch.setattr(out_forward.Plan, "bind", orig_bind)
    want = ref.run([a.copy() for a in args], mode="program-order", hazards=False)
    for a, b in zip(_bits(outs), _bits(want)):
        np.testing.assert_array_equal(a, b)
    return outs, got, binds


def test_tiles_in_loops_are_computed_in_the_output(monkeypatch):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((256, 512)).astype(np.float32) for _ in range(2))
    (out,), got, binds = _same_as_copying(tiled_add, (a, b), monkeypatch)
    assert got["tc"] and not got["ta"] and not got["tb"] and binds == [True] * 4
    np.testing.assert_array_equal(out, a + b)
    prog, _ = _program(tiled_add, (a, b), monkeypatch, True)
    (qu,) = prog.run([a, b], mode="queues", hazards=True)      # queue mode: copied, checked
    np.testing.assert_array_equal(qu, a + b)


def test_output_alloc_after_the_tile_is_created_once(monkeypatch):
    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    (out,), got, binds = _same_as_copying(one_tile, (x,), monkeypatch)
    assert got["t"] and binds == [True]
    np.testing.assert_array_equal(out, 3 * x)
    for _ in range(2):    # the pooled machine state, a fresh output per run
        again = nki.compile(one_tile, x).program.run([x], mode="program-order", hazards=False)
        assert again[0] is not out
        np.testing.assert_array_equal(again[0], 3 * x)


def test_unwritten_part_of_a_forwarded_tile_is_the_sentinel(monkeypatch):
    x = np.ones((128, 64), np.float32)
    (out,), got, binds = _same_as_copying(partial, (x,), monkeypatch)
    assert got["t"] and binds == [True]
    np.testing.assert_array_equal(out[:, :32], 2.0)
    assert np.isnan(out[:, 32:]).all()


def test_tile_read_after_its_dma_stays_in_sbuf(monkeypatch):
    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    (o1, o2), got, binds = _same_as_copying(read_after, (x,), monkeypatch,
                                                 schedule="in-order")    # as written
    assert not got["t"] and binds == [True] * got["u"]   # u may share xt's bytes
    np.testing.assert_array_equal(o1, x + 1)
    np.testing.assert_array_equal(o2, 2 * (x + 1))


def test_output_written_meanwhile_keeps_the_order(monkeypatch):
    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    (out, out2), got, binds = _same_as_copying(overwritten, (x,), monkeypatch,
                                               schedule="in-order")    # as written
    assert not got["u"] and not got["t"] and binds == []
    np.testing.assert_array_equal(out, 2 * x)
    np.testing.assert_array_equal(out2, x + 1)


def test_tile_behind_a_bound_transpose_stays_in_sbuf(monkeypatch):
    from nki_mlir.runtime import bind
    seen = []
    orig = bind.bindable

    def spy(dec, op):
        seen.append(orig(dec, op))
        return seen[-1]
    monkeypatch.setattr(bind, "bindable", spy)
    monkeypatch.setattr(out_forward, "bindable", spy)
    x = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    (out, out2), got, _ = _same_as_copying(transposed_after, (x,), monkeypatch,
                                           schedule="in-order")
    assert True in seen and not got["t"]
    np.testing.assert_array_equal(out, x)
    np.testing.assert_array_equal(out2, (x + 1).T)


@pytest.mark.parametrize("view,ok", [("rows", True), ("wide rows", True),
                                     ("strided free", False), ("short rows", False)])
def test_the_output_view_layout_is_checked_when_run(view, ok):
    pl = out_forward.Plan(1, [], (128, 4), 4)
    pl.view = 2
    base = np.zeros((128, 16), np.float32)
    v = {"rows": np.zeros((128, 4), np.float32), "wide rows": base[:, 4:8],
         "strided free": base[:, 0:8:2],
         "short rows": np.lib.stride_tricks.as_strided(base, (128, 4), (8, 4))}[view]
    env = [None, "stale", v]
    got = pl.bind(env)
    assert (got is v) is ok and env[1] is got
