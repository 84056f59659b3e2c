"""A kernel file written out by tests that run it as a script or through the CLI (in a
subprocess, as a user would): ``EXAMPLE_ARGS`` for the CLI, and run as ``__main__`` it
compiles, checks and prints where the compile came from (None, "memory" or "disk")."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl

EXAMPLE_ARGS = {"twice": ["128x64xf32"]}


@nki.jit
def twice(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out, src=t)
    return out


if __name__ == "__main__":
    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    ck = nki.compile(twice, x)
    np.testing.assert_array_equal(ck(x), 2 * x)
    print(ck.cache_hit)


def copy_to(folder) -> str:
    """Write this file into ``folder`` (a fresh path, so its source hash is its own); returns it."""
    import os
    import shutil
    dest = os.path.join(folder, "twice_kernel.py")
    shutil.copyfile(__file__, dest)
    return dest
