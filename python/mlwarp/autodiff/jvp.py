"""Forward-mode differentiation: `wp.jvp`, the Jacobian-vector product of one kernel launch.

    wp.jvp(kernel, dim, inputs=[x, a], outputs=[y],
           tan_inputs=[dx, da], tan_outputs=[dy])

runs the kernel (it writes `y` as `wp.launch` would) and, in the same pass,
writes into `dy` the directional derivative of the outputs along the input
tangents: dy = J_x y . dx + J_a y . da. Tangents mirror the arguments: an
array of the same dtype and shape per array (None: zero), a number per
scalar (None: 0), a value of the argument's type per vector, matrix,
quaternion, transform or struct (None: zero; a struct tangent's array fields
are the tangent arrays of the argument's, zero-filled scratch arrays where
None). Unlike the adjoint, a float scalar argument can carry a
tangent. Output tangent arrays should start at zero where the kernel
accumulates (`y[i] += v` adds `dv` to `dy[i]`), as output arrays do.

The derivative rules are the builtin table's (the same as `Tape.backward`'s);
the kernel is compiled once more, into its own cached library holding
`<k>_jvp_cpu` (the `warp-jvp` pass). Loops cost nothing extra: tangents ride
along with the loop state. Launches of wp.jvp are not recorded by a Tape.
"""

from __future__ import annotations

import numpy as np

from mlwarp.autodiff import tape as _tape
from mlwarp.core import types as wt
from mlwarp.autodiff.adjoint import companion_value
from mlwarp.arrays.array import array, zeros_like
from mlwarp.errors import LaunchError
from mlwarp.kernels.kernel import Kernel
from mlwarp.runtime.abi import ArrayParam


class TangentKernel(Kernel):
    """The forward-mode variant of a kernel: parameters (args..., tan_args...), entry `<k>_jvp_cpu`."""

    def __init__(self, primal: Kernel):
        super().__init__(primal.func, key=primal.key, module=primal.module, options={**primal.options, "jvp": True},
                         register=False, declare=False)
        self._primal_types = primal._frontend_types()
        self.arg_names = self.arg_names + [f"tan_{n}" for n in self.arg_names]
        self.params = self.params + self.params

    def _frontend_types(self) -> dict:
        return self._primal_types


def tangent_kernel(kernel: Kernel) -> TangentKernel:
    found = getattr(kernel, "_tangent_kernel", None)
    if found is None:
        found = TangentKernel(kernel)
        kernel._tangent_kernel = found
    return found


def _tangents(kernel, given, values, params, names, what):
    if given is None:
        given = [None] * len(values)
    given = list(given)
    if len(given) != len(values):
        raise LaunchError(f"Error launching kernel '{kernel.key}': {what} has {len(given)} entries, expected "
                          f"{len(values)}")
    out = []
    for g, v, p, name in zip(given, values, params, names):
        if wt.is_composite(p) and not isinstance(p, ArrayParam):
            out.append(companion_value(kernel, f"tan_{name}", p, v, g, name))
        elif g is not None:
            out.append(g)
        elif isinstance(p, ArrayParam):  # a zero tangent where the primal lives (a CUDA array's on its device)
            out.append(zeros_like(v) if isinstance(v, array) else np.zeros_like(np.asarray(v)))
        else:
            out.append(0)
    return out


def jvp(kernel, dim, inputs=(), outputs=(), tan_inputs=None, tan_outputs=None, device=None):
    """Runs `kernel` and writes the tangents of its outputs into `tan_outputs` (see the module doc)."""
    from mlwarp.launching.launch import launch

    if not isinstance(kernel, Kernel):
        raise LaunchError(f"wp.jvp expects a @wp.kernel, got {type(kernel).__name__}")
    inputs, outputs = list(inputs), list(outputs)
    n_in = len(inputs)
    params_in, params_out = kernel.params[:n_in], kernel.params[n_in:]
    names_in, names_out = kernel.arg_names[:n_in], kernel.arg_names[n_in:]
    tins = _tangents(kernel, tan_inputs, inputs, params_in, names_in, "tan_inputs")
    touts = _tangents(kernel, tan_outputs, outputs, params_out, names_out, "tan_outputs")
    saved = list(_tape._active)
    _tape._active.clear()  # a jvp launch is not a forward launch to record
    try:
        launch(tangent_kernel(kernel), dim, inputs=inputs + outputs + tins, outputs=touts, device=device)
    finally:
        _tape._active.extend(saved)
