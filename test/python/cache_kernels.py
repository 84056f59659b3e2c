"""A kernel that reads module-level data at compile time (for the cache-key test)."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl

TABLE = np.arange(12, dtype=np.float32).reshape(4, 3)


@nki.jit
def add_table(x):
    t = nl.load(nl.shared_constant(TABLE))
    a = nl.load(x)
    s = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=s, data1=a, data2=t, op=nl.add)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, s)
    return out
