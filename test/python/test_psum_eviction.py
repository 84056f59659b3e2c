"""PSUM eviction (``nki_mlir/passes/psum_spill.py``): a kernel keeping more float32
accumulators live than PSUM's 8 banks hold compiles with spilling on (the default), its
finished accumulators copied to SBUF; it runs on the interpreter (hazard checks on,
conftest.py) with exactly the numbers of the same products read as soon as they are done
(no eviction); with ``spill=False`` the overflow stays a located error."""
import numpy as np
import pytest

import spill_kernels as K
from nki_mlir.errors import NKIAllocationError


def _inputs(n):
    rng = np.random.default_rng(3)
    return (rng.standard_normal((128, 128)).astype(np.float32),
            rng.standard_normal((128, n * K.W)).astype(np.float32))


def _run(ck, args, kw):
    out = ck.run(args, kw)
    return np.asarray(out[0] if isinstance(out, (tuple, list)) else out)


def test_late_reads_evict_finished_accumulators_bit_exactly():
    args = _inputs(12)
    late = K.products_read_late.compile_with(args, {"N": 12}, target="trn2")
    ir = late.ir()
    # 12 banks wanted, 8 there: the first 4 accumulators are evicted once done
    assert ir.count('.evicted"') == 4
    assert ir.count("nisa.tensor_copy") == 4
    early = K.products_read_late.compile_with(args, {"N": 12, "LATE": False}, target="trn2")
    assert ".evicted" not in early.ir()
    got = _run(late, args, {"N": 12})
    np.testing.assert_array_equal(got, _run(early, args, {"N": 12, "LATE": False}))
    a, b = (x.astype(np.float64) for x in args)
    np.testing.assert_allclose(got, np.exp(0.02 * (a.T @ b)), rtol=1e-5)


def test_kernel_that_fits_is_not_changed():
    args = _inputs(8)
    on = K.products_read_late.compile_with(args, {"N": 8}, target="trn2")
    off = K.products_read_late.compile_with(args, {"N": 8}, target="trn2", spill=False)
    assert ".evicted" not in on.ir()
    assert on.ir() == off.ir()


def test_overflow_is_a_located_error_with_spilling_off():
    args = _inputs(9)
    with pytest.raises(NKIAllocationError) as info:
        K.products_read_late.compile_with(args, {"N": 9}, target="trn2", spill=False)
    err = info.value
    assert "cannot place tensor 'p' in PSUM" in str(err)
    assert err.loc is not None and err.loc.file.endswith("spill_kernels.py")
