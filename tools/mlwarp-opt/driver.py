"""The MLIR side of mlwarp-opt: one context, one pass manager, run on each input chunk.

mlwarp passes (Python classes of the registry) and upstream passes go into the
same PassManager, so `--mlir-print-ir-after-all` and the verifier treat them alike.
A Python pass that raises is turned into a pass failure (MLIR prints its
"IR Dump After ... Failed"), and its message becomes the tool's one error line.
"""

from __future__ import annotations

import re

from mlir import ir
from mlir.passmanager import PassManager

from mlwarp.compiler.context import make_context
from mlwarp.compiler.passes.registry import PASSES, Pass, PassError, implemented
from mlwarp.compiler.pipeline_text import parse_element, resolve
from mlwarp.compiler.verify import verify_module

from .diagnostics import PARSER_BUFFER, all_errors, describe, first_line, format_location
from .errors import DiagnosticsError, ToolError
from .stages import StageError, stage_passes

# MLIR's message for a name that is no registered pass, at any nesting depth.
_UNKNOWN_PASS = re.compile(r"'([^']+)' does not refer to a registered pass")


class OptDriver:
    def __init__(self, steps, input_name: str, print_ir_after_all=False, generic=False, debug_info=False,
                 allow_unregistered=False):
        self.input_name = input_name
        self.generic = generic
        self.debug_info = debug_info
        self.ctx = make_context()
        self.ctx.allow_unregistered_dialects = allow_unregistered
        if print_ir_after_all:
            self.ctx.enable_multithreading(False)  # MLIR requires it to print IR of nested pass managers
        self.failure = None  # (pass name, exception) of the mlwarp pass that raised during the current run
        self.pm_steps = list(steps)
        with self.ctx:
            self.pm = PassManager("builtin.module")
            for step in steps:
                self._add_step(step)
            if print_ir_after_all:
                self.pm.enable_ir_printing(print_after_all=True, print_generic_op_form=generic,
                                           enable_debug_info=debug_info)

    def _add_step(self, step) -> None:
        """A step's passes: resolved by the compiler's own parser (compiler/pipeline_text.py), options checked now."""
        try:
            if step[0] == "pipeline":
                entries = resolve(step[1], anchored=True)
            elif step[0] == "stages":
                entries = stage_passes(step[1])
            else:  # --name or --name=<options>
                _, name, options = step
                entries = resolve(name if options is None else f"{name}{{{options}}}")
        except (PassError, StageError) as e:
            raise ToolError(str(e)) from None
        for entry in entries:
            if isinstance(entry, Pass):
                self._add_pass(entry)
            else:
                self._add_upstream(parse_element(entry).name, entry)

    def _add_pass(self, p: Pass) -> None:
        instance = implemented(p)

        def run(op, pass_, instance=instance):
            try:
                instance.run(op)
            except Exception as e:  # noqa: BLE001  reported by process(), not as a traceback
                self.failure = (p.name, e)
                pass_.signal_pass_failure()

        self.pm.add(run, name=type(instance).__name__, argument=p.name, description=p.description)

    def _add_upstream(self, name: str, text: str) -> None:
        try:
            self.pm.add(text)
        except ValueError as e:
            msg = str(e)
            unknown = _UNKNOWN_PASS.search(msg)
            if unknown:
                inner = unknown.group(1)
                if inner in PASSES:  # e.g. func.func(warp-cpu-entry)
                    raise ToolError(f"pass '{inner}' runs on the whole module; it cannot be nested in "
                                    f"'{name}(...)'") from None
                raise ToolError(f"unknown pass '{inner}'") from None
            # "<Pass-Options-Parser>: no such option x\n\nfailed to add `p` with options `x=1`"
            detail = first_line(msg.split(":", 1)[1] if msg.startswith("<Pass-Options-Parser>") else msg)
            raise ToolError(f"pass '{name}': {detail}") from None

    def process(self, text: str, line_offset: int = 0, path: str | None = None) -> str:
        """Parses one input chunk (or the whole file at `path`, so that locations carry its name), verifies it
        (MLIR's verifier with IRDL's constraints, then the warp verifier: compiler/verify.py), runs the passes on
        it, verifies the result, returns it printed. A failure raises DiagnosticsError: its first error as the
        message, all of them in `errors` (for -verify-diagnostics)."""
        with self.ctx:
            try:
                module = ir.Module.parseFile(path) if path else ir.Module.parse("\n" * line_offset + text)
            except ir.MLIRError as e:
                raise DiagnosticsError(describe(e, self.input_name), all_errors(e, self.input_name)) from None
            self._verify(module, "")
            self.failure = None
            try:
                self.pm.run(module.operation)
            except ir.MLIRError as e:
                message = self._pass_failure(e)
                errors = all_errors(e, self.input_name) if self.failure is None else []
                raise DiagnosticsError(message, errors or [(None, message)]) from None
            if len(self.pm_steps):
                self._verify(module, "after the passes: ")
            text = module.operation.get_asm(print_generic_op_form=self.generic, enable_debug_info=self.debug_info)
            if self.debug_info:  # a chunk parsed from memory has the buffer name "-": show the input's name
                text = text.replace(f'loc("{PARSER_BUFFER}":', f'loc("{self.input_name}":')
            return text

    def _verify(self, module, when: str) -> None:
        violations = verify_module(module).violations
        if violations:
            errors = [(format_location(v.op.location, self.input_name), when + v.message) for v in violations]
            where, message = errors[0]
            raise DiagnosticsError(f"{where}: {message}" if where else message, errors)

    def _pass_failure(self, error) -> str:
        if self.failure is not None:
            name, exc = self.failure
            kind = "" if isinstance(exc, PassError) else f"{type(exc).__name__}: "
            return f"{self.input_name}: pass '{name}' failed: {kind}{first_line(str(exc))}"
        if getattr(error, "error_diagnostics", None):
            return describe(error, self.input_name)
        return f"{self.input_name}: the pass pipeline failed"
