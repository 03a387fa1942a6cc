"""The passes' native op finder (compiler/passes/op_finder.py): ir_walk.ops_named's walk in native code finds the
ops MLIR's own walk finds, in its order, as the same bindings objects; without its library the walk is Python's."""

import os
import subprocess
import sys
import textwrap

import pytest
from mlir import ir

from mlwarp.compiler.context import make_context
from mlwarp.compiler.passes import ir_walk, op_finder
from mlwarp.compiler.targets.cpu.object_code import write_object

MODULE = """
func.func @outer(%n: index, %x: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %big = arith.cmpf ogt, %acc, %x : f32
    %next = scf.if %big -> (f32) {
      %d = arith.subf %acc, %x : f32
      scf.yield %d : f32
    } else {
      %a = arith.addf %acc, %x : f32
      scf.yield %a : f32
    }
    scf.yield %next : f32
  }
  %twice = arith.addf %sum, %sum : f32
  return %twice : f32
}
func.func @inner(%y: f32) -> f32 {
  %z = arith.addf %y, %y : f32
  return %z : f32
}
"""


@pytest.fixture(scope="module")
def finder():
    op_finder.prepare(write_object)
    if op_finder.supported():
        assert op_finder.unavailable_reason() is None, op_finder.unavailable_reason()
    else:
        pytest.skip("the native op finder is x86-64 Linux's")


@pytest.fixture
def module():
    with make_context("cpu"), ir.Location.unknown():
        yield ir.Module.parse(MODULE)


def _python_walk(root, names):
    found = []

    def visit(op):
        if op.name in names:
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def test_it_finds_the_named_ops_in_pre_order_as_mlirs_walk_does(finder, module):
    found = op_finder.find(module.operation, {"arith.addf", "scf.yield"})
    # by hand: the loop's if yields (then, else) with the else's addf before its yield, the loop's yield, the
    # addf after the loop, then @inner's
    assert [op.name for op in found] == ["scf.yield", "arith.addf", "scf.yield", "scf.yield", "arith.addf",
                                         "arith.addf"]
    assert found == _python_walk(module.operation, {"arith.addf", "scf.yield"})
    assert all(type(op) is ir.Operation for op in found)
    # an op before the ops in its regions
    assert [op.name for op in op_finder.find(module.operation, {"scf.for", "scf.if", "scf.yield", "func.func"})] == \
        ["func.func", "scf.for", "scf.if", "scf.yield", "scf.yield", "scf.yield", "func.func"]


def test_the_root_itself_counts_and_a_search_stays_under_it(finder, module):
    loop = op_finder.find(module.operation, {"scf.for"})[0]
    assert op_finder.find(loop, {"scf.for"}) == [loop]
    assert [op.name for op in op_finder.find(loop, {"arith.addf", "arith.subf"})] == ["arith.subf", "arith.addf"]
    assert op_finder.find(loop, {"func.return", "no.such_op"}) == []


def test_the_ops_found_are_the_bindings_own_and_can_be_changed(finder, module):
    (sub,) = op_finder.find(module.operation, {"arith.subf"})
    assert sub.operands[1] == sub.parent.parent.parent.regions[0].blocks[0].arguments[1]  # %x, through the loop
    sub.attributes["seen"] = ir.UnitAttr.get()
    assert "seen" in _python_walk(module.operation, {"arith.subf"})[0].attributes
    sub.result.replace_all_uses_with(sub.operands[0])
    sub.erase()
    assert op_finder.find(module.operation, {"arith.subf"}) == []


def test_more_ops_than_its_buffer_holds_are_found_all(finder, module, monkeypatch):
    monkeypatch.setattr(op_finder._finder, "capacity", 1)
    monkeypatch.setattr(op_finder._finder, "buffer", (op_finder.ctypes.c_void_p * 1)())
    found = op_finder.find(module.operation, {"arith.addf", "arith.constant"})
    assert [op.name for op in found] == ["arith.constant"] * 3 + ["arith.addf"] * 3
    assert op_finder._finder.capacity >= 6


def test_another_librarys_signature_for_the_python_c_api_leaves_it_working(finder, module, monkeypatch):
    # jax.ffi gives ctypes.pythonapi.PyCapsule_New a destructor type of its own (runtime/dlpack.py): the finder's
    # calls are through a handle of its own (the first run of the suite failed 177 compiles on this)
    import ctypes

    destructor = ctypes.CFUNCTYPE(None, ctypes.py_object)
    monkeypatch.setattr(ctypes.pythonapi.PyCapsule_New, "argtypes", [ctypes.c_void_p, ctypes.c_char_p, destructor])
    assert op_finder.find(module.operation, {"arith.subf"}) == _python_walk(module.operation, {"arith.subf"})
    assert op_finder.unavailable_reason() is None


def test_a_search_that_fails_in_the_finder_is_walked_in_python_and_the_finder_set_aside(finder, module, monkeypatch):
    expected = _python_walk(module.operation, {"arith.addf"})
    monkeypatch.setattr(op_finder._finder, "find_ops", None)  # (calling it raises TypeError)
    monkeypatch.setattr(op_finder, "_finder", op_finder._finder)
    monkeypatch.setattr(op_finder, "_failed", None)
    assert ir_walk.ops_named(module.operation, {"arith.addf"}) == expected
    assert op_finder._finder is None and op_finder.unavailable_reason().startswith("TypeError")


def test_ops_named_walks_in_python_without_the_library(module, monkeypatch):
    expected = _python_walk(module.operation, {"arith.addf"})
    monkeypatch.setattr(op_finder, "_finder", None)
    monkeypatch.setattr(op_finder, "_failed", "OSError: no linker")
    answers = []
    real_find = op_finder.find
    monkeypatch.setattr(op_finder, "find", lambda *a: answers.append(real_find(*a)))
    assert ir_walk.ops_named(module.operation, {"arith.addf"}) == expected
    assert len(expected) == 3 and answers == [None]  # (asked, it had no library: the Python walk found them)


WHERE = textwrap.dedent("""
    from mlwarp.compiler import driver  # noqa: F401  (its import loads the finder, or builds it first)
    from mlwarp.compiler.passes import op_finder
    print(op_finder._finder and "loaded", op_finder.unavailable_reason())
""")


def _where_built(tmp_path, library):
    env = dict(os.environ, MLWARP_CACHE_DIR=str(tmp_path / "cache"), MLWARP_LIBRARY_CACHE_DIR=str(library))
    r = subprocess.run([sys.executable, "-c", WHERE], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "loaded None"
    return [path for path in (library, tmp_path / "cache")
            if (path / op_finder.entry_name() / "op_finder.so").is_file()]


def test_the_compilers_import_builds_it_into_the_library_cache_where_missing(finder, tmp_path):
    assert _where_built(tmp_path, tmp_path / "library") == [tmp_path / "library"]


def test_where_the_library_cache_cannot_be_written_it_is_built_into_the_kernel_cache(finder, tmp_path):
    (tmp_path / "library").write_text("a file, not a folder")
    assert _where_built(tmp_path, tmp_path / "library") == [tmp_path / "cache"]
