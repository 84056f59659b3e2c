"""A rolled loop whose body needs a loop unrolled is traced again in place
(frontend/loop_retry.py): one trace of the kernel, the same result as unrolling every loop,
Python variables as they were before the loop; a changed Python object falls back to a
retrace of the whole kernel."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.frontend import trace_build
from trace_counting import count_traces

RNG = np.random.default_rng(11)


def _rows(n, f=64):
    return RNG.standard_normal((n, f)).astype(np.float32)


def _unrolled(monkeypatch, kernel, *args):
    monkeypatch.setenv("NKI_MLIR_LOOPS", "unroll")
    try:
        return nki.compile(kernel, *args, use_cache=False)(*args)
    finally:
        monkeypatch.setenv("NKI_MLIR_LOOPS", "auto")


@nki.jit
def rebinds_then_branches(a):
    """The body rebinds ``scale`` (read by the next iteration) before the index meets a
    Python condition: the retry must start from scale = 1.0 again."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    scale = 1.0
    for i in range(a.shape[0] // 128):
        scale = scale * 2.0
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        if i % 2 == 1:
            nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=-1.0)
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=scale)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


def test_rebinding_before_the_failure_is_undone(monkeypatch, tmp_path):
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path))
    runs = count_traces(monkeypatch)
    a = _rows(512)
    got = nki.compile(rebinds_then_branches, a, use_cache=False)(a)
    assert len(runs) == 1
    signs = np.repeat([1.0, -1.0, 1.0, -1.0], 128)[:, None]
    scales = np.repeat([2.0, 4.0, 8.0, 16.0], 128)[:, None]
    np.testing.assert_allclose(got, a * signs * scales, rtol=1e-6)
    np.testing.assert_array_equal(got, _unrolled(monkeypatch, rebinds_then_branches, a))


@nki.jit
def inner_needs_unrolling(a):
    """The inner loop's index meets a Python condition; the outer loop can stay rolled."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 256):
        for j in range(2):
            t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[i * 256 + j * 128:i * 256 + (j + 1) * 128, :])
            if j == 1:
                nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=3.0)
            nisa.dma_copy(dst=out[i * 256 + j * 128:i * 256 + (j + 1) * 128, :], src=t)
    return out


def test_inner_loop_retried_outer_stays_rolled(monkeypatch, tmp_path):
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path))
    runs = count_traces(monkeypatch)
    a = _rows(512)
    got = nki.compile(inner_needs_unrolling, a, use_cache=False)(a)
    assert len(runs) == 1
    add = np.tile(np.repeat([0.0, 3.0], 128), 2)[:, None]
    np.testing.assert_allclose(got, a + add, rtol=1e-6)
    whats = sorted(w for w, _ in trace_build.last_loop_report().values())
    assert whats == ["rolled", "unrolled"]
    np.testing.assert_array_equal(got, _unrolled(monkeypatch, inner_needs_unrolling, a))


@nki.jit
def inner_tile_escapes(a):
    """A tile made in the inner loop is used after it: the outer loop retries with the
    inner one unrolled (Python: the inner loop's last tile)."""
    out = nl.ndarray((a.shape[0] // 2, a.shape[1]), a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 256):
        for j in nl.affine_range(2):
            t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[i * 256 + j * 128:i * 256 + (j + 1) * 128, :])
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


def test_tile_escaping_an_inner_loop_retries_the_outer_one(monkeypatch, tmp_path):
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path))
    runs = count_traces(monkeypatch)
    a = _rows(768)
    got = nki.compile(inner_tile_escapes, a, use_cache=False)(a)
    assert len(runs) == 1
    np.testing.assert_array_equal(got, np.concatenate([a[128:256], a[384:512], a[640:768]]))
    np.testing.assert_array_equal(got, _unrolled(monkeypatch, inner_tile_escapes, a))


@nki.jit
def appends_then_branches(a):
    """The body appends to a list made before the loop, then its index meets a Python
    condition: the list is put back as it was before the loop and the loop is traced
    again in place, unrolled."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    seen = []
    for i in range(a.shape[0] // 128):
        seen.append(i)
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        if i == 0:
            nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=float(len(seen)))
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


def test_changed_list_is_put_back_and_retried_in_place(monkeypatch, tmp_path):
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path))
    runs = count_traces(monkeypatch)
    a = _rows(384)
    got = nki.compile(appends_then_branches, a, use_cache=False)(a)
    assert len(runs) == 1
    want = a.copy()
    want[:128] += 1.0          # len(seen) == 1 in the first iteration, as in Python
    np.testing.assert_allclose(got, want, rtol=1e-6)


class _Stack:
    """A scoped bump allocator of our own (the pattern of nki-library's SbufManager): a
    loop body that opens a scope, allocates and closes it changes the object's counters."""

    def __init__(self):
        self.addr, self.scopes, self.allocs = 0, [], 0

    def open(self):
        self.scopes.append(self.addr)

    def alloc(self, n):
        self.addr, self.allocs = self.addr + n, self.allocs + 1

    def close(self):
        self.addr = self.scopes.pop()


@nki.jit
def allocator_in_loop(a):
    """The outer body advances ``st.allocs`` (so it is unrolled) and reads it as a Python
    value; the inner loop stays rolled."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    st = _Stack()
    for i in range(a.shape[0] // 256):
        st.open()
        for j in nl.affine_range(2):
            t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[i * 256 + j * 128:i * 256 + (j + 1) * 128, :])
            nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=float(st.allocs))
            nisa.dma_copy(dst=out[i * 256 + j * 128:i * 256 + (j + 1) * 128, :], src=t)
        st.alloc(64)
        st.close()
    return out


def test_loop_changing_an_object_is_retried_in_place(monkeypatch, tmp_path):
    """One trace of the kernel (was two: a whole retrace for the changed object), the
    object's state in every iteration as in Python (allocs == i), the inner loop rolled."""
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path))
    runs = count_traces(monkeypatch)
    a = _rows(768)
    got = nki.compile(allocator_in_loop, a, use_cache=False)(a)
    assert len(runs) == 1
    np.testing.assert_allclose(got, a + np.repeat([0.0, 1.0, 2.0], 256)[:, None], rtol=1e-6)
    report = trace_build.last_loop_report()
    whats = sorted(w for w, _ in report.values())
    assert whats == ["rolled", "unrolled"]
    assert any("changes the Python object in 'st'" in why for _, why in report.values())
    np.testing.assert_array_equal(got, _unrolled(monkeypatch, allocator_in_loop, a))


class _Box:
    pass


@nki.jit
def replaces_attribute_dict(a):
    """The body replaces an object's whole ``__dict__``: the saved contents cannot be put
    back into the new dict, so the whole kernel is traced again."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    box = _Box()
    box.n = 0
    for i in range(a.shape[0] // 128):
        box.__dict__ = {"n": box.n + 1}
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=float(box.n))
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


def test_object_that_cannot_be_put_back_falls_back_to_a_whole_retrace(monkeypatch, tmp_path):
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path))
    runs = count_traces(monkeypatch)
    a = _rows(384)
    got = nki.compile(replaces_attribute_dict, a, use_cache=False)(a)
    assert len(runs) == 2
    np.testing.assert_allclose(got, a + np.repeat([1.0, 2.0, 3.0], 128)[:, None], rtol=1e-6)


def _helper_rows(a, out, k):
    """A helper whose loop is retried (a module global reached by the kernel)."""
    for r in range(2):
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[k * 256 + r * 128:k * 256 + (r + 1) * 128, :])
        if r == 0:
            nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=0.5)
        nisa.dma_copy(dst=out[k * 256 + r * 128:k * 256 + (r + 1) * 128, :], src=t)


@nki.jit
def via_helper(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for k in nl.affine_range(a.shape[0] // 256):
        _helper_rows(a, out, k)
    return out


def test_helper_loop_is_retried_in_place(monkeypatch, tmp_path):
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path))
    runs = count_traces(monkeypatch)
    a = _rows(512)
    got = nki.compile(via_helper, a, use_cache=False)(a)
    assert len(runs) == 1
    scale = np.tile(np.repeat([0.5, 1.0], 128), 2)[:, None]
    np.testing.assert_allclose(got, a * scale, rtol=1e-6)
    np.testing.assert_array_equal(got, _unrolled(monkeypatch, via_helper, a))


def _last_rows(a, r0, neg):
    """Copies two row tiles; returns the last one (made in the loop).  ``neg and r == 1``
    reads the index only when ``neg``."""
    for r in range(2):
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[r0 + r * 128:r0 + (r + 1) * 128, :])
        if neg and r == 1:
            nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=-1.0)
    return t


@nki.jit
def unrolled_late(a):
    """The helper's loop stays rolled in the first call, is retried in place in the second;
    then the first call's tile is used after its (rolled) loop: the whole kernel is traced
    again with that loop unrolled from the start."""
    out = nl.ndarray((256, a.shape[1]), a.dtype, buffer=nl.shared_hbm)
    t1 = _last_rows(a, 0, False)
    t2 = _last_rows(a, 256, True)
    nisa.dma_copy(dst=out[0:128, :], src=t1)
    nisa.dma_copy(dst=out[128:256, :], src=t2)
    return out


def test_loop_retried_in_place_then_named_by_an_earlier_instance(monkeypatch, tmp_path):
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path))
    runs = count_traces(monkeypatch)
    a = _rows(512)
    got = nki.compile(unrolled_late, a, use_cache=False)(a)
    assert len(runs) == 2
    np.testing.assert_array_equal(got, np.concatenate([a[128:256], -a[384:512]]))
