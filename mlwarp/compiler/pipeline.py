"""The compiler driver: a plain table of named stages, each a list of passes.

Each stage can be dumped (`MLWARP_DUMP_IR=<dir>` writes `<kernel>.<stage>.mlir`), and
`MLWARP_PRINT_IR_AFTER_ALL=1` prints the IR after every pass on stderr (kernels compiled now, not cached ones).
Pass names are ours (see passes/registry.py) or upstream MLIR's.
"""

from __future__ import annotations

import os
import re

from mlir import ir
from mlir.passmanager import PassManager

from .passes.registry import PASSES, PassError, pass_class  # noqa: F401  (PASSES: for mlwarp-opt and tests)

CPU_STAGES = [
    # @wp.func calls inlined first; canonicalize folds constant range bounds before unrolling
    ("warp-opt", ["warp-inline", "canonicalize", "warp-unroll-loops", "canonicalize", "cse"]),
    ("autodiff", ["warp-autodiff", "warp-inline", "canonicalize", "cse"]),  # adds k_adj next to each kernel k;
    # warp-inline again: the calls of @wp.func_grad functions warp-autodiff kept (or added) to the adjoint
    ("lowered", ["convert-warp-composites-to-vector", "convert-warp-builtins-to-arith",
                 "convert-warp-arrays-to-llvm", "warp-cpu-entry", "warp-cpu-privatize-atomics", "warp-cpu-serial-copy",
                 "canonicalize", "cse"]),
    # bfloat16 arithmetic runs in f32 and rounds back with integer ops: no libgcc helper (__truncsfbf2);
    # bfloat16 math (sin, sqrt, ...) too, as Warp's sinf(float(x)): LLVM has no bf16 libm calls
    ("llvm", ["convert-scf-to-cf", "math-extend-to-supported-types{extra-types=f16 target-type=f32}",
              "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}",
              "warp-bf16-round-each-op", "arith-expand{include-bf16=true}", "convert-math-to-llvm", "convert-math-to-libm",
              "convert-vector-to-llvm", "convert-arith-to-llvm", "convert-cf-to-llvm", "convert-func-to-llvm",
              "reconcile-unrealized-casts", "warp-bf16-as-i16", "warp-cpu-vector-math"]),
]

DEFAULT_CUDA_ARCH = 90


def cuda_stages(arch: int = DEFAULT_CUDA_ARCH) -> list:
    """CPU_STAGES up to "lowered", with the GPU entry in place of the CPU one (so both targets run the same
    warp passes), then NVVM for `sm_<arch>`; lowering/gpu_binary.py emits PTX and cubin from "nvvm"."""
    stages = []
    for stage, passes in CPU_STAGES:
        if stage == "llvm":
            break
        stages.append((stage, ["warp-gpu-kernel" if str(p).startswith("warp-cpu-entry") else p for p in passes
                               if not str(p).startswith("warp-cpu-") or str(p).startswith("warp-cpu-entry")]))
    stages.append(("nvvm", [f"nvvm-attach-target{{chip=sm_{arch} O=3}}",
                            "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm,convert-math-to-llvm)", "reconcile-unrealized-casts"]))
    return stages


CUDA_STAGES = cuda_stages()

_PASS_RE = re.compile(r"\s*([A-Za-z0-9_.-]+)\s*(\{[^}]*\})?\s*(,|$)")


def parse_pipeline(text: str) -> list:
    """`a,b{x=1 y=2}` -> [("a", {}), ("b", {"x": "1", "y": "2"})]."""
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _PASS_RE.match(text, pos)
        if not m:
            raise PassError(f"cannot parse pass pipeline at: {text[pos:]!r}")
        opts = {}
        if m.group(2):
            for item in m.group(2)[1:-1].split():
                if "=" not in item:
                    raise PassError(f"pass option {item!r} must be key=value")
                k, v = item.split("=", 1)
                opts[k] = v
        out.append((m.group(1), opts))
        pos = m.end()
    return out


def add_passes(pm: PassManager, passes) -> None:
    """Adds (name, options) pairs: ours as Python passes, others as upstream textual passes."""
    for name, opts in passes:
        cls = pass_class(name)
        if cls is None:
            text = name + ("{" + " ".join(f"{k}={v}" for k, v in opts.items()) + "}" if opts else "")
            try:
                pm.add(text)
            except ValueError as e:
                raise PassError(f"unknown pass or bad options: '{text}' ({str(e).splitlines()[0]})") from None
            continue
        instance = cls.parse(opts)

        def run(op, pass_, instance=instance):
            instance.run(op)

        pm.add(run, name=name, argument=name, description=cls.description)


def run_passes(module: ir.Module, passes) -> None:
    pm = PassManager("builtin.module")
    add_passes(pm, passes)
    if os.environ.get("MLWARP_PRINT_IR_AFTER_ALL") == "1":  # as mlwarp-opt --mlir-print-ir-after-all, on stderr
        pm.enable_ir_printing(print_after_all=True)
    pm.run(module.operation)


def run_stages(module: ir.Module, stages, dump_prefix: str | None = None) -> None:
    dump_dir = os.environ.get("MLWARP_DUMP_IR")
    if dump_dir and dump_prefix:
        os.makedirs(dump_dir, exist_ok=True)
        _dump(module, dump_dir, dump_prefix, "warp")
    for stage, passes in stages:
        run_passes(module, [(p, {}) if isinstance(p, str) else p for p in passes])
        if dump_dir and dump_prefix:
            _dump(module, dump_dir, dump_prefix, stage)


def _dump(module, d, prefix, stage):
    with open(os.path.join(d, f"{prefix}.{stage}.mlir"), "w") as f:
        f.write(str(module))
