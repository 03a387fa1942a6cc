"""Rigid transform types: `transformation(dtype)` (cached), translation p (3) then rotation q (4) as in Warp, with
Warp's constructor overloads in Python scope; `t * u` there is the builtin table's transform_multiply, reached
through python_scope_builtin (python/mlwarp/library/builtins.py sets it: the table sits above this layer)."""

from __future__ import annotations

import functools
import inspect

import numpy as np

from . import types as wt
from .quaternion_type import quaternion
from .vector_components import COMPONENTS, is_number
from .vector_params import checked_dtype
from .vector_type import SUFFIX, VectorLike, flatten_args, make_type, vector


def python_scope_builtin(name: str, args):
    """Builtin `name` evaluated on Python values, as the user API evaluates it (set by python/mlwarp/library/builtins.py: the
    builtin table sits above this layer)."""
    if _python_scope_builtin is None:
        raise RuntimeError(f"wp.{name}() of these values needs mlwarp's builtins (import mlwarp)")
    return _python_scope_builtin(name, args)


_python_scope_builtin = None  # python/mlwarp/library/builtins.py: composite_pyscope.call


class TransformLike(VectorLike):
    _wp_composite_ = "transform"
    _wp_constructor_ = "transformation"

    _PQ = inspect.Signature((inspect.Parameter("p", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=(0.0, 0.0, 0.0)),
                             inspect.Parameter("q", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                               default=(0.0, 0.0, 0.0, 1.0))))

    def __init__(self, *args, **kwargs):
        """As Warp's: `()` the identity, `(s)` fills, `(t)` copies, `(p)` with q the identity, `(p, q)` or
        `(p=, q=)` (each a sequence), or the 7 components."""
        if kwargs:
            if len(args) > 2:
                self._PQ.bind_partial(**kwargs)  # an unexpected keyword is named before the positional count
            bound = self._PQ.bind(*args, **kwargs)
            bound.apply_defaults()
            p, q = bound.args
        elif len(args) == 0:
            super().__init__(*([0.0] * 6 + [1.0]))
            return
        elif len(args) == 1:
            a = args[0]
            if np.ndim(a) == 0 or isinstance(a, VectorLike) and a._length_ == 7:
                if not isinstance(a, VectorLike) and not is_number(a):
                    raise TypeError(f"Invalid argument in transformation constructor: expected a scalar value, got "
                                    f"{type(a).__name__}")
                super().__init__(a)  # fill, or copy
                return
            p, q = a, self._PQ.parameters["q"].default
        elif len(args) == 2:
            p, q = args
            if isinstance(p, VectorLike) and isinstance(q, VectorLike) and p._length_ == 3 and q._length_ == 4:
                super().__init__(*p._values(), *q._values())  # (np.ndim below would read each through numpy)
                return
        else:
            super().__init__(*args)
            return
        for name, v in (("p", p), ("q", q)):
            if np.ndim(v) == 0:
                raise TypeError(f"Invalid argument '{name}' in transformation constructor: expected a sequence, "
                                f"got {type(v).__name__}")
        super().__init__(*flatten_args([p]), *flatten_args([q]))

    @property
    def p(self):
        return vector(3, self._wp_scalar_type_)(*[self._get(k) for k in range(3)])

    @p.setter
    def p(self, value):
        self[0:3] = value

    @property
    def q(self):
        return quaternion(self._wp_scalar_type_)(*[self._get(k) for k in range(3, 7)])

    @q.setter
    def q(self, value):
        self[3:7] = value

    def __mul__(self, other):
        if isinstance(other, TransformLike):  # t * u: transform_multiply, as in kernels
            return python_scope_builtin("mul", [self, other])
        return super().__mul__(other)

    def __setattr__(self, name, value):
        if name in ("p", "q"):
            object.__setattr__(self, name, value)  # the properties
        elif name in COMPONENTS:
            raise RuntimeError(f"Cannot set attribute {name} of transformation")
        else:
            super().__setattr__(name, value)


def transformation(dtype=wt.float32):
    return _transformation(checked_dtype(dtype))


@functools.lru_cache(maxsize=None)
def _transformation(dtype):
    """A rigid transform type: translation p (3) then rotation q (4), as in Warp."""
    return make_type(TransformLike, f"transform{SUFFIX.get(dtype, '')}", dtype, (7,), "transformation")
