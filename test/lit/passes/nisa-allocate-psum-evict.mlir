// nisa-allocate, PSUM eviction (nki_mlir/passes/psum_spill.py, with spilling, on by
// default): when the PSUM tensors live at the same time need more than PSUM's 8 banks, a
// tensor TensorE is done writing but that is read later is copied to an SBUF tensor
// ("<name>.evicted") right after its last TensorE write, and its later readers (Vector /
// Scalar instructions, through the same views) read that copy.  Nine [128, 512] float32
// accumulators all read after the last matmul: p0, the one done first, is evicted.
// With spill=false the same kernel is an out-of-memory error located at the ninth alloc.
// RUN: %nki-opt %s -p nisa-allocate | filecheck %s
// RUN: %nki-opt %s -p 'nisa-allocate{spill=false}' --verify-diagnostics | filecheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @nine_accumulators
// CHECK:         %p0 = nisa.alloc {{.*}}nkim.bank = 0 : i64} : memref<128x512xf32, #nisa.mem<psum>>
// CHECK-NEXT:    nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p0,
// CHECK-NEXT:    %[[E:.*]] = nisa.alloc alignment=64 {nkim.name = "p0.evicted", nkim.spill_of = "p0", {{.*}}} : memref<128x512xf32, #nisa.mem<sbuf>>
// CHECK-NEXT:    nisa.tensor_copy(dst=memref<128x512xf32, #nisa.mem<sbuf>> %[[E]], src=memref<128x512xf32, #nisa.mem<psum>> %p0) engine=vector
// CHECK:         %p8 = nisa.alloc {{.*}}nkim.bank = 0 : i64} : memref<128x512xf32, #nisa.mem<psum>>
// CHECK:         %[[V:.*]] = memref.subview %[[E]][0, 0] [128, 256] [1, 1] : memref<128x512xf32, #nisa.mem<sbuf>> to memref<128x256xf32, strided<[512, 1]>, #nisa.mem<sbuf>>
// CHECK-NEXT:    nisa.tensor_copy(dst={{.*}} %wv, src=memref<128x256xf32, strided<[512, 1]>, #nisa.mem<sbuf>> %[[V]]) engine=vector
// CHECK-NEXT:    nisa.tensor_tensor_arith({{.*}} rhs=memref<128x512xf32, #nisa.mem<psum>> %p1, op=add)
// CHECK-NOT:     #nisa.mem<psum>> %p0
// CHECK-NOT:     .evicted
// OFF: k.py:18:8: out of memory: cannot place tensor 'p8' in PSUM
module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @nine_accumulators(%o: memref<128x512xf32, #nisa.mem<shared_hbm>>) {
    %zero = arith.constant 0.0 : f32
    %a = nisa.alloc {nkim.name = "a"} : memref<128x128xf32, #nisa.mem<sbuf>> loc("k.py":2:4)
    nisa.memset(dst=memref<128x128xf32, #nisa.mem<sbuf>> %a, value=f32 %zero) engine=vector loc("k.py":3:4)
    %m = nisa.alloc {nkim.name = "m"} : memref<128x512xf32, #nisa.mem<sbuf>> loc("k.py":4:4)
    nisa.memset(dst=memref<128x512xf32, #nisa.mem<sbuf>> %m, value=f32 %zero) engine=vector loc("k.py":5:4)
    %p0 = nisa.alloc {nkim.name = "p0"} : memref<128x512xf32, #nisa.mem<psum>> loc("k.py":10:8)
    nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p0, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %a, moving=memref<128x512xf32, #nisa.mem<sbuf>> %m, is_transpose=false, perf_opt=none_, psum_accumulate_flags=auto) engine=tensor loc("k.py":20:8)
    %p1 = nisa.alloc {nkim.name = "p1"} : memref<128x512xf32, #nisa.mem<psum>> loc("k.py":11:8)
    nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p1, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %a, moving=memref<128x512xf32, #nisa.mem<sbuf>> %m, is_transpose=false, perf_opt=none_, psum_accumulate_flags=auto) engine=tensor loc("k.py":21:8)
    %p2 = nisa.alloc {nkim.name = "p2"} : memref<128x512xf32, #nisa.mem<psum>> loc("k.py":12:8)
    nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p2, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %a, moving=memref<128x512xf32, #nisa.mem<sbuf>> %m, is_transpose=false, perf_opt=none_, psum_accumulate_flags=auto) engine=tensor loc("k.py":22:8)
    %p3 = nisa.alloc {nkim.name = "p3"} : memref<128x512xf32, #nisa.mem<psum>> loc("k.py":13:8)
    nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p3, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %a, moving=memref<128x512xf32, #nisa.mem<sbuf>> %m, is_transpose=false, perf_opt=none_, psum_accumulate_flags=auto) engine=tensor loc("k.py":23:8)
    %p4 = nisa.alloc {nkim.name = "p4"} : memref<128x512xf32, #nisa.mem<psum>> loc("k.py":14:8)
    nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p4, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %a, moving=memref<128x512xf32, #nisa.mem<sbuf>> %m, is_transpose=false, perf_opt=none_, psum_accumulate_flags=auto) engine=tensor loc("k.py":24:8)
    %p5 = nisa.alloc {nkim.name = "p5"} : memref<128x512xf32, #nisa.mem<psum>> loc("k.py":15:8)
    nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p5, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %a, moving=memref<128x512xf32, #nisa.mem<sbuf>> %m, is_transpose=false, perf_opt=none_, psum_accumulate_flags=auto) engine=tensor loc("k.py":25:8)
    %p6 = nisa.alloc {nkim.name = "p6"} : memref<128x512xf32, #nisa.mem<psum>> loc("k.py":16:8)
    nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p6, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %a, moving=memref<128x512xf32, #nisa.mem<sbuf>> %m, is_transpose=false, perf_opt=none_, psum_accumulate_flags=auto) engine=tensor loc("k.py":26:8)
    %p7 = nisa.alloc {nkim.name = "p7"} : memref<128x512xf32, #nisa.mem<psum>> loc("k.py":17:8)
    nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p7, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %a, moving=memref<128x512xf32, #nisa.mem<sbuf>> %m, is_transpose=false, perf_opt=none_, psum_accumulate_flags=auto) engine=tensor loc("k.py":27:8)
    %p8 = nisa.alloc {nkim.name = "p8"} : memref<128x512xf32, #nisa.mem<psum>> loc("k.py":18:8)
    nisa.matmul(dst=memref<128x512xf32, #nisa.mem<psum>> %p8, stationary=memref<128x128xf32, #nisa.mem<sbuf>> %a, moving=memref<128x512xf32, #nisa.mem<sbuf>> %m, is_transpose=false, perf_opt=none_, psum_accumulate_flags=auto) engine=tensor loc("k.py":28:8)
    %w = nisa.alloc {nkim.name = "w"} : memref<128x512xf32, #nisa.mem<sbuf>> loc("k.py":30:4)
    %v = memref.subview %p0[0, 0] [128, 256] [1, 1] : memref<128x512xf32, #nisa.mem<psum>> to memref<128x256xf32, strided<[512, 1]>, #nisa.mem<psum>> loc("k.py":31:4)
    %wv = memref.subview %w[0, 0] [128, 256] [1, 1] : memref<128x512xf32, #nisa.mem<sbuf>> to memref<128x256xf32, strided<[512, 1]>, #nisa.mem<sbuf>> loc("k.py":31:4)
    nisa.tensor_copy(dst=memref<128x256xf32, strided<[512, 1]>, #nisa.mem<sbuf>> %wv, src=memref<128x256xf32, strided<[512, 1]>, #nisa.mem<psum>> %v) engine=vector loc("k.py":31:4)
    nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %w, lhs=memref<128x512xf32, #nisa.mem<sbuf>> %w, rhs=memref<128x512xf32, #nisa.mem<psum>> %p1, op=add) engine=vector loc("k.py":33:4)
    nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %w, lhs=memref<128x512xf32, #nisa.mem<sbuf>> %w, rhs=memref<128x512xf32, #nisa.mem<psum>> %p2, op=add) engine=vector loc("k.py":34:4)
    nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %w, lhs=memref<128x512xf32, #nisa.mem<sbuf>> %w, rhs=memref<128x512xf32, #nisa.mem<psum>> %p3, op=add) engine=vector loc("k.py":35:4)
    nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %w, lhs=memref<128x512xf32, #nisa.mem<sbuf>> %w, rhs=memref<128x512xf32, #nisa.mem<psum>> %p4, op=add) engine=vector loc("k.py":36:4)
    nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %w, lhs=memref<128x512xf32, #nisa.mem<sbuf>> %w, rhs=memref<128x512xf32, #nisa.mem<psum>> %p5, op=add) engine=vector loc("k.py":37:4)
    nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %w, lhs=memref<128x512xf32, #nisa.mem<sbuf>> %w, rhs=memref<128x512xf32, #nisa.mem<psum>> %p6, op=add) engine=vector loc("k.py":38:4)
    nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %w, lhs=memref<128x512xf32, #nisa.mem<sbuf>> %w, rhs=memref<128x512xf32, #nisa.mem<psum>> %p7, op=add) engine=vector loc("k.py":39:4)
    nisa.tensor_tensor_arith(dst=memref<128x512xf32, #nisa.mem<sbuf>> %w, lhs=memref<128x512xf32, #nisa.mem<sbuf>> %w, rhs=memref<128x512xf32, #nisa.mem<psum>> %p8, op=add) engine=vector loc("k.py":40:4)
    nisa.dma_copy(dst=memref<128x512xf32, #nisa.mem<shared_hbm>> %o, src=memref<128x512xf32, #nisa.mem<sbuf>> %w, oob_is_err=true) engine=dma loc("k.py":45:4)
    func.return
  }
}
