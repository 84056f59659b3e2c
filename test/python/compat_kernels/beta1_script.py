"""A kernel script written against NKI Beta 1 (``neuronxcc.nki``), exactly as for the Neuron
SDK <= 2.26, with a ``__main__`` block.  test_compat.py runs it unmodified with
``python -m nki_mlir.compat beta1_script.py [--rows N]``.
"""
import sys

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt


@nki.jit
def exp_add_kernel(a_tensor, b_tensor):
    """out = exp(a) + 2 * b, tile by tile (128 rows at a time)."""
    out = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(a_tensor.shape[1])[None, :]
    for t in nl.affine_range(a_tensor.shape[0] // 128):
        a = nl.load(a_tensor[t * 128 + i_p, i_f])
        b = nl.load(b_tensor[t * 128 + i_p, i_f])
        c = nl.exp(a) + b * 2.0
        nl.store(out[t * 128 + i_p, i_f], value=c)
    return out


@nki.jit
def column_sum_kernel(a_tensor: nt.tensor[512, 256], acc_tensor: nt.mutable_tensor):
    """acc += the sum of the four 128-row blocks of a (an accumulator in SBUF)."""
    i_p, i_f = nl.mgrid[0:128, 0:256]
    acc = nl.ndarray((128, 256), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0))
    acc[i_p, i_f] = nl.load(acc_tensor[i_p, i_f])
    for k in nl.affine_range(4):
        blk = nl.load(a_tensor[k * 128 + i_p, i_f])
        acc = nl.loop_reduce(blk, op=np.add, loop_indices=[k])
    nl.store(acc_tensor[i_p, i_f], value=acc)
    return acc_tensor


def main(argv):
    rows = int(argv[argv.index("--rows") + 1]) if "--rows" in argv else 256
    rng = np.random.default_rng(0)
    a = rng.standard_normal((rows, 512)).astype(np.float32)
    b = rng.standard_normal((rows, 512)).astype(np.float32)
    out = nki.simulate_kernel(exp_add_kernel, a, b)
    ref = np.exp(a) + 2.0 * b
    assert np.allclose(out, ref, rtol=1e-5, atol=1e-5), "exp_add_kernel mismatch"
    print(f"exp_add_kernel ok {out.shape} max_err={float(np.abs(out - ref).max()):.1e}")

    x = rng.standard_normal((512, 256)).astype(np.float32)
    acc = np.ones((128, 256), np.float32)
    got = column_sum_kernel(x, acc)
    ref2 = 1.0 + x.reshape(4, 128, 256).sum(axis=0)
    assert np.allclose(got, ref2, rtol=1e-5, atol=1e-5), "column_sum_kernel mismatch"
    assert np.allclose(acc, ref2, rtol=1e-5, atol=1e-5), "mutable parameter not updated in place"
    print("column_sum_kernel ok")


if __name__ == "__main__":
    main(sys.argv[1:])
