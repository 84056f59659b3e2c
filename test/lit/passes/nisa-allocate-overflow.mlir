// nisa-allocate, negative: the tensors live at the same time do not fit in SBUF.  The
// error is located at the alloc that failed, gives capacity and need in bytes per
// partition, and lists the largest live tensors with their source lines.
// RUN: not %nki-opt %s -p nisa-allocate 2>&1 | filecheck %s --check-prefix=TRN2
// RUN: not %nki-opt %s -p 'nisa-allocate{target=trn1}' 2>&1 | filecheck %s --check-prefix=TRN1
// The same kernel fits in trn3's 245752 bytes per partition.
// RUN: %nki-opt %s -p 'nisa-allocate{target=trn3}' | filecheck %s --check-prefix=TRN3

module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @big(%in: memref<128x16384xf32, #nisa.mem<shared_hbm>>) {
    %a = nisa.alloc {nkim.name = "a_tile"} : memref<128x16384xf32, #nisa.mem<sbuf>> loc("kernel.py":10:4)
    %b = nisa.alloc {nkim.name = "b_tile"} : memref<128x16384xf32, #nisa.mem<sbuf>> loc("kernel.py":11:4)
    %s = nisa.alloc {nkim.name = "small"} : memref<128x64xbf16, #nisa.mem<sbuf>> loc("kernel.py":12:4)
    %c = nisa.alloc {nkim.name = "c_tile"} : memref<128x8192xf32, #nisa.mem<sbuf>> loc("kernel.py":13:4)
    %d = nisa.alloc {nkim.name = "d_tile"} : memref<128x8192xf32, #nisa.mem<sbuf>> loc("kernel.py":14:4)
    %e = nisa.alloc {nkim.name = "e_tile"} : memref<128x4096xf32, #nisa.mem<sbuf>> loc("kernel.py":15:4)
    nisa.release %a : memref<128x16384xf32, #nisa.mem<sbuf>>
    nisa.release %b : memref<128x16384xf32, #nisa.mem<sbuf>>
    nisa.release %s : memref<128x64xbf16, #nisa.mem<sbuf>>
    nisa.release %c : memref<128x8192xf32, #nisa.mem<sbuf>>
    nisa.release %d : memref<128x8192xf32, #nisa.mem<sbuf>>
    nisa.release %e : memref<128x4096xf32, #nisa.mem<sbuf>>
    func.return
  }
}

// TRN2:      kernel.py:15:4: out of memory: cannot place tensor 'e_tile' in SBUF: the tensors live at the same time need 213120 bytes per partition, but SBUF on trn2 has 212984 bytes per partition
// TRN2-NEXT: largest live tensors:
// TRN2-NEXT:   'a_tile' [128, 16384] float32: 65536 bytes per partition at kernel.py:10
// TRN2-NEXT:   'b_tile' [128, 16384] float32: 65536 bytes per partition at kernel.py:11
// TRN2-NEXT:   'c_tile' [128, 8192] float32: 32768 bytes per partition at kernel.py:13
// TRN2-NEXT:   'd_tile' [128, 8192] float32: 32768 bytes per partition at kernel.py:14
// TRN2-NEXT:   'e_tile' [128, 4096] float32: 16384 bytes per partition at kernel.py:15
// TRN2-NEXT:   'small' [128, 64] bfloat16: 128 bytes per partition at kernel.py:12
// TRN2-NOT:  Traceback

// TRN1:      kernel.py:14:4: out of memory: cannot place tensor 'd_tile' in SBUF: the tensors live at the same time need 196736 bytes per partition, but SBUF on trn1 has 180224 bytes per partition
// TRN1-NEXT: largest live tensors:
// TRN1-NEXT:   'a_tile' [128, 16384] float32: 65536 bytes per partition at kernel.py:10
// TRN1-NOT:  e_tile

// TRN3:      nkim.sbuf_peak_bytes = 213120 : i64
// TRN3:      %e = nisa.alloc alignment=64 {nkim.name = "e_tile", nkim.partition = 0 : i64, nkim.offset = 196736 : i64}
