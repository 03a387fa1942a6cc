"""The warp verifier beyond IRDL (compiler/dialects/warp/verify.py, rules.py; builtin ops: builtins/op_typing.py),
the typed type accessors it reads (typeinfo.py), warp-cse's effects, and the compile loop's checks after each
stage. Each rule's message is tested on IR in test/lit/warp-dialect/verify-rules.mlir."""

import numpy as np
import pytest
from mlir import ir

import mlwarp as wp
from mlwarp.compiler import insert
from mlwarp.compiler.context import make_context
from mlwarp.compiler.dialects.warp import ops, rules, typeinfo
from mlwarp.compiler.dialects.warp.verify import CHECKS, SHAPE_RELATIONS
from mlwarp.compiler.lowering import arrays_to_llvm
from mlwarp.compiler.verify import check_module, verify_module


def _names(op):
    return ({o.name for o in op.operands}, {r.name for r in op.results}, {a.name for a in op.attributes})


def test_every_check_names_the_values_and_attributes_of_its_op():
    for op in ops.OPS:
        operands, results, attrs = _names(op)
        values = operands | results
        assert op.effect in (rules.PURE, rules.READ, rules.ALLOC, rules.ANY), op.name
        for c in op.checks:
            assert type(c) in CHECKS, (op.name, c)
            for field in c.__slots__:
                name = getattr(c, field)
                if field in ("group", "of", "result", "bounds", "aggregate", "indices", "value", "tile", "input",
                             "output") and name:
                    assert name in values, (op.name, c, name)
                elif field == "attr" and name:
                    assert name in attrs, (op.name, c, name)
                elif field == "names":
                    assert set(name) <= values, (op.name, c)
            if isinstance(c, rules.TileShapes):
                assert c.relation in SHAPE_RELATIONS, (op.name, c.relation)


def test_atomic_kinds_are_the_lowerings():
    assert set(ops.ATOMIC_KINDS) == {kind for kind, _ in arrays_to_llvm._RMW}


def test_ops_that_write_or_synchronise_are_kept_by_warp_cse():
    kept = {op.name for op in ops.OPS if op.effect == rules.ANY}
    assert {"store", "atomic", "atomic_cas", "tile_store", "tile_store_indexed", "tile_atomic_add", "assert",
            "tile_sync", "tile_map"} <= kept
    assert ops.BY_NAME["load"].effect == rules.READ and ops.BY_NAME["local_array"].effect == rules.ALLOC


@pytest.mark.parametrize("spelling, expected", [
    ("!warp.array<f32, 2>", typeinfo.ArrayInfo("f32", 2)),
    ("!warp.array<!warp.vec<3, f16>, 4>", typeinfo.ArrayInfo("!warp.vec<3 : i64, f16>", 4)),
    ("!warp.tile<f64, array<i64: 4, 8>>", typeinfo.TileInfo("f64", (4, 8))),
    ("!warp.vec<6, f32>", typeinfo.VecInfo(6, "f32")),
    ("!warp.mat<2, 3, f64>", typeinfo.MatInfo(2, 3, "f64")),
    ("!warp.quat<f16>", typeinfo.QuatInfo("f16")),
    ("!warp.transform<f32>", typeinfo.TransformInfo("f32")),
    ('!warp.struct<"P", [f32, !warp.array<i32, 1>]>', typeinfo.StructInfo("P", ("f32", "!warp.array<i32, 1 : i64>"))),
    ("!llvm.struct<(ptr, array<3 x i64>, array<3 x i64>)>", typeinfo.DescriptorInfo(3)),
    ("f32", None),
    ("vector<4xf32>", None),
])
def test_typed_accessors_read_each_warp_type(spelling, expected):
    with make_context():
        info = typeinfo.TypeReader().info(ir.Type.parse(spelling))
        if expected is None:
            assert info is None
            return
        assert type(info) is type(expected)
        for field in expected.__slots__:
            got, want = getattr(info, field), getattr(expected, field)
            if isinstance(want, str) and field != "name":
                want = ir.Type.parse(want)
            elif isinstance(want, tuple) and want and isinstance(want[0], str):
                want = tuple(ir.Type.parse(w) for w in want)
            assert got == want, field


def test_well_typed_ir_has_no_violations():
    text = open(__file__.replace("python/test_warp_verifier.py", "lit/warp-dialect/roundtrip.mlir")).read()
    with make_context():
        report = verify_module(ir.Module.parse(text))
        assert [v.message for v in report.violations] == []
        assert report.warp_ops > 0


def test_a_module_without_warp_ops_needs_no_more_checks():
    with make_context():
        module = ir.Module.parse("func.func @f(%x: f32) -> f32 { return %x : f32 }")
        assert check_module(module, "stage 'lowered'") is False


def _break_atomics(module_op):
    """An inserted pass that leaves ill-typed warp IR: an atomic of a kind no lowering knows."""
    def visit(op):
        if op.operation.name == "warp.atomic":
            op.operation.attributes["kind"] = ir.StringAttr.get("frobnicate")
        return ir.WalkResult.ADVANCE

    module_op.walk(visit)


def test_the_compile_loop_reports_the_stage_that_broke_the_ir():
    @wp.kernel(enable_backward=False, module="unique",
               passes=[insert.InsertedPass(_break_atomics, after="warp-opt")])
    def count(x: wp.array(dtype=float), total: wp.array(dtype=float)):
        wp.atomic_add(total, 0, x[wp.tid()])

    x = wp.array(np.ones(4, np.float32), dtype=float, device="cpu")
    total = wp.zeros(1, dtype=float, device="cpu")
    with pytest.raises(Exception) as e:
        wp.launch(count, 4, inputs=[x, total], device="cpu")
    assert "invalid warp IR after stage 'warp-opt'" in str(e.value)
    assert "'warp.atomic' op attribute value: {kind = \"frobnicate\"} must be one of" in str(e.value)
