// Pass instrumentation writes to stderr only: --time-passes timings and
// --print-ir-after(-all) dumps; stdout stays one parseable module.
// RUN: %nki-opt %S/lower-nki-to-nisa.mlir -p lower-nki-to-nisa,nisa-allocate --time-passes 2>%t.err | %nki-opt | filecheck %s --check-prefix=OUT
// RUN: filecheck %s --check-prefix=TIME < %t.err
// RUN: %nki-opt %S/lower-nki-to-nisa.mlir -p lower-nki-to-nisa,nisa-allocate --print-ir-after-all 2>&1 >/dev/null | filecheck %s --check-prefix=ALL
// RUN: %nki-opt %S/lower-nki-to-nisa.mlir -p lower-nki-to-nisa,nisa-allocate --print-ir-after=nisa-allocate 2>&1 >/dev/null | filecheck %s --check-prefix=ONE

// OUT:      builtin.module
// OUT:      nisa.alloc
// TIME:     Pass lower-nki-to-nisa took {{[0-9.]+}} s
// TIME-NEXT: Pass nisa-allocate took {{[0-9.]+}} s
// ALL:      // -----// IR Dump After lower-nki-to-nisa //----- //
// ALL-NEXT: builtin.module
// ALL:      // -----// IR Dump After nisa-allocate //----- //
// ALL:      nkim.offset
// ONE-NOT:  IR Dump After lower-nki-to-nisa
// ONE:      // -----// IR Dump After nisa-allocate //----- //
