# RUN: not %nki-mlir compile %s::k --arg 1x1xi32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(count):
    n = nisa.register_alloc(3)
    for i in nl.dynamic_range(n):
        t = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=count, src=t)
    return count

# CHECK: dynamic_loop_tensor_scope.py:12:5: unsupported construct: tensor 't' was created inside a loop body and cannot be used outside it; allocate it before the loop [err_local_variable_used_out_of_scope]
# CHECK-NEXT: {{^}}    nisa.dma_copy(dst=count, src=t)
# CHECK-NEXT: {{^}}    ^
