"""`warp.optim.SGD`: stochastic gradient descent with momentum, dampening, weight decay and Nesterov momentum,
as Warp 1.19 (and PyTorch's torch.optim.SGD) define it, updating the parameter arrays in place in a kernel.

Per scalar, at step t (t counts from 0), with gradient g and parameter p:
    g += weight_decay * p                                  (when weight_decay != 0)
    b = g if t == 0 else momentum * b + (1 - dampening) * g (when momentum != 0)
    g = g + momentum * b if nesterov else b                 (when momentum != 0)
    p -= lr * g
"""

from __future__ import annotations

from typing import Any

from mlwarp.arrays.array import array
from mlwarp.library.builtins import namespace as wp  # the builtins, spelt as in user code
from mlwarp.kernels.kernel import kernel
from mlwarp.launching.launch import launch
from mlwarp.types import type_is_float, type_repr, type_scalar_type

from mlwarp.optim.elementwise import check_gradient, flat_scalars, follow_param


@kernel
def _sgd_step(g: array(dtype=Any), b: array(dtype=Any), lr: Any, momentum: Any, dampening: Any,
              weight_decay: Any, nesterov: int, t: int, params: array(dtype=Any)):
    i = wp.tid()
    zero = type(lr)(0.0)
    gt = g[i]
    if weight_decay != zero:
        gt += weight_decay * params[i]
    if momentum != zero:
        bt = gt
        if t > 0:
            bt = momentum * b[i] + (type(lr)(1.0) - dampening) * gt
        if nesterov == 1:
            gt += momentum * bt
        else:
            gt = bt
        b[i] = bt
    params[i] = params[i] - lr * gt


class SGD:
    """Stochastic Gradient Descent optimizer with optional momentum (Warp's `warp.optim.SGD`).

    Args:
        params: list of arrays to optimize (or None, then set later with `set_params`).
        lr: learning rate.
        momentum: momentum factor.
        dampening: dampening applied to the momentum.
        weight_decay: L2 regularization coefficient.
        nesterov: whether to use Nesterov momentum.

    Parameters may be arrays of any floating-point scalar, vector or matrix type; the hyperparameters are
    applied in the parameters' scalar type.
    """

    def __init__(self, params=None, lr=0.001, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.b = []  # momentum buffers, one per parameter array
        self.set_params(params)
        self.lr = lr
        self.momentum = momentum
        self.dampening = dampening
        self.weight_decay = weight_decay
        self.nesterov = nesterov
        self.t = 0

    def set_params(self, params):
        """Set the parameter arrays to optimize; momentum buffers that still fit a parameter are kept."""
        self.params = params
        if params is not None and isinstance(params, list) and len(params) > 0:
            if len(self.b) != len(params):
                self.b = [None] * len(params)
            for i, param in enumerate(params):
                self.b[i] = follow_param(self.b[i], param, param.dtype)

    def reset_internal_state(self):
        """Zero the momentum buffers and the step count."""
        for b_i in self.b:
            b_i.zero_()
        self.t = 0

    def step(self, grad):
        """One SGD step on every parameter array, with `grad` the list of their gradients."""
        if self.params is None:
            raise RuntimeError("SGD parameters must be set before calling step(), got None")
        for i in range(len(self.params)):
            SGD.step_detail(grad[i], self.b[i], self.lr, self.momentum, self.dampening, self.weight_decay,
                            self.nesterov, self.t, self.params[i])
        self.t = self.t + 1

    @staticmethod
    def step_detail(g, b, lr, momentum, dampening, weight_decay, nesterov, t, params):
        """One SGD step on the array `params` with gradient `g`, momentum buffer `b` and step index `t`."""
        check_gradient("SGD", g, params)
        if params.dtype != b.dtype:
            raise TypeError(f"SGD momentum buffer dtype must match parameter dtype "
                            f"{type_repr(params.dtype)}, got {type_repr(b.dtype)}")
        scalar = type_scalar_type(params.dtype)
        if not type_is_float(scalar):
            raise RuntimeError(f"Unsupported dtype for Warp SGD optimizer: {type_repr(params.dtype)}")
        flat = flat_scalars(params)
        launch(_sgd_step, dim=flat.shape[0], device=params.device,
                  inputs=[flat_scalars(g), flat_scalars(b), scalar(lr), scalar(momentum), scalar(dampening),
                          scalar(weight_decay), int(nesterov), int(t), flat])
