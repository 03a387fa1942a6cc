"""Warp 1.19's parameter names on mlwarp's functions (the surface checker's signature gaps), each exercised.
Parameter names are warp-lang 1.19.0's (inspect.signature); the tests do not import warp-lang."""

import ast
import inspect

import numpy as np
import pytest

import mlwarp as wp


@pytest.mark.parametrize("func, names", [
    (wp.from_numpy, ["arr", "dtype", "shape", "device", "requires_grad", "retain_grad"]),
    (wp.to_dlpack, ["wp_array"]),
    (wp.func_grad, ["forward_fn"]),
    (wp.func_replay, ["forward_fn"]),
    (wp.record_event, ["event", "external"]),
    (wp.wait_event, ["event", "external"]),
    (wp.wait_stream, ["other_stream", "event", "external"]),
    (wp.types.is_array, ["x"]), (wp.types.is_composite, ["x"]), (wp.types.is_float, ["x"]),
    (wp.types.is_int, ["x"]), (wp.types.is_scalar, ["x"]), (wp.types.is_struct, ["x"]), (wp.types.is_tile, ["t"]),
    (wp.types.type_ctype, ["dtype"]), (wp.types.type_size, ["dtype"]), (wp.types.type_size_in_bytes, ["dtype"]),
    (wp.Device, ["runtime", "alias", "ordinal", "is_primary", "context"]),
    (wp.Event.__init__, ["self", "device", "cuda_event", "enable_timing", "interprocess"]),
    (wp.Stream.__init__, ["self", "device", "priority"]),
    (wp.get_event_elapsed_time, ["start_event", "end_event", "synchronize"]),
])
def test_warp_parameter_names(func, names):
    assert list(inspect.signature(func).parameters)[:len(names)] == names


def test_struct_takes_c_and_a_keyword_module():
    params = inspect.signature(wp.struct).parameters
    assert list(params)[0] == "c" and params["module"].kind is inspect.Parameter.KEYWORD_ONLY

    class S:
        x: float

    assert wp.struct(S, module="unique")().x == 0.0


def test_from_numpy_retain_grad():
    a = wp.from_numpy(np.ones(3, dtype=np.float32), requires_grad=True, retain_grad=True, device="cpu")
    assert a.retain_grad is True
    with pytest.raises(ValueError) as e:
        wp.from_numpy(np.ones(3, dtype=np.float32), retain_grad=True, device="cpu")
    assert str(e.value) == "retain_grad=True requires requires_grad=True"


def test_to_dlpack_by_warps_keyword():
    a = wp.array(np.arange(3, dtype=np.float32), device="cpu")
    assert type(wp.to_dlpack(wp_array=a)).__name__ == "PyCapsule"


class _Double(ast.NodeTransformer):
    def visit_Constant(self, node):
        if isinstance(node.value, float):
            return ast.copy_location(ast.Constant(node.value * 2.0), node)
        return node


def _fill(a: wp.array(dtype=float)):
    a[wp.tid()] = 1.5


def test_kernel_code_transformers_are_applied():
    k = wp.Kernel(_fill, key="fill_doubled", code_transformers=[_Double()])
    a = wp.zeros(3, device="cpu")
    wp.launch(k, 3, inputs=[a], device="cpu")
    np.testing.assert_array_equal(a.numpy(), [3.0, 3.0, 3.0])


def test_kernel_source_for_a_function_made_with_exec():
    src = "def made(a: wp.array(dtype=float)):\n    a[wp.tid()] = 7.0\n"
    ns = {"wp": wp}
    exec(src, ns)
    k = wp.Kernel(ns["made"], source=src)
    b = wp.zeros(2, device="cpu")
    wp.launch(k, 2, inputs=[b], device="cpu")
    np.testing.assert_array_equal(b.numpy(), [7.0, 7.0])
