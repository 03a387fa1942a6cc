"""The JAX sections of Warp's interop guide (seeds' interop guide: "Using Warp kernels as JAX primitives", "JAX
Foreign Function Interface (FFI)", "Calling annotated Python functions", "Generic JAX FFI callbacks"), each
snippet adapted to the CPU (the guide says CUDA only: Warp 1.19 and mlwarp register CPU targets too) and its
values checked against numpy."""

import math
import warnings
from functools import partial

import numpy as np
import pytest

import mlwarp as wp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from mlwarp.jax_experimental import jax_kernel as legacy_jax_kernel  # noqa: E402
from mlwarp.jax_experimental.ffi import (  # noqa: E402
    get_jax_device, jax_callable, jax_kernel, register_ffi_callback,
)


def legacy(kernel, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return legacy_jax_kernel(kernel, **kwargs)


# -- "Using Warp kernels as JAX primitives": the first jax_kernel (outputs inferred from the call) -------------
@wp.kernel
def triple_kernel(input: wp.array(dtype=float), output: wp.array(dtype=float)):
    tid = wp.tid()
    output[tid] = 3.0 * input[tid]


@wp.kernel
def multiarg_kernel(a: wp.array(dtype=float), b: wp.array(dtype=float), c: wp.array(dtype=float),
                    ab: wp.array(dtype=float), bc: wp.array(dtype=float)):
    tid = wp.tid()
    ab[tid] = a[tid] + b[tid]
    bc[tid] = b[tid] + c[tid]


@wp.kernel
def matmul_kernel(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):
    i, j = wp.tid()
    N = a.shape[0]
    K = a.shape[1]
    M = b.shape[1]
    if i < N and j < M:
        s = wp.float32(0)
        for k in range(K):
            s += a[i, k] * b[k, j]
        c[i, j] = s


def test_legacy_triple():
    jax_triple = legacy(triple_kernel)

    @jax.jit
    def f():
        x = jnp.arange(0, 64, dtype=jnp.float32)
        return jax_triple(x)

    out = f()
    assert isinstance(out, list) and len(out) == 1  # a primitive with multiple results: a list
    np.testing.assert_array_equal(np.asarray(out[0]), 3.0 * np.arange(64, dtype=np.float32))


def test_legacy_multiarg():
    jax_multiarg = legacy(multiarg_kernel)

    @jax.jit
    def f():
        a = jnp.full(64, 1, dtype=jnp.float32)
        b = jnp.full(64, 2, dtype=jnp.float32)
        c = jnp.full(64, 3, dtype=jnp.float32)
        return jax_multiarg(a, b, c)

    x, y = f()
    np.testing.assert_array_equal(np.asarray(x), np.full(64, 3.0, np.float32))
    np.testing.assert_array_equal(np.asarray(y), np.full(64, 5.0, np.float32))


def test_legacy_matmul_launch_dims():
    N, M, K = 3, 4, 2
    jax_matmul = legacy(matmul_kernel, launch_dims=(N, M))

    @jax.jit
    def f():
        a = jnp.full((N, K), 2, dtype=jnp.float32)
        b = jnp.full((K, M), 3, dtype=jnp.float32)
        return jax_matmul(a, b)

    (c,) = f()
    np.testing.assert_array_equal(np.asarray(c), np.full((N, K), 2, np.float32) @ np.full((K, M), 3, np.float32))


def test_legacy_warns_and_checks_the_argument_count():
    with pytest.warns(DeprecationWarning, match=r"infers its outputs from each call"):
        legacy_jax_kernel(triple_kernel)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        legacy_jax_kernel(triple_kernel, quiet=True)
    with pytest.raises(ValueError, match=r"kernel 'triple_kernel' has 2 arguments and the call passes 2"):
        legacy(triple_kernel)(jnp.zeros(2), jnp.zeros(2))


# -- "JAX Foreign Function Interface (FFI)": input and output semantics -----------------------------------------
@wp.kernel
def add_kernel(a: wp.array(dtype=int), b: wp.array(dtype=int), output: wp.array(dtype=int)):
    tid = wp.tid()
    output[tid] = a[tid] + b[tid]


@wp.kernel
def sincos_kernel(angle: wp.array(dtype=float), sin_out: wp.array(dtype=float), cos_out: wp.array(dtype=float)):
    tid = wp.tid()
    sin_out[tid] = wp.sin(angle[tid])
    cos_out[tid] = wp.cos(angle[tid])


@wp.kernel
def diagonal_kernel(output: wp.array(dtype=wp.mat33)):
    tid = wp.tid()
    output[tid] = wp.mat33(1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0)


def test_ffi_add():
    jax_add = jax_kernel(add_kernel)

    @jax.jit
    def f():
        n = 10
        a = jnp.arange(n, dtype=jnp.int32)
        b = jnp.ones(n, dtype=jnp.int32)
        return jax_add(a, b)

    (out,) = f()
    assert out.dtype == jnp.int32
    np.testing.assert_array_equal(np.asarray(out), np.arange(10) + 1)


def test_ffi_sincos():
    jax_sincos = jax_kernel(sincos_kernel, num_outputs=2)

    @jax.jit
    def f():
        a = jnp.linspace(0, 2 * math.pi, 32)
        return jax_sincos(a)

    s, c = f()
    angle = np.linspace(0, 2 * math.pi, 32, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(s), np.sin(angle), atol=1e-6)
    np.testing.assert_allclose(np.asarray(c), np.cos(angle), atol=1e-6)


def test_ffi_no_inputs_diagonal():
    jax_diagonal = jax_kernel(diagonal_kernel)

    @jax.jit
    def f():
        return jax_diagonal(launch_dims=4)

    (out,) = f()
    assert out.shape == (4, 3, 3)
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to(np.diag([1.0, 2.0, 3.0]), (4, 3, 3)))


# -- scalar inputs -------------------------------------------------------------------------------------------------
@wp.kernel
def scale_kernel(a: wp.array(dtype=float), s: float, output: wp.array(dtype=float)):
    tid = wp.tid()
    output[tid] = a[tid] * s


def test_scalar_inputs():
    jax_scale = jax_kernel(scale_kernel)

    @jax.jit
    def constant():
        a = jnp.arange(10, dtype=jnp.float32)
        return jax_scale(a, 2.0)  # ok: constant scalar argument

    np.testing.assert_array_equal(np.asarray(constant()[0]), 2.0 * np.arange(10, dtype=np.float32))

    @jax.jit
    def traced(a, s):
        return jax_scale(a, s)  # ERROR: traced scalar argument

    a = jnp.arange(10, dtype=jnp.float32)
    with pytest.raises(ValueError, match=r"^Argument 's' must be a static value"):
        traced(a, 2.0)

    @partial(jax.jit, static_argnames=["s"])
    def static(a, s):
        return jax_scale(a, s)  # ok: static scalar argument

    np.testing.assert_array_equal(np.asarray(static(a, 2.0)[0]), 2.0 * np.arange(10, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(static(a, s=-0.5)[0]), -0.5 * np.arange(10, dtype=np.float32))


# -- kernel launch and output dimensions -----------------------------------------------------------------------------
def test_matmul_launch_dims_per_call():
    jax_matmul = jax_kernel(matmul_kernel)

    @jax.jit
    def f():
        N1, M1, K1 = 3, 4, 2
        a1 = jnp.full((N1, K1), 2, dtype=jnp.float32)
        b1 = jnp.full((K1, M1), 3, dtype=jnp.float32)
        result1 = jax_matmul(a1, b1, launch_dims=(N1, M1))
        N2, M2, K2 = 4, 3, 2
        a2 = jnp.full((N2, K2), 2, dtype=jnp.float32)
        b2 = jnp.full((K2, M2), 3, dtype=jnp.float32)
        result2 = jax_matmul(a2, b2, launch_dims=(N2, M2))
        return result1, result2

    (r1,), (r2,) = f()
    np.testing.assert_array_equal(np.asarray(r1), np.full((3, 2), 2, np.float32) @ np.full((2, 4), 3, np.float32))
    np.testing.assert_array_equal(np.asarray(r2), np.full((4, 2), 2, np.float32) @ np.full((2, 3), 3, np.float32))


@wp.kernel
def funky_kernel(a: wp.array(dtype=float), b: wp.array(dtype=float), c: wp.array(dtype=float)):
    # the guide leaves the body out: each thread writes b[tid] (when in range) and c[tid] (when in range)
    tid = wp.tid()
    if tid < b.shape[0]:
        b[tid] = a[tid % a.shape[0]] + 1.0
    if tid < c.shape[0]:
        c[tid] = 2.0 * a[tid % a.shape[0]]


def test_output_dims():
    jax_funky = jax_kernel(funky_kernel, num_outputs=2)
    a = jnp.arange(8, dtype=jnp.float32)
    n, m, k = 8, 5, 8
    av = np.arange(8, dtype=np.float32)

    b, c = jax_funky(a, output_dims=n)  # one shape for all outputs
    np.testing.assert_array_equal(np.asarray(b), av + 1.0)
    np.testing.assert_array_equal(np.asarray(c), 2.0 * av)

    b, c = jax_funky(a, output_dims={"b": n, "c": m})  # a shape per output
    assert b.shape == (n,) and c.shape == (m,)
    np.testing.assert_array_equal(np.asarray(c), 2.0 * av[:m])

    b, c = jax_funky(a, launch_dims=k, output_dims={"b": n, "c": m})  # launch and output dims together
    np.testing.assert_array_equal(np.asarray(b), av + 1.0)
    np.testing.assert_array_equal(np.asarray(c), 2.0 * av[:m])


# -- arrays of vectors and matrices ------------------------------------------------------------------------------------
@wp.kernel
def vecmat_kernel(a: wp.array(dtype=float), b: wp.array(dtype=wp.vec3), c: wp.array(dtype=wp.mat22),
                  d: wp.array(dtype=float), e: wp.array(dtype=wp.vec3), f: wp.array(dtype=wp.mat22)):
    # the guide leaves the body out: d = 2a, e = a * b, f = c^T + a
    tid = wp.tid()
    d[tid] = 2.0 * a[tid]
    e[tid] = a[tid] * b[tid]
    f[tid] = wp.transpose(c[tid]) + wp.mat22(a[tid], a[tid], a[tid], a[tid])


def test_vector_and_matrix_arrays():
    jax_vecmat = jax_kernel(vecmat_kernel, num_outputs=3)
    n = 10
    av = np.arange(n, dtype=np.float32)
    bv = np.arange(3 * n, dtype=np.float32).reshape(n, 3)
    cv = np.arange(4 * n, dtype=np.float32).reshape(n, 2, 2)
    want = (2 * av, av[:, None] * bv, np.swapaxes(cv, 1, 2) + av[:, None, None])

    @jax.jit
    def f(a, b, c):
        return jax_vecmat(a, b, c)

    a, b, c = jnp.asarray(av), jnp.asarray(bv), jnp.asarray(cv)
    for out in (f(a, b, c),
                jax_vecmat(a, b, c, output_dims=n),  # the equivalent ways of giving output dimensions
                jax_vecmat(a, b, c, output_dims={"d": n, "e": n, "f": n}),
                jax_vecmat(a, b, c, output_dims={"d": n, "e": (n, 3), "f": (n, 2, 2)}),
                jax_vecmat(a, b, c, output_dims={"d": a.shape, "e": b.shape, "f": c.shape})):
        assert [o.shape for o in out] == [(n,), (n, 3), (n, 2, 2)]
        for got, expected in zip(out, want):
            np.testing.assert_array_equal(np.asarray(got), expected)


# -- JAX VMAP support -------------------------------------------------------------------------------------------------
def test_vmap_method_default_and_per_call():
    jax_callback = jax_kernel(triple_kernel, vmap_method="sequential")

    @jax.jit
    def f(a, c):
        b = jax.vmap(lambda x: jax_callback(x)[0])(a)  # uses "sequential"
        d = jax.vmap(lambda x: jax_callback(x, vmap_method="expand_dims")[0])(c)  # uses "expand_dims"
        return b, d

    av = np.arange(12, dtype=np.float32).reshape(3, 4)
    cv = np.arange(10, dtype=np.float32).reshape(2, 5)
    b, d = f(jnp.asarray(av), jnp.asarray(cv))
    np.testing.assert_array_equal(np.asarray(b), 3 * av)
    np.testing.assert_array_equal(np.asarray(d), 3 * cv)


# -- calling annotated Python functions -------------------------------------------------------------------------------
@wp.kernel
def scale_vec_kernel(a: wp.array(dtype=wp.vec2), s: float, output: wp.array(dtype=wp.vec2)):
    tid = wp.tid()
    output[tid] = a[tid] * s


def example_func(a: wp.array(dtype=float), b: wp.array(dtype=wp.vec2), s: float,
                 c: wp.array(dtype=float), d: wp.array(dtype=wp.vec2)):
    wp.launch(scale_kernel, dim=a.shape, inputs=[a, s], outputs=[c])
    wp.launch(scale_vec_kernel, dim=b.shape, inputs=[b, s], outputs=[d])


@pytest.mark.parametrize("graph_compatible", [True, False])
def test_jax_callable(graph_compatible):
    jax_func = jax_callable(example_func, num_outputs=2, graph_compatible=graph_compatible)

    @jax.jit
    def f():
        a = jnp.arange(10, dtype=jnp.float32)
        b = jnp.arange(10, dtype=jnp.float32).reshape((5, 2))  # wp.vec2
        s = 2.0
        output_dims = {"c": a.shape, "d": b.shape}
        c, d = jax_func(a, b, s, output_dims=output_dims)
        return c, d

    r1, r2 = f()
    np.testing.assert_array_equal(np.asarray(r1), 2.0 * np.arange(10, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(r2), 2.0 * np.arange(10, dtype=np.float32).reshape(5, 2))


# -- generic JAX FFI callbacks (Warp: CUDA only; mlwarp: the CPU too) -------------------------------------------------
def warp_func(inputs, outputs, attrs, ctx):
    a = inputs[0]
    b = inputs[1]
    s = attrs["scale"]
    c = outputs[0]
    d = outputs[1]
    device = wp.device_from_jax(get_jax_device())
    # the guide wraps XLA's CUDA stream; on the CPU there is none (ctx.stream is None)
    stream = wp.Stream(device, cuda_stream=ctx.stream) if device.is_cuda else None
    with wp.ScopedStream(stream):
        wp.launch(scale_kernel, dim=a.shape, inputs=[a, s], outputs=[c])
        # the input shapes are JAX's: strip the inner dimension of the vec2 array
        wp.launch(scale_vec_kernel, dim=b.shape[0], inputs=[b, s], outputs=[d])


def test_register_ffi_callback():
    register_ffi_callback("mlwarp_guide_warp_func", warp_func)
    n = 10
    a = jnp.arange(n, dtype=jnp.float32)
    b = jnp.arange(n, dtype=jnp.float32).reshape((n // 2, 2))  # array of wp.vec2
    s = 2.0
    out_types = [jax.ShapeDtypeStruct(a.shape, jnp.float32), jax.ShapeDtypeStruct(b.shape, jnp.float32)]
    call = jax.ffi.ffi_call("mlwarp_guide_warp_func", out_types)
    c, d = call(a, b, scale=s)
    np.testing.assert_array_equal(np.asarray(c), 2.0 * np.arange(n, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(d), 2.0 * np.arange(n, dtype=np.float32).reshape(n // 2, 2))
    # inside jax.jit as well, and a name registers once
    c, d = jax.jit(lambda a, b: call(a, b, scale=np.float32(-1.0)))(a, b)
    np.testing.assert_array_equal(np.asarray(d), -np.arange(n, dtype=np.float32).reshape(n // 2, 2))
    with pytest.raises(ValueError, match=r"an FFI callback named 'mlwarp_guide_warp_func' is already registered"):
        register_ffi_callback("mlwarp_guide_warp_func", warp_func)
