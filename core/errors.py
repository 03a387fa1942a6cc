"""Exceptions raised to users. A leaf module: the compiler and the runtime raise these."""


class CompileError(RuntimeError):
    """A kernel or function the compiler refuses; the message names the user's file and line and ends with the
    reason (as Warp's do); the source line is a note, which tracebacks print below the message."""

    def __init__(self, message, filename=None, lineno=None, source_line=None, function=None):
        self.reason = message
        self.filename = filename
        self.lineno = lineno
        self.function = function
        where = f"{filename}:{lineno}: " if filename else ""
        what = f"in '{function}': " if function else ""
        self.source_line = source_line.strip() if source_line else None
        super().__init__(f"{where}{what}{message}")
        if self.source_line and not getattr(self, "__notes__", None):
            self.add_note(f"    {self.source_line}")


class CompileTypeError(CompileError, TypeError):
    """A typing error in a kernel (mismatched operand types, a variable changing type, ...)."""


class CompileValueError(CompileError, ValueError):
    """A kernel value the compiler refuses (a literal zero slice step, a value that does not fit where a kernel
    puts it: a slice assigned a vector of the wrong length): Warp's WarpCodegenValueError / ValueError."""


class CompileAttributeError(CompileError, AttributeError):
    """A name or attribute path in a kernel that resolves to nothing (Warp's WarpCodegenAttributeError)."""


class CompileKeyError(CompileError, KeyError):
    """A name in a kernel that is defined nowhere (Warp's WarpCodegenKeyError: "Referencing undefined symbol")."""

    __str__ = RuntimeError.__str__  # the message as given (KeyError's own would quote it)


class CompileIndexError(CompileError, IndexError):
    """A constant index out of range of a vector, matrix or quaternion in a kernel (Warp's WarpCodegenIndexError,
    an IndexError; Warp 1.19 defines it without raising it from its code generator)."""


class DeterminismError(RuntimeError):
    """Warp's WarpDeterminismError: a kernel that wp.config.deterministic cannot make deterministic. Warp raises
    it when its CUDA code generator cannot bound a deterministic atomic's records; mlwarp's deterministic CPU
    launches run on one thread in order and never need to raise it."""


class UnsupportedSyntaxError(CompileError):
    """Python syntax that kernels do not support (list comprehensions, lambdas, try, ...)."""


class LaunchError(RuntimeError):
    """Bad arguments to `wp.launch`, raised before anything runs."""


class KernelBoundsError(IndexError):
    """A debug-mode launch indexed an array out of bounds; the message names the kernel, the array argument,
    the index and the source line. Raised after the launch, which skipped the bad accesses."""


class KernelAssertionError(AssertionError):
    """A debug-mode launch met a false `assert` in a kernel (Warp's debug build aborts the process there); the
    message names the kernel, the statement, its source line and the first failing thread. Raised after the
    launch, which went on past the assert."""


class FloatingPointCheckError(FloatingPointError):
    """`wp.config.verify_fp`: a launch left a NaN or Inf in a float array argument."""


class CompilerWarning(UserWarning):
    """The compiler worked around a problem (e.g. built a kernel without AVX-512 after LLVM crashed on it)."""


# Users meet these as mlwarp.errors.* (tracebacks, pickles across the compile process): the name they import.
for _cls in (CompileError, CompileTypeError, CompileValueError, CompileIndexError, DeterminismError,
             UnsupportedSyntaxError, LaunchError, KernelBoundsError,
             KernelAssertionError, FloatingPointCheckError, CompilerWarning):
    _cls.__module__ = "mlwarp.errors"
del _cls
