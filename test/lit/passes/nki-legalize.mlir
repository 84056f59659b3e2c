// RUN: %nki-opt %s -p nki-legalize | filecheck %s
// nl.* value-returning wrappers become explicit allocations + destination-style instructions.

func.func @sugar(%a: memref<128x512xf32, #nisa.mem<shared_hbm>>, %b: memref<128x512xf32, #nisa.mem<shared_hbm>>, %w: memref<128x128xf32, #nisa.mem<shared_hbm>>) {
  %ta = nki.load(src=memref<128x512xf32, #nisa.mem<shared_hbm>> %a) : memref<128x512xf32, #nisa.mem<sbuf>>
  %tw = nki.load(src=memref<128x128xf32, #nisa.mem<shared_hbm>> %w) : memref<128x128xf32, #nisa.mem<sbuf>>
  %e = nki.exp(x=memref<128x512xf32, #nisa.mem<sbuf>> %ta) : memref<128x512xf32, #nisa.mem<sbuf>>
  %s = nki.add(x=memref<128x512xf32, #nisa.mem<sbuf>> %e, y=memref<128x512xf32, #nisa.mem<sbuf>> %ta) : memref<128x512xf32, #nisa.mem<sbuf>>
  %c = arith.constant 2.0 : f32
  %m = nki.multiply(x=memref<128x512xf32, #nisa.mem<sbuf>> %s, y=f32 %c) : memref<128x512xf32, #nisa.mem<sbuf>>
  %mm = nki.matmul(x=memref<128x128xf32, #nisa.mem<sbuf>> %tw, y=memref<128x512xf32, #nisa.mem<sbuf>> %m) : memref<128x512xf32, #nisa.mem<psum>>
  %mt = nki.matmul(x=memref<128x128xf32, #nisa.mem<sbuf>> %tw, y=memref<128x512xf32, #nisa.mem<sbuf>> %m, transpose_x=true) : memref<128x512xf32, #nisa.mem<psum>>
  %z = nki.zeros() : memref<128x512xf32, #nisa.mem<sbuf>>
  nki.store(dst=memref<128x512xf32, #nisa.mem<shared_hbm>> %b, value=memref<128x512xf32, #nisa.mem<psum>> %mm)
  nki.store(dst=memref<128x512xf32, #nisa.mem<shared_hbm>> %b, value=memref<128x512xf32, #nisa.mem<sbuf>> %z)
  func.return
}

// CHECK-LABEL: func.func @sugar
// CHECK-NOT:   nki.load
// CHECK:       %ta = nki.ndarray() : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:  nki.dma_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %ta, src=memref<128x512xf32, #nisa.mem<shared_hbm>> %a)
// CHECK:       %e = nki.ndarray() : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:  %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:  nki.activation(dst=memref<128x512xf32, #nisa.mem<sbuf>> %e, data=memref<128x512xf32, #nisa.mem<sbuf>> %ta, scale=f32 %[[ONE]], op=exp)
// CHECK:       %s = nki.ndarray() : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:  nki.tensor_tensor(dst=memref<128x512xf32, #nisa.mem<sbuf>> %s, data1=memref<128x512xf32, #nisa.mem<sbuf>> %e, data2=memref<128x512xf32, #nisa.mem<sbuf>> %ta, op=add)
// CHECK:       %m = nki.ndarray() : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:  nki.tensor_scalar(dst=memref<128x512xf32, #nisa.mem<sbuf>> %m, data=memref<128x512xf32, #nisa.mem<sbuf>> %s, operand0=f32 %c, op0=multiply)
// without transpose_x, x is transposed on TensorE and copied to SBUF first:
// CHECK:       %[[TP:.*]] = nki.ndarray() : memref<128x128xf32, #nisa.mem<psum>>
// CHECK-NEXT:  nki.nc_transpose(dst=memref<128x128xf32, #nisa.mem<psum>> %[[TP]], data=memref<128x128xf32, #nisa.mem<sbuf>> %tw)
// CHECK-NEXT:  %[[TS:.*]] = nki.ndarray() : memref<128x128xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:  nki.tensor_copy(dst=memref<128x128xf32, #nisa.mem<sbuf>> %[[TS]], src=memref<128x128xf32, #nisa.mem<psum>> %[[TP]])
// CHECK-NEXT:  %[[MM:mm.*]] = nki.ndarray() : memref<128x512xf32, #nisa.mem<psum>>
// CHECK-NEXT:  nki.nc_matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %[[MM]], stationary=memref<128x128xf32, #nisa.mem<sbuf>> %[[TS]], moving=memref<128x512xf32, #nisa.mem<sbuf>> %m)
// CHECK:       %mt = nki.ndarray() : memref<128x512xf32, #nisa.mem<psum>>
// CHECK-NEXT:  nki.nc_matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %mt, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %tw, moving=memref<128x512xf32, #nisa.mem<sbuf>> %m)
// CHECK:       %z = nki.ndarray() : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:  %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:  nki.memset(dst=memref<128x512xf32, #nisa.mem<sbuf>> %z, value=f32 %[[ZERO]])
// a PSUM value is stored through an SBUF copy (DMA cannot read PSUM):
// CHECK:       %[[C:.*]] = nki.ndarray() : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:  nki.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %[[C]], src=memref<128x512xf32, #nisa.mem<psum>> %[[MM]])
// CHECK-NEXT:  nki.dma_copy(dst=memref<128x512xf32, #nisa.mem<shared_hbm>> %b, src=memref<128x512xf32, #nisa.mem<sbuf>> %[[C]])
// CHECK-NEXT:  nki.dma_copy(dst=memref<128x512xf32, #nisa.mem<shared_hbm>> %b, src=memref<128x512xf32, #nisa.mem<sbuf>> %z)
