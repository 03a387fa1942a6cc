"""A kernel whose adjoint fails to build with an unexpected exception still runs forward (the driver rebuilds
it without the adjoint, in a fresh MLIR context: the failed pass manager leaves its own unusable, and reusing
it aborted the process), and its adjoint launch raises a clear error."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.compiler.passes import autodiff


def test_forward_runs_and_backward_names_the_failure(monkeypatch):
    def broken_build_adjoint(*args, **kwargs):
        raise RuntimeError("an internal error in the adjoint builder")

    monkeypatch.setattr(autodiff, "build_adjoint", broken_build_adjoint)

    @wp.kernel
    def scale_2d(a: wp.array2d(dtype=wp.float64), out: wp.array2d(dtype=wp.float64)):
        i, j = wp.tid()
        out[i, j] = a[i, j] * wp.float64(3.0)

    a = wp.array(np.arange(6.0).reshape(2, 3), dtype=wp.float64, requires_grad=True)
    out = wp.zeros((2, 3), dtype=wp.float64, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scale_2d, dim=(2, 3), inputs=[a, out])
    np.testing.assert_array_equal(out.numpy(), 3 * np.arange(6.0).reshape(2, 3))
    with pytest.raises(wp.WarpCodegenError, match="kernel 'scale_2d' cannot be differentiated: its adjoint kernel "
                                                  "failed to compile: an internal error in the adjoint builder"):
        tape.backward(grads={out: wp.ones((2, 3), dtype=wp.float64)})


def test_the_cuda_build_falls_back_the_same_way(monkeypatch, tmp_path):
    """One compile loop for both targets: a CUDA build (no GPU needed) keeps its kernel and says why there
    is no adjoint."""
    from mlwarp.compiler.driver_cuda import compile_cuda

    monkeypatch.setattr(autodiff, "build_adjoint", lambda *args, **kwargs: 1 / 0)

    def double(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i] * 2.0

    meta = compile_cuda(double, {"a": wp.types.ArrayT(wp.float32, 1)}, str(tmp_path), 90, None, cubin=False)
    assert (meta["entry"], meta["adj_entry"], meta["cubin"]) == ("double_cuda", None, None)
    assert meta["adj_error"] == "its adjoint kernel failed to compile: division by zero"
    assert ".entry double_cuda" in (tmp_path / meta["ptx"]).read_text()
    assert "double_adj_cuda" not in (tmp_path / meta["ptx"]).read_text()
