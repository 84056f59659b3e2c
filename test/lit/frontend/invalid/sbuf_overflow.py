# RUN: not %nki-mlir compile %s::k --arg 128x512xf32  2>&1 | filecheck %s
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def k(a):
    big = nl.ndarray((128, 40000), dtype=nl.float32, buffer=nl.sbuf)
    big2 = nl.ndarray((128, 40000), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=big, value=0.0)
    nisa.memset(dst=big2, value=1.0)
    nisa.tensor_tensor(dst=big, data1=big, data2=big2, op=nl.add)
    return a

# CHECK: sbuf_overflow.py:10:12: out of memory: cannot place tensor 'big2' in SBUF: the tensors live at the same time need 320000 bytes per partition, but SBUF on trn2 has 212984 bytes per partition
# CHECK: 'big' [128, 40000] float32: 160000 bytes per partition at {{.*}}sbuf_overflow.py:9
# CHECK: 'big2' [128, 40000] float32: 160000 bytes per partition at {{.*}}sbuf_overflow.py:10
# CHECK: {{^}}    big2 = nl.ndarray((128, 40000), dtype=nl.float32, buffer=nl.sbuf)
# CHECK-NEXT: {{^}}           ^
