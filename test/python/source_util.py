"""Where a piece of a kernel's source is, as the compiler reports it."""

import inspect


def where(kernel, text) -> str:
    """`file:line:col` of the first occurrence of `text` in the kernel's source."""
    lines, first = inspect.getsourcelines(kernel.func)
    for k, line in enumerate(lines):
        if text in line:
            return f"{inspect.getsourcefile(kernel.func)}:{first + k}:{line.index(text) + 1}"
    raise AssertionError(text)
