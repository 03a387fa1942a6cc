"""compiler/dialects/llvm.py and builtin.py build, generically, the same ops as MLIR's generated builders
(`mlir.dialects.llvm`, `mlir.dialects.builtin`), which a compile no longer imports."""

import subprocess
import sys

import pytest
from mlir import ir
from mlir.dialects import arith

from mlwarp.compiler.context import make_context
from mlwarp.compiler.dialects import builtin as our_builtin
from mlwarp.compiler.dialects import llvm as ours


def _generated():
    from mlir.dialects import builtin, llvm
    return llvm, builtin


def _both(build):
    """The text of the function `build(llvm, builtin, args)` fills, with our builders and with MLIR's."""
    texts = []
    for llvm, builtin in ((ours, our_builtin), _generated()):
        ctx = make_context("cpu")
        with ctx, ir.Location.unknown():
            module = ir.Module.parse("func.func @f(%p: !llvm.ptr, %i: i64, %f: f32, %v: vector<4xf32>, "
                                     "%s: !llvm.struct<(ptr, i64)>) { return }")
            f = module.body.operations[0]
            block = f.regions[0].blocks[0]
            with ir.InsertionPoint.at_block_begin(block):
                build(llvm, builtin, list(block.arguments))
            assert module.operation.verify()
            texts.append(str(module))
    return texts


def _ptr():
    return ir.Type.parse("!llvm.ptr")


def _i64(v):
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)


CASES = {
    "undef_zero_constant": lambda L, B, a: (L.mlir_undef(a[4].type), L.mlir_zero(_ptr()),
                                            L.mlir_constant(_i64(3))),
    "insert_extract_value": lambda L, B, a: L.extractvalue(ir.IntegerType.get_signless(64),
                                                           L.insertvalue(a[4], a[1], [1]), [1]),
    "insert_extract_element": lambda L, B, a: L.extractelement(L.insertelement(a[3], a[2], a[1]), a[1]),
    "shufflevector": lambda L, B, a: L.shufflevector(a[3].type, a[3], a[3], [0, 4, 1, 5]),
    "expect": lambda L, B, a: L.intr_expect(a[1], a[1]),
    "prefetch": lambda L, B, a: L.intr_prefetch(a[0], 0, 3, 1),
    "alloca_load_store": lambda L, B, a: L.store(L.load(ir.F32Type.get(), L.alloca(_ptr(), a[1], ir.F32Type.get(),
                                                                                     alignment=64), alignment=4),
                                                 a[0], alignment=2),
    "getelementptr": lambda L, B, a: (L.getelementptr(_ptr(), a[0], [a[1]], [-2147483648, 2],
                                                      ir.Type.parse("!llvm.struct<(i64, f32, f32)>"), 0),
                                      L.getelementptr(_ptr(), a[0], [], [8], ir.IntegerType.get_signless(8), 0)),
    "atomics": lambda L, B, a: (L.atomicrmw(L.AtomicBinOp.fadd, a[0], a[2], L.AtomicOrdering.monotonic),
                                L.cmpxchg(a[0], a[1], a[1], L.AtomicOrdering.monotonic, L.AtomicOrdering.monotonic)),
    "stack_memset_trap": lambda L, B, a: (L.intr_stackrestore(L.intr_stacksave(_ptr())),
                                          L.intr_memset(a[0], L.mlir_constant(ir.IntegerAttr.get(
                                                            ir.IntegerType.get_signless(8), 0)),
                                                        a[1], False),
                                          L.intr_trap()),
    "assume": lambda L, B, a: L.intr_assume(arith.CmpIOp(arith.CmpIPredicate.sge, a[1], a[1]).result, [], []),
    "casts": lambda L, B, a: (L.inttoptr(_ptr(), L.ptrtoint(ir.IntegerType.get_signless(64), a[0])),
                              L.bitcast(ir.IntegerType.get_signless(32), a[2]),
                              L.addrspacecast(ir.Type.parse("!llvm.ptr<1>"), a[0])),
    "arithmetic": lambda L, B, a: (L.fadd(a[2], a[2], fastmath_flags=ir.Attribute.parse("#llvm.fastmath<reassoc>")),
                                   L.add(a[1], a[1], ir.Attribute.parse("#llvm.overflow<none>"))),
    "unrealized_cast": lambda L, B, a: B.unrealized_conversion_cast([ir.IntegerType.get_signless(32)], [a[2]]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_builder_makes_the_generated_op(case):
    mine, generated = _both(CASES[case])
    assert mine == generated


def test_calls_and_declarations():
    def build(llvm, builtin, a):
        module_block = a[0].owner.region.owner.parent.regions[0].blocks[0]  # func.func's parent: the module
        with ir.InsertionPoint(module_block) as ip:
            t = ir.TypeAttr.get(ir.Type.parse("!llvm.func<f32 (f32)>"))
            if llvm is ours:
                ours.declare_function("cosf", t, sym_visibility="private")
            else:
                llvm.LLVMFuncOp("cosf", t, sym_visibility="private")
            ip.insert(ir.Operation.parse("llvm.func @printf(!llvm.ptr, ...) -> i32"))
        llvm.call(ir.F32Type.get(), [a[2]], [], [], callee=ir.FlatSymbolRefAttr.get("cosf"))
        llvm.call(ir.IntegerType.get_signless(32), [a[0], a[1]], [], [],
                  var_callee_type=ir.TypeAttr.get(ir.Type.parse("!llvm.func<i32 (ptr, ...)>")),
                  callee=ir.FlatSymbolRefAttr.get("printf"))
    mine, generated = _both(build)
    assert mine == generated
    assert "llvm.call @printf" in mine and "vararg(!llvm.func<i32 (ptr, ...)>)" in mine


@pytest.mark.parametrize("enum", ["AtomicBinOp", "AtomicOrdering"])
def test_enum_values_are_mlirs(enum):
    llvm, _ = _generated()
    assert {e.name: e.value for e in getattr(ours, enum)} == {e.name: e.value for e in getattr(llvm, enum)}


def test_a_compile_does_not_import_mlir_dialects_llvm(tmp_path):
    """The point of the builders: a kernel with atomics, composites and printing compiles without them."""
    script = tmp_path / "k.py"
    script.write_text(
        "import sys\n"
        "import numpy as np\n"
        "import mlwarp as wp\n"
        "@wp.kernel\n"
        "def k(x: wp.array(dtype=wp.vec3), total: wp.array(dtype=float)):\n"
        "    i = wp.tid()\n"
        "    wp.atomic_add(total, 0, wp.length(x[i]))\n"
        "    if i == 0:\n"
        "        print(x[i])\n"
        "x = wp.array(np.ones((4, 3), np.float32), dtype=wp.vec3)\n"
        "t = wp.zeros(1, dtype=float)\n"
        "wp.launch(k, 4, inputs=[x, t])\n"
        "assert abs(float(t.numpy()[0]) - 4 * 3 ** 0.5) < 1e-5\n"
        "assert 'mlir.dialects.llvm' not in sys.modules and 'mlir.dialects.builtin' not in sys.modules, "
        "sorted(m for m in sys.modules if m.startswith('mlir.dialects'))\n")
    env = {"MLWARP_CACHE_DIR": str(tmp_path / "cache"), "MLWARP_COMPILE_IN_PROCESS": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
