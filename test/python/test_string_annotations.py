"""Kernels in a module with `from __future__ import annotations` (annotations arrive as strings)."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def scale(x: wp.array(dtype=wp.float32), s: float):
    i = wp.tid()
    x[i] = x[i] * s


def test_string_annotations_resolve_in_the_kernels_globals():
    x = wp.array(np.arange(4, dtype=np.float32))
    wp.launch(scale, dim=4, inputs=[x, 3.0])
    assert x.numpy().tolist() == [0.0, 3.0, 6.0, 9.0]


def test_an_unresolvable_string_annotation_names_the_argument():
    def bad(x: wp.array(dtype=wp.float32), s: NoSuchType):  # noqa: F821
        pass

    with pytest.raises(wp.CompileError, match=r"test_string_annotations\.py:\d+: in 'bad': argument 's' needs a "
                                              r"type annotation Warp supports .* got 'NoSuchType'"):
        wp.kernel(bad)
