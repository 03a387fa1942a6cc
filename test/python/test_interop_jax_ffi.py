"""wp.jax_kernel and wp.jax_callable beyond the guide's snippets: Warp 1.19's argument checks and errors,
in-out arguments, every vmap method, gradients (enable_backward), graph and preload modes, and XLA's call
frame read by the handler. Values against numpy; error texts are Warp 1.19's (warp/_src/jax/ffi.py)."""

import ctypes
import inspect

import numpy as np
import pytest

import mlwarp as wp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from mlwarp.interop import xla_ffi  # noqa: E402


@wp.kernel
def axpy(x: wp.array(dtype=float), y: wp.array(dtype=float), a: float, out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a * x[i] + y[i]


@wp.kernel
def accumulate(x: wp.array(dtype=float), total: wp.array(dtype=float), twice: wp.array(dtype=float)):
    i = wp.tid()
    total[i] = total[i] + x[i]
    twice[i] = 2.0 * x[i]


@wp.kernel
def vec_energy(p: wp.array(dtype=wp.vec3), k: float, e: wp.array(dtype=float), f: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    e[i] = k * wp.dot(p[i], p[i])
    f[i] = -2.0 * k * p[i]


def test_signatures_are_warps():
    # Warp 1.19: inspect.signature(warp.jax_kernel) / (warp.jax_callable)
    assert str(inspect.signature(wp.jax_kernel)) == (
        "(kernel, num_outputs=1, vmap_method='broadcast_all', launch_dims=None, output_dims=None, "
        "in_out_argnames=None, module_preload_mode=<JaxModulePreloadMode.CURRENT_DEVICE: 1>, "
        "enable_backward: 'bool' = False, has_side_effect: 'bool' = False, block_dim: 'int | None' = None)")
    assert str(inspect.signature(wp.jax_callable)) == (
        "(func, num_outputs: 'int' = 1, graph_mode: 'JaxCallableGraphMode' = <JaxCallableGraphMode.JAX: 1>, "
        "vmap_method: 'str | None' = 'broadcast_all', output_dims=None, in_out_argnames=None, "
        "stage_in_argnames=None, stage_out_argnames=None, graph_cache_max: 'int | None' = 32, "
        "module_preload_mode: 'JaxModulePreloadMode' = <JaxModulePreloadMode.CURRENT_DEVICE: 1>, "
        "has_side_effect: 'bool' = False)")
    assert [m.name for m in wp.JaxCallableGraphMode] == ["NONE", "JAX", "WARP", "WARP_STAGED", "WARP_STAGED_EX"]
    assert [m.name for m in wp.JaxModulePreloadMode] == ["NONE", "CURRENT_DEVICE", "ALL_DEVICES"]
    assert wp.jax_kernel(axpy) is wp.jax_kernel(axpy)  # wrappers are cached per construction arguments


def test_scalars_and_inputs_before_outputs():
    f = wp.jax_kernel(axpy)
    x, y = np.arange(5, dtype=np.float32), np.ones(5, np.float32)
    (out,) = jax.jit(lambda x, y: f(x, y, 0.5))(jnp.asarray(x), jnp.asarray(y))
    np.testing.assert_array_equal(np.asarray(out), 0.5 * x + y)


def test_argument_errors():
    f = wp.jax_kernel(axpy)
    x = jnp.zeros(4, jnp.float32)
    with pytest.raises(ValueError, match=r"^Expected 3 inputs, but got 2$"):
        f(x, x)
    with pytest.raises(TypeError, match=r"^Invalid data type for array argument 'y', expected float32, got int32$"):
        f(x, jnp.zeros(4, jnp.int32), 1.0)
    with pytest.raises(TypeError, match=r"^Invalid dimensionality for array argument 'x', expected 1 dimensions, "
                                        r"got 2$"):
        f(jnp.zeros((2, 2), jnp.float32), x, 1.0)
    g = wp.jax_kernel(vec_energy, num_outputs=2)
    with pytest.raises(TypeError, match=r"^Invalid inner dimensions for array argument 'p', expected \(3,\), got "
                                        r"\(2,\)$"):
        g(jnp.zeros((4, 2), jnp.float32), 1.0)
    with pytest.raises(ValueError, match=r"^Invalid output dimensions for argument 'f': \(4, 2\)$"):
        g(jnp.zeros((4, 3), jnp.float32), 1.0, output_dims={"e": 4, "f": (4, 2)})
    with pytest.raises(ValueError, match=r"^Missing output dimensions for argument 'f'$"):
        g(jnp.zeros((4, 3), jnp.float32), 1.0, output_dims={"e": 4})
    with pytest.raises(ValueError, match=r"^At least one output is required$"):
        wp.jax_kernel(axpy, num_outputs=0)
    with pytest.raises(ValueError, match=r"^Number of outputs cannot be greater than the number of kernel "
                                         r"arguments$"):
        wp.jax_kernel(axpy, num_outputs=5)
    with pytest.raises(TypeError, match=r"^All output arguments must be arrays$"):
        wp.jax_kernel(axpy, num_outputs=2)
    with pytest.raises(ValueError, match=r"in_out_argnames: '\{'nope'\}' did not match any function argument"):
        wp.jax_kernel(accumulate, num_outputs=2, in_out_argnames=["nope"])
    with pytest.raises(ValueError, match=r"^Expected an output-only argument for argument twice\. in_out arguments"):
        wp.jax_kernel(accumulate, num_outputs=2, in_out_argnames=["twice"])
    with pytest.raises(TypeError, match=r"^jax_kernel\(\): block_dim must be an integer or None\.$"):
        wp.jax_kernel(axpy, block_dim=1.5)
    with pytest.raises(ValueError, match=r"^jax_kernel\(\): block_dim must be positive\.$"):
        wp.jax_kernel(axpy, block_dim=0)
    with pytest.raises(wp.LaunchError, match=r"dim must be an int or a tuple of 1 to 4 ints, got \(1, 1, 1, 1, 1\)"):
        f(x, x, 1.0, launch_dims=(1, 1, 1, 1, 1))


def test_in_out_arguments():
    f = wp.jax_kernel(accumulate, num_outputs=2, in_out_argnames=["total"])
    x, total = np.arange(4, dtype=np.float32), np.full(4, 10.0, np.float32)
    new_total, twice = jax.jit(f)(jnp.asarray(x), jnp.asarray(total))
    np.testing.assert_array_equal(np.asarray(new_total), total + x)
    np.testing.assert_array_equal(np.asarray(twice), 2 * x)


@pytest.mark.parametrize("method", ["broadcast_all", "expand_dims", "sequential", "sequential_unrolled",
                                    "legacy_vectorized"])
def test_every_vmap_method(method):
    # x batched, y shared by every batch element: under expand_dims and legacy_vectorized y keeps one copy
    f = wp.jax_kernel(axpy, vmap_method=method)
    xs = np.arange(12, dtype=np.float32).reshape(3, 4)
    y = np.array([1.0, -1.0, 2.0, -2.0], np.float32)
    out = jax.jit(jax.vmap(lambda x: f(x, jnp.asarray(y), 2.0)[0]))(jnp.asarray(xs))
    np.testing.assert_array_equal(np.asarray(out), 2.0 * xs + y)
    # both batched, and nested vmap (two batch dimensions folded into one)
    ys = np.ones((2, 3, 4), np.float32)
    xs2 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = jax.vmap(jax.vmap(lambda x, y: f(x, y, -1.0)[0]))(jnp.asarray(xs2), jnp.asarray(ys))
    np.testing.assert_array_equal(np.asarray(out), -xs2 + ys)


def triple_callable(x: wp.array(dtype=wp.vec2), s: float, y: wp.array(dtype=wp.vec2)):
    wp.launch(scale_vec, dim=x.shape, inputs=[x, s], outputs=[y])


@wp.kernel
def scale_vec(x: wp.array(dtype=wp.vec2), s: float, y: wp.array(dtype=wp.vec2)):
    i = wp.tid()
    y[i] = s * x[i]


@pytest.mark.parametrize("method", ["broadcast_all", "sequential"])
def test_jax_callable_vmap(method):
    f = wp.jax_callable(triple_callable, vmap_method=method)
    xs = np.arange(24, dtype=np.float32).reshape(3, 4, 2)
    out = jax.jit(jax.vmap(lambda x: f(x, 3.0)[0]))(jnp.asarray(xs))
    np.testing.assert_array_equal(np.asarray(out), 3 * xs)


def test_jax_callable_errors():
    def unannotated(x, y: wp.array(dtype=float)):
        pass

    def returns(x: wp.array(dtype=float), y: wp.array(dtype=float)) -> int:
        pass

    with pytest.raises(RuntimeError, match=r"^Incomplete argument annotations on function"):
        wp.jax_callable(unannotated)
    with pytest.raises(TypeError, match=r"^Function must not return a value$"):
        wp.jax_callable(returns)
    f = wp.jax_callable(triple_callable)
    with pytest.raises(ValueError, match=r"^Expected 2 inputs \(x, s\), but got 1$"):
        f(jnp.zeros((2, 2), jnp.float32))


def test_graph_modes_on_the_cpu():
    for mode in (wp.JaxCallableGraphMode.NONE, wp.JaxCallableGraphMode.JAX):
        (y,) = wp.jax_callable(triple_callable, graph_mode=mode)(jnp.ones((2, 2), jnp.float32), 2.0)
        np.testing.assert_array_equal(np.asarray(y), np.full((2, 2), 2.0, np.float32))
    f = wp.jax_callable(triple_callable, graph_mode=wp.JaxCallableGraphMode.WARP, graph_cache_max=4)
    assert f.graph_cache_max == 4 and f.graph_cache_size == 0
    with pytest.raises(Exception, match=r"JaxCallableGraphMode.WARP is not supported for JAX CPU FFI calls"):
        jax.block_until_ready(f(jnp.ones((2, 2), jnp.float32), 2.0))
    wp.clear_jax_callable_graph_cache(f)
    wp.clear_jax_callable_graph_cache()


@pytest.mark.parametrize("mode", list(wp.JaxModulePreloadMode))
def test_preload_modes(mode):
    (y,) = wp.jax_kernel(axpy, module_preload_mode=mode)(jnp.ones(3, jnp.float32), jnp.ones(3, jnp.float32), 1.0)
    np.testing.assert_array_equal(np.asarray(y), np.full(3, 2.0, np.float32))


# -- gradients -------------------------------------------------------------------------------------------------------
def test_enable_backward_matches_the_closed_form():
    f = wp.jax_kernel(vec_energy, num_outputs=2, enable_backward=True)
    p = np.arange(12, dtype=np.float32).reshape(4, 3) / 7.0
    w = np.array([1.0, 2.0, -1.0, 0.5], np.float32)
    g = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], np.float32)

    def loss(p, k):
        e, force = f(p, k)
        return jnp.sum(w * e) + jnp.sum(g * force)

    grad = jax.jit(jax.grad(loss), static_argnums=1)(jnp.asarray(p), 1.5)
    # d/dp [w k p.p + g.(-2 k p)] = 2 k w p - 2 k g
    np.testing.assert_allclose(np.asarray(grad), 2 * 1.5 * w[:, None] * p - 2 * 1.5 * g, rtol=1e-6)
    e, force = f(jnp.asarray(p), 1.5)
    np.testing.assert_allclose(np.asarray(e), 1.5 * np.sum(p * p, axis=1), rtol=1e-6)
    # the cotangents JAX passes in are not written
    cot = (jnp.asarray(w), jnp.asarray(g))
    _, vjp = jax.vjp(lambda p: f(p, 1.5), jnp.asarray(p))
    (grad_vjp,) = vjp(list(cot))
    np.testing.assert_allclose(np.asarray(grad_vjp), np.asarray(grad), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(cot[0]), w)


def test_enable_backward_two_inputs_and_launch_dims():
    f = wp.jax_kernel(axpy, enable_backward=True, launch_dims=3)
    x, y = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
    gx, gy = jax.grad(lambda x, y: jnp.sum(f(x, y, 3.0)[0] ** 2), argnums=(0, 1))(jnp.asarray(x), jnp.asarray(y))
    out = np.zeros(4, np.float32)
    out[:3] = 3 * x[:3] + y[:3]  # launched over 3 elements: the last output and its gradients stay zero
    np.testing.assert_allclose(np.asarray(gx), 2 * out * 3.0)
    np.testing.assert_allclose(np.asarray(gy), 2 * out)
    with pytest.raises(TypeError, match=r"^jax_kernel\(\): launch_dims cannot be overridden per-call"):
        f(jnp.asarray(x), jnp.asarray(y), 3.0, launch_dims=4)
    with pytest.raises(TypeError, match=r"^jax_kernel\(\): output_dims is not supported when enable_backward"):
        f(jnp.asarray(x), jnp.asarray(y), 3.0, output_dims=4)
    with pytest.raises(TypeError, match=r"^jax_kernel\(\): vmap_method cannot be overridden per-call"):
        f(jnp.asarray(x), jnp.asarray(y), 3.0, vmap_method="sequential")
    with pytest.raises(NotImplementedError, match=r"in_out_argnames\) are not supported when enable_backward"):
        wp.jax_kernel(accumulate, num_outputs=2, in_out_argnames=["total"], enable_backward=True)
    with pytest.raises(NotImplementedError, match=r"output_dims is not yet supported when enable_backward=True"):
        wp.jax_kernel(axpy, output_dims=4, enable_backward=True)


# -- the call frame, read without XLA -------------------------------------------------------------------------------
class _FakeXla:
    """An XLA_FFI_Api with the three entries the handlers call, and call frames over numpy buffers."""

    def __init__(self, ordinal=0, stream=1234):
        self.errors = []
        self._keep = []

        def error_create(args):
            self.errors.append(args.contents.message.decode())
            return 1  # any non-null XLA_FFI_Error*

        def stream_get(args):
            args.contents.stream = stream
            return None

        def ordinal_get(args):
            args.contents.device_ordinal = ordinal
            return None

        self.api = xla_ffi.Api(struct_size=ctypes.sizeof(xla_ffi.Api), Error_Create=xla_ffi.ErrorCreate(error_create),
                               Stream_Get=xla_ffi.StreamGet(stream_get),
                               DeviceOrdinal_Get=xla_ffi.DeviceOrdinalGet(ordinal_get))

    def _args(self, arrays):
        """XLA_FFI_Args over float32 buffers: numpy arrays, or (address, shape) pairs."""
        bufs = []
        for a in arrays:
            address, shape = (a.ctypes.data, a.shape) if isinstance(a, np.ndarray) else a
            dims = (ctypes.c_int64 * len(shape))(*shape)
            self._keep.append(dims)
            bufs.append(xla_ffi.Buffer(ctypes.sizeof(xla_ffi.Buffer), None, int(xla_ffi.DataType.F32), address,
                                       len(shape), dims))
        pointers = (ctypes.c_void_p * len(bufs))(*[ctypes.addressof(b) for b in bufs])
        self._keep += [bufs, pointers]
        return xla_ffi.Args(ctypes.sizeof(xla_ffi.Args), None, len(bufs), None, pointers)

    def frame(self, inputs, outputs, attrs: dict):
        """A call frame over `inputs` and `outputs` (numpy arrays or (address, shape) pairs) with int64
        scalar attributes."""
        names = [xla_ffi.ByteSpan(ctypes.cast(ctypes.c_char_p(k.encode()), ctypes.POINTER(ctypes.c_char)), len(k))
                 for k in attrs]
        values = [np.array(v, np.int64) for v in attrs.values()]
        scalars = [xla_ffi.Scalar(int(xla_ffi.DataType.S64), v.ctypes.data) for v in values]
        name_ptrs = (ctypes.POINTER(xla_ffi.ByteSpan) * len(names))(*[ctypes.pointer(n) for n in names])
        attr_ptrs = (ctypes.c_void_p * len(scalars))(*[ctypes.addressof(s) for s in scalars])
        types = (ctypes.c_int * len(scalars))(*[int(xla_ffi.AttrType.SCALAR)] * len(scalars))
        self._keep += [names, values, scalars, name_ptrs, attr_ptrs, types]
        attrs_struct = xla_ffi.Attrs(ctypes.sizeof(xla_ffi.Attrs), None, len(scalars), types, name_ptrs, attr_ptrs)
        frame = xla_ffi.CallFrame(ctypes.sizeof(xla_ffi.CallFrame), None, ctypes.pointer(self.api), None,
                                  int(xla_ffi.ExecutionStage.EXECUTE), self._args(inputs), self._args(outputs),
                                  attrs_struct, None)
        self._keep.append(frame)
        return frame


def test_the_handler_reads_a_call_frame():
    f = wp.jax_kernel(axpy)
    f(jnp.zeros(3, jnp.float32), jnp.zeros(3, jnp.float32), 4.0)  # traces launch 0 of this wrapper ...
    launch_id = len(f.launches) - 1  # ... (or a later one: the wrapper is shared)
    fake = _FakeXla()
    x, y, out = np.arange(3, dtype=np.float32), np.ones(3, np.float32), np.zeros(3, np.float32)
    frame = fake.frame([x, y], [out], {"launch_id": launch_id})
    assert xla_ffi.decode_attrs(frame.attrs) == {"launch_id": launch_id}
    assert xla_ffi.stream(frame) == 1234 and xla_ffi.device_ordinal(frame) == 0
    f._run(frame, "cpu")
    np.testing.assert_array_equal(out, 4.0 * x + y)


def test_the_handler_answers_the_metadata_query_and_reports_errors():
    metadata = xla_ffi.Metadata(ctypes.sizeof(xla_ffi.Metadata))
    extension = xla_ffi.MetadataExtension(xla_ffi.ExtensionBase(ctypes.sizeof(xla_ffi.MetadataExtension),
                                                                int(xla_ffi.ExtensionType.METADATA)),
                                          ctypes.pointer(metadata))
    frame = xla_ffi.CallFrame(ctypes.sizeof(xla_ffi.CallFrame),
                              ctypes.cast(ctypes.pointer(extension), ctypes.POINTER(xla_ffi.ExtensionBase)))
    assert xla_ffi.answer_metadata_query(frame, command_buffer_compatible=True)
    assert (metadata.api_version.major_version, metadata.api_version.minor_version) == (0, 1)
    assert metadata.traits == xla_ffi.COMMAND_BUFFER_COMPATIBLE
    # a CUDA call on a machine whose call frame names a device mlwarp does not have: XLA gets the error
    from mlwarp.interop import jax_ffi_base

    f = wp.jax_kernel(axpy)
    f(jnp.zeros(3, jnp.float32), jnp.zeros(3, jnp.float32), 1.0)
    fake = _FakeXla(ordinal=7)
    frame = fake.frame([np.zeros(3, np.float32)] * 2, [np.zeros(3, np.float32)], {"launch_id": 0})
    run = jax_ffi_base.handler_for(f.name, "CUDA")
    assert run(ctypes.pointer(frame)) == 1
    assert len(fake.errors) == 1  # (the reason depends on the machine: no driver, or fewer than 8 GPUs)
    assert fake.errors[0].startswith("FFI callback error: ValueError: Device 'cuda:7' is not available: ")
