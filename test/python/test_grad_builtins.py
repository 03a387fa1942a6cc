"""Every builtin of the table against central finite differences in float64, in reverse mode
(adjoint launch) — generated from the table: new entries are tested as soon as they are added.

An entry is differentiable when it accepts float64 arguments and returns float64 (a property of the
entry, found by resolving it); comparisons, boolean and integer operators are skipped that way.
Those finite differences are of mlwarp's own one-builtin kernel (a check of each derivative rule against its
lowering); NUMPY_REFERENCE also checks each scalar builtin's value against numpy and its adjoint against
differences of numpy, independently of the compiler.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import mlwarp as wp
from mlwarp import types as wt
from mlwarp.compiler.builtins.derivatives import NOT_DIFFERENTIABLE
from mlwarp.compiler.builtins.table import BUILTINS, OVERLOADS, resolve

from grad_util import kernel_from_source

N = 16


def float64_signature(b):
    """float64 argument types for the entry if it takes and returns float64 scalars, else None."""
    types = [wt.float64] * len(b.args)
    try:
        return types if resolve(b.name, types) is wt.float64 else None
    except (TypeError, KeyError):
        return None


SCALAR_DIFFERENTIABLE = sorted(n for n, b in BUILTINS.items() if float64_signature(b) is not None)


def all_entries():
    """Every entry of the table: the scalar builtins and each composite overload."""
    seen = set()
    for b in list(BUILTINS.values()) + [b for bs in OVERLOADS.values() for b in bs]:
        if id(b) not in seen:
            seen.add(id(b))
            yield b


def test_every_entry_has_a_derivative_rule():
    missing = sorted(b.signature() for b in all_entries() if b.grad is None)
    assert not missing, (f"{len(missing)} builtin entries have no derivative rule (set `grad`; see "
                         f"derivatives.py, derivatives_composite.py): {missing}")


def test_float_entries_are_not_marked_non_differentiable():
    wrong = [n for n in SCALAR_DIFFERENTIABLE if BUILTINS[n].grad is NOT_DIFFERENTIABLE]
    assert not wrong, f"float64 -> float64 builtins marked NOT_DIFFERENTIABLE: {wrong}"


def builtin_kernel(tmp_path, name, nargs):
    params = ", ".join(f"x{k}: wp.array(dtype=wp.float64)" for k in range(nargs))
    call = ", ".join(f"x{k}[i]" for k in range(nargs))
    src = (f"import mlwarp as wp\n\n@wp.kernel\ndef k({params}, y: wp.array(dtype=wp.float64)):\n"
           f"    i = wp.tid()\n    y[i] = wp.{name}({call})\n")
    return kernel_from_source(tmp_path, src)


def sample_points(nargs, seed):
    """Half the points positive (inside every domain we have), half of mixed sign; kept away from 0."""
    rng = np.random.default_rng(seed)
    mag = rng.uniform(0.3, 2.0, size=(nargs, N))
    sign = np.where(rng.uniform(size=(nargs, N)) < 0.5, -1.0, 1.0)
    sign[:, : N // 2] = 1.0
    return [mag[k] * sign[k] for k in range(nargs)]


def forward(kernel, xs):
    y = wp.zeros(N, dtype=wp.float64)
    wp.launch(kernel, dim=N, inputs=[wp.array(x, dtype=wp.float64) for x in xs], outputs=[y])
    return y.numpy().copy()


@pytest.mark.parametrize("name", SCALAR_DIFFERENTIABLE)
def test_builtin_gradient_matches_finite_differences(tmp_path, name):
    nargs = len(BUILTINS[name].args)
    kernel = builtin_kernel(tmp_path, name, nargs)
    xs = sample_points(nargs, seed=sum(map(ord, name)))
    if name in ("asin", "acos", "erfinv"):  # domain [-1, 1]: magnitudes 0.3..2.0 become 0.135..0.9
        xs = [x * 0.45 for x in xs]
    if name == "erfcinv":  # domain (0, 2): 1 +- 0.135..0.9
        xs = [1.0 + x * 0.45 for x in xs]
    y0 = forward(kernel, xs)
    ok = np.isfinite(y0)
    assert ok.sum() >= N // 2, f"{name}: too few sample points inside the domain"
    # adjoint launch with adj_y = 1
    x_arrays = [wp.array(x, dtype=wp.float64) for x in xs]
    adj_x = [wp.zeros(N, dtype=wp.float64) for _ in xs]
    wp.launch(kernel, dim=N, inputs=x_arrays, outputs=[wp.zeros(N, dtype=wp.float64)], adjoint=True,
              adj_inputs=adj_x, adj_outputs=[wp.ones(N, dtype=wp.float64)])
    h = 1e-6
    for k in range(nargs):
        plus = [x.copy() for x in xs]
        minus = [x.copy() for x in xs]
        plus[k] += h
        minus[k] -= h
        fd = (forward(kernel, plus) - forward(kernel, minus)) / (2 * h)
        got = adj_x[k].numpy()
        np.testing.assert_allclose(got[ok], fd[ok], rtol=1e-5, atol=1e-6,
                                   err_msg=f"d {name} / d arg{k} at {[x[ok] for x in xs]}")


# -- the same builtins against numpy: Warp's definitions written independently of the compiler -------------
def _vectorised(fn):
    return np.vectorize(fn, otypes=[np.float64])


NUMPY_REFERENCE = {  # Warp 1.19.0's scalar definitions (warp/native/builtin.h) in numpy
    "abs": np.abs, "acos": np.arccos, "add": np.add, "asin": np.arcsin, "atan": np.arctan, "atan2": np.arctan2,
    "cbrt": np.cbrt, "ceil": np.ceil, "clamp": lambda x, a, b: np.minimum(np.maximum(a, x), b),
    "copysign": np.copysign, "cos": np.cos, "cosh": np.cosh, "degrees": np.degrees, "div": np.divide,
    "erf": _vectorised(math.erf), "erfc": _vectorised(math.erfc), "exp": np.exp, "floor": np.floor,
    "floordiv": lambda a, b: np.floor(a / b), "frac": lambda x: x - np.trunc(x),
    "lerp": lambda a, b, t: a * (1 - t) + b * t, "log": np.log, "log10": np.log10, "log2": np.log2,
    "max": np.maximum, "min": np.minimum, "mod": np.fmod, "mul": np.multiply, "neg": np.negative,
    "nonzero": lambda x: np.where(x == 0, 0.0, 1.0), "pow": np.power, "radians": np.radians, "rint": np.rint,
    "round": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),  # C round: halves away from zero
    "sign": lambda x: np.where(x < 0, -1.0, 1.0), "sin": np.sin, "sinh": np.sinh,
    "smoothstep": lambda e0, e1, x: (lambda t: t * t * (3 - 2 * t))(np.clip((x - e0) / (e1 - e0), 0.0, 1.0)),
    "step": lambda x: np.where(x < 0, 1.0, 0.0), "sqrt": np.sqrt, "sub": np.subtract, "tan": np.tan,
    "tanh": np.tanh, "trunc": np.trunc,
}


def test_numpy_references_name_differentiable_builtins():
    assert sorted(set(NUMPY_REFERENCE) - set(SCALAR_DIFFERENTIABLE)) == []


@pytest.mark.parametrize("name", sorted(set(NUMPY_REFERENCE) & set(SCALAR_DIFFERENTIABLE)))
def test_builtin_value_and_gradient_match_numpy(tmp_path, name):
    nargs = len(BUILTINS[name].args)
    kernel = builtin_kernel(tmp_path, name, nargs)
    xs = sample_points(nargs, seed=sum(map(ord, name)) + 2)
    if name in ("asin", "acos"):
        xs = [x * 0.45 for x in xs]
    reference = NUMPY_REFERENCE[name]
    with np.errstate(invalid="ignore", divide="ignore"):
        want = reference(*xs)
        ok = np.isfinite(want)
        assert ok.sum() >= N // 2, f"{name}: too few sample points inside the domain"
        # libm and numpy may round transcendental functions differently by an ulp or so
        np.testing.assert_allclose(forward(kernel, xs)[ok], want[ok], rtol=1e-14, atol=1e-300, err_msg=name)
        adj_x = [wp.zeros(N, dtype=wp.float64) for _ in xs]
        wp.launch(kernel, dim=N, inputs=[wp.array(x, dtype=wp.float64) for x in xs],
                  outputs=[wp.zeros(N, dtype=wp.float64)], adjoint=True, adj_inputs=adj_x,
                  adj_outputs=[wp.ones(N, dtype=wp.float64)])
        h = 1e-6
        for k in range(nargs):
            plus, minus = [x.copy() for x in xs], [x.copy() for x in xs]
            plus[k] += h
            minus[k] -= h
            fd = (reference(*plus) - reference(*minus)) / (2 * h)
            np.testing.assert_allclose(adj_x[k].numpy()[ok], fd[ok], rtol=1e-5, atol=1e-6,
                                       err_msg=f"d {name} / d arg{k} against differences of numpy")
