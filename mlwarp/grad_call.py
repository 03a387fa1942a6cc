"""`wp.grad(f)`: the gradient of a @wp.func or a differentiable builtin, called in kernel code, as in Warp 1.19.

    dsq = wp.grad(square)(x)            # d(x*x)/dx = 2x
    b, a = wp.grad(wp.atan2)(y, x)      # one adjoint per input: a tuple for several

At Python scope `wp.grad(f)` only wraps `f` (a GradWrapper, as Warp's, which cannot be called there); in kernel code
the frontend (compiler/frontend/grad_call.py) emits a call of a generated function whose body the pass
warp-grad-calls makes: f's forward replay, then its reverse sweep with the result's adjoint seeded to ones.
"""

from __future__ import annotations


def _is_warp_function(obj) -> bool:
    return (getattr(obj, "_wp_function_", False) is True and not isinstance(obj, type)) \
        or getattr(obj, "_wp_builtin_", None) is not None


class GradWrapper:
    """What `wp.grad(func)` returns: call it in a kernel or @wp.func with `func`'s arguments."""

    def __init__(self, func):
        self.func = func

    def __call__(self, *args, **kwargs):
        raise RuntimeError("grad() wrapper can only be called inside Warp kernels and functions.")

    @property
    def key(self) -> str:
        return getattr(self.func, "key", None) or getattr(self.func, "_wp_builtin_", None) or str(self.func)

    def __repr__(self):
        return f"GradWrapper({self.key})"


def grad(func) -> GradWrapper:
    """A callable computing the gradient of `func` (a @wp.func or a builtin) with respect to each of its inputs,
    the adjoint of its result(s) being one; see the module's text."""
    if _is_warp_function(func):
        return GradWrapper(func)
    raise TypeError(f"grad() expects a Warp function, got {type(func)}")


grad._wp_grad_ = True  # the frontend's mark: `wp.grad(f)` in kernel code (compiler/frontend/grad_call.py)
