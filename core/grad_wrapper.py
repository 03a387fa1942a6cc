"""What `wp.grad(f)` makes: a handle of f that kernel code calls for f's gradient (python/mlwarp/kernels/grad_call.py is the
user API; the frontend, compiler/frontend/grad_call.py, makes the same handle for `wp.grad(f)` in kernels)."""

from __future__ import annotations


def is_warp_function(obj) -> bool:
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
