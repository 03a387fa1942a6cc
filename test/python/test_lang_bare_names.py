"""Warp builtins and types named without `wp.` inside kernels (`expect_eq(...)`, `vec3(...)`), as Warp resolves
names its kernels' modules did not import; the module's own names come first."""

import numpy as np
import pytest

import mlwarp as wp

length = None  # a global of the module shadows the builtin of the same name (below, `wp.length` is used)


@wp.kernel
def _bare(out: wp.array(dtype=float)):
    v = vec3(3.0, 4.0, 12.0)  # noqa: F821
    m = mat22(1.0, 2.0, 3.0, 4.0)  # noqa: F821
    out[0] = wp.length(v) + sin(0.0)  # noqa: F821
    out[1] = m[1, 0] + float(int32(2.7))  # noqa: F821
    expect_eq(out[0], 13.0)  # noqa: F821


def test_bare_builtins_and_types_resolve_to_warps():
    out = wp.zeros(2, dtype=float)
    wp.launch(_bare, 1, [out])
    np.testing.assert_array_equal(out.numpy(), [13.0, 5.0])


def test_unknown_bare_names_are_still_errors():
    def k(out: wp.array(dtype=float)):
        out[0] = not_a_warp_builtin(1.0)  # noqa: F821

    with pytest.raises(wp.CompileError, match="Referencing undefined symbol: not_a_warp_builtin"):
        wp.launch(wp.kernel(k), 1, [wp.zeros(1)])

    def uses_api(out: wp.array(dtype=float)):
        launch(out)  # noqa: F821  (wp.launch is no kernel builtin)

    with pytest.raises(wp.CompileError, match="Referencing undefined symbol: launch"):
        wp.launch(wp.kernel(uses_api), 1, [wp.zeros(1)])
