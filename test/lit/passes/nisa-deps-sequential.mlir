// Dependence analysis (--print-deps): a true loop-carried dependency in a sequential_range
// body.  acc is defined outside the loop and every iteration reads and writes it
// (acc = acc + x): RAW / WAR / WAW carried at the loop with distance 1.  The read of
// acc[:, 0:128] two iterations later (iteration i reads the column block written by
// iteration i-2 into hist) has distance 2.
// RUN: %nki-opt %s -p nisa-schedule --print-deps | filecheck %s

// CHECK-LABEL: // deps @accumulate:
// CHECK-DAG:   %2 tensor_tensor_arith (k.py:6) -> %2 tensor_tensor_arith (k.py:6)  RAW lhs  [carried at loop k.py:3 distance 1]
// CHECK-DAG:   %2 tensor_tensor_arith (k.py:6) -> %2 tensor_tensor_arith (k.py:6)  WAW dst  [carried at loop k.py:3 distance 1]
// the memset before the loop: a loop-independent edge (program order)
// CHECK-DAG:   %0 memset (k.py:2) -> %2 tensor_tensor_arith (k.py:6)  WAW dst  [same iteration]
// hist[:, i*128 : i*128+128] is written in iteration i and read in iteration i+2:
// CHECK-DAG:   %3 tensor_copy (k.py:7) -> %1 tensor_copy (k.py:5)  RAW src  [carried at loop k.py:3 distance 2]
// CHECK-NOT:   %3 tensor_copy (k.py:7) -> %1 tensor_copy (k.py:5)  RAW src  [carried at loop k.py:3 distance 1]
// the schedule: the gpsimd copy waits for the previous iteration's add (WAR on x, most
// recent instance of 2); that also covers the distance-2 RAW from 3 on the same (vector)
// queue, which ran before it, so no deps_carried is needed
// CHECK:       nisa.tensor_copy{{.*}}engine=gpsimd {nkim.id = 1 : i64, nkim.queue = "gpsimd", nkim.deps = [2 : i64]}
func.func @accumulate(%in: memref<128x512xf32, #nisa.mem<shared_hbm>>, %out: memref<128x512xf32, #nisa.mem<shared_hbm>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c6 = arith.constant 6 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %acc = nisa.alloc : memref<128x128xf32, #nisa.mem<sbuf>> loc("k.py":1:3)
  %hist = nisa.alloc : memref<128x512xf32, #nisa.mem<sbuf>> loc("k.py":1:3)
  %x = nisa.alloc : memref<128x128xf32, #nisa.mem<sbuf>> loc("k.py":1:3)
  nisa.memset(dst=memref<128x128xf32, #nisa.mem<sbuf>> %acc, value=f32 %zero) engine=vector loc("k.py":2:3)
  scf.for %i = %c2 to %c6 step %c1 {
    %back = arith.subi %i, %c2 : index
    %rb = arith.muli %back, %c128 : index
    %old = memref.subview %hist[0, %rb] [128, 128] [1, 1] : memref<128x512xf32, #nisa.mem<sbuf>> to memref<128x128xf32, strided<[512, 1], offset: ?>, #nisa.mem<sbuf>>
    nisa.tensor_copy(dst=memref<128x128xf32, #nisa.mem<sbuf>> %x, src=memref<128x128xf32, strided<[512, 1], offset: ?>, #nisa.mem<sbuf>> %old) engine=gpsimd loc("k.py":5:5)
    nisa.tensor_tensor_arith(dst=memref<128x128xf32, #nisa.mem<sbuf>> %acc, lhs=memref<128x128xf32, #nisa.mem<sbuf>> %acc, rhs=memref<128x128xf32, #nisa.mem<sbuf>> %x, op=add) engine=vector loc("k.py":6:5)
    %r = arith.muli %i, %c128 : index
    %new = memref.subview %hist[0, %r] [128, 128] [1, 1] : memref<128x512xf32, #nisa.mem<sbuf>> to memref<128x128xf32, strided<[512, 1], offset: ?>, #nisa.mem<sbuf>>
    nisa.tensor_copy(dst=memref<128x128xf32, strided<[512, 1], offset: ?>, #nisa.mem<sbuf>> %new, src=memref<128x128xf32, #nisa.mem<sbuf>> %acc) engine=vector loc("k.py":7:5)
  } {nki.range = "sequential"} loc("k.py":3:3)
  func.return
}
