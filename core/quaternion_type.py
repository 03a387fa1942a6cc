"""Quaternion types: `quaternion(dtype)` (cached), components (x, y, z, w) as in Warp, and the Hamilton
product of their values in Python scope."""

from __future__ import annotations

import functools

from . import types as wt
from .vector_params import checked_dtype
from .vector_type import SUFFIX, VectorLike, make_type


class QuatLike(VectorLike):
    _wp_composite_ = "quat"
    _wp_constructor_ = "quaternion"

    def __mul__(self, other):
        if isinstance(other, QuatLike):
            x1, y1, z1, w1 = self.numpy().tolist()
            x2, y2, z2, w2 = other.numpy().tolist()
            return type(self)(w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2, w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                              w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2, w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2)
        return super().__mul__(other)


def quaternion(dtype=wt.float32):
    return _quaternion(checked_dtype(dtype))


@functools.lru_cache(maxsize=None)
def _quaternion(dtype):
    """A quaternion type, components (x, y, z, w) as in Warp."""
    return make_type(QuatLike, f"quat{SUFFIX.get(dtype, '')}", dtype, (4,), "quaternion")
