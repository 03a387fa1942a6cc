"""`warp.build_experimental`: Warp 1.19's experimental registration of external C++ functions (`add_builtin`)
and value types (`add_native_type`) for use in kernels.

Both hand Warp's C++ code generator a C++ name to call or to lay a struct out as; the kernel's generated C++
then includes it and is compiled with the user's native code. mlwarp generates no C++: kernels are lowered to
MLIR and LLVM, and there is no C++ compile step to link an external function or type into. So the names exist
with Warp's signatures and raise, saying so (docs/surface.md)."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["add_builtin", "add_native_type"]

_WHY = ("mlwarp compiles kernels through MLIR and LLVM and generates no C++, so there is no C++ compile step to "
        "link an external C++ {what} into")


def add_builtin(name: str, input_types: Mapping[str, type] | None = None, value_type: type | None = None, *,
                native_name: str | None = None, doc: str = ""):
    """Warp: register the external C++ function `native_name` (default `wp::<name>`) as the kernel builtin
    `wp.<name>`. Not available in mlwarp (NotImplementedError)."""
    raise NotImplementedError(f"warp.build_experimental.add_builtin({name!r}): "
                              + _WHY.format(what=f"function ({native_name or 'wp::' + str(name)})")
                              + "; write the function as a @wp.func instead")


def add_native_type(ctype, *, native_name: str, fields: Mapping[str, type] | None = None,
                    initializer: str | None = None):
    """Warp: register the external C++ value type `native_name`, laid out as the ctypes.Structure `ctype`. Not
    available in mlwarp (NotImplementedError)."""
    raise NotImplementedError(f"warp.build_experimental.add_native_type({getattr(ctype, '__name__', ctype)!r}): "
                              + _WHY.format(what=f"type ({native_name})")
                              + "; describe the type as a @wp.struct instead")
