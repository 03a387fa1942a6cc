"""core/hints.py's prefetch(a[i]): an llvm.intr.prefetch of the element's address, no value changed,
harmless past the array's end; anything but an array element is refused with the message below."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.core.errors import CompileError
from mlwarp.core.hints import prefetch


@wp.kernel
def gather_ahead(x: wp.array(dtype=float), order: wp.array(dtype=int), out: wp.array(dtype=float)):
    i = wp.tid()
    prefetch(x[order[i] + 100000])  # far past the end: a prefetch cannot fault
    prefetch(x[order[i]])
    out[i] = x[order[i]] * 2.0


def test_prefetch_changes_nothing_and_is_a_prefetch_of_the_element():
    x0 = np.arange(64, dtype=np.float32)
    order0 = np.random.default_rng(0).permutation(64).astype(np.int32)
    out = wp.zeros(64, dtype=float)
    wp.launch(gather_ahead, dim=64, inputs=[wp.array(x0), wp.array(order0), out])
    np.testing.assert_array_equal(out.numpy(), x0[order0] * 2.0)
    assert gather_ahead.to_mlir("warp").count("llvm.intr.prefetch") == 2


def test_prefetch_of_anything_but_an_array_element_is_refused():
    @wp.kernel
    def local_value(x: wp.array(dtype=float)):
        v = x[0]
        prefetch(v)

    with pytest.raises(CompileError, match=r"prefetch\(\) takes one array element, as prefetch\(a\[i\]\)"):
        wp.launch(local_value, dim=1, inputs=[wp.zeros(1, dtype=float)])


def test_prefetch_called_in_python_is_refused():
    with pytest.raises(RuntimeError, match=r"prefetch\(\) can only be called inside a @wp.kernel or @wp.func body"):
        prefetch(1)


@wp.kernel(module="unique", module_options={"mode": "debug"})
def prefetch_past_the_end_in_debug(x: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    prefetch(x[i + 1000])
    out[i] = x[i] + 1.0


def test_debug_mode_does_not_check_a_prefetch():
    """Debug mode's bounds checks guard accesses; a prefetch is a hint (it cannot fault): past the end is no error."""
    out = wp.zeros(4, dtype=float)
    wp.launch(prefetch_past_the_end_in_debug, dim=4, inputs=[wp.array(np.arange(4, dtype=np.float32)), out])
    np.testing.assert_array_equal(out.numpy(), np.arange(4) + 1.0)
