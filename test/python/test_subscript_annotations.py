"""Warp 1.19's subscript annotations (`wp.array[float]`, `wp.array2d[wp.vec3]`, `wp.indexedarray[float, Literal[2]]`,
`wp.tile[float, 8, 4]`, `wp.tile[float]`) as values: equality, hashing, printing, unions, and their use in
kernels and functions. Expected values: Warp's documented spellings and numpy."""

from typing import Any, Literal, Union, get_origin

import numpy as np
import pytest

import mlwarp as wp


def test_equal_annotations_are_equal_and_hash_alike():
    assert wp.array[float] == wp.array[wp.float32] and hash(wp.array[float]) == hash(wp.array[wp.float32])
    assert wp.array2d[float] == wp.array[float, Literal[2]] == wp.array[float, 2]
    assert wp.array[float] != wp.array[float, Literal[2]]
    assert wp.array[float] != wp.indexedarray[float]
    assert len({wp.array[float], wp.array[wp.float32], wp.array[wp.float64]}) == 2


@pytest.mark.parametrize("annotation, text", [
    (lambda: wp.array[wp.float32], "wp.array[wp.float32]"),
    (lambda: wp.array[float], "wp.array[wp.float32]"),
    (lambda: wp.array4d[wp.uint32], "wp.array4d[wp.uint32]"),
    (lambda: wp.array3d[wp.vec3f], "wp.array3d[wp.vec3f]"),
    (lambda: wp.array[wp.mat44f], "wp.array[wp.mat44f]"),
    (lambda: wp.array[wp.transformf], "wp.array[wp.transformf]"),
    (lambda: wp.array[float, Any], "wp.array[wp.float32, Any]"),
    (lambda: wp.indexedarray[wp.float32], "wp.indexedarray[wp.float32]"),
    (lambda: wp.indexedarray[wp.float32, Literal[3]], "wp.indexedarray[wp.float32, Literal[3]]"),
])
def test_repr_is_the_source_spelling_and_evaluates_back(annotation, text):
    a = annotation()
    assert repr(a) == text
    assert eval(text, {"wp": wp, "Literal": Literal, "Any": Any}) == a  # noqa: S307


def test_annotations_are_not_arrays():
    assert not isinstance(wp.array[float], wp.array)
    assert not isinstance(wp.indexedarray[float], wp.indexedarray)
    assert not hasattr(wp.array[float], "__dict__")


def test_annotation_and_array_members():
    # Warp's `vars`: an array has `shape` (4 int32 dims) and its data pointer; an indexed array its shape only
    a = wp.array2d[float]
    assert a.vars is a.vars  # made once per annotation
    assert [(k, m.label) for k, m in a.vars.items()] == [("shape", "shape"), ("ptr", "data")]
    assert a.vars["shape"].type._length_ == 4 and a.vars["shape"].type._wp_scalar_type_ is wp.int32
    assert a.vars["ptr"].type is wp.uint64
    assert list(wp.indexedarray[float].vars) == ["shape"]
    assert list(wp.zeros(3).vars) == ["shape", "ptr"]
    assert list(wp.indexedarray(wp.zeros(3), [wp.array([0, 2], dtype=int)]).vars) == ["shape"]
    assert {k: (m.label, m.type.dtype) for k, m in wp.Mesh.vars.items()} == {
        "points": ("points", wp.vec3), "velocities": ("velocities", wp.vec3), "indices": ("indices", wp.int32)}


def test_unions_for_python_scope_signatures():
    a, ia = wp.array[float], wp.indexedarray[wp.float64]
    assert get_origin(a | float) is Union and (a | float).__args__ == (a, float)
    assert (float | a).__args__ == (float, a)
    assert set((a | None).__args__) == {a, type(None)}
    assert set((None | ia).__args__) == {ia, type(None)}


def test_unknown_dtype_is_kept_until_a_kernel_uses_it():
    class NotAWarpType:
        pass

    assert wp.array[NotAWarpType].dtype is NotAWarpType
    assert wp.array[float, Any].ndim is Any


def test_ndim_literal_must_be_single():
    with pytest.raises(TypeError, match=r"Expected a single Literal value for ndim, got typing.Literal\[2, 3\]"):
        wp.array[float, Literal[2, 3]]
    with pytest.raises(ValueError, match="ndim must be between 1 and 4, got 5"):
        wp.array[float, 5]


def test_union_annotations_are_refused_in_kernels_and_functions():
    with pytest.raises(RuntimeError, match=r"Union type annotations are only supported at Python scope: argument "
                                           r"'a' of function 'f' is annotated"):
        @wp.func
        def f(a: wp.array[float] | float) -> float:
            return 0.0
    with pytest.raises(RuntimeError, match=r"Union type annotations are only supported at Python scope: argument "
                                           r"'a' of kernel 'k' is annotated int \| float"):
        @wp.kernel
        def k(a: int | float):
            pass


def test_tile_annotation_forms():
    assert wp.tile[float].dtype is wp.float32 and wp.tile[float].shape is Any and wp.tile[float].storage == "register"
    assert wp.tile[float, Literal[8], Literal[4]].shape == (8, 4)
    assert wp.tile[wp.float64, 16, 8].shape == (16, 8)
    assert wp.tile[float, (4, 4)].shape == (4, 4)
    assert wp.types.is_tile(wp.tile[float, 2])
    assert wp.tile[float, 8, 4] == wp.tile[wp.float32, Literal[8], Literal[4]]
    with pytest.raises(TypeError, match=r"wp.tile\[dtype, \*shape\] takes a dtype and positive int dimensions"):
        wp.tile[float, 0]


@wp.func
def pass_through(t: wp.tile[float, Literal[8], Literal[4]]) -> wp.tile[float, Literal[8], Literal[4]]:
    return t


@wp.func
def doubled(t: wp.tile[float]) -> wp.tile[float]:  # any shape: made per shape it is called with
    return t * 2.0


@wp.kernel
def tile_annotation_kernel(src: wp.array2d[float], dst: wp.array2d[float], row: wp.array[float],
                           row_out: wp.array[float]):
    i = wp.tid()
    t = doubled(pass_through(wp.tile_load(src, shape=(8, 4), offset=(i * 8, 0))))
    wp.tile_store(dst, t, offset=(i * 8, 0))
    r = doubled(wp.tile_load(row, shape=3))
    wp.tile_store(row_out, r)


def test_tile_annotations_in_functions():
    src = np.arange(64.0, dtype=np.float32).reshape(16, 4)
    dst, row = wp.zeros((16, 4), dtype=float), wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    row_out = wp.zeros(3, dtype=float)
    wp.launch_tiled(tile_annotation_kernel, dim=[2], inputs=[wp.array(src), dst, row, row_out], block_dim=1)
    np.testing.assert_array_equal(dst.numpy(), 2.0 * src)
    np.testing.assert_array_equal(row_out.numpy(), [2.0, 4.0, 6.0])
