"""Python-scope handles for kernel builtins: `wp.sin`, `wp.tid`, `wp.atomic_add`, ...

Inside a kernel the frontend maps these objects to builtin table entries or
intrinsic ops; in Python scope a builtin evaluates with numpy where Warp
allows it.
"""

from __future__ import annotations

import types

from mlwarp.core import types as wt
from mlwarp.core import transform_type as _transform_type
from mlwarp.compiler.builtins.params import Unbound, bind
from mlwarp.compiler.builtins.pyscope import no_overload
from mlwarp.compiler.builtins.table import BUILTINS, COMPOSITE_ONLY

from mlwarp.library.builtin_signatures import table_overloads


class BuiltinFunction:
    """A builtin of the table, seen from Python."""

    def __init__(self, name: str, doc: str = "", intrinsic: bool = False):
        self.__name__ = name
        self.key = name  # Warp's name for a builtin's name
        self.__doc__ = doc
        self._wp_builtin_ = None if intrinsic else name
        self._wp_intrinsic_ = name if intrinsic else None
        self._overloads = None  # built on first use: `import mlwarp` does not walk the table

    def __call__(self, *args, **kwargs):
        if self._wp_intrinsic_ == "print":  # wp.print from Python (a @wp.func run there): Python's print
            return print(*args, **kwargs)
        if kwargs:  # by Warp's parameter names
            try:
                args = bind(self.__name__, args, kwargs)
            except Unbound:
                raise no_overload(self.__name__, list(args) + list(kwargs.values())) from None
        if self._wp_intrinsic_ in ("expect_eq", "expect_neq", "expect_near"):  # a @wp.func called from Python
            return _expect(self._wp_intrinsic_[len("expect_"):], *args)
        if any(getattr(type(a), "_wp_composite_", None) for a in args) or self.__name__ in COMPOSITE_ONLY:
            return _composite_call(self.__name__, args)
        entry = BUILTINS.get(self.__name__)
        if entry is None or entry.py is None:
            raise RuntimeError(f"wp.{self.__name__}() can only be called inside a kernel or wp.func")
        return entry.py(*args)

    def __repr__(self):
        return f"<mlwarp builtin {self.__name__}>"

    # Warp's `Function` attributes of a builtin (its overloads by signature, see builtin_signatures.py)
    namespace = "wp::"

    @property
    def overloads(self) -> list:
        if self._wp_builtin_ is None:
            raise AttributeError(f"wp.{self.__name__} is an intrinsic of the kernel language: it has no overloads "
                                 f"by signature")
        if self._overloads is None:
            self._overloads = table_overloads(self._wp_builtin_)
        return self._overloads

    @property
    def input_types(self) -> dict:
        return self.overloads[0].input_types

    @property
    def value_type(self):
        return self.overloads[0].value_type

    @property
    def export(self) -> bool:
        return any(o.export for o in self.overloads)

    @property
    def doc(self) -> str:
        return self.__doc__

    def is_builtin(self) -> bool:
        return True


# -- wp.expect_eq / expect_neq / expect_near in Python scope: Warp's text, as its native print writes it ----------
def _components(v):
    import numpy as np  # lazy: numpy only for composite values

    return [float(np.float32(c)) for c in np.asarray(v.numpy(), dtype=np.float64).reshape(-1)]


def _printed(v) -> str:
    """Warp's print of a value (without the newline): composites component by component as float32 `%g`."""
    t = type(v)
    if getattr(t, "_wp_composite_", None):
        c, kind, shape = _components(v), wt.composite_kind(t), wt.inner_shape(t)
        if kind == "quat":
            return "%g %g %g %g" % tuple(c)
        if kind in ("transform", "transformation"):
            return "(%g %g %g) (%g %g %g %g)" % tuple(c)
        if len(shape) == 2:
            return "\n".join("".join("%g " % x for x in c[r * shape[1]:(r + 1) * shape[1]]) for r in range(shape[0]))
        return "".join("%g " % x for x in c)
    value = getattr(v, "value", v)
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "True" if value else "False"
    if float(value) == int(value) and not isinstance(value, float) and "float" not in type(value).__name__ and \
            not (wt.is_scalar(type(v)) and wt.is_float(type(v))):
        return "%d" % int(value)
    return "%g" % float(value)


def _values(v):
    return _components(v) if getattr(type(v), "_wp_composite_", None) else [float(getattr(v, "value", v))]


def _expect(which, actual, expected, tolerance=1e-6):
    if which == "near":
        a, e = _values(actual), _values(expected)
        diff = max(abs(x - y) for x, y in zip(a, e))
        if diff > float(getattr(tolerance, "value", tolerance)):
            label = "Max absolute difference" if len(a) > 1 else "Absolute difference"
            print(f"Error, expect_near() failed with tolerance {_printed(tolerance)}\n    Expected: "
                  f"{_printed(expected)}\n    Actual: {_printed(actual)}\n    {label}: {'%g' % diff}", flush=True)
        return None
    same = _values(actual) == _values(expected) and type(actual) is type(expected) or \
        (not getattr(type(actual), "_wp_composite_", None) and getattr(actual, "value", actual) ==
         getattr(expected, "value", expected))
    if same != (which == "eq"):
        print(f"Error, expect_{which}() failed:\n\t Expected: {_printed(expected)}\n\t Actual: {_printed(actual)}",
              flush=True)
    return None


# Names reserved for the frontend, not Warp builtins.
_HIDDEN = {"bool_and", "bool_or", "bool_not", "eq", "ne", "lt", "le", "gt", "ge"}

functions = {name: BuiltinFunction(name, b.doc) for name, b in BUILTINS.items() if name not in _HIDDEN}

# Intrinsics: ops of the dialect itself, handled by the frontend directly.
for _name, _doc in [
    ("tid", "The thread index: `i = wp.tid()`, or `i, j = wp.tid()` for a 2-D launch (up to 4-D)."),
    ("atomic_add", "atomic_add(arr, i, ..., value): adds atomically, returns the old value."),
    ("atomic_sub", "atomic_sub(arr, i, ..., value): subtracts atomically, returns the old value."),
    ("atomic_min", "atomic_min(arr, i, ..., value): stores min(old, value) atomically, returns the old value."),
    ("atomic_max", "atomic_max(arr, i, ..., value): stores max(old, value) atomically, returns the old value."),
    ("atomic_exch", "atomic_exch(arr, i, ..., value): stores value atomically, returns the old value."),
    ("atomic_and", "atomic_and(arr, i, ..., value): old & value, atomically (integers), returns the old value."),
    ("atomic_or", "atomic_or(arr, i, ..., value): old | value, atomically (integers), returns the old value."),
    ("atomic_xor", "atomic_xor(arr, i, ..., value): old ^ value, atomically (integers), returns the old value."),
    ("atomic_cas", "atomic_cas(arr, i, ..., compare, value): stores value if the element equals compare, "
                   "atomically; returns the old value."),
    ("print", "print(value): prints a value from a kernel, as Python's print() there (in Python: print())."),
    ("printf", "printf(format, *args): C printf from a kernel (CPU: libc printf, flushed)."),
    ("expect_eq", "expect_eq(actual, expected): prints an error when they differ."),
    ("expect_neq", "expect_neq(actual, expected): prints an error when they are equal."),
    ("expect_near", "expect_near(actual, expected, tolerance=1e-6): prints an error when |actual - expected| > "
                    "tolerance."),
]:
    functions[_name] = BuiltinFunction(_name, _doc, intrinsic=True)


class RemovedFunction:
    """A name Warp removed: using it, in a kernel or in Python, says what replaces it."""

    def __init__(self, name: str, message: str):
        self.__name__ = name
        self._wp_removed_ = message

    def __call__(self, *args, **kwargs):
        raise RuntimeError(self._wp_removed_)


# Warp's approximate GPU variants: mlwarp computes them exactly, as Warp does on the CPU (wp.div_approx is
# wp.div, wp.inverse_approx wp.inverse, in kernels and in Python)
for _name, _exact in (("div_approx", "div"), ("inverse_approx", "inverse")):
    functions[_name] = BuiltinFunction(_exact, f"{_name}: {_exact}, computed exactly (Warp's GPU approximates)")

functions["select"] = RemovedFunction(
    "select", "wp.select() has been removed. Use wp.where(cond, value_if_true, value_if_false) instead.")


wt.scalar_base._builtin_ = staticmethod(lambda name: functions.get(name))  # Python-scope operators on scalars

# The builtins as attributes (`wp.sin`, the objects `import mlwarp as wp` shows): what mlwarp's own @wp.func
# modules (norms, random, rigid) call them by, so they need not import the package that imports them.
namespace = types.SimpleNamespace(**functions)


def _composite_call(name: str, args):
    """Builtin `name` on values that include a composite, through the builtin table (loaded on first use)."""
    from mlwarp.compiler.builtins.composite_pyscope import call  # vectors, matrices, quaternions, ...

    return call(name, args)


_transform_type._python_scope_builtin = _composite_call  # core/transform_type.py's t * u (the table is above it)
