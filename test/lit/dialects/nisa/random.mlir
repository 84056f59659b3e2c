// The random-number ops of the nisa dialect (nki_mlir/instructions/random.py), round-tripped
// custom -> custom and custom -> generic -> custom (trn3: Vector state and rand2 allowed).
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

module attributes {nisa.target = #nisa.target<trn3>} {
  func.func @random(%x: memref<128x512xbf16, #nisa.mem<sbuf>>) {
    %f0 = arith.constant 0.0 : f32
    %f1 = arith.constant 1.0 : f32
    %half = arith.constant 5.000000e-01 : f32
    %r8 = nisa.alloc : memref<128x512xi8, #nisa.mem<sbuf>>
    %r32 = nisa.alloc : memref<1x4x8xui32, #nisa.mem<psum>>
    %seed = nisa.alloc : memref<1x1xui32, #nisa.mem<sbuf>>
    %st6 = nisa.alloc : memref<128x6xui32, #nisa.mem<sbuf>>
    %st24 = nisa.alloc : memref<64x24xui32, #nisa.mem<psum>>
    %u = nisa.alloc : memref<128x512xf32, #nisa.mem<sbuf>>
    %lo = nisa.alloc : memref<128x1xf32, #nisa.mem<sbuf>>
    %y = nisa.alloc : memref<128x512xbf16, #nisa.mem<sbuf>>
    nisa.rng(dst=memref<128x512xi8, #nisa.mem<sbuf>> %r8) engine=gpsimd
    nisa.rng(dst=memref<1x4x8xui32, #nisa.mem<psum>> %r32) engine=vector
    nisa.set_rng_seed(src_seeds=memref<1x1xui32, #nisa.mem<sbuf>> %seed) engine=vector
    nisa.rand_set_state(src_seeds=memref<128x6xui32, #nisa.mem<sbuf>> %st6) engine=gpsimd
    nisa.rand_get_state(dst=memref<128x6xui32, #nisa.mem<sbuf>> %st6) engine=gpsimd
    nisa.rand_get_state(dst=memref<64x24xui32, #nisa.mem<psum>> %st24) engine=vector
    nisa.rand2(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, min=f32 %f0, max=f32 %f1) engine=vector
    nisa.rand2(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, min=memref<128x1xf32, #nisa.mem<sbuf>> %lo, max=f32 %f1) engine=vector
    nisa.dropout(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, data=memref<128x512xbf16, #nisa.mem<sbuf>> %x, prob=f32 %half) engine=vector
    nisa.dropout(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, data=memref<128x512xbf16, #nisa.mem<sbuf>> %x, prob=memref<128x1xf32, #nisa.mem<sbuf>> %lo) engine=vector
    func.return
  }
}

// CHECK-LABEL: func.func @random
// CHECK: nisa.rng(dst=memref<128x512xi8, #nisa.mem<sbuf>> %r8) engine=gpsimd
// CHECK-NEXT: nisa.rng(dst=memref<1x4x8xui32, #nisa.mem<psum>> %r32) engine=vector
// CHECK-NEXT: nisa.set_rng_seed(src_seeds=memref<1x1xui32, #nisa.mem<sbuf>> %seed) engine=vector
// CHECK-NEXT: nisa.rand_set_state(src_seeds=memref<128x6xui32, #nisa.mem<sbuf>> %st6) engine=gpsimd
// CHECK-NEXT: nisa.rand_get_state(dst=memref<128x6xui32, #nisa.mem<sbuf>> %st6) engine=gpsimd
// CHECK-NEXT: nisa.rand_get_state(dst=memref<64x24xui32, #nisa.mem<psum>> %st24) engine=vector
// CHECK-NEXT: nisa.rand2(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, min=f32 %f0, max=f32 %f1) engine=vector
// CHECK-NEXT: nisa.rand2(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, min=memref<128x1xf32, #nisa.mem<sbuf>> %lo, max=f32 %f1) engine=vector
// CHECK-NEXT: nisa.dropout(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, data=memref<128x512xbf16, #nisa.mem<sbuf>> %x, prob=f32 %half) engine=vector
// CHECK-NEXT: nisa.dropout(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, data=memref<128x512xbf16, #nisa.mem<sbuf>> %x, prob=memref<128x1xf32, #nisa.mem<sbuf>> %lo) engine=vector
// GENERIC: "nisa.rng"(%r8) <{engine = "gpsimd"}>
// GENERIC: "nisa.rng"(%r32) <{engine = "vector"}>
// GENERIC: "nisa.set_rng_seed"(%seed) <{engine = "vector"}>
// GENERIC: "nisa.rand_set_state"(%st6) <{engine = "gpsimd"}>
// GENERIC: "nisa.rand_get_state"(%st6) <{engine = "gpsimd"}>
// GENERIC: "nisa.rand_get_state"(%st24) <{engine = "vector"}>
// GENERIC: "nisa.rand2"(%u, %f0, %f1) <{engine = "vector"}>
// GENERIC: "nisa.rand2"(%u, %lo, %f1) <{engine = "vector"}>
// GENERIC: "nisa.dropout"(%y, %x, %half) <{engine = "vector"}>
// GENERIC: "nisa.dropout"(%y, %x, %lo) <{engine = "vector"}>
