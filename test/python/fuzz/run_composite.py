"""Running composite programs (composite.py): inputs, the reference's expected outputs, a launch through any
Warp-like module (mlwarp, or warp-lang in another interpreter: warp_driver.py), comparison, and
gradients against central differences of the reference's float64 forward.

Imports numpy only (the warp-lang driver imports it without mlwarp or hypothesis)."""

from __future__ import annotations

import math

import numpy as np

from .composite import ACCUMULATORS, INPUTS, NP, STRUCT_FIELDS, Composite, Interpreter, _eps, wp_type
from .program import Fragile, UndefinedBehaviour


class Rejected(Exception):
    """The program has undefined behaviour in some thread (int32 overflow): never launched."""


def make_inputs(prog, rng: np.random.Generator) -> dict:
    """Per-thread input values, flat over threads (xs is reshaped for 2-D launches at launch)."""
    n, f = prog.threads, NP[prog.p]

    def floats(*shape):  # multiples of 1/64 in [-2, 2] half the time (exact products), any value else
        if rng.random() < 0.5:
            return (rng.integers(-128, 129, size=(n, *shape)) / 64).astype(f)
        return rng.uniform(-2, 2, size=(n, *shape)).astype(f)

    return {"xi": rng.integers(-4, 5, size=n).astype(np.int32), "xs": floats(), "xv": floats(3),
            "xm": floats(3, 3), "xq": floats(4), "xS_a": floats(), "xS_v": floats(3),
            "xS_n": rng.integers(-3, 4, size=n).astype(np.int32)}


def thread_inputs(prog, inputs, t) -> dict:
    p = prog.p

    def comp(a):
        return Composite(a[t].copy(), np.zeros(a[t].shape))

    values = {"xi": (int(inputs["xi"][t]), 0.0), "xs": (NP[p](inputs["xs"][t]), 0.0), "xv": comp(inputs["xv"]),
              "xm": comp(inputs["xm"]), "xq": comp(inputs["xq"]),
              "xS": {"a": (NP[p](inputs["xS_a"][t]), 0.0), "v": comp(inputs["xS_v"]),
                     "n": (int(inputs["xS_n"][t]), 0.0)}, "tid": (t, 0.0)}
    if len(prog.dims) == 2:
        values["i"], values["j"] = (t // prog.dims[1], 0.0), (t % prog.dims[1], 0.0)
    return values


def reference(prog, inputs):
    """[(outputs, atomics) or None (fragile)] per thread; raises Rejected on undefined behaviour."""
    interp = Interpreter(prog)
    out = []
    for t in range(prog.threads):
        try:
            outputs = interp.run(thread_inputs(prog, inputs, t))
            out.append((outputs, interp.atomics))
        except Fragile:
            out.append(None)
        except UndefinedBehaviour as e:
            raise Rejected(str(e)) from None
    return out


# -- launching -----------------------------------------------------------------------------------------------
def _dtype(wp, t, p, struct):
    return struct if t == "S" else getattr(wp, wp_type(t, p).split(".")[1])


def launch(wp, kernel, struct, prog, inputs, device=None, requires_grad=False):
    """Launches `kernel` through module `wp`; returns (arrays by parameter name, in kernel order)."""
    kw = {} if device is None else {"device": device}
    p, n = prog.p, prog.threads
    arrays = {}
    for name, t in INPUTS.items():
        grad = requires_grad and t not in ("i", "S")
        if t == "S":
            a = wp.zeros(n, dtype=struct, **kw)
            view = a.numpy()
            for f in STRUCT_FIELDS:
                view[f] = inputs[f"xS_{f}"]
        else:
            data = inputs[name]
            if name == "xs" and len(prog.dims) == 2:
                data = data.reshape(prog.dims)
            a = wp.array(data, dtype=_dtype(wp, t, p, struct), requires_grad=grad, **kw)
        arrays[name] = a
    for name, (t, _) in prog.outputs.items():
        arrays[name] = wp.zeros(n, dtype=_dtype(wp, t, p, struct), requires_grad=requires_grad and t not in
                                ("i", "S"), **kw)
    for name, (t, size) in ACCUMULATORS.items():
        arrays[name] = wp.zeros(size, dtype=_dtype(wp, t, p, struct), requires_grad=requires_grad and t != "i",
                                **kw)
    wp.launch(kernel, prog.dims if len(prog.dims) == 2 else prog.dims[0], inputs=list(arrays.values()), **kw)
    return arrays


def results(arrays) -> dict:
    return {n: np.array(a.numpy()) for n, a in arrays.items()}


# -- comparison ----------------------------------------------------------------------------------------------
class Mismatch(AssertionError):
    pass


def _close(got, want, err):
    got, want = float(got), float(want)
    if err == 0:
        return got == want or (math.isnan(got) and math.isnan(want))
    return abs(got - want) <= err


def _compare_value(where, t, got, want):
    if t == "i":
        if int(got) != int(want[0]):
            raise Mismatch(f"{where}: got {int(got)}, reference {want[0]}")
    elif t == "s":
        if not _close(got, *want):
            raise Mismatch(f"{where}: got {float(got)!r}, reference {float(want[0])!r} (bound {want[1]:.3g})")
    elif t == "S":
        for f, ft in STRUCT_FIELDS.items():
            _compare_value(f"{where}.{f}", ft, got[f], want[f])
    else:
        g = np.asarray(got).reshape(want.v.shape)
        for k in np.ndindex(want.v.shape):
            if not _close(g[k], want.v[k], want.e[k]):
                raise Mismatch(f"{where}{list(k)}: got {g.tolist()}, reference {want.v.tolist()} "
                               f"(bounds {want.e.tolist()})")


def expected_accumulators(prog, expected):
    """{name: [(value, bound) or None per slot]}: None where a fragile thread may have added to it."""
    out = {}
    fragile = any(e is None for e in expected)
    for name, (t, size) in ACCUMULATORS.items():
        shape = () if t != "v3" else (3,)
        slots = []
        for idx in range(size):
            events = [(fn, v) for e in expected if e is not None
                      for (arr, i, fn, v) in e[1] if arr == name and i == idx]
            if fragile:
                slots.append(None)
            elif t == "i":
                value = 0
                for fn, (v, _) in events:
                    value = {"atomic_add": value + v, "atomic_min": min(value, v), "atomic_max": max(value, v)}[fn]
                slots.append((value, 0.0) if -2 ** 31 <= value < 2 ** 31 else None)
            else:
                vals = [np.asarray(v.v if isinstance(v, Composite) else v[0], dtype=np.float64) for _, v in events]
                errs = [np.asarray(v.e if isinstance(v, Composite) else v[1], dtype=np.float64) for _, v in events]
                total = sum(vals, np.zeros(shape))
                magnitude = sum((np.abs(v) for v in vals), np.zeros(shape))
                bound = sum(errs, np.zeros(shape)) + 2 * (len(vals) + 1) * _eps(prog.p) * magnitude
                if not np.all(np.isfinite(total)):
                    slots.append(None)
                else:
                    slots.append((total, bound))
        out[name] = slots
    return out


def compare(prog, expected, got) -> dict:
    """Raises Mismatch; returns {"threads_compared", "threads_fragile", "slots_compared"}."""
    stats = {"threads_compared": 0, "threads_fragile": 0, "slots_compared": 0}
    for t, want in enumerate(expected):
        if want is None:
            stats["threads_fragile"] += 1
            continue
        stats["threads_compared"] += 1
        for name, (ty, _) in prog.outputs.items():
            _compare_value(f"thread {t}: {name}", ty, got[name][t], want[0][name])
    for name, slots in expected_accumulators(prog, expected).items():
        t = ACCUMULATORS[name][0]
        for idx, want in enumerate(slots):
            if want is None:
                continue
            stats["slots_compared"] += 1
            if t == "i":
                _compare_value(f"{name}[{idx}]", "i", got[name][idx], want)
            else:
                value, bound = want
                g = np.atleast_1d(np.asarray(got[name][idx], dtype=np.float64))
                if not np.all(np.abs(g - np.atleast_1d(value)) <= np.atleast_1d(bound)):
                    raise Mismatch(f"{name}[{idx}]: got {g.tolist()}, reference {np.atleast_1d(value).tolist()} "
                                   f"(bound {np.atleast_1d(bound).tolist()})")
    return stats


# -- gradients -----------------------------------------------------------------------------------------------
GRAD_INPUTS = {"xs": (), "xv": (3,), "xm": (3, 3), "xq": (4,)}
H = 1e-5


def loss_weights(prog, rng):
    """Seeds for every float output (and accumulator): the loss is sum(weights * outputs)."""
    w = {}
    for name, (t, _) in prog.outputs.items():
        if t not in ("i", "S"):
            w[name] = rng.uniform(0.5, 1.5, size=(prog.threads, *([] if t == "s" else _shape(t))))
    for name, (t, size) in ACCUMULATORS.items():
        if t != "i":
            w[name] = rng.uniform(0.5, 1.5, size=(size, *([] if t == "s" else [3])))
    return w


def _shape(t):
    from .composite import shape_of

    return shape_of(t)


def _as_float64(v):
    return np.asarray(v.v if isinstance(v, Composite) else v[0], dtype=np.float64)


def thread_loss(prog, inputs, t, weights, trace):
    """Thread t's part of the loss, in float64 (atomic adds are linear: each add weighs its slot)."""
    interp = Interpreter(prog)
    outputs = interp.run(thread_inputs(prog, inputs, t))
    trace.extend(interp.trace)
    total = 0.0
    for name, (ty, _) in prog.outputs.items():
        if name in weights:
            v = outputs[name]
            total += float(np.sum(weights[name][t] * _as_float64(v)))
    for arr, idx, fn, v in interp.atomics:
        if arr in weights:
            total += float(np.sum(weights[arr][idx] * _as_float64(v)))
    return total, "non-finite" in interp.trace or interp.large


def directional_difference(prog, inputs, t, weights, direction):
    """d(thread t's loss)/d(inputs along direction), or None where not measurable (see test_fuzz_grad.py)."""
    def at(k, trace):
        moved = {n: a.copy() for n, a in inputs.items()}
        for n, d in direction.items():
            moved[n][t] = moved[n][t] + k * H * d
        return thread_loss(prog, moved, t, weights, trace)

    base = []
    try:
        f0, bad = at(0, base)
        values = {}
        for k in (-2, -1, 1, 2):
            trace = []
            values[k], _ = at(k, trace)
            if trace != base:
                return None
    except (Fragile, UndefinedBehaviour, FloatingPointError):
        return None
    if bad or not all(math.isfinite(v) for v in [f0, *values.values()]):
        return None
    g1 = (values[1] - values[-1]) / (2 * H)
    g2 = (values[2] - values[-2]) / (4 * H)
    if abs(g1 - g2) > 1e-4 * max(1.0, abs(g1)):
        return None
    return g1
