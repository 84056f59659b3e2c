// An op whose traits reject its place in the IR (here scf.yield directly in a func.func and
// not last: its HasParent and IsTerminator traits; which one reports first is the trait set's
// order) is reported at its line and column, like any verifier failure.
// RUN: not %nki-opt %s 2>&1 | filecheck %s

func.func @k() {
  scf.yield
  func.return
}
// CHECK:      misplaced-terminator.mlir:7:3: error: {{.*}}'scf.yield' {{(expects parent op to be one of 'scf.for'|must be the last operation in its parent block)}}
// CHECK-NEXT:   scf.yield
// CHECK-NEXT:   ^
// CHECK-NOT:  Traceback
