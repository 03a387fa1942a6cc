"""Small public names of Warp: math constants in kernels, wp.select's removal, device queries, aliases."""

import math

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def constants(out: wp.array(dtype=float)):
    out[0] = wp.pi
    out[1] = wp.e
    out[2] = wp.tau
    out[3] = wp.half_pi
    out[4] = wp.inf
    out[5] = wp.phi


def test_math_constants_are_float32_constants_in_kernels():
    out = wp.zeros(6, dtype=float)
    wp.launch(constants, 1, [out])
    expected = np.array([math.pi, math.e, math.tau, math.pi / 2, math.inf, (1 + 5 ** 0.5) / 2], dtype=np.float32)
    assert np.array_equal(out.numpy(), expected)
    assert wp.PI == wp.pi and math.isnan(wp.nan) and wp.LN2 == math.log(2.0)


def test_select_points_to_where_in_kernels():
    @wp.kernel
    def uses_select(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = wp.select(i > 1, 1.0, 2.0)

    a = wp.zeros(4, dtype=float)
    with pytest.raises(wp.CompileError, match=r"test_public_names\.py:\d+: in 'uses_select': wp\.select\(\) has been "
                                              r"removed\. Use wp\.where\(cond, value_if_true, value_if_false\) "
                                              r"instead\."):
        wp.launch(uses_select, 4, [a])


def test_select_points_to_where_in_python():
    with pytest.raises(RuntimeError, match=r"^wp\.select\(\) has been removed\. Use wp\.where"):
        wp.select(True, 1.0, 2.0)


def test_device_queries_and_aliases():
    assert wp.is_cpu_available() is True
    assert wp.is_device_available("cpu") is True
    assert wp.is_device_available("tpu") is False
    assert wp.WarpCodegenError is wp.CompileError and wp.WarpCodegenTypeError is wp.CompileTypeError

    @wp.kernel
    def add_one(a: wp.array(dtype=float)):
        a[wp.tid()] += 1.0

    a = wp.zeros(3, dtype=float)
    cmd = wp.launch(add_one, 3, [a], record_cmd=True)
    assert isinstance(cmd, wp.Launch)
    cmd.launch()
    cmd.launch()
    assert a.numpy().tolist() == [2.0, 2.0, 2.0]


def test_the_lazily_loaded_geometry_names_are_wp_geometrys():
    # wp.geometry loads on the first use of one of its names (python/mlwarp/_api.py _GEOMETRY_NAMES); the list must be
    # exactly what the package exports, each name resolving to the package's object
    import mlwarp.geometry
    from mlwarp import _api

    assert sorted(_api._GEOMETRY_NAMES) == sorted(mlwarp.geometry.__all__)
    for name in _api._GEOMETRY_NAMES:
        assert getattr(wp, name) is getattr(mlwarp.geometry, name), name
        assert name in wp.__all__
    assert wp.geometry is mlwarp.geometry
