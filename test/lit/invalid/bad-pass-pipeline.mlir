// A bad -p pipeline (unknown pass, unknown or mistyped option, bad option value) is a
// diagnostic pointing into the -p string, exit status 1, never a Python traceback.
// RUN: not %nki-opt %s -p 'nki-legalize,no-such-pass' 2>&1 | filecheck %s --check-prefix=NAME
// RUN: not %nki-opt %s -p 'nisa-allocate{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPT
// RUN: not %nki-opt %s -p 'nisa-allocate{max_copies="x"}' 2>&1 | filecheck %s --check-prefix=TYPE
// RUN: not %nki-opt %s -p 'nisa-schedule{mode=bogus}' 2>&1 | filecheck %s --check-prefix=MODE

func.func @f() {
  func.return
}
// NAME:      <pipeline>:1:14: error: bad pass pipeline: Unrecognized passes: ['no-such-pass']
// NAME-NEXT:   -p 'nki-legalize,no-such-pass'
// NAME-NEXT:                     ^
// NAME-NOT:  Traceback
// OPT:       error: bad pass pipeline: {{.*}}"bogus"{{.*}} not found
// OPT-NOT:   Traceback
// TYPE:      error: bad pass pipeline: Incompatible types
// TYPE-NOT:  Traceback
// MODE:      bad option: nisa-schedule: unknown mode 'bogus' (expected one of: list, in-order)
// MODE-NOT:  Traceback
