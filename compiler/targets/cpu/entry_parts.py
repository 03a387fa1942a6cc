"""A large library of several entries is lowered to LLVM in parts, side by side (the CPU table's "parts" step).

After the "lowered" stage a kernel's library holds each entry whole: its atomic entry, the `_private` copy
(warp-cpu-privatize-scatter) and the `_serial` one (warp-cpu-serial-copy), an adjoint library its adjoint's. What
remains of its compile, the "llvm" stage (~40 us an op: diffray's draw adjoint, two entries of ~5,600 ops, 0.45 s)
and LLVM itself (most of a small kernel's compile), treats each entry on its own. So a module whose entries hold
ENTRY_PARTS_MIN_OPS ops or more
continues in forked processes, an entry each (object_code.MAX_PARTS at most): each part deletes the other parts'
entries, runs the stages left up to the object file, and reports its object and what the library links; this
process continues with the first part and links them all (emit_object, then the "library" stage). LLVM's own split
(object_code.write_object) then finds one entry a part, and is what splits a library this step does not.

Only inside a compile process (a fork would copy a user's threads' state), on two cores or more, and not while the
IR is dumped (the parts would write the same files). The entries call nothing of each other's; a function they
share (a `@wp.func` left out of line) is made private in each part: each has its own copy, none clashes at the link.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback

from mlir import ir
from mlir.passmanager import PassManager

from ... import contained  # imports no MLIR
from mlwarp.core.errors import CompileError
from .cpu_entry import cpu_entries
from .object_code import balanced_parts
from .privatize_scatter import private_name
from .serial_copy import serial_name

# below this many ops in the entries in all, a fork costs more than the part of the stages it takes off this process.
# LLVM's O3 and code generation of one vectorised thread loop (the entry's two versions of it) take ~70 ms even for
# a kernel of a few statements: a kernel with one atomic_add (its atomic entry and `_private` copy, ~270 ops)
# compiled in 0.22 s whole, 0.14 s in parts; diffray's vertex-normal kernel 0.38 -> 0.24 s, its adjoint 0.58 -> 0.38.
ENTRY_PARTS_MIN_OPS = 200


def entry_functions(module: ir.Module) -> dict:
    """The module's entries and their `_private` and `_serial` copies: name -> func.func."""
    defined = {}
    for op in module.body.operations:
        op = op.operation
        if op.name == "func.func" and op.regions[0].blocks:
            defined[ir.StringAttr(op.attributes["sym_name"]).value] = op
    found = {}
    for entry in cpu_entries(module.operation):
        name = ir.StringAttr(entry.attributes["sym_name"]).value
        for member in (name, private_name(name), serial_name(name)):
            if member in defined:
                found[member] = defined[member]
    return found


def _op_count(op: ir.Operation) -> int:
    count = [0]

    def visit(_, count=count, advance=ir.WalkResult.ADVANCE):
        count[0] += 1
        return advance

    op.walk(visit)
    return count[0]


def parts_of(module: ir.Module) -> list:
    """The lists of entry names compiled side by side, the largest entry first (one list: the module whole)."""
    entries = entry_functions(module)
    if len(entries) < 2 or not contained.in_compile_process() or (os.cpu_count() or 1) < 2 or \
            os.environ.get("MLWARP_DUMP_IR"):
        return [list(entries)]
    sized = [(name, _op_count(op)) for name, op in entries.items()]
    if sum(ops for _, ops in sized) < ENTRY_PARTS_MIN_OPS:
        return [list(entries)]
    return balanced_parts(sized)


def keep_part(module: ir.Module, part: list, entries: set, first: bool) -> None:
    """Leaves of the module's `entries` those in `part`; every other function defined in it becomes private (the
    part's own copy), and symbol-dce drops what the part does not use. The global tables the runtime reads (an
    entry's `_private_params`) stay visible in the `first` part; another part's copies are linkonce_odr, which the
    linker merges into the first part's."""
    keep = set(part)
    for op in list(module.body.operations):
        op = op.operation
        if op.name == "llvm.mlir.global" and not first and op.regions[0].blocks and \
                str(op.attributes["linkage"]) == "#llvm.linkage<external>":
            op.attributes["linkage"] = ir.Attribute.parse("#llvm.linkage<linkonce_odr>")
        if op.name != "func.func" or not op.regions[0].blocks:
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        if name in entries and name not in keep:
            op.erase()
        elif name not in entries:
            op.attributes["sym_visibility"] = ir.StringAttr.get("private")
    PassManager.parse("builtin.module(symbol-dce)").run(module.operation)


def split(build, path: str) -> None:
    """Forks a process for each part but the first (parts_of); each runs the stages after this one up to its object
    file `<path>.part<k>.o` and writes what it links beside it (`.json`), then exits; this process keeps the first
    part, and `finish` collects the others. Returns with the module whole where there are no parts, or a fork is
    refused."""
    parts = parts_of(build.module)
    if len(parts) < 2:
        return
    entries = {name for part in parts for name in part}
    children = []
    for k in range(1, len(parts)):
        try:
            pid = os.fork()
        except OSError:  # (a process limit): the module whole, here
            _stop(children)
            return
        if pid == 0:  # the part's process: never back into the compiler
            code = 1
            try:
                keep_part(build.module, parts[k], entries, first=False)
                _compile_part(build, f"{path}.part{k}.o")
                code = 0
            except BaseException:  # noqa: BLE001 (into the compile's output, which the error points to)
                traceback.print_exc()
            finally:
                sys.stderr.flush()
                os._exit(code)
        children.append((pid, f"{path}.part{k}.o"))
    keep_part(build.module, parts[0], entries, first=True)
    build.part_children = children


def _compile_part(build, path: str) -> None:
    build.object_path = path
    build.run([stage for stage in build.remaining if stage.name != "library"])
    with open(f"{path}.json", "w") as f:
        json.dump({"objects": build.objects, "libraries": build.libraries, "prints": build.meta.get("prints")}, f)


def finish(build) -> None:
    """Waits for the parts' processes and adds their objects and libraries to this one's. A part that crashed
    (an LLVM assertion) crashes this process the same way, its message already in this process's output (the
    driver then tries the kernel without AVX-512, as for any crash); one that failed otherwise raises."""
    children, build.part_children = build.part_children, []
    statuses = [(os.waitpid(pid, 0)[1], path) for pid, path in children]
    for status, path in statuses:
        if os.WIFSIGNALED(status):
            os.kill(os.getpid(), os.WTERMSIG(status))
        if status:
            raise CompileError(f"a part of the library of kernel '{build.name}' failed to compile "
                               f"(its output is above)")
    for _, path in statuses:
        with open(f"{path}.json") as f:
            part = json.load(f)
        os.remove(f"{path}.json")
        build.objects += part["objects"]
        build.libraries += [library for library in part["libraries"] if library not in build.libraries]
        build.meta["prints"] = bool(build.meta.get("prints")) or bool(part["prints"])
    build.meta["vector_libm"] = bool(build.libraries)


def _stop(children: list) -> None:
    for pid, _ in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
