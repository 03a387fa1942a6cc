"""warp-strip-asserts: a release build's kernels without their `assert` statements.

Warp compiles a kernel's `assert` into C's assert, which release builds (NDEBUG) compile out: the condition is
evaluated, nothing checks it. This pass erases each warp.assert and leaves its condition's ops to the usual
dead-code elimination (a call inside the condition keeps whatever it writes). Debug builds check the asserts
instead (warp-bounds-check).
"""

from __future__ import annotations

from . import registry
from .ir_walk import ops_named


class StripAsserts(registry.StripAsserts):
    def run(self, module):
        for op in ops_named(module.operation, {"warp.assert"}):
            op.erase()
