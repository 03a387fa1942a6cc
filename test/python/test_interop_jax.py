"""JAX interop through DLPack (jax is optional: installed by the test extra, skipped where it is absent)."""

import numpy as np
import pytest

import mlwarp as wp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


@wp.kernel
def double(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 2.0 * x[i]


@pytest.mark.parametrize("wdt, name", [(wp.float16, "float16"), (wp.bfloat16, "bfloat16"), (wp.float32, "float32"),
                                       (wp.float64, "float64"), (wp.int8, "int8"), (wp.int16, "int16"),
                                       (wp.int32, "int32"), (wp.int64, "int64"), (wp.uint8, "uint8"),
                                       (wp.uint16, "uint16"), (wp.uint32, "uint32"), (wp.uint64, "uint64"),
                                       (wp.bool, "bool_")])
def test_dtype_maps(wdt, name):
    assert wp.dtype_to_jax(wdt) is getattr(jnp, name)
    assert wp.dtype_from_jax(getattr(jnp, name)) is wdt
    assert wp.dtype_from_jax(jnp.dtype(getattr(jnp, name))) is wdt


def test_dtype_errors():
    with pytest.raises(TypeError, match=r"^Cannot convert vec3f to a JAX type$"):
        wp.dtype_to_jax(wp.vec3)
    with pytest.raises(TypeError, match=r"^Cannot convert <class 'jax.numpy.complex64'> to a Warp type$"):
        wp.dtype_from_jax(jnp.complex64)


def test_devices():
    cpu = jax.devices("cpu")[0]
    assert wp.device_from_jax(cpu) is wp.get_device("cpu")
    assert wp.device_to_jax("cpu") == cpu
    assert wp.device_to_jax(None) == cpu


def test_from_jax_shares_the_buffer():
    x = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
    a = wp.from_jax(x)
    assert a.shape == (2, 3) and a.dtype is wp.float32
    assert a.ptr == x.unsafe_buffer_pointer()
    assert a.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    v = wp.from_jax(x, dtype=wp.vec3)
    assert v.shape == (2,) and v.dtype is wp.vec3
    with pytest.raises(TypeError, match=r"^from_jax expects a jax.Array, got ndarray$"):
        wp.from_jax(np.zeros(2))


def test_to_jax_shares_memory():
    w = wp.array(np.arange(5, dtype=np.float32))
    j = wp.to_jax(w)
    assert isinstance(j, jax.Array) and j.unsafe_buffer_pointer() == w.ptr  # mlwarp allocations are 64-byte aligned
    assert j.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert wp.to_jax(wp.zeros(3, dtype=wp.vec3)).shape == (3, 3)
    with pytest.raises(RuntimeError, match=r"to_jax: JAX cannot take an array with shape \(3,\) and strides \(8,\)"):
        wp.to_jax(w[::2])
    with pytest.raises(TypeError, match=r"^to_jax expects a wp.array, got list$"):
        wp.to_jax([1.0])


def test_kernel_on_jax_data_and_back():
    x = jnp.linspace(0.0, 1.0, 8, dtype=jnp.float32)
    y = wp.zeros(8)
    wp.launch(double, 8, inputs=[wp.from_jax(x), y])
    out = wp.to_jax(y)
    np.testing.assert_array_equal(np.asarray(out), 2.0 * np.asarray(x))
    assert float(jnp.sum(out)) == pytest.approx(float(2.0 * jnp.sum(x)))
