"""Keyword arguments in builtin calls inside kernels, by Warp's parameter names."""

import math

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def keyword_calls(out: wp.array(dtype=float)):
    out[0] = wp.pow(x=2.0, y=4.0)
    out[1] = wp.pow(2.0, y=4.0)
    out[2] = wp.pow(y=4.0, x=2.0)
    out[3] = wp.atan2(y=1.0, x=2.0)
    out[4] = wp.clamp(x=5.0, low=0.0, high=2.0)
    out[5] = wp.lerp(a=1.0, b=3.0, t=0.25)



def test_builtin_keywords_bind_by_name():
    out = wp.zeros(6, dtype=float)
    wp.launch(keyword_calls, 1, inputs=[out])
    np.testing.assert_allclose(out.numpy(), [16.0, 16.0, 16.0, math.atan2(1.0, 2.0), 2.0, 1.5], rtol=1e-6)


def unknown_keyword(out: wp.array(dtype=float)):
    out[0] = wp.pow(x=2.0, z=4.0)


def test_unknown_keyword_is_refused():
    with pytest.raises(wp.CompileTypeError) as info:
        wp.launch(wp.kernel(unknown_keyword), 1, inputs=[wp.zeros(1, dtype=float)])
    line = unknown_keyword.__code__.co_firstlineno + 1
    assert str(info.value).splitlines()[0] == (
        f"{__file__}:{line}: in 'unknown_keyword': 'pow' has no signature taking the keyword argument(s) 'x', 'z' "
        "after 0 positional argument(s)")
