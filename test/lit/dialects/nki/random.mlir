// The random-number ops of the nki dialect (nki_mlir/instructions/random.py), with and without a
// user engine, round-tripped custom -> custom and custom -> generic -> custom.
// RUN: %nki-opt %s | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | %nki-opt | filecheck %s
// RUN: %nki-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

module attributes {nisa.target = #nisa.target<trn3>} {
  func.func @random(%x: memref<128x512xbf16, #nisa.mem<sbuf>>) {
    %f0 = arith.constant 0.0 : f32
    %f1 = arith.constant 1.0 : f32
    %half = arith.constant 5.000000e-01 : f32
    %r8 = nki.ndarray() : memref<128x512xi8, #nisa.mem<sbuf>>
    %r32 = nki.ndarray() : memref<1x4x8xui32, #nisa.mem<psum>>
    %seed = nki.ndarray() : memref<1x1xui32, #nisa.mem<sbuf>>
    %st6 = nki.ndarray() : memref<128x6xui32, #nisa.mem<sbuf>>
    %st24 = nki.ndarray() : memref<64x24xui32, #nisa.mem<psum>>
    %u = nki.ndarray() : memref<128x512xf32, #nisa.mem<sbuf>>
    %lo = nki.ndarray() : memref<128x1xf32, #nisa.mem<sbuf>>
    %y = nki.ndarray() : memref<128x512xbf16, #nisa.mem<sbuf>>
    nki.rng(dst=memref<128x512xi8, #nisa.mem<sbuf>> %r8) engine=gpsimd
    nki.rng(dst=memref<1x4x8xui32, #nisa.mem<psum>> %r32)
    nki.set_rng_seed(src_seeds=memref<1x1xui32, #nisa.mem<sbuf>> %seed)
    nki.rand_set_state(src_seeds=memref<128x6xui32, #nisa.mem<sbuf>> %st6)
    nki.rand_get_state(dst=memref<128x6xui32, #nisa.mem<sbuf>> %st6) engine=gpsimd
    nki.rand_get_state(dst=memref<64x24xui32, #nisa.mem<psum>> %st24) engine=vector
    nki.rand2(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, min=f32 %f0, max=f32 %f1)
    nki.rand2(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, min=memref<128x1xf32, #nisa.mem<sbuf>> %lo, max=f32 %f1)
    nki.dropout(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, data=memref<128x512xbf16, #nisa.mem<sbuf>> %x, prob=f32 %half)
    nki.dropout(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, data=memref<128x512xbf16, #nisa.mem<sbuf>> %x, prob=memref<128x1xf32, #nisa.mem<sbuf>> %lo)
    func.return
  }
}

// CHECK-LABEL: func.func @random
// CHECK: nki.rng(dst=memref<128x512xi8, #nisa.mem<sbuf>> %r8) engine=gpsimd
// CHECK-NEXT: nki.rng(dst=memref<1x4x8xui32, #nisa.mem<psum>> %r32)
// CHECK-NEXT: nki.set_rng_seed(src_seeds=memref<1x1xui32, #nisa.mem<sbuf>> %seed)
// CHECK-NEXT: nki.rand_set_state(src_seeds=memref<128x6xui32, #nisa.mem<sbuf>> %st6)
// CHECK-NEXT: nki.rand_get_state(dst=memref<128x6xui32, #nisa.mem<sbuf>> %st6) engine=gpsimd
// CHECK-NEXT: nki.rand_get_state(dst=memref<64x24xui32, #nisa.mem<psum>> %st24) engine=vector
// CHECK-NEXT: nki.rand2(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, min=f32 %f0, max=f32 %f1)
// CHECK-NEXT: nki.rand2(dst=memref<128x512xf32, #nisa.mem<sbuf>> %u, min=memref<128x1xf32, #nisa.mem<sbuf>> %lo, max=f32 %f1)
// CHECK-NEXT: nki.dropout(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, data=memref<128x512xbf16, #nisa.mem<sbuf>> %x, prob=f32 %half)
// CHECK-NEXT: nki.dropout(dst=memref<128x512xbf16, #nisa.mem<sbuf>> %y, data=memref<128x512xbf16, #nisa.mem<sbuf>> %x, prob=memref<128x1xf32, #nisa.mem<sbuf>> %lo)
// GENERIC: "nki.rng"(%r8) <{engine = "gpsimd"}>
// GENERIC: "nki.rng"(%r32)
// GENERIC: "nki.set_rng_seed"(%seed)
// GENERIC: "nki.rand_set_state"(%st6)
// GENERIC: "nki.rand_get_state"(%st6) <{engine = "gpsimd"}>
// GENERIC: "nki.rand_get_state"(%st24) <{engine = "vector"}>
// GENERIC: "nki.rand2"(%u, %f0, %f1)
// GENERIC: "nki.rand2"(%u, %lo, %f1)
// GENERIC: "nki.dropout"(%y, %x, %half)
// GENERIC: "nki.dropout"(%y, %x, %lo)
