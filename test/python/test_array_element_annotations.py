"""Array annotations whose element is not a plain Warp type: arrays of textures (a kernel reads each texture's
struct) and indexed arrays as struct fields. The factory form `wp.array(dtype=T)` and the subscript form
`wp.array[T]` are one type, as in Warp 1.19 (its test_factory_style_array_annotations compares their dtype,
ndim and type code)."""

import numpy as np
import pytest

import mlwarp as wp


@pytest.mark.parametrize("texture", [wp.Texture1D, wp.Texture2D, wp.Texture3D])
def test_factory_and_subscript_texture_arrays_have_the_texture_as_dtype(texture):
    factory, subscript = wp.array(dtype=texture), wp.array[texture]
    assert factory.dtype is texture and subscript.dtype is texture
    assert factory.ndim == subscript.ndim == 1


@wp.func
def sample_second(textures: wp.array(dtype=wp.Texture1D)) -> float:
    return wp.texture_sample(textures[1], 0.5, dtype=float)


@wp.kernel
def sample_factory_form(textures: wp.array(dtype=wp.Texture1D), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.texture_sample(textures[i], 0.5, dtype=float)


@wp.kernel
def sample_subscript_form(textures: wp.array[wp.Texture1D], out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = wp.texture_sample(textures[i], 0.5, dtype=float) + sample_second(textures)


def test_arrays_of_textures_in_kernels_and_functions():
    # constant textures: any sample is the constant
    textures = wp.array([wp.Texture1D(np.full(4, v, dtype=np.float32), device="cpu") for v in (1.0, 2.0)],
                        dtype=wp.Texture1D, device="cpu")
    out = wp.zeros(2, dtype=float, device="cpu")
    wp.launch(sample_factory_form, dim=2, inputs=[textures, out], device="cpu")
    np.testing.assert_array_equal(out.numpy(), [1.0, 2.0])
    wp.launch(sample_subscript_form, dim=2, inputs=[textures, out], device="cpu")
    np.testing.assert_array_equal(out.numpy(), [3.0, 4.0])


@wp.struct
class IndexedFields:
    values: wp.indexedarray(dtype=float)
    points: wp.indexedarray[wp.vec3, 2]


@wp.kernel
def read_indexed_field(s: IndexedFields, out: wp.array(dtype=float)):
    out[0] = s.values[0] + s.values[1]


def test_indexed_array_struct_fields_read_as_warps_type_and_in_kernels():
    assert IndexedFields.vars["values"].type.dtype is wp.float32 and IndexedFields.vars["values"].type.ndim == 1
    assert IndexedFields.vars["points"].type.dtype is wp.vec3 and IndexedFields.vars["points"].type.ndim == 2
    s = IndexedFields()
    s.values = wp.indexedarray(wp.array(np.arange(5, dtype=np.float32), device="cpu"),
                               [wp.array([3, 1], dtype=int, device="cpu")])
    out = wp.zeros(1, dtype=float, device="cpu")
    wp.launch(read_indexed_field, dim=1, inputs=[s, out], device="cpu")
    assert out.numpy()[0] == 4.0  # values[3] + values[1]
