"""Warp's modules: Kernel.module, wp.get_module / load_module / force_load, module options, module="unique",
and @wp.kernel's other options."""

from typing import Any

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def _inc(a: wp.array[float]):
    i = wp.tid()
    a[i] = a[i] + 1.0


def test_a_kernel_belongs_to_its_python_module():
    assert _inc.module is wp.get_module(__name__)
    assert _inc.module.name == __name__ and _inc.module.kernels["_inc"] is _inc
    assert wp.get_module_options(__name__) is _inc.module.options
    assert _inc.module.options["enable_backward"] is True and _inc.module.options["mode"] is None


@wp.kernel
def _square_into(a: wp.array[float], b: wp.array[float]):
    i = wp.tid()
    b[i] = a[i] * a[i]


def test_a_kernels_debug_and_adjoint_builds_stay_out_of_its_module(debug_mode):
    # the module keeps the kernel its launches and wp.load_module find, whatever variants its launches made
    module = wp.get_module(__name__)
    generation = module.generation
    a, b = wp.array(np.array([1.0, 2.0], np.float32), requires_grad=True), wp.zeros(2, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(_square_into, 2, inputs=[a, b])  # (a debug build: debug_mode)
    tape.backward(grads={b: wp.ones(2)})
    assert a.grad.numpy().tolist() == [2.0, 4.0]  # 2 a
    assert module.kernels["_square_into"] is _square_into and module.generation == generation


def test_named_and_explicit_modules():
    @wp.kernel(module="mlwarp_test_named")
    def named(a: wp.array[float]):
        a[0] = 1.0

    m = wp.Module("mine")

    @wp.kernel(module=m)
    def explicit(a: wp.array[float]):
        a[0] = 2.0

    assert named.module is wp.get_module("mlwarp_test_named") and explicit.module is m
    assert m.kernels == {"explicit": explicit}


def test_load_module_compiles_its_kernels():
    @wp.kernel(module="mlwarp_test_broken")
    def broken(a: wp.array[float]):
        a[0] = undefined_name  # noqa: F821

    with pytest.raises(wp.CompileError, match="undefined_name"):
        wp.load_module("mlwarp_test_broken", device="cpu")
    with pytest.raises(wp.CompileError, match="undefined_name"):
        wp.force_load(device="cpu", modules=[broken.module])
    wp.load_module(device="cpu")  # this module: compiles


def test_hash_module_follows_content():
    def make(scale):
        @wp.kernel(module="unique")
        def scaled(a: wp.array[float]):
            a[0] = a[0] * float(scale)

        return scaled

    k2, k2_again, k4 = make(2), make(2), make(4)
    assert k2 is k2_again and k2.module is k2_again.module  # the same definition: the same kernel
    assert k2 is not k4 and k2.module.name != k4.module.name
    assert k2.module.hash_module() == k2_again.module.hash_module() != k4.module.hash_module()
    a = wp.array([3.0], dtype=float)
    wp.launch(k4, 1, [a])
    wp.launch(k2, 1, [a])
    assert a.numpy()[0] == 24.0


def test_unload_keeps_kernels_launchable():
    a = wp.zeros(2, dtype=float)
    wp.launch(_inc, 2, [a])
    _inc.module.unload()
    wp.launch(_inc, 2, [a])
    np.testing.assert_array_equal(a.numpy(), [2.0, 2.0])


def test_module_options_of_a_unique_kernel():
    @wp.kernel(module="unique", module_options={"mode": "debug", "fast_math": True})
    def checked(a: wp.array[float], n: int):
        a[n] = 1.0

    assert checked.module.options["fast_math"] is True and checked.module.options["mode"] == "debug"
    with pytest.raises(wp.KernelBoundsError, match=r"index \[5\] is out of bounds"):
        wp.launch(checked, 1, [wp.zeros(2, dtype=float), 5])


def test_module_option_errors():
    def body(a: wp.array[float]):
        pass

    with pytest.raises(ValueError, match="@wp.kernel for 'body': module_options requires module=\"unique\". "
                                         r"Use wp.set_module_options\(\)"):
        wp.kernel(module_options={"fast_math": True})(body)
    with pytest.raises(ValueError, match="module_options requires module=\"unique\""):
        wp.kernel(module_options={}, module="some_shared_module")(body)
    with pytest.raises(TypeError, match="@wp.kernel for 'body': module_options must be a dict, got str."):
        wp.kernel(module_options="fast_math", module="unique")(body)
    with pytest.raises(ValueError, match="@wp.kernel for 'body': unknown module_options: 'fast_mth'. "
                                         "Valid options are: 'block_dim', "):
        wp.kernel(module_options={"fast_mth": True}, module="unique")(body)
    with pytest.raises(ValueError, match="wp.set_module_options: unknown module options: 'nope'"):
        wp.set_module_options({"nope": 1})
    with pytest.raises(TypeError, match="wp.set_module_options: module options must be a dict, got list."):
        wp.set_module_options([("mode", "debug")])


def test_kernel_options():
    def body(a: wp.array[float]):
        a[0] = 5.0

    k = wp.kernel(name="custom_key", launch_bounds=(128, 1))(body)
    assert k.key == "custom_key" and k.options["launch_bounds"] == (128, 1)
    a = wp.zeros(1, dtype=float)
    wp.launch(k, 1, [a])
    assert a.numpy()[0] == 5.0
    with pytest.raises(ValueError, match=r"name must be a non-empty valid C\+\+ identifier"):
        wp.kernel(name="1bad")(body)
    with pytest.raises(TypeError, match="name must be a str, got <class 'int'>"):
        wp.kernel(name=3)(body)
    with pytest.raises(ValueError, match="cuda_max_registers and launch_bounds cannot be specified together"):
        wp.kernel(launch_bounds=64, cuda_max_registers=32)(body)
    with pytest.raises(ValueError, match="entry_point_abi must be 'warp' or 'external_constant_params', got 'c'"):
        wp.kernel(entry_point_abi="c")(body)
    with pytest.raises(ValueError, match="entry_point_abi='external_constant_params' requires enable_backward=False"):
        wp.kernel(entry_point_abi="external_constant_params")(body)
    with pytest.raises(NotImplementedError, match="entry_point_abi='external_constant_params'"):
        wp.kernel(entry_point_abi="external_constant_params", enable_backward=False)(body)
    assert wp.kernel(entry_point_abi="warp", grid_stride=False)(body).options == {"grid_stride": False}


def test_deterministic_mode_gives_the_same_float_sums_whatever_the_thread_count():
    n = 200_000
    x = np.random.default_rng(3).standard_normal(n).astype(np.float32) * np.float32(1e3)

    @wp.kernel(module="unique", module_options={"deterministic": wp.DeterministicMode.RUN_TO_RUN})
    def total(x: wp.array[float], out: wp.array[float]):
        i = wp.tid()
        wp.atomic_add(out, 0, x[i] * x[i])  # float sums: their value depends on the order of the additions

    assert total.module.options["deterministic"] == wp.DeterministicMode.RUN_TO_RUN
    results = []
    old = wp.config.cpu_threads
    try:
        for threads in (1, 2, 2, 1):
            wp.config.cpu_threads = threads
            out = wp.zeros(1, dtype=float)
            wp.launch(total, n, [wp.array(x), out])
            results.append(out.numpy()[0])
    finally:
        wp.config.cpu_threads = old
    assert len({r.tobytes() for r in results}) == 1  # bit-identical: one thread, the same order each time
    np.testing.assert_allclose(results[0], np.sum(x.astype(np.float64) ** 2), rtol=1e-5)


def test_deterministic_options_are_checked():
    def body(a: wp.array[float]):
        pass

    assert wp.get_module(__name__).options["deterministic"] == wp.DeterministicMode.NOT_GUARANTEED
    assert wp.kernel(module="unique", module_options={"deterministic_max_records": 2})(body).module.options[
        "deterministic_max_records"] == 2
    for bad in (True, 1.5, "2"):
        with pytest.raises(TypeError, match="deterministic_max_records must be an int"):
            wp.kernel(module="unique", module_options={"deterministic_max_records": bad})(body)
    with pytest.raises(ValueError, match="deterministic_max_records must be non-negative, got -1"):
        wp.kernel(module="unique", module_options={"deterministic_max_records": -1})(body)
    with pytest.raises(ValueError, match="deterministic must be a wp.DeterministicMode, got 7"):
        wp.set_module_options({"deterministic": 7})


def test_unique_kernel_defined_again_elsewhere_is_the_same_kernel():
    @wp.kernel(module="unique")
    def doubled(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = x[i] * 2.0

    first = doubled

    # the same code on other lines: Warp's same object
    @wp.kernel(module="unique")
    def doubled(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = x[i] * 2.0

    assert doubled is first and doubled.module is first.module
    x = wp.array(np.array([1.0, 2.0], dtype=np.float32))
    wp.launch(doubled, 2, inputs=[x])
    np.testing.assert_array_equal(x.numpy(), [2.0, 4.0])


def test_generic_unique_kernels_differing_in_options_stay_distinct():
    def make(**options):
        @wp.kernel(module="unique", **options)
        def twice(x: wp.array(dtype=Any)):
            i = wp.tid()
            x[i] = x[i] + x[i]

        return twice

    strided, lean = make(grid_stride=True), make(grid_stride=False)
    assert strided is not lean and strided.module.name != lean.module.name
    assert strided.options["grid_stride"] is True and lean.options["grid_stride"] is False
    assert make(enable_backward=False) is not make(enable_backward=True)
    assert make(grid_stride=True) is strided


def test_unique_kernel_with_another_return_annotation_value_is_another_kernel():
    Ret = None

    @wp.kernel(module="unique")
    def returns_alias(x: float) -> Ret:
        return

    wp.launch(returns_alias, 1, inputs=[3.0])
    first = returns_alias
    Ret = float  # noqa: F841  (the same text, another annotation value)

    @wp.kernel(module="unique")
    def returns_alias(x: float) -> Ret:
        return

    assert returns_alias is not first
    with pytest.raises(wp.CompileTypeError):
        wp.launch(returns_alias, 1, inputs=[3.0])
