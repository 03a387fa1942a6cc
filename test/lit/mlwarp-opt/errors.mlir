// Every failure is one line on stderr and a non-zero exit status, never a traceback.

// RUN: not mlwarp-opt %s --no-such-pass 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: mlwarp-opt: error: unknown pass 'no-such-pass'
// UNKNOWN-NOT: Traceback

// RUN: not mlwarp-opt %s --pass-pipeline='builtin.module(cse,no-such-pass)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN-IN-PIPELINE
// UNKNOWN-IN-PIPELINE: mlwarp-opt: error: unknown pass 'no-such-pass'

// RUN: not mlwarp-opt %s --pass-pipeline='builtin.module(func.func(cse,no-such-pass))' 2>&1 | FileCheck %s --check-prefix=UNKNOWN-NESTED
// UNKNOWN-NESTED: mlwarp-opt: error: unknown pass 'no-such-pass'

// mlwarp passes transform the whole module: they cannot run nested on functions.
// RUN: not mlwarp-opt %s --pass-pipeline='builtin.module(func.func(warp-cpu-entry))' 2>&1 | FileCheck %s --check-prefix=NESTED-OURS
// NESTED-OURS: mlwarp-opt: error: pass 'warp-cpu-entry' runs on the whole module; it cannot be nested in 'func.func(...)'

// The passes are checked before the input is read.
// RUN: not mlwarp-opt %s.does-not-exist --no-such-pass 2>&1 | FileCheck %s --check-prefix=PASS-FIRST
// PASS-FIRST: mlwarp-opt: error: unknown pass 'no-such-pass'

// RUN: not mlwarp-opt %s --canonicalize=bogus=1 2>&1 | FileCheck %s --check-prefix=UPSTREAM-OPTION
// UPSTREAM-OPTION: mlwarp-opt: error: pass 'canonicalize': no such option bogus

// RUN: not mlwarp-opt %s --warp-cpu-keep-vectors=bogus=1 2>&1 | FileCheck %s --check-prefix=OUR-OPTION
// OUR-OPTION: mlwarp-opt: error: pass 'warp-cpu-keep-vectors' has no option(s) ['bogus']; options: none

// RUN: not mlwarp-opt %s --warp-cpu-entry=bogus=1 2>&1 | FileCheck %s --check-prefix=OUR-OPTIONS
// OUR-OPTIONS: mlwarp-opt: error: pass 'warp-cpu-entry' has no option(s) ['bogus']; options: ['adjoint-only']

// RUN: not mlwarp-opt %s --warp-unroll-loops=max-unroll=many 2>&1 | FileCheck %s --check-prefix=OUR-OPTION-VALUE
// OUR-OPTION-VALUE: mlwarp-opt: error: pass 'warp-unroll-loops': option max-unroll='many' is not a valid int

// RUN: not mlwarp-opt %s --pass-pipeline='builtin.module(warp-autodiff{strict=maybe})' 2>&1 | FileCheck %s --check-prefix=OUR-BOOL-VALUE
// OUR-BOOL-VALUE: mlwarp-opt: error: pass 'warp-autodiff': option strict='maybe' is not a valid bool

// RUN: not mlwarp-opt %s --pass-pipeline='builtin.module(cse' 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: mlwarp-opt: error: unterminated ')' in pass pipeline 'builtin.module(cse'

// RUN: not mlwarp-opt %s --pass-pipeline='func.func(cse)' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// ANCHOR: mlwarp-opt: error: the pass pipeline must be anchored on 'builtin.module', not 'func.func'

// RUN: not mlwarp-opt %S/Inputs/bad-syntax.mlir 2>&1 | FileCheck %s --check-prefix=SYNTAX-IR
// SYNTAX-IR: mlwarp-opt: error: {{.*}}Inputs{{/|\\}}bad-syntax.mlir:4:25: expected ':'
// SYNTAX-IR-NOT: {{.}}

// RUN: not mlwarp-opt < %S/Inputs/bad-syntax.mlir 2>&1 | FileCheck %s --check-prefix=STDIN
// STDIN: mlwarp-opt: error: <stdin>:4:25: expected ':'

// RUN: not mlwarp-opt %S/Inputs/bad-verify.mlir 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY: mlwarp-opt: error: {{.*}}bad-verify.mlir:3:3: 'func.return' op has 1 operands, but enclosing function (@f) returns 0

// RUN: not mlwarp-opt %s.does-not-exist 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: mlwarp-opt: error: cannot read '{{.*}}errors.mlir.does-not-exist': No such file or directory

// RUN: not mlwarp-opt %s %s 2>&1 | FileCheck %s --check-prefix=TWO-INPUTS
// TWO-INPUTS: mlwarp-opt: error: expected at most one input file, got 2

// RUN: not mlwarp-opt %s --mlwarp-pipeline=tpu 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: mlwarp-opt: error: unknown target 'tpu' for --mlwarp-pipeline; targets: cpu, cuda

func.func @f() {
  return
}
