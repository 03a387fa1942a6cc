"""The IR verifier the compiler and mlwarp-opt run: the warp dialect's checks beyond IRDL (dialects/warp/verify.py:
the op table's rules, Warp's limits on its types) with the builtin table's check of each builtin op
(builtins/op_typing.py).

The compile loop (build.py) runs it after the frontend and after each pass stage of a debug build, or of any
build with `MLWARP_VERIFY_IR=1` (the test suites set it); a violation is a compiler bug, raised as
`IRVerifyError` naming the stage and the op. Once a stage leaves no warp op (the module is lowered), the later
stages are not checked.
"""

from __future__ import annotations

import os

from mlir import ir

from .builtins.op_typing import BuiltinTyping
from .dialects.warp.verify import Report, verify

ENV = "MLWARP_VERIFY_IR"


class IRVerifyError(Exception):
    """The IR after a stage breaks the warp dialect's rules (a compiler bug)."""


def verify_module(module) -> Report:
    """Every violation in `module` (an ir.Module or an op), and how many warp ops it holds."""
    op = module.operation if isinstance(module, ir.Module) else module
    return verify(op, builtin_check=BuiltinTyping())


def wanted(debug: bool) -> bool:
    """Whether a compile verifies its IR after each stage: debug builds, and every build under MLWARP_VERIFY_IR=1."""
    return debug or os.environ.get(ENV) == "1"


def check_module(module, after: str) -> bool:
    """Raises IRVerifyError on the first violation (`after`: what ran last, for the message); returns whether the
    module still holds warp ops (when not, the later stages need no check)."""
    report = verify_module(module)
    if report.violations:
        first, more = report.violations[0], len(report.violations) - 1
        raise IRVerifyError(f"invalid warp IR after {after}, at {first.op.location}: {first.message}"
                            + (f" (and {more} more)" if more else ""))
    return report.warp_ops > 0
