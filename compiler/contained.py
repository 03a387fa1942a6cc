"""Compiles run in a forked child process, so that nothing a user writes can kill the user's process.

The MLIR/LLVM build mlwarp uses has assertions on: an LLVM backend bug (say, an X86 shuffle combine
that asserts on one vector pattern) aborts whatever process runs it. In a child, an abort becomes a
`CompilerCrash` in the caller, naming the kernel, the signal and the assertion (the child's stderr
is kept; after a compile that did not crash it is replayed); the compiler's own exceptions
(`CompileError`, a pass's error) come back as themselves, with the warnings the compile issued.
fork() copies the parent's loaded MLIR (the parent imports it first), so a compile costs ~3-5 ms
more; the child's MLIR contexts and their memory go with it. What a child imports on demand (a lowering, the tile
table) the parent imports before its next fork, so later compiles inherit it; and a child does not collect the
objects it inherited (`gc.freeze`: their full scans were a fifth of a small kernel's compile).

`MLWARP_COMPILE_IN_PROCESS=1` compiles in the calling process (for a debugger or a profiler), as on
platforms without fork().
"""

from __future__ import annotations

import faulthandler
import functools
import gc
import importlib
import os
import pickle
import signal
import sys
import tempfile
import traceback
import warnings

from mlwarp.core.errors import CompileError


class CompilerCrash(CompileError):
    """The compiler process died (an LLVM or MLIR assertion, a segfault) compiling a kernel; `compiler_output`:
    what it printed."""

    def __init__(self, message, compiler_output="", **kwargs):
        super().__init__(message, **kwargs)
        self.compiler_output = compiler_output


def in_process() -> bool:
    """Whether a compile runs in this process: where there is no fork, when asked to, and in a compile process
    (what it compiles, it compiles there)."""
    return not hasattr(os, "fork") or bool(_inherited) or os.environ.get("MLWARP_COMPILE_IN_PROCESS") == "1"


def in_compile_process() -> bool:
    """Whether this is a forked compile process (which may fork again: it runs no threads of the user's)."""
    return bool(_inherited)


def contained(what):
    """Decorates a compile function `fn(func, ...)`: it runs in a forked child; `what(args)` names the
    kernel in a crash message."""

    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            if in_process():
                return fn(*args, **kwargs)
            return _in_child(fn, args, kwargs, what(args))

        run.in_process = fn
        return run

    return wrap


# modules a compile process imported that this process has not (the passes, lowerings and tables a kernel's compile
# loads on demand): imported here before the next fork, so that each later compile inherits them instead of
# importing them again in its own process (~15 ms a kernel for a small one)
_loaded_by_children: set = set()
_SHARED_PACKAGES = ("mlwarp.", "mlir.")


_inherited: list = []  # in a compile process: [the modules it had when it was forked]; empty elsewhere


def inherited_modules() -> set:
    """In a compile process, the modules it was forked with (else this process's)."""
    return _inherited[0] if _inherited else set(sys.modules)


def _import_what_children_loaded() -> None:
    while _loaded_by_children:
        name = _loaded_by_children.pop()
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 (a module that imports only in a compile's state: the child imports it)
            pass


def _in_child(fn, args, kwargs, name):
    return start(fn, args, kwargs, name).result()


class Child:
    """A compile running in a forked process (`start`); `result()` waits for it, returns its value or raises its
    exception (a crash: CompilerCrash). `fileno()`: its pipe, readable once it has sent its result."""

    def __init__(self, pid, read_end, output, name):
        self.pid, self.read_end, self.output, self.name = pid, read_end, output, name

    def fileno(self) -> int:
        return self.read_end

    def result(self):
        return self.receive().deliver()

    def receive(self) -> "Received":
        """Waits for the compile's outcome without issuing its warnings or output (a background compile's are
        issued by the launch that uses it: `Received.deliver`); a crash raises CompilerCrash here."""
        return _receive(self.pid, self.read_end, self.output, self.name)


def start(fn, args, kwargs, name, niceness: int = 0) -> Child:
    """Starts `fn(*args, **kwargs)` in a forked compile process and returns at once: several compiles may run
    at a time (wp.load_module's max_workers). `niceness`: added to the process's (os.nice), for a compile nothing
    waits for yet."""
    _import_what_children_loaded()
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    output = tempfile.TemporaryFile()  # the child's stderr (MLIR and LLVM write there): replayed, or kept on a crash
    pid = os.fork()
    if pid == 0:  # the child: compile, send the result (or the exception) back, never return
        os.close(read_end)
        os.dup2(output.fileno(), 2)
        if niceness:
            os.nice(niceness)
        faulthandler.disable()  # an abort's Python stack would bury LLVM's one-line assertion
        # the collector's full passes over the ~50,000 objects the child inherits (the compiler's modules, MLIR's,
        # the user's) were a fifth of a small kernel's compile; they outlive the child, which collects its own
        gc.freeze()
        _inherited[:] = [set(sys.modules)]  # (and in_process() is True from here on)
        code = 0
        try:
            with warnings.catch_warnings(record=True) as issued:
                warnings.simplefilter("always")
                try:
                    outcome = ("ok", fn(*args, **kwargs))
                except BaseException as e:  # noqa: BLE001 (every failure goes back to the caller)
                    outcome = ("error", _portable(e))
            loaded = sorted(m for m in set(sys.modules) - inherited_modules() if m.startswith(_SHARED_PACKAGES))
            data = pickle.dumps((outcome, [(str(w.message), w.category, w.filename, w.lineno) for w in issued], loaded))
        except BaseException as e:  # noqa: BLE001 (an unpicklable result: say so)
            data = pickle.dumps((("error", CompileError(f"the compiler's result could not be sent back: {e!r}")), [],
                                 []))
        try:
            sys.stdout.flush()  # before the result: the parent reads the output once the result is in
            sys.stderr.flush()
            with os.fdopen(write_end, "wb") as f:
                f.write(data)
        except BaseException:  # noqa: BLE001
            code = 1
        os._exit(code)
    os.close(write_end)
    return Child(pid, read_end, output, name)


class Received:
    """A compile process's outcome, its warnings and what it printed; `deliver()` prints that, issues the warnings
    and returns the value or raises the compile's exception."""

    def __init__(self, outcome, issued, printed: bytes):
        self.outcome, self.issued, self.printed = outcome, issued, printed

    @property
    def failed(self) -> bool:
        return self.outcome[0] == "error"

    def deliver(self):
        if self.printed:
            os.write(2, self.printed)
        for message, category, filename, lineno in self.issued:
            warnings.warn_explicit(message, category, filename, lineno)
        kind, value = self.outcome
        if kind == "error":
            raise value
        return value


def _receive(pid, read_end, output, name) -> Received:
    _reap()
    with os.fdopen(read_end, "rb") as f:
        data = f.read()
    if data:  # the child is done: its exit (unmapping its MLIR memory, ~3-5 ms) need not be waited for
        status = None
        _reap(pid)
    else:
        _, status = os.waitpid(pid, 0)
    output.seek(0)
    printed = output.read()
    output.close()
    if not data:
        raise CompilerCrash(_crash_message(name, status, printed.decode("utf-8", "replace")),
                            compiler_output=printed.decode("utf-8", "replace"))
    outcome, issued, loaded = pickle.loads(data)
    _loaded_by_children.update(m for m in loaded if m not in sys.modules)
    return Received(outcome, issued, printed)


_exiting: list = []  # compile processes that sent their result and may still be exiting


def _reap(pid: int | None = None) -> None:
    """Collects the compile processes that have exited (without waiting), `pid` among them if given."""
    if pid is not None:
        _exiting.append(pid)
    for child in list(_exiting):
        try:
            done, _ = os.waitpid(child, os.WNOHANG)
        except ChildProcessError:  # collected elsewhere (os.wait()), or a forked copy of this list
            done = child
        if done:
            _exiting.remove(child)


def _portable(e: BaseException) -> BaseException:
    """`e` if it pickles (with the child's traceback as a note), else a CompileError with its text."""
    if not isinstance(e, CompileError):
        e.add_note("compiler traceback (in the compile process):\n" + "".join(traceback.format_tb(e.__traceback__)))
    try:
        pickle.loads(pickle.dumps(e))
        return e
    except Exception:  # noqa: BLE001
        return CompileError(f"{type(e).__name__}: {e}")


def _crash_message(name, status, printed: str) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        how = f"was killed by {signal.Signals(sig).name}" if sig in signal.Signals._value2member_map_ else \
            f"was killed by signal {sig}"
    else:
        how = f"exited with status {os.WEXITSTATUS(status)}"
    said = crash_reason(printed)
    return (f"the compiler crashed compiling kernel '{name}': its process {how}" + (f": {said}" if said else "") +
            ". This is a compiler bug (in mlwarp, MLIR or LLVM): please report the kernel")


def crash_reason(printed: str) -> str:
    """The line of a crashed compile's output that says why (an assertion, an LLVM ERROR), else its last line."""
    lines = [line.strip() for line in printed.splitlines() if line.strip()]
    for line in lines:
        if "Assertion" in line or "LLVM ERROR" in line or "UNREACHABLE" in line:
            return line[:400]
    return lines[-1][:400] if lines else ""
