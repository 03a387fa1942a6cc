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
