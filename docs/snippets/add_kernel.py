import numpy as np

import nki_mlir as nki
import nki_mlir.language as nl
import nki_mlir.isa as nisa


@nki.jit
def nki_tensor_add_kernel(a_input, b_input):
    """Element-wise addition of two [P <= 128, F] tensors."""
    assert a_input.shape == b_input.shape
    assert a_input.dtype == b_input.dtype
    assert a_input.shape[0] <= nl.tile_size.pmax

    a_tile = nl.ndarray(shape=a_input.shape, dtype=a_input.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a_tile, src=a_input)
    b_tile = nl.ndarray(shape=b_input.shape, dtype=b_input.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=b_tile, src=b_input)

    c_tile = nl.ndarray(shape=a_input.shape, dtype=a_input.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=c_tile, data1=a_tile, data2=b_tile, op=nl.add)

    c_output = nl.ndarray(dtype=a_input.dtype, shape=a_input.shape, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=c_output, src=c_tile)
    return c_output


EXAMPLE_ARGS = {"nki_tensor_add_kernel": ["128x512xf32", "128x512xf32"]}

if __name__ == "__main__":
    a = np.random.rand(128, 512).astype(np.float32)
    b = np.random.rand(128, 512).astype(np.float32)
    c = nki_tensor_add_kernel(a, b)
    print("max abs error:", np.abs(c - (a + b)).max())
