"""Python AST -> warp dialect, for one kernel.

Locals live in SSA form: `env` maps each name to a typed value, `if` merges
branches through scf.if results, loops carry reassigned names as iter_args.
`break`, `continue` and `return` set flag locals ($break, $continue,
$return); the statements after one that may jump run under a guard, so the
IR stays structured (scf) for the unroll and autodiff passes.

KernelEmitter is made of one part per concern, each a module of its own:
statements.py (blocks, assignments, exit flags), branches.py (`if`, every
scf.if), loops.py (`for`, `while`), expressions.py (operators, names,
subscripts), calls.py (every kind of callee, builtins) and conversions.py
(casts, truth values); this module holds its state and the kernel's entry.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import func

from mlwarp.core import types as wt
from mlwarp.core.errors import CompileError, CompileTypeError, UnsupportedSyntaxError

from . import slots
from . import types as ft
from .branches import BranchEmitter
from .calls import CallEmitter
from .conversions import ConversionEmitter
from .expressions import ExpressionEmitter
from .loops import LoopEmitter
from .resolve import resolve_path
from .source import Source
from .statements import KERNEL_RETURN, StatementEmitter
from .syntax import contains_return, first_never_supported, unsupported_message
from .values import RETURN, Var


class KernelEmitter(StatementEmitter, BranchEmitter, LoopEmitter, ExpressionEmitter, CallEmitter, ConversionEmitter):
    def __init__(self, source: Source, arg_types: dict, program):
        """`program`: the functions.Program the kernel's emitters share, which also emits their @wp.func calls
        (functions.py builds on this class, so this module hands those calls to it instead of importing it)."""
        self.src = source
        self.arg_types = arg_types
        self.program = program
        self.env: dict = {}
        self.tid_dims = 0
        self.static_loop_values: dict = {}  # loop variables of loops unrolled for wp.static (stmt_For)
        # loops being emitted once to learn the types of the names they must carry without a definition before
        # them: {name: its type once some statement assigned it, else None}, innermost last (emit_loop)
        self.loop_pending: list = []
        self.reads_after: dict = {}  # id(statement) -> names the code after it may read before assigning
        self.slot = slots.NO_SLOT  # the member-write target being evaluated (slots.py)

    # -- diagnostics --------------------------------------------------------------
    def error(self, node, message, cls=CompileError):
        return cls(message, self.src.filename, self.src.file_line(node), self.src.text(node), self.src.name)

    def loc(self, node) -> ir.Location:
        return ir.Location.file(self.src.filename, self.src.file_line(node), getattr(node, "col_offset", 0) + 1)

    # -- entry ----------------------------------------------------------------------
    def emit_kernel(self) -> func.FuncOp:
        tree = self.src.tree
        bad = first_never_supported(tree)
        if bad is not None:
            raise self.error(bad, unsupported_message(bad), UnsupportedSyntaxError)
        r = tree.returns  # `-> None` / `-> types.NoneType` only; the annotation as evaluated at the definition
        a = getattr(self.src.func, "__annotations__", {}).get("return", None) if r is not None else None
        if isinstance(a, str):  # postponed annotations: resolved by name
            a = None if a in ("None", "NoneType", "types.NoneType") else resolve_path(self.src.func, r)
        if a is not None and a is not type(None):
            raise self.error(tree.returns, KERNEL_RETURN, CompileTypeError)
        names = [a.arg for a in tree.args.args]
        inputs = [ft.to_mlir(self.arg_types[n]) for n in names]
        with self.loc(tree):
            f = func.FuncOp(self.src.name, (inputs, []))
            f.attributes["warp.kernel"] = ir.UnitAttr.get()
            entry = f.add_entry_block()
        self.program.kernel_op = f.operation  # @wp.func specializations go before the kernel
        with ir.InsertionPoint(entry):
            for n, arg in zip(names, entry.arguments):
                self.env[n] = Var(arg, self.arg_types[n])
            if contains_return(tree.body):
                self.env[RETURN] = self.const(False, wt.bool_)
            self.emit_block(tree.body)
            with self.loc(tree):
                func.ReturnOp([])
        return f
