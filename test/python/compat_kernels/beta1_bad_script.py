"""A Beta 1 script whose kernel updates an immutable parameter (run by test_compat.py)."""
import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def bad_kernel(in_tensor):
    x = nl.load(in_tensor)
    nl.store(in_tensor, value=x + 1.0)
    return in_tensor


if __name__ == "__main__":
    print("before the kernel")
    bad_kernel(np.zeros((128, 64), np.float32))
    print("not reached")
