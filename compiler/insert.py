"""Inserting passes into a target's stage table, for one kernel or for every kernel.

    import mlwarp as wp
    from mlwarp.compiler import insert

    def count_adds(module):                      # a Python pass: a callable taking the module op
        ...

    insert.insert_pass("loop-invariant-code-motion", after="warp-opt")      # every kernel, both targets
    insert.insert_pass(count_adds, before="lowered", target="cpu")          # every CPU build

    @wp.kernel(passes=[insert.InsertedPass("canonicalize", after="autodiff")])   # this kernel only
    def k(...): ...

A pass is one of
- pipeline text (compiler/pipeline_text.py, the syntax of the stage tables and mlwarp-opt): mlwarp passes with
  options in upstream syntax, "warp-unroll-loops{max-unroll=4}", and upstream MLIR passes as
  `mlir-opt --pass-pipeline` takes them inside builtin.module(...): "canonicalize",
  "func.func(loop-invariant-code-motion)", or a comma list of both; mlwarp passes' names and options are
  checked where the InsertedPass is written, upstream ones when the build runs them,
- a Python callable `f(module_op: mlir.ir.Operation) -> None`, run as a pass on the whole module
  (it may rewrite the IR in place; an exception fails the compile with its message).

The point is any IR stage of the target's tables (compiler/targets/ `stage_points`: "warp" (the frontend's
output), "warp-opt", "autodiff", "asserts" (release builds) or "bounds-check" (debug builds), "tiles" and
"tiles-to-llvm" (modules with tiles), "lowered", then "llvm" on the CPU, "nvvm" for CUDA): the pass runs
`after` the stage's passes (before the stage's dump), or `before` them. `target=None`
inserts into both targets' tables. A kernel's passes run before the global ones at the same point.

Inserted passes are part of the kernel cache key (`fingerprint`): a pass text as written, a Python
pass by its qualified name and a hash of its source, so changing either recompiles the kernel.
This module imports no MLIR (Kernel.cache_key reads it on cache hits), nor does writing an InsertedPass (the
stage tables it checks the point against are MLIR-free).
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
from typing import Callable

from .passes.registry import PassError
from .pipeline_text import resolve
from .targets import TARGETS, stage_points
from .targets.common import GLOBAL_PASSES, passes_for  # noqa: F401  (the global entries: every build's)


@dataclasses.dataclass(frozen=True)
class InsertedPass:
    pass_: str | Callable
    after: str | None = None
    before: str | None = None
    target: str | None = None  # "cpu", "cuda", or None: both

    def __post_init__(self):
        if (self.after is None) == (self.before is None):
            raise ValueError(f"inserted pass {self.label()}: give exactly one of after= or before= (a stage name)")
        if self.target is not None and self.target not in TARGETS:
            raise ValueError(f"inserted pass {self.label()}: unknown target {self.target!r}; targets: "
                             f"{', '.join(TARGETS)}")
        if not (isinstance(self.pass_, str) or callable(self.pass_)):
            raise TypeError(f"inserted pass must be pass text or a callable taking the module op, "
                            f"got {type(self.pass_).__name__}")
        if isinstance(self.pass_, str):
            try:
                resolve(self.pass_)  # the syntax, and mlwarp passes' names and options
            except PassError as e:
                raise ValueError(f"inserted pass {self.label()}: {e}") from None
        point = self.after or self.before
        known = [s for t in TARGETS if self.applies_to(t) for s in stage_points(t)]
        if point not in known:
            raise ValueError(f"inserted pass {self.label()}: unknown stage {point!r}; stages: "
                             f"{', '.join(dict.fromkeys(known))}")

    def applies_to(self, target: str) -> bool:
        return self.target is None or self.target == target

    def label(self) -> str:
        if isinstance(self.pass_, str):
            return repr(self.pass_)
        return f"{getattr(self.pass_, '__module__', '?')}.{getattr(self.pass_, '__qualname__', type(self.pass_).__name__)}"

    def fingerprint(self) -> str:
        where = f"after={self.after}" if self.after else f"before={self.before}"
        return f"{where} target={self.target} pass={self.label()} {_source_hash(self.pass_)}"


def _source_hash(p) -> str:
    if isinstance(p, str):
        return ""
    try:
        text = inspect.getsource(p).encode()
    except (OSError, TypeError):  # defined in a REPL: its bytecode
        code = getattr(p, "__code__", None) or getattr(type(p).__call__, "__code__", None)
        text = code.co_code if code is not None else repr(p).encode()
    return hashlib.sha256(text).hexdigest()[:16]


def insert_pass(pass_, *, after: str | None = None, before: str | None = None, target: str | None = None):
    """Inserts `pass_` into every kernel's build from now on; returns the entry (for remove_pass)."""
    entry = InsertedPass(pass_, after=after, before=before, target=target)
    GLOBAL_PASSES.append(entry)
    return entry


def remove_pass(entry: InsertedPass) -> None:
    GLOBAL_PASSES.remove(entry)


def clear_passes() -> None:
    GLOBAL_PASSES.clear()


def as_inserted(passes) -> tuple:
    """A kernel's `passes=` argument as InsertedPass entries (checked now, where the user wrote them)."""
    out = []
    for p in passes or ():
        if not isinstance(p, InsertedPass):
            raise TypeError(f"passes= takes mlwarp.compiler.insert.InsertedPass entries (a pass and its stage), "
                            f"got {p!r}")
        out.append(p)
    return tuple(out)


def fingerprint(options: dict) -> str:
    """The inserted passes of a build, for its cache key."""
    return "\n".join(p.fingerprint() for p in passes_for(options))
