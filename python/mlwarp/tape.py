"""`wp.Tape`: records kernel launches and replays their adjoints in reverse order.

    tape = wp.Tape()
    with tape:
        wp.launch(loss_kernel, dim=n, inputs=[x], outputs=[l])
    tape.backward(loss=l)      # seeds l.grad with 1, then runs the adjoints
    x.grad                     # d l / d x

Gradients accumulate into the `.grad` arrays of `requires_grad=True` arrays,
as in Warp; `tape.zero()` clears them, `tape.reset()` also forgets the launches.
"""

from __future__ import annotations

from .array import array

_active: list = []  # tapes being recorded, innermost last


def recording() -> bool:
    return bool(_active)


def record_launch(kernel, dims, inputs, outputs, device) -> None:
    """Called by wp.launch after a forward launch: the innermost active tape records it."""
    if _active:
        _active[-1].launches.append(("launch", kernel, dims, list(inputs), list(outputs), device))


def _adjoint_of(value):
    return value.grad if isinstance(value, array) and not value.is_annotation and value.requires_grad else None


class Tape:
    def __init__(self):
        self.launches = []
        self.gradients = {}  # array -> its gradient array, for every array the backward pass wrote
        self.loss = None

    def __enter__(self):
        if self in _active:
            raise RuntimeError("this tape is already recording")
        _active.append(self)
        return self

    def __exit__(self, *exc):
        _active.remove(self)

    def record_func(self, backward, arrays):
        """Records a Python callable that `backward()` calls in its place (for work that is not a kernel)."""
        self.launches.append(("func", backward, list(arrays)))

    def backward(self, loss=None, grads=None):
        """Runs the recorded launches' adjoints, last first. `loss`: a one-element array whose gradient is
        set to 1; `grads`: {array: gradient array} seeds for several outputs."""
        if loss is not None:
            if loss.size != 1:
                raise RuntimeError(f"Can only return gradients for scalar loss functions, got an array of "
                                   f"shape {loss.shape}")
            if loss.grad is None:
                raise RuntimeError("the loss array needs requires_grad=True to be seeded")
            self.loss = loss
            loss.grad.fill_(1)
            self.gradients[loss] = loss.grad
        for a, g in (grads or {}).items():
            if a.grad is None:
                a.grad = g
            elif a.grad is not g:
                a.grad.assign(g)
            a.requires_grad = True
            self.gradients[a] = a.grad
        from .adjoint import launch_adjoint

        for entry in reversed(self.launches):
            if entry[0] == "func":
                entry[1]()
                continue
            _, kernel, dims, inputs, outputs, device = entry
            adj_in = [_adjoint_of(v) for v in inputs]
            adj_out = [_adjoint_of(v) for v in outputs]
            for v, g in zip(inputs + outputs, adj_in + adj_out):
                if g is not None:
                    self.gradients[v] = g
            launch_adjoint(kernel, dims, inputs, outputs, adj_in, adj_out, device)

    def _arrays(self):
        for entry in self.launches:
            if entry[0] == "launch":
                yield from (v for v in entry[3] + entry[4] if isinstance(v, array))
            else:
                yield from (v for v in entry[2] if isinstance(v, array))
        yield from self.gradients

    def zero(self):
        """Zeroes the gradient of every array the tape has seen."""
        for a in self._arrays():
            if a.grad is not None:
                a.grad.zero_()

    def reset(self):
        """Forgets the recorded launches and zeroes the gradients."""
        self.zero()
        self.launches = []
        self.gradients = {}
        self.loss = None

    def get_adjoint(self, a):
        return _adjoint_of(a)
