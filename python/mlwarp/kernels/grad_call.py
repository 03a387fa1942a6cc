"""`wp.grad(f)`: the gradient of a @wp.func or a differentiable builtin, called in kernel code, as in Warp 1.19.

    dsq = wp.grad(square)(x)            # d(x*x)/dx = 2x
    b, a = wp.grad(wp.atan2)(y, x)      # one adjoint per input: a tuple for several

At Python scope `wp.grad(f)` only wraps `f` (a GradWrapper, as Warp's, which cannot be called there); in kernel code
the frontend (compiler/frontend/grad_call.py) emits a call of a generated function whose body the pass
warp-grad-calls makes: f's forward replay, then its reverse sweep with the result's adjoint seeded to ones.
"""

from __future__ import annotations


from mlwarp.core.grad_wrapper import GradWrapper, is_warp_function as _is_warp_function


def grad(func) -> GradWrapper:
    """A callable computing the gradient of `func` (a @wp.func or a builtin) with respect to each of its inputs,
    the adjoint of its result(s) being one; see the module's text."""
    if _is_warp_function(func):
        return GradWrapper(func)
    raise TypeError(f"grad() expects a Warp function, got {type(func)}")


grad._wp_grad_ = True  # the frontend's mark: `wp.grad(f)` in kernel code (compiler/frontend/grad_call.py)
