"""Functions that only exist inside kernels: the frontend reads `_wp_intrinsic_` (compiler/frontend/calls.py
dispatches on it); called in Python scope they raise, as Warp's do."""

from __future__ import annotations


class KernelOnly:
    """An intrinsic's Python handle: `name` for the frontend, `message` raised when Python calls it."""

    def __init__(self, name: str, doc: str, message: str | None = None, module: str = "mlwarp"):
        self.__name__ = self.__qualname__ = self.key = name
        self.__module__ = module
        self.__doc__ = doc
        self._wp_intrinsic_ = name
        self._message = message or f"wp.{name}() can only be called inside a kernel or wp.func"

    def __call__(self, *args, **kwargs):
        raise RuntimeError(self._message)

    def __repr__(self):
        return f"<mlwarp intrinsic {self.__name__}>"


__all__ = ["KernelOnly"]
