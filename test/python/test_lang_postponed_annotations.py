"""Kernels and functions written under `from __future__ import annotations` (PEP 563), where every annotation is
a string: Warp evaluates them in the function's globals with its closure cells as locals, so a factory's
kernel may annotate with the factory's parameters (the `wp` it was given, a dtype it uses). Expected values:
closed forms."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp


def make_doubler(wp, dtype):
    @wp.func
    def twice(x: dtype) -> dtype:
        return x + x + dtype(0.0)

    @wp.kernel
    def double_in_place(a: wp.array(dtype=dtype)):
        i = wp.tid()
        a[i] = twice(a[i]) + dtype(0.0)

    return double_in_place


@pytest.mark.parametrize("dtype", [mlwarp.float32, mlwarp.float64])
def test_factory_kernel_annotated_with_its_closure(dtype):
    kernel = make_doubler(mlwarp, dtype)
    a = mlwarp.array(np.arange(5.0), dtype=dtype)
    mlwarp.launch(kernel, 5, inputs=[a])
    np.testing.assert_array_equal(a.numpy(), 2.0 * np.arange(5.0))


def make_struct_kernel(wp):
    @wp.struct
    class Pair:
        a: float
        b: float

    @wp.kernel
    def sum_pairs(p: wp.array(dtype=Pair), out: wp.array(dtype=float)):
        i = wp.tid()
        q = p[i]
        out[i] = q.a + q.b + float(Pair().a)

    return Pair, sum_pairs


def test_closure_struct_annotation():
    Pair, kernel = make_struct_kernel(mlwarp)
    values = np.array([(1.0, 2.0), (3.0, 4.5)], dtype=[("a", np.float32), ("b", np.float32)])
    out = mlwarp.zeros(2, dtype=float)
    mlwarp.launch(kernel, 2, inputs=[mlwarp.array(values, dtype=Pair), out])
    np.testing.assert_array_equal(out.numpy(), [3.0, 7.5])


def make_unresolvable(wp):
    @wp.kernel
    def uses_unknown(a: wp.array(dtype=NoSuchType)):  # noqa: F821
        i = wp.tid()
        a[i] = 0.0

    return uses_unknown


def test_unresolvable_string_annotation_names_the_argument():
    with pytest.raises(mlwarp.CompileError, match=r"argument 'a' needs a type annotation Warp supports .*got "
                                                  r"'wp.array\(dtype=NoSuchType\)'"):
        make_unresolvable(mlwarp)
