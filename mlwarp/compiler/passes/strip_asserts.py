"""warp-strip-asserts: a release build's kernels without their `assert` statements.

Warp compiles a kernel's `assert` into C's assert, which release builds (NDEBUG) compile out: the condition is
evaluated, nothing checks it. This pass erases each warp.assert and leaves its condition's ops to the usual
dead-code elimination (a call inside the condition keeps whatever it writes). Debug builds check the asserts
instead (warp-bounds-check).
"""

from __future__ import annotations

from .registry import Pass, ops_named


class StripAsserts(Pass):
    name = "warp-strip-asserts"
    description = "Erase warp.assert (a release build: Warp checks asserts in debug builds only)"

    def run(self, module):
        for op in ops_named(module.operation, {"warp.assert"}):
            op.erase()
