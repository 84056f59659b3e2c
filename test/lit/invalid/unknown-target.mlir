// An unknown #nisa.target is a parse error.
// RUN: not %nki-opt %s 2>&1 | filecheck %s

module attributes {nisa.target = #nisa.target<trn9>} {
}
// CHECK: unknown target 'trn9', expected one of trn1, trn2, trn3

