// A verifier failure of a parsed op is reported at the op's line and column in the input
// file (xDSL ops do not keep their position; nki-opt records it while parsing), also when
// the op's own parser verifies it (scf.for's terminator).
// RUN: not %nki-opt %s 2>&1 | filecheck %s

func.func @f() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
    func.return
  }
  func.return
}
// CHECK:      verify-located.mlir:9:3: error: 'scf.for' terminates with operation func.return instead of scf.yield
// CHECK-NEXT:   scf.for %i = %c0 to %c1 step %c1 {
// CHECK-NEXT:   ^
// CHECK-NOT:  Traceback
