// nisa-allocate, negative: PSUM has 8 banks of 2048 bytes per partition and a tensor of
// at most 2048 bytes may not straddle two banks.  Eight [128, 300] f32 tensors (1200
// bytes each) take one bank each, so a ninth does not fit although the total need
// (10800 bytes) is below the capacity.  Also: more tensors than the message lists.
// RUN: not %nki-opt %s -p nisa-allocate 2>&1 | filecheck %s

func.func @psum_banks() {
  %p0 = nisa.alloc {nkim.name = "p0"} : memref<128x300xf32, #nisa.mem<psum>> loc("mm.py":3:2)
  %p1 = nisa.alloc {nkim.name = "p1"} : memref<128x300xf32, #nisa.mem<psum>> loc("mm.py":4:2)
  %p2 = nisa.alloc {nkim.name = "p2"} : memref<128x300xf32, #nisa.mem<psum>> loc("mm.py":5:2)
  %p3 = nisa.alloc {nkim.name = "p3"} : memref<128x300xf32, #nisa.mem<psum>> loc("mm.py":6:2)
  %p4 = nisa.alloc {nkim.name = "p4"} : memref<128x300xf32, #nisa.mem<psum>> loc("mm.py":7:2)
  %p5 = nisa.alloc {nkim.name = "p5"} : memref<128x300xf32, #nisa.mem<psum>> loc("mm.py":8:2)
  %p6 = nisa.alloc {nkim.name = "p6"} : memref<128x300xf32, #nisa.mem<psum>> loc("mm.py":9:2)
  %p7 = nisa.alloc {nkim.name = "p7"} : memref<128x300xf32, #nisa.mem<psum>> loc("mm.py":10:2)
  %p8 = nisa.alloc {nkim.name = "p8"} : memref<128x300xf32, #nisa.mem<psum>> loc("mm.py":11:2)
  nisa.release %p0 : memref<128x300xf32, #nisa.mem<psum>>
  nisa.release %p1 : memref<128x300xf32, #nisa.mem<psum>>
  nisa.release %p2 : memref<128x300xf32, #nisa.mem<psum>>
  nisa.release %p3 : memref<128x300xf32, #nisa.mem<psum>>
  nisa.release %p4 : memref<128x300xf32, #nisa.mem<psum>>
  nisa.release %p5 : memref<128x300xf32, #nisa.mem<psum>>
  nisa.release %p6 : memref<128x300xf32, #nisa.mem<psum>>
  nisa.release %p7 : memref<128x300xf32, #nisa.mem<psum>>
  nisa.release %p8 : memref<128x300xf32, #nisa.mem<psum>>
  func.return
}

// CHECK:      mm.py:11:2: out of memory: cannot place tensor 'p8' in PSUM: the tensors live at the same time need 10800 bytes per partition, but PSUM on trn2 has 16384 bytes per partition (no free range can hold it: the free space is fragmented by alignment, PSUM bank boundaries or the placement of other tensors)
// CHECK-NEXT: largest live tensors:
// CHECK-NEXT:   'p0' [128, 300] float32: 1200 bytes per partition at mm.py:3
// CHECK:        'p7' [128, 300] float32: 1200 bytes per partition at mm.py:10
// CHECK-NEXT:   ... and 1 more
