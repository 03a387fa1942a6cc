"""`warp.optim.Adam`: the Adam optimizer as Warp 1.19 (and PyTorch's torch.optim.Adam) define it, updating the
parameter arrays in place in a kernel.

Per scalar, at step t (t counts from 0), with gradient g and parameter p:
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    p -= lr * (m / (1 - beta1^(t+1))) / (sqrt(v / (1 - beta2^(t+1))) + eps)

The moments of float16 parameters are float32 (Warp's choice: fp16 moments underflow), of others the parameters'
own type.
"""

from __future__ import annotations

from typing import Any

from mlwarp.arrays.array import array
from mlwarp.library.builtins import namespace as wp  # the builtins, spelt as in user code
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.types import (
    float16, float32, matrix, type_is_float, type_is_matrix, type_is_vector, type_repr, type_scalar_type, vector,
)

from mlwarp.optim.elementwise import check_gradient, flat_scalars, follow_param


@kernel
def _adam_step(g: array(dtype=Any), m: array(dtype=Any), v: array(dtype=Any), lr: Any, beta1: Any,
               beta2: Any, t: Any, eps: Any, params: array(dtype=Any)):
    i = wp.tid()
    one = type(lr)(1.0)
    gi = m.dtype(g[i])
    mi = beta1 * m[i] + (one - beta1) * gi
    vi = beta2 * v[i] + (one - beta2) * gi * gi
    m[i] = mi
    v[i] = vi
    mhat = mi / (one - wp.pow(beta1, t + one))
    vhat = vi / (one - wp.pow(beta2, t + one))
    params[i] = params[i] - params.dtype(lr * mhat / (wp.sqrt(vhat) + eps))


def moment_dtype(param_dtype):
    """The dtype of Adam's moment buffers for parameters of `param_dtype`: float16 scalars become float32."""
    scalar = type_scalar_type(param_dtype)
    if not type_is_float(scalar):
        raise RuntimeError(f"Unsupported dtype for Warp Adam optimizer: {type_repr(param_dtype)}")
    if scalar != float16:
        return param_dtype
    if param_dtype == float16:
        return float32
    if type_is_vector(param_dtype):
        return vector(length=param_dtype._length_, dtype=float32)
    if type_is_matrix(param_dtype):
        return matrix(shape=param_dtype._shape_, dtype=float32)
    raise RuntimeError(f"Unsupported dtype for Warp Adam optimizer: {type_repr(param_dtype)}")


class Adam:
    """Adaptive Moment Estimation optimizer (Warp's `warp.optim.Adam`).

    Args:
        params: list of arrays to optimize (or None, then set later with `set_params`): arrays of float16,
            float32 or float64 scalars, vectors or matrices (Warp: float16, float32, vec3).
        lr: learning rate.
        betas: (beta1, beta2), the decay rates of the first and second moment averages.
        eps: added to the denominator for numerical stability.
    """

    def __init__(self, params=None, lr=0.001, betas=(0.9, 0.999), eps=1e-08):
        self.m = []  # first moments, one per parameter array
        self.v = []  # second moments
        self.set_params(params)
        self.lr = lr
        self.beta1 = betas[0]
        self.beta2 = betas[1]
        self.eps = eps
        self.t = 0

    def set_params(self, params):
        """Set the parameter arrays to optimize; moment buffers that still fit a parameter are kept."""
        self.params = params
        if params is not None and isinstance(params, list) and len(params) > 0:
            if len(self.m) != len(params):
                self.m = [None] * len(params)
            if len(self.v) != len(params):
                self.v = [None] * len(params)
            for i, param in enumerate(params):
                dtype = moment_dtype(param.dtype)
                self.m[i] = follow_param(self.m[i], param, dtype)
                self.v[i] = follow_param(self.v[i], param, dtype)

    def reset_internal_state(self):
        """Zero the moments and the step count."""
        for m_i in self.m:
            m_i.zero_()
        for v_i in self.v:
            v_i.zero_()
        self.t = 0

    def step(self, grad):
        """One Adam step on every parameter array, with `grad` the list of their gradients."""
        if self.params is None:
            raise RuntimeError("Adam parameters must be set before calling step(), got None")
        for i in range(len(self.params)):
            Adam.step_detail(grad[i], self.m[i], self.v[i], self.lr, self.beta1, self.beta2, self.t, self.eps,
                             self.params[i])
        self.t = self.t + 1

    @staticmethod
    def step_detail(g, m, v, lr, beta1, beta2, t, eps, params):
        """One Adam step on the array `params` with gradient `g`, moments `m`, `v` and step index `t`."""
        check_gradient("Adam", g, params)
        dtype = moment_dtype(params.dtype)
        for name, buffer in (("first", m), ("second", v)):
            if buffer.dtype != dtype or buffer.shape != params.shape:
                raise TypeError(f"Adam {name} moment buffer must be an array of {type_repr(dtype)} of shape "
                                f"{params.shape}, got {type_repr(buffer)}")
        scalar = type_scalar_type(dtype)
        flat = flat_scalars(params)
        launch(_adam_step, dim=flat.shape[0], device=params.device,
                  inputs=[flat_scalars(g), flat_scalars(m), flat_scalars(v), scalar(lr), scalar(beta1),
                          scalar(beta2), scalar(t), scalar(eps), flat])
