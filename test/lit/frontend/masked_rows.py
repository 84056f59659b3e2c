# RUN: %nki-mlir compile %s::masked_rows --arg 300x64xf32 --stage nki | filecheck %s
# RUN: %nki-mlir compile %s::masked_rows --arg 300x64xf32 --stage nisa | filecheck %s --check-prefix=NISA
# Beta 1 mask= on the last partial 128-row tile of an affine_range loop (300 = 128 + 128 + 44):
# each masked instruction becomes one version per distinct tile shape, guarded by an scf.if on
# the loop index; the operand views are built inside the guard with the masked shape (a
# full-size view of the last tile would run past row 300).  A masked load is one DMA into the
# masked part of its result tile.
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def masked_rows(x):
    n, f = x.shape
    out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(f)[None, :]
    for t in nl.affine_range((n + 127) // 128):
        i_p = t * 128 + nl.arange(128)[:, None]
        a = nl.load(x[i_p, i_f], mask=(i_p < n))
        nl.store(out[i_p, i_f], value=a, mask=(i_p < n))
    return out

# CHECK-LABEL: func.func @masked_rows(%x: memref<300x64xf32, #nisa.mem<shared_hbm>>)
# CHECK:       scf.for %t = %c0 to %c3 step %c1 {
# CHECK-NEXT:    %a = nki.ndarray(name=a) : memref<128x64xf32, #nisa.mem<sbuf>>
# CHECK-NEXT:    %c2 = arith.constant 2 : index
# CHECK-NEXT:    %[[C:.*]] = arith.cmpi slt, %t, %c2 : index
# CHECK-NEXT:    scf.if %[[C]] {
# CHECK:           %[[OFF:.*]] = arith.muli %t, %c128 : index
# CHECK-NEXT:      %[[V:.*]] = memref.subview %x[%[[OFF]], 0] [128, 64] [1, 1]
# CHECK-NEXT:      nki.dma_copy(dst={{.*}} %a, src={{.*}} %[[V]])
# CHECK-NEXT:    } else {
# CHECK-NEXT:      %[[P:.*]] = memref.subview %a[0, 0] [44, 64] [1, 1] : memref<128x64xf32, #nisa.mem<sbuf>> to memref<44x64xf32, strided<[64, 1]>, #nisa.mem<sbuf>>
# CHECK:           %[[OFF2:.*]] = arith.muli %t, %{{.*}} : index
# CHECK-NEXT:      %[[V2:.*]] = memref.subview %x[%[[OFF2]], 0] [44, 64] [1, 1] : memref<300x64xf32, #nisa.mem<shared_hbm>> to memref<44x64xf32, strided<[64, 1], offset: ?>, #nisa.mem<shared_hbm>>
# CHECK-NEXT:      nki.dma_copy(dst={{.*}} %[[P]], src={{.*}} %[[V2]])
# CHECK-NEXT:    }
# CHECK-NEXT:    %[[C2:.*]] = arith.cmpi slt, %t, %c2 : index
# CHECK-NEXT:    scf.if %[[C2]] {
# CHECK:           %[[O:.*]] = memref.subview %out[%{{.*}}, 0] [128, 64] [1, 1]
# CHECK-NEXT:      nki.store(dst={{.*}} %[[O]], value={{.*}} %a)
# CHECK-NEXT:    } else {
# CHECK:           %[[O2:.*]] = memref.subview %out[%{{.*}}, 0] [44, 64] [1, 1]
# CHECK-NEXT:      %[[A2:.*]] = memref.subview %a[0, 0] [44, 64] [1, 1]
# CHECK-NEXT:      nki.store(dst={{.*}} %[[O2]], value={{.*}} %[[A2]])
# CHECK-NEXT:    }
# CHECK-NEXT:  } {nki.range = "affine"}

# NISA:        scf.if %{{.*}} {
# NISA:          memref.subview %x[%{{.*}}, 0] [128, 64] [1, 1]
# NISA-NEXT:     nisa.dma_copy(dst=memref<128x64xf32, #nisa.mem<sbuf>> %a, src=memref<128x64xf32
# NISA-NEXT:   } else {
# NISA-NEXT:     memref.subview %a[0, 0] [44, 64] [1, 1]
# NISA:          memref.subview %x[%{{.*}}, 0] [44, 64] [1, 1]
# NISA-NEXT:     nisa.dma_copy(dst=memref<44x64xf32, strided<[64, 1]>, #nisa.mem<sbuf>> %{{.*}}, src=memref<44x64xf32
# NISA-NEXT:   }
