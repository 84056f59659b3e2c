// An unknown target given as a pass option is a diagnostic in the -p string.
// RUN: not %nki-opt %s -p 'nisa-allocate{target=bogus}' 2>&1 | filecheck %s

func.func @f() {
  func.return
}
// CHECK:      <pipeline>:1:{{[0-9]+}}: error: bad pass pipeline: bad option: unknown target 'bogus' (expected one of trn1, trn2, trn3)
// CHECK-NEXT:   -p 'nisa-allocate{target=bogus}'
// CHECK-NOT:  Traceback
