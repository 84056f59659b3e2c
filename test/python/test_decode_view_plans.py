"""Decode-time plans of the view ops are shared between identical ops: a
``memref.subview`` / ``memref.reinterpret_cast`` works out its static facts (index tuple,
bounds, strides) once per distinct shapes, dtypes and static attributes in a decode
(:func:`nki_mlir.runtime.views._subview_plan`, ``_cast_plan``), and every memref type's
shape, dtype and space is read once (``Decoder.type_facts``).  The ops sharing a plan still
run as before: the outputs equal NumPy's, and an out-of-bounds view still reports its own
source type."""
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.errors import NKIRuntimeError
from nki_mlir.runtime import decoder as rdecoder
from nki_mlir.runtime import views
from nki_mlir.runtime.interpreter import decode


@nki.jit
def repeated_views(x):
    """x [128, 64]: out [4, 128, 16], out[k] = x[:, 16k:16k+16] through an access pattern of
    an SBUF tile, twice per k (the same static pattern), plus a subview per k of the output."""
    t = nl.ndarray((128, 64), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    out = nl.ndarray((4, 128, 16), x.dtype, buffer=nl.shared_hbm)
    for k in nl.static_range(4):
        y = nl.ndarray((128, 16), x.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=y, src=t.ap([[64, 128], [1, 16]], offset=16 * k))
        z = nl.ndarray((128, 16), x.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=z, src=t.ap([[64, 128], [1, 16]], offset=16 * k))
        nisa.tensor_tensor(dst=y, data1=y, data2=z, op=nl.maximum)
        nisa.dma_copy(dst=out[k], src=y)
    return out


def _counting(monkeypatch, name):
    calls = []
    real = getattr(views, name)

    def counted(*a, **k):
        calls.append(a[0])
        return real(*a, **k)
    monkeypatch.setattr(views, name, counted)
    return calls


def test_identical_views_share_one_plan(monkeypatch):
    x = np.random.default_rng(3).standard_normal((128, 64)).astype(np.float32)
    ref = np.stack([x[:, 16 * k:16 * k + 16] for k in range(4)])
    ck = nki.compile(repeated_views, x, use_cache=False)
    module = ck._nisa_module()
    ops = [op for op in module.walk() if op.name in ("memref.subview", "memref.reinterpret_cast")]
    casts = [op for op in ops if op.name == "memref.reinterpret_cast"]
    subviews = [op for op in ops if op.name == "memref.subview"]
    assert len(casts) >= 8 and len(subviews) >= 4
    cast_plans = _counting(monkeypatch, "_cast_plan")
    subview_plans = _counting(monkeypatch, "_subview_plan")
    facts = []
    real_facts = rdecoder.Decoder._type_facts

    def counted_facts(self, op, t):
        facts.append(t)
        return real_facts(self, op, t)
    monkeypatch.setattr(rdecoder.Decoder, "_type_facts", counted_facts)
    prog = decode(module)
    # one plan per distinct (dtypes, base shape and space, sizes, strides), not per op
    cast_keys = {(tuple(op.static_sizes.get_values()), tuple(op.static_strides.get_values()))
                 for op in casts}
    assert len(cast_plans) == len(cast_keys) < len(casts)
    sub_keys = {(op.source.type, op.result.type, op.static_offsets, op.static_sizes,
                 op.static_strides) for op in subviews}
    assert len(subview_plans) <= len(sub_keys)
    # every type object read once
    assert len(facts) == len({id(t) for t in facts})
    got = prog.run([x], mode="program-order")[0]
    np.testing.assert_array_equal(got, ref)


@nki.jit
def two_patterns(x, col0, col1):
    """x [128, 64]: the same pattern of an SBUF tile at two register offsets (one plan):
    out = max(x[:, col0:col0+16], x[:, col1:col1+16])."""
    t = nl.ndarray((128, 64), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    y = nl.ndarray((128, 16), x.dtype, buffer=nl.sbuf)
    z = nl.ndarray((128, 16), x.dtype, buffer=nl.sbuf)
    c0 = nisa.register_alloc(col0)
    nisa.tensor_copy(dst=y, src=t.ap([[64, 128], [1, 16]], scalar_offset=c0, indirect_dim=1))
    c1 = nisa.register_alloc(col1)
    nisa.tensor_copy(dst=z, src=t.ap([[64, 128], [1, 16]], scalar_offset=c1, indirect_dim=1))
    nisa.tensor_tensor(dst=y, data1=y, data2=z, op=nl.maximum)
    out = nl.ndarray((128, 16), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=y)
    return out


def test_shared_pattern_runs_and_faults_per_op():
    x = np.random.default_rng(5).standard_normal((128, 64)).astype(np.float32)
    np.testing.assert_array_equal(two_patterns(x, 8, 40),
                                  np.maximum(x[:, 8:24], x[:, 40:56]))
    with pytest.raises(NKIRuntimeError) as info:
        two_patterns(x, 8, 49)  # the second op: free elements [49, 65) of 64
    msg = str(info.value)
    assert "memref.reinterpret_cast" in msg and "free elements [49, 65)" in msg
    assert "memref<128x64xf32" in msg


def _reference_view(arr, t, off, parts, free, sizes, strides):
    """The on-chip view as ``as_strided`` makes it (the interpreter's definition)."""
    rows = np.reshape(arr, (parts, -1), copy=False).view(t)
    p0, f0 = divmod(off, free)
    bstrides = [strides[0] // free * rows.strides[0]] + [s * t.itemsize for s in strides[1:]]
    return np.lib.stride_tricks.as_strided(rows[p0:, f0:], tuple(sizes), bstrides)


@pytest.mark.parametrize("space", ["sbuf", "psum"])
def test_on_chip_pattern_views_are_the_strided_views(space):
    """2-D on-chip patterns with positive steps are built by basic slicing: the same shape,
    strides, first byte, dtype, writeability and memory root as ``as_strided``'s view
    (other patterns still go through ``as_strided``)."""
    from nki_mlir.runtime.env import Buf
    from nki_mlir.runtime.footprint import root_of
    rng = np.random.default_rng(11)
    memory = np.zeros((16, 512), np.uint8)
    n_checked = 0
    for base_dt, view_dt in [(np.float32, np.float32), (np.float32, np.uint16),
                             (np.uint16, np.float32), (np.int8, np.int8)]:
        parts, fbytes = 16, 256
        arr = memory[:, 64:64 + fbytes].view(base_dt)      # a placed tile's typed view
        base = Buf(1, None, arr.shape, np.dtype(base_dt), space)
        src = Buf(2, None, (), np.dtype(view_dt), space)
        free = fbytes // np.dtype(view_dt).itemsize
        for _ in range(60):
            ndim = int(rng.integers(2, 4))
            pstep = int(rng.integers(0, 3))
            sizes = [int(rng.integers(1, 1 + (parts - 1) // max(pstep, 1) + 1))]
            strides = [pstep * free]
            for _d in range(ndim - 1):
                sizes.append(int(rng.integers(1, 5)))
                strides.append(int(rng.integers(0, 4)))
            span = sum(s * (n - 1) for s, n in zip(strides[1:], sizes[1:]))
            if span >= free or (sizes[0] - 1) * pstep >= parts:
                continue
            p0 = int(rng.integers(0, parts - (sizes[0] - 1) * pstep))
            f0 = int(rng.integers(0, free - span))
            off = p0 * free + f0
            dt, check, make = views._cast_plan(None, src, base, [off], tuple(sizes),
                                               tuple(strides))
            check(off, "memref<...>")
            got, ref = make(arr, dt, off), _reference_view(arr, dt, off, parts, free, sizes,
                                                           strides)
            assert got.dtype == ref.dtype and got.shape == ref.shape
            assert got.strides == ref.strides
            assert got.__array_interface__["data"] == ref.__array_interface__["data"]
            assert got.flags.writeable == ref.flags.writeable
            assert root_of(got) is root_of(ref)
            n_checked += 1
    assert n_checked > 100


def test_buf_of_an_undefined_or_scalar_value_is_located():
    """``Decoder.buf`` (its fast path reads the Buf first): an operand no executed op
    defines, then a defined non-tensor operand, each get their own located error."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IndexType
    from nki_mlir.runtime import queues
    from nki_mlir.runtime.handlers import dispatch
    c = arith.ConstantOp.from_int_and_width(3, IndexType())
    dec = rdecoder.Decoder("trn2", dispatch, queues.Schedule())
    with pytest.raises(NKIRuntimeError, match="operand 'src' is not defined by an op"):
        dec.buf(c, c.result, "src")
    dec.define(c.result, c)
    with pytest.raises(NKIRuntimeError, match="operand 'src' must be a tensor"):
        dec.buf(c, c.result, "src")
    with pytest.raises(NKIRuntimeError, match="operand 'dst' is not defined by an op"):
        dec.buf(c, None, "dst")
