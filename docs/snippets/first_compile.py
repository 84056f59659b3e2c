import numpy as np

import nki_mlir as nki
from add_kernel import nki_tensor_add_kernel

a = np.ones((128, 512), np.float32)
b = np.full((128, 512), 2.0, np.float32)
c = nki.simulate(nki_tensor_add_kernel)(a, b)
print(c[0, :4])

ck = nki.compile(nki_tensor_add_kernel, a, b)
print(ck.artifact)
print(ck.ir("nki"))
print(ck.ir("nisa"))
print(ck(a, b)[0, :4])
est = ck.estimate()
print(f"{est.latency_ns:.0f} ns, bound {est.bound_ns:.0f} ns, ratio {est.ratio:.2f}")
