"""The warp dialect's op table: typed builders, named accessors, the verifier, its explanations."""

from pathlib import Path

import pytest
from mlir import ir
from mlir.dialects import func

from mlwarp.compiler.context import make_context
from mlwarp.compiler.dialects.warp import builders as wb
from mlwarp.compiler.dialects.warp import composite as wc
from mlwarp.compiler.dialects.warp import ops, views
from mlwarp.compiler.dialects.warp.explain import explain, parse_generic, split_top_level
from mlwarp.compiler.lowering.arrays_to_llvm import descriptor_type


@pytest.fixture
def body():
    """A function (array<vec3, 2>, i32, f32) with the insertion point in its body."""
    ctx = make_context()
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        vec3 = ir.Type.parse("!warp.vec<3, f32>")
        arr = ir.Type.parse("!warp.array<!warp.vec<3, f32>, 2>")
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("k", ir.FunctionType.get([arr, ir.IntegerType.get_signless(32), ir.F32Type.get()], []))
        block = f.add_entry_block()
        with ir.InsertionPoint(block):
            yield module, block.arguments, vec3
            func.ReturnOp([])


def test_builders_infer_result_types_from_the_constraints(body):
    module, (arr, i, x), vec3 = body
    element = wb.load(arr, [i, i])
    assert element.type == vec3  # the array's dtype
    assert wb.atomic("add", arr, element, [i, i]).type == vec3
    assert wb.array_dim(arr, 1).type == ir.IntegerType.get_signless(32)
    assert str(wb.view(arr, [i]).type) == "!warp.array<!warp.vec<3 : i64, f32>, 1 : i64>"
    assert wc.insert(element, x, [i]).type == vec3
    assert [t.type for t in wb.tid(2)] == [ir.IntegerType.get_signless(32)] * 2


def test_accessors_name_operands_results_and_attributes(body):
    module, (arr, i, x), vec3 = body
    element = wb.load(arr, [i, i])
    load = element.owner
    assert isinstance(load, views.LoadOp)
    assert load.array == arr and load.indices == [i, i] and load.element == element
    old = wb.atomic("max", arr, element, [i, i])
    assert old.owner.kind == "max" and old.owner.value == element and old.owner.old == old
    store = views.view(wb.store(arr, element, [i, i]))
    assert isinstance(store, views.StoreOp) and store.value == element and store.indices == [i, i]
    assert wb.array_dim(arr, 1).owner.dim == 1
    updated = wc.insert(element, x, [i])
    assert updated.owner.aggregate == element and updated.owner.element == x and updated.owner.indices == [i]


def test_operand_accessors_assign_in_place(body):
    module, (arr, i, x), vec3 = body
    j = wb.array_dim(arr, 0)
    store = views.view(wb.store(arr, wb.load(arr, [i, i]), [i, i]))
    store.indices = [j, i]
    assert list(store.operation.operands)[2:] == [j, i] and store.indices == [j, i]
    other = wb.load(arr, [j, j])
    store.value = other
    assert list(store.operation.operands)[1] == other
    with pytest.raises(ValueError, match=r"^warp.store.indices: 2 operands, got 1 values$"):
        store.indices = [j]


def test_every_table_op_has_a_view_class():
    assert sorted(views.VIEWS) == sorted(op.name for op in ops.OPS)
    assert views.VIEWS["atomic_cas"].__name__ == "AtomicCasOp"


def test_verifier_rejects_ill_typed_ops(body):
    module, (arr, i, x), vec3 = body
    f64 = ir.F64Type.get()
    wb.create("load", arr, [i, i], results=[f64])  # explicit, wrong: the dtype is vec3
    with pytest.raises(ir.MLIRError) as e:
        module.operation.verify()
    assert "expected '!warp.vec<3 : i64, f32>' but got 'f64'" in str(e.value)


def test_verifier_rejects_a_float_index(body):
    module, (arr, i, x), vec3 = body
    wb.create("load", arr, [i, x])
    with pytest.raises(ir.MLIRError) as e:
        module.operation.verify()
    assert "expected 'i32' but got 'f32'" in str(e.value)


def test_create_checks_its_arguments(body):
    module, (arr, i, x), vec3 = body
    with pytest.raises(TypeError, match=r"warp.load takes 2 operand groups \(array, indices\), got 1"):
        wb.create("load", arr)
    with pytest.raises(TypeError, match="warp.view: its result types are not fixed by its operands"):
        wb.create("view", arr, [i])


def test_descriptor_spelling_is_the_lowerings_descriptor():
    with make_context():
        for ndim in range(1, ops.MAX_NDIM + 1):
            assert ops.descriptor_spelling(ndim) == str(descriptor_type(ndim))


@pytest.mark.parametrize("text, message", [
    ('%0 = "warp.load"(%a, %i) : (!warp.array<f32, 1 : i64>, i32) -> f64',
     "result 'element' must be f32 (the element type of operand 'array'), got f64"),
    ('%0 = "warp.load"(%a, %i, %j) : (!warp.array<f32, 2 : i64>, i32, f64) -> f32',
     "operand 'indices' #2 must be i32, got f64"),
    ('"warp.store"(%a, %v, %i) : (!warp.array<i32, 1 : i64>, f32, i32) -> ()',
     "operand 'value' must be i32 (the element type of operand 'array'), got f32"),
    ('%0 = "warp.atomic"(%a, %v, %i) {kind = "add"} : (f32, f32, i32) -> f32',
     "operand 'array' must be a !warp.array (or its LLVM descriptor), got f32"),
    ('%0 = "warp.struct_get"(%v) {field = 0 : i64} : (!warp.vec<3 : i64, f32>) -> f32',
     "operand 'aggregate' must be a !warp.struct, got !warp.vec<3 : i64, f32>"),
    ('%0:2 = "warp.tid"() : () -> (i32, i64)', "result 'ids' #1 must be i32, got i64"),
])
def test_explain_names_the_offending_operand(text, message):
    assert explain(*parse_generic(text)) == message


def test_split_top_level_splits_at_outer_separators_only():
    assert split_top_level("a, b<c, d>, (e, f)") == ["a", "b<c, d>", "(e, f)"]
    assert split_top_level('"S", [f32, !warp.vec<3 : i64, f32>, !warp.struct<"T", [i32, i64]>]') == \
        ['"S"', '[f32, !warp.vec<3 : i64, f32>, !warp.struct<"T", [i32, i64]>]']
    assert split_top_level("a,,b") == ["a", "", "b"] and split_top_level(" a , ") == ["a"]
    assert split_top_level("") == [] and split_top_level("f32") == ["f32"]
    assert split_top_level("x{a b} y  z", sep=" ") == ["x{a b}", "y", "", "z"]


def test_composite_types_are_read_once_per_type():
    with make_context("cpu"):
        t = ir.Type.parse('!warp.struct<"S", [f32, !warp.vec<3 : i64, f32>]>')
        first = wc.composite(t)
        assert first.kind == "struct" and first.name == "S" and len(first.fields) == 2
        assert wc.composite(ir.Type.parse('!warp.struct<"S", [f32, !warp.vec<3 : i64, f32>]>')) is first
        assert wc.is_composite_type(t) and not wc.is_composite_type(ir.Type.parse("!warp.array<f32, 1 : i64>"))


def test_explain_accepts_well_typed_ops():
    assert explain(*parse_generic('%0 = "warp.load"(%d, %i) : (!llvm.struct<(ptr, array<1 x i64>, '
                                  'array<1 x i64>)>, i32) -> f32')) is None
    assert explain(*parse_generic('%0 = "warp.view"(%a, %i) : (!warp.array<f32, 2 : i64>, i32) -> '
                                  '!warp.array<f32, 1 : i64>')) is None
    assert explain("warp.length", ["!warp.vec<3 : i64, f32>"], ["f32"]) is None  # builtins: the builtin table's


def test_table_markdown_lists_every_op():
    table = ops.table_markdown()
    for op in ops.OPS:
        assert f"| warp.{op.name} |" in table
    assert "| warp.load | array: array<T> or its descriptor, indices: i32... | element: T |" in table


def test_readme_table_is_current():
    readme = (Path(ops.__file__).parent / "README.md").read_text()
    assert ops.table_markdown() in readme
