"""A kernel file written exactly as for AWS's NKI (Beta 2 / 0.3+ imports), with a __main__."""
import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
import nki.typing as nt  # noqa: F401


@nki.jit
def relu_scale(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.activation(dst=y, op=nl.relu, data=t, scale=3.0)
    nisa.dma_copy(dst=out, src=y)
    return out


if __name__ == "__main__":
    x = np.linspace(-1, 1, 128 * 64, dtype=np.float32).reshape(128, 64)
    y = nki.simulate(relu_scale)(x)
    assert np.allclose(y, np.maximum(3 * x, 0)), "mismatch"
    print("relu_scale ok", float(y.max()))
