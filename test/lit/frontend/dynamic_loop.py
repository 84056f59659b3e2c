# RUN: %nki-mlir compile %s::repeat_rows --arg 128x64xf32 --arg 1x1xi32 --stage nki | filecheck %s
# RUN: %nki-mlir compile %s::repeat_rows --arg 128x64xf32 --arg 1x1xi32 --stage nisa | filecheck %s --check-prefix=NISA
# A runtime loop whose trip count is a register loaded from HBM (nl.dynamic_range), a
# nl.while_loop with its condition carried as an scf.while value, and a no_reorder block.
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def repeat_rows(x, count):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    n = nisa.register_alloc()
    nisa.register_load(n, count)
    with nl.no_reorder():
        xt = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=xt, src=x)
        acc = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
        nisa.memset(dst=acc, value=0.0)
    for i in nl.dynamic_range(n):
        nisa.tensor_tensor(dst=acc, data1=acc, data2=xt, op=nl.add)
    flag = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.memset(dst=flag, value=0)
    seen = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nxt = nisa.register_alloc(0)

    def body(r):
        nisa.register_store(seen, r)     # the condition value, passed by value
        nisa.register_load(nxt, flag)    # flag is 0: the body runs once when n != 0
        return nxt

    nl.while_loop(n, body)
    nisa.dma_copy(dst=out, src=acc)
    return out

# CHECK-LABEL: func.func @repeat_rows(%x: memref<128x64xf32, #nisa.mem<shared_hbm>>, %count: memref<1x1xi32, #nisa.mem<shared_hbm>>)
# CHECK:       %n = nki.register_alloc() : memref<1xi32, #nisa.mem<reg>>
# CHECK-NEXT:  nki.register_load(dst=memref<1xi32, #nisa.mem<reg>> %n, src=memref<1x1xi32, #nisa.mem<shared_hbm>> %count)
# CHECK-NEXT:  nisa.no_reorder_begin
# CHECK-NEXT:  %xt = nki.ndarray(name=xt)
# CHECK:       nki.memset(dst=memref<128x64xf32, #nisa.mem<sbuf>> %acc
# CHECK-NEXT:  nisa.no_reorder_end
# CHECK:       %[[UB:.*]] = nki.register_read(src=memref<1xi32, #nisa.mem<reg>> %n) : index
# CHECK:       scf.for %i = %c0 to %[[UB]] step %c1 {
# CHECK-NEXT:    nki.tensor_tensor(dst={{.*}} %acc, data1={{.*}} %acc, data2={{.*}} %xt, op=add)
# CHECK-NEXT:  } {nki.range = "dynamic"}
# CHECK:       %nxt = nki.register_alloc(x=0) : memref<1xi32, #nisa.mem<reg>>
# CHECK-NEXT:  %[[INIT:.*]] = nki.register_read(src=memref<1xi32, #nisa.mem<reg>> %n) : index
# CHECK-NEXT:  %{{.*}} = scf.while (%[[C:.*]] = %[[INIT]]) : (index) -> index {
# CHECK:         %[[NE:.*]] = arith.cmpi ne, %[[C]], %c0{{.*}} : index
# CHECK-NEXT:    scf.condition(%[[NE]]) %[[C]] : index
# CHECK-NEXT:  } do {
# CHECK-NEXT:  ^bb0(%[[R:.*]]: index):
# CHECK-NEXT:    nki.register_store(dst={{.*}} %seen, src=index %[[R]])
# CHECK-NEXT:    nki.register_load(dst={{.*}} %nxt, src={{.*}} %flag)
# CHECK-NEXT:    %[[NEXT:.*]] = nki.register_read(src={{.*}} %nxt) : index
# CHECK-NEXT:    scf.yield %[[NEXT]] : index
# CHECK-NEXT:  } attributes {nki.range = "dynamic"}
# CHECK:       func.return %out

# NISA:      nisa.register_alloc() engine=sync {nkim.id = 0 : i64, nkim.queue = "sync", nkim.deps = []}
# NISA:      nisa.no_reorder_begin
# NISA:      nisa.dma_copy({{.*}}) engine=dma {nkim.id = 2 : i64, nkim.queue = "dma0", nkim.deps = []}
# NISA:      nisa.memset({{.*}}) engine=vector {nkim.id = 3 : i64, nkim.queue = "vector", nkim.deps = [2 : i64]}
# NISA-NEXT: nisa.no_reorder_end
# NISA:      nisa.register_read({{.*}}) engine=sync {{.*}} : index
# NISA:      scf.for
# NISA:        nisa.tensor_tensor_arith({{.*}}op=add) engine=vector
# NISA:      scf.while
# NISA-NOT:  nki.{{[a-z_]+}}(
