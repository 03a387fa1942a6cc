"""Warp 1.19's class members on mlwarp's arrays, Tape, geometry objects and vector types (the surface checker's
missing members), each exercised. Values and messages were recorded from warp-lang 1.19.0 on a CPU-only
machine; the tests do not import warp-lang."""

import inspect
import typing
import warnings

import numpy as np
import pytest

import mlwarp as wp
from mlwarp import runtime


@wp.kernel
def _square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = x[i] * x[i]


def test_array_to_and_numpy():
    a = wp.array(np.arange(3, dtype=np.float32), device="cpu", requires_grad=True)
    assert a.to("cpu") is a
    params = inspect.signature(wp.array.to).parameters
    assert list(params) == ["self", "device", "requires_grad"] and params["requires_grad"].default is None
    assert list(inspect.signature(wp.array.numpy).parameters) == ["self", "_suppress_bfloat16_warning"]
    h = wp.array(np.array([1.5, -2.0], np.float32), dtype=wp.bfloat16, device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h.numpy(_suppress_bfloat16_warning=True)


def test_array_cuda_interface_pinned():
    a = wp.zeros(3, device="cpu", pinned=True)
    # warp-lang: AttributeError on CPU arrays, so hasattr() is False
    assert not hasattr(a, "__cuda_array_interface__")
    with pytest.raises(AttributeError, match=r"^__cuda_array_interface__ is not supported because device is cpu$"):
        a.__cuda_array_interface__
    # mlwarp allocates no pinned memory: pinned=True is accepted and gives ordinary host memory
    assert a.pinned is False and a.memory_kind == wp.MemoryKind.HOST
    assert wp.array([1.0, 2.0], dtype=float, device="cpu", pinned=True).pinned is False


def test_tape_record_launch():
    x = wp.array(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=True, device="cpu")
    y = wp.zeros(3, requires_grad=True, device="cpu")
    tape = wp.Tape()
    wp.launch(_square, 3, inputs=[x], outputs=[y], device="cpu", record_tape=False)  # not recorded ...
    tape.record_launch(_square, 3, 0, [x], [y], "cpu")  # ... until recorded by hand
    tape.backward(grads={y: wp.array(np.ones(3, np.float32), device="cpu")})
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([1.0, 2.0, 3.0]))  # d(x^2)/dx
    assert len(tape.launches) == 1


@pytest.mark.parametrize("scope", [wp.Tape, wp.ScopedDevice, wp.ScopedStream])
def test_exit_parameter_names(scope):
    assert list(inspect.signature(scope.__exit__).parameters) == ["self", "exc_type", "exc_value", "traceback"]


def test_volume_rebuild_status_values():
    # warp-lang 1.19.0's values (its native WP_VOLUME_REBUILD_* bits)
    V = wp.Volume
    assert (V.REBUILD_SUCCESS, V.REBUILD_LEAF_CAPACITY_EXCEEDED, V.REBUILD_LOWER_CAPACITY_EXCEEDED,
            V.REBUILD_UPPER_CAPACITY_EXCEEDED, V.REBUILD_VOXEL_CAPACITY_EXCEEDED, V.REBUILD_INVALID_INPUT) == \
        (0, 1, 2, 4, 8, 16)


def test_geometry_runtime():
    assert wp.Mesh.runtime is runtime and wp.HashGrid.runtime is runtime and wp.Bvh.runtime is runtime
    grid = wp.HashGrid(2, 2, 2, device="cpu")
    assert grid.runtime is runtime


def test_vector_scalar_import_export():
    # warp-lang 1.19.0: float16/bfloat16 vectors store 16-bit float bits; other types the value as given
    assert wp.vec3h.scalar_import(1.5) == int(np.float16(1.5).view(np.uint16)) == 15872
    assert wp.vec3h.scalar_export(15872) == 1.5
    assert wp.mat22h.scalar_import(-2.0) == int(np.float16(-2.0).view(np.uint16))
    assert wp.types.vector(3, wp.bfloat16).scalar_import(1.0) == 0x3F80
    assert wp.types.vector(3, wp.bfloat16).scalar_export(0x3F80) == 1.0
    assert wp.vec3f.scalar_import(2.5) == 2.5 and wp.vec3i.scalar_export(7) == 7
    assert wp.quatd.scalar_import(0.25) == 0.25 and wp.spatial_matrixf.scalar_export(1.0) == 1.0
    v = wp.vec3h(0.0, 0.0, 0.0)
    v[1] = wp.vec3h.scalar_export(wp.vec3h.scalar_import(0.5))
    assert v[1] == 0.5


@wp.kernel
def _scale_any(a: wp.array(dtype=typing.Any), s: typing.Any):
    i = wp.tid()
    a[i] = a[i] * s


def test_kernel_members():
    k = _square
    assert k.arg_indices == {"x": 0, "y": 1} and k.return_annotation is None and k.sig == ""
    assert k.uses_warp_entry_point_abi is True and k.generic_parent is None
    assert k.grid_stride is True  # Warp 1.19's default_grid_stride
    assert isinstance(k.hash, bytes) and len(k.hash) == 32 and k.hash == _square.hash
    assert k.get_mangled_name() == f"{k.key}_{k.hash.hex()[:8]}"
    assert k.get_mangled_name(kernel_hash=bytes(range(32))) == f"{k.key}_00010203"
    g = _scale_any
    assert g.is_generic and g.get_overload([wp.array(dtype=wp.float32), wp.float32]) is None
    a = wp.array(np.ones(2, np.float32), device="cpu")
    types = g.infer_argument_types([a, wp.float32(2.0)])
    assert types[1] is wp.float32 and types[0].dtype is wp.float32
    wp.launch(g, 2, inputs=[a, wp.float32(2.0)], device="cpu")
    np.testing.assert_array_equal(a.numpy(), [2.0, 2.0])
    instance = g.get_overload([wp.array(dtype=wp.float32), wp.float32])
    assert instance is not None and instance.generic_parent is g and instance.sig != ""
    assert g.get_overload([wp.array(dtype=wp.float64), wp.float64]) is None
    with pytest.raises(RuntimeError, match=r"^Invalid number of arguments for kernel "):
        g.infer_argument_types([a])


def test_module_members():
    m = wp.get_module("surface_members_module")
    resolved = m.resolve_options(wp.config)
    # None entries inherit wp.config's values, as Warp's resolve_options
    assert resolved["mode"] == wp.config.mode and resolved["default_grid_stride"] is True
    assert resolved["optimization_level"] == wp.config.optimization_level
    assert resolved["enable_mathdx_gemm"] is True and resolved["verify_fp"] == wp.config.verify_fp
    assert "extra_build_options" not in resolved and resolved["extra_cpu_include_dirs"] == ()
    assert m.resolve_options(wp.config, block_dim=64)["block_dim"] == 64 and m.options["block_dim"] == 256
    assert m.options["mode"] is None  # the module's own options are unchanged
    m.options["deterministic_max_records"] = -1
    with pytest.raises(ValueError, match=r"^deterministic_max_records must be non-negative, got -1$"):
        m.resolve_options(wp.config)
    m.options["deterministic_max_records"] = 0
    ident = m.get_module_identifier()
    assert ident.startswith("wp_surface_members_module_") and len(ident) == len("wp_surface_members_module_") + 7
    m.options["strip_hash"] = True
    assert m.get_module_identifier() == "wp_surface_members_module"

    @wp.struct
    class Pair:
        a: float

    m.register_struct(Pair)
    assert m.structs[Pair.key] is Pair  # (Warp's key: the qualified name, "<locals>" spelt "__locals__")
