"""Helpers for gradient tests: kernels generated from source text, central finite differences."""

from __future__ import annotations

import importlib.util
import itertools
import sys

import numpy as np

import mlwarp as wp

_counter = itertools.count()


def kernel_from_source(tmp_path, source: str, name: str = "k"):
    """Imports `source` (which starts with `import mlwarp as wp`) from a file and returns `name` from it;
    kernels need a file: the frontend reads their source."""
    n = next(_counter)
    path = tmp_path / f"gen_kernel_{n}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"gen_kernel_{n}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return getattr(module, name)


def central_difference(f, xs: list, h: float = 1e-6) -> list:
    """d sum(f(xs)) / d xs[j], for each j, by central differences (f returns an array)."""
    grads = []
    for j, x in enumerate(xs):
        g = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            plus = [a.copy() for a in xs]
            minus = [a.copy() for a in xs]
            plus[j][idx] += h
            minus[j][idx] -= h
            g[idx] = np.sum(f(*plus) - f(*minus)) / (2 * h)  # unchanged outputs cancel exactly
        grads.append(g)
    return grads


def run_forward(kernel, dim, inputs, out_shapes, dtype=wp.float64):
    """Launches `kernel(inputs..., outputs...)` on fresh zeroed outputs; returns the outputs as numpy."""
    outs = [wp.zeros(s, dtype=dtype) for s in out_shapes]
    wp.launch(kernel, dim=dim, inputs=[wp.array(x, dtype=dtype) if isinstance(x, np.ndarray) else x
                                       for x in inputs], outputs=outs)
    return [o.numpy().copy() for o in outs]


# -- independent references: a numpy float64 forward, its central differences, one comparer -----------------
def float64_values(a: np.ndarray) -> np.ndarray:
    """A float64 copy of an array's values; structured (struct) arrays keep their fields, floats widened."""
    if a.dtype.names is None:
        return np.array(a, dtype=np.float64) if np.issubdtype(a.dtype, np.floating) else np.array(a)
    fields = [(n, np.float64 if np.issubdtype(a.dtype[n].base, np.floating) else a.dtype[n].base, a.dtype[n].shape)
              for n in a.dtype.names]
    out = np.zeros(a.shape, dtype=fields)
    for n in a.dtype.names:
        out[n] = a[n]
    return out


def float_slots(a: np.ndarray):
    """(field or None, index) of every floating-point value of a numpy array, struct fields included: the
    values a gradient has."""
    if a.dtype.names is None:
        if np.issubdtype(a.dtype, np.floating):
            yield from ((None, idx) for idx in np.ndindex(a.shape))
        return
    for n in a.dtype.names:
        if np.issubdtype(a.dtype[n].base, np.floating):
            yield from ((n, idx) for idx in np.ndindex(a[n].shape))


def _nudge(a: np.ndarray, slot, step: float) -> np.ndarray:
    field, idx = slot
    b = a.copy()
    if field is None:
        b[idx] += step
    else:
        b[field][idx] += step
    return b


def numpy_gradient(reference, args: list, weights: list, h: float = 1e-6, only=None) -> list:
    """d <weights, reference(*args)> / d args[j] by central differences of a numpy forward, for every argument
    that is a numpy array with floating values (struct arrays: their float fields) and, if given, `only[j]`;
    None for the others."""
    def outputs(values):  # copies: a reference may update its arguments in place
        return [float64_values(np.asarray(y))
                for y in _as_list(reference(*[v.copy() if isinstance(v, np.ndarray) else v for v in values]))]

    def loss_difference(plus, minus):  # <w, y+ - y->: outputs the nudge leaves alone cancel exactly
        return float(sum(_inner(w, _scaled_difference(p, m, 1.0))
                         for p, m, w in zip(outputs(plus), outputs(minus), weights)))

    grads = []
    for j, x in enumerate(args):
        if (only is not None and not only[j]) or not isinstance(x, np.ndarray) or not any(float_slots(x)):
            grads.append(None)
            continue
        g = np.zeros_like(x)
        for slot in float_slots(x):
            plus, minus = list(args), list(args)
            plus[j], minus[j] = _nudge(x, slot, h), _nudge(x, slot, -h)
            d = loss_difference(plus, minus) / (2 * h)
            if slot[0] is None:
                g[slot[1]] = d
            else:
                g[slot[0]][slot[1]] = d
        grads.append(g)
    return grads


def assert_matches(got, want, rtol: float, atol: float, what: str, exact_ints: bool = False):
    """Compares mlwarp's values (numpy; struct arrays field by field) with a reference: float fields within
    rtol/atol, int and bool fields exactly if `exact_ints` (a derivative's have no meaning)."""
    got = np.asarray(got)
    want = np.asarray(want)
    if got.dtype.names is None:
        np.testing.assert_allclose(np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64),
                                   rtol=rtol, atol=atol, err_msg=what)
        return
    for n in got.dtype.names:
        if np.issubdtype(got.dtype[n].base, np.floating):
            np.testing.assert_allclose(np.asarray(got[n], dtype=np.float64), np.asarray(want[n], dtype=np.float64),
                                       rtol=rtol, atol=atol, err_msg=f"{what}, field {n!r}")
        elif exact_ints:
            np.testing.assert_array_equal(got[n], want[n], err_msg=f"{what}, field {n!r}")


def _float_fields(a: np.ndarray):
    return [n for n in a.dtype.names if np.issubdtype(a.dtype[n].base, np.floating)]


def _has_floats(a: np.ndarray) -> bool:
    return np.issubdtype(a.dtype, np.floating) if a.dtype.names is None else bool(_float_fields(a))


def _random_like(a: np.ndarray, rng) -> np.ndarray:
    """Uniform [-1, 1] values for every float value of `a` (struct arrays: their float fields), 0 elsewhere."""
    if a.dtype.names is None:
        return rng.uniform(-1.0, 1.0, size=a.shape) if np.issubdtype(a.dtype, np.floating) else np.zeros(a.shape)
    r = np.zeros_like(float64_values(a))
    for n in _float_fields(r):
        r[n] = rng.uniform(-1.0, 1.0, size=r[n].shape)
    return r


def _inner(w: np.ndarray, d: np.ndarray) -> float:
    """<w, d> over the float values (struct arrays: float fields)."""
    if w.dtype.names is None:
        return float(np.sum(w * d))
    return float(sum(np.sum(w[n] * d[n]) for n in _float_fields(w)))


def _scaled_difference(p: np.ndarray, m: np.ndarray, scale: float) -> np.ndarray:
    """(p - m) * scale, field by field for struct arrays."""
    if p.dtype.names is None:
        return (p - m) * scale
    d = p.copy()
    for n in _float_fields(p):
        d[n] = (p[n] - m[n]) * scale
    return d


def _to_array(values: np.ndarray, like):
    """A wp.array of like's dtype and shape holding `values` (struct arrays: their float fields)."""
    if values.dtype.names is None:
        return wp.array(values, dtype=like.dtype)
    a = wp.zeros(like.shape, dtype=like.dtype)
    view = a.numpy()  # a view of a's memory
    for n in _float_fields(values):
        view[n] = values[n]
    return a


def _as_list(values):
    return list(values) if isinstance(values, (list, tuple)) else [values]


def check_against_numpy(kernel, dim, inputs: list, outputs: list, reference, *, rtol: float = 1e-10,
                        atol: float = 1e-12, grad_rtol: float = 1e-6, grad_atol: float = 1e-8, seed: int = 0,
                        h: float = 1e-6, tangents: bool = True):
    """Launches `kernel(inputs..., outputs...)` on a recording wp.Tape and checks
    - the outputs against `reference(*inputs)`, a numpy forward written independently of mlwarp (array inputs
      arrive as float64 numpy copies, struct arrays as structured arrays, other inputs as given); it returns
      one numpy array per output, shaped like `output.numpy()`;
    - the Tape gradient of <w, outputs> (random weights w, seeded into the outputs' .grad) with respect to
      every input array created with requires_grad=True, against central differences of `reference`;
    - with `tangents`, wp.jvp along random directions of those inputs against the directional difference.
    Float32 kernels are compared with the float64 reference: pass rtol/grad_rtol of about 1e-3.
    Returns (outputs, gradients) as numpy, for extra closed-form checks."""
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim=dim, inputs=inputs, outputs=outputs)
    got = [o.numpy().copy() for o in outputs]
    args = [float64_values(x.numpy()) if isinstance(x, wp.array) else x for x in inputs]
    want = _as_list(reference(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]))
    assert len(want) == len(outputs), "the reference returns one array per output"
    for k, (g, w) in enumerate(zip(got, want)):
        assert_matches(g, np.broadcast_to(w, np.shape(g)) if np.asarray(w).dtype.names is None else w, rtol, atol,
                       f"forward: output {k} against the numpy reference", exact_ints=True)
    rng = np.random.default_rng(seed)
    is_float = [_has_floats(g) for g in got]  # int outputs (counts) have no gradient
    weights = [_random_like(g, rng) for g in got]
    tape.backward(grads={o: _to_array(w, o) for o, w, f in zip(outputs, weights, is_float) if f})
    differentiated = [isinstance(x, wp.array) and x.requires_grad for x in inputs]
    want_grads = numpy_gradient(reference, args, weights, h, only=differentiated)
    grads = []
    for k, (x, d, wg) in enumerate(zip(inputs, differentiated, want_grads)):
        if not d:
            grads.append(None)
            continue
        g = x.grad.numpy().copy()
        assert_matches(g, wg, grad_rtol, grad_atol, f"gradient of input {k} against finite differences of the "
                                                    f"numpy reference")
        grads.append(g)
    if tangents:
        _check_tangents(kernel, dim, inputs, outputs, reference, args, differentiated, rng, grad_rtol, grad_atol, h)
    return got, grads


def _shifted(a: np.ndarray, direction: np.ndarray, step: float) -> np.ndarray:
    if a.dtype.names is None:
        return a + step * direction
    b = a.copy()
    for n in a.dtype.names:
        if np.issubdtype(a.dtype[n].base, np.floating):
            b[n] = a[n] + step * direction[n]
    return b


def _check_tangents(kernel, dim, inputs, outputs, reference, args, differentiated, rng, rtol, atol, h):
    """wp.jvp along random directions of the differentiated inputs against the directional central
    difference of the numpy reference."""
    tan_inputs, directions = [], []
    for x, d in zip(inputs, differentiated):
        if not d:
            tan_inputs.append(None)
            directions.append(None)
            continue
        t = _to_array(_random_like(x.numpy(), rng), x)
        tan_inputs.append(t)
        directions.append(float64_values(t.numpy()))  # as rounded to the tangent's dtype
    fresh = [wp.zeros(o.shape, dtype=o.dtype) for o in outputs]
    tan_outputs = [wp.zeros(o.shape, dtype=o.dtype) for o in outputs]
    wp.jvp(kernel, dim, inputs=inputs, outputs=fresh, tan_inputs=tan_inputs, tan_outputs=tan_outputs)

    def at(step):
        values = [_shifted(a, d, step) if d is not None else (a.copy() if isinstance(a, np.ndarray) else a)
                  for a, d in zip(args, directions)]
        return [float64_values(np.asarray(y)) for y in _as_list(reference(*values))]

    plus, minus = at(h), at(-h)
    for k, (t, p, m) in enumerate(zip(tan_outputs, plus, minus)):
        got = t.numpy()
        if _has_floats(got):
            want = _scaled_difference(p, m, 1.0 / (2 * h))
            assert_matches(got, want if want.dtype.names else np.broadcast_to(want, got.shape), rtol, atol,
                           f"tangent (wp.jvp) of output {k} against the directional difference of the numpy "
                           f"reference")
