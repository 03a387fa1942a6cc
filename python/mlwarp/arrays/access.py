"""`wp.config.verify_autograd_array_access`: warnings for array overwrites that corrupt a Tape's gradients.

A kernel's adjoint replays its forward pass, reading its arrays again; an array that a recorded launch read
and a later launch (or a later statement of the same kernel) overwrote no longer holds what the replay needs.
With the setting on, as in Warp 1.19:

- each kernel's array arguments are sorted, from its source, into read and written ones; a store after a
  read of the same array argument in the kernel warns once, when the kernel is first analysed ("... is being
  written to after it has been read from within the same kernel ...");
- a launch recorded on a Tape marks the arrays the kernel reads (`array._is_read`, also on the arrays a view
  was taken of), and warns when it writes one already marked ("... has already been read from in a previous
  launch ..."); a recorded wp.copy marks its source read and warns for its destination;
- `Tape.backward()` and `Tape.reset()` clear the marks of the arrays the tape holds; `zero_()` / `fill_()` of
  an array clear its own.

The analysis follows Warp's codegen rules: reads are element loads `a[i, ...]` (all indices given) of an array
argument or of a view of one (`row = a[i]`), writes are stores into such elements (`a[i] = v`, `a[i].x = v`,
`a[i] += v`, whose load does not count as a read) and `wp.atomic_*` on the array; a `@wp.func` called with
the array passes on what it does to its parameter. As in Warp, the reads inside the left operand of a
binary operator do not count (so `x[i] = x[i] + 1.0` is a write only).
"""

from __future__ import annotations

import ast
import sys
import warnings

from mlwarp.core import types as wt
from mlwarp.config import config
from mlwarp.core.refs import copies_back
from mlwarp.core.source import function_source
from mlwarp.runtime.abi import ArrayParam

_ATOMICS = frozenset({"atomic_add", "atomic_sub", "atomic_min", "atomic_max", "atomic_and", "atomic_or",
                      "atomic_xor", "atomic_cas", "atomic_exch"})
_SAME_KERNEL = ("is being written to after it has been read from within the same kernel. This may corrupt "
                "gradient computation in the backward pass.")
_PREVIOUS_LAUNCH = ("has already been read from in a previous launch. This may corrupt gradient computation in "
                    "the backward pass.")


def warn(message: str) -> None:
    """Writes `message` to stderr as a UserWarning through the warnings machinery (so warning filters apply),
    every time: like Warp's, the repeat of an identical message is not swallowed."""
    def show(msg, category, filename, lineno, file=None, line=None):
        sys.stderr.write(f"Warning ({category.__name__}): {msg}\n")

    with warnings.catch_warnings():
        warnings.showwarning = show
        warnings.warn(message, UserWarning, stacklevel=3)


# -- the runtime marks -----------------------------------------------------------------------------
def mark_read(a) -> None:
    """Marks `a` and every array it is a view of as read by a recorded launch."""
    while getattr(a, "_wp_array_", False):  # (an aliasing array's _ref is its numpy source: the chain ends)
        a._is_read = True
        a = a._ref


def mark_write(a, arg_name=None, kernel_name=None, filename=None, lineno=None, operation=None) -> None:
    """Warns when `a`, about to be written by a recorded launch (or `operation`), was read by an earlier one."""
    if not a._is_read:
        return
    if arg_name is not None and kernel_name is not None and filename is not None and lineno is not None:
        where = f"passed to argument {arg_name} in kernel {kernel_name} at {filename}:{lineno} is being written to but"
    elif operation is not None and filename is not None and lineno is not None:
        where = f"is being written to by {operation} at {filename}:{lineno} but"
    else:
        where = "is being written to but"
    warn(f"Array {a} {where} {_PREVIOUS_LAUNCH}")


def clear_read_marks(arrays) -> None:
    """Clears the read marks of `arrays` and of the arrays they are views of."""
    for a in arrays:
        while getattr(a, "_wp_array_", False):
            a._is_read = False
            a = a._ref


def caller_location() -> tuple:
    """(file, line) of the innermost frame outside mlwarp, for warnings about a call the user made."""
    package = __name__.split(".")[0]
    frame = sys._getframe(1)
    while frame is not None and (frame.f_globals.get("__name__") or "").split(".")[0] == package:
        frame = frame.f_back
    return (None, None) if frame is None else (frame.f_code.co_filename, frame.f_lineno)


def check_launch(kernel, args) -> None:
    """A launch of `kernel` with `args` was recorded on a Tape: the written arrays are checked first (a
    kernel may write an array and then read it), then the read ones marked."""
    access = kernel_access(kernel)
    for i, (name, value) in enumerate(zip(kernel.arg_names, args)):
        if not wt.is_array(value) or value.is_annotation:  # (wp.array imports this module: no isinstance)
            continue
        if i in access.writes:
            mark_write(value, arg_name=name, kernel_name=kernel.key, filename=access.filename,
                       lineno=access.lineno)
        if i in access.reads:
            mark_read(value)


# -- what a kernel does to its array arguments ---------------------------------------------------------
class Access:
    """The indices of a function's array parameters it reads and writes; where it is defined."""

    def __init__(self, reads, writes, filename, lineno):
        self.reads, self.writes = frozenset(reads), frozenset(writes)
        self.filename, self.lineno = filename, lineno


def kernel_access(kernel) -> Access:
    """What `kernel` does to its array arguments (analysed once per kernel; the first analysis also warns
    about a write after a read in the kernel itself)."""
    found = kernel.__dict__.get("_array_access")
    if found is None:
        arrays = {i: p.ndim for i, p in enumerate(kernel.params) if isinstance(p, ArrayParam)}
        found = _analyse(kernel.func, kernel.key, arrays)
        kernel.__dict__["_array_access"] = found
    return found


_function_access: dict = {}


def _analyse(py_func, name, arrays: dict, functions=None) -> Access:
    """`arrays`: parameter index -> ndim (None: unknown) of the parameters that hold arrays; `functions`:
    parameter index -> the @wp.func passed to a `wp.Function` parameter."""
    src = function_source(py_func)
    fdef = src.tree.body[0]
    walker = _Walker(py_func, name, src, fdef, arrays, functions or {})
    for stmt in fdef.body:
        walker.visit(stmt)
    reads = [i for i, flag in walker.read_flags.items() if flag]  # as Warp: the flags at the end
    return Access(reads, walker.writes, src.filename, src.first_line)


def _callee_access(overload_func, key, arrays: dict, functions: dict) -> Access:
    memo = (overload_func, tuple(sorted(arrays.items())), tuple(sorted((i, id(f)) for i, f in functions.items())))
    found = _function_access.get(memo)
    if found is None:
        _function_access[memo] = Access((), (), "", 0)  # recursion guard
        found = _function_access[memo] = _analyse(overload_func, key, arrays, functions)
    return found


def _reference_arguments(callee, node) -> set:
    """The ids of the argument nodes of call `node` that some overload of @wp.func `callee` takes as wp.ref[T]."""
    found = set()
    for o in getattr(callee, "overloads", ()) if getattr(callee, "_wp_function_", False) else ():
        names = [p.name for p in o.params]
        refs = {n for n, a in zip(names, o.annotations) if copies_back(a)}
        found |= {id(a) for k, a in enumerate(node.args) if k < len(names) and names[k] in refs}
        found |= {id(kw.value) for kw in node.keywords if kw.arg in refs}
    return found


class _Walker(ast.NodeVisitor):
    """Visits a function body in evaluation order, tracking which locals are (views of) array parameters."""

    def __init__(self, py_func, name, src, fdef, arrays, functions):
        self.py_func, self.name, self.src = py_func, name, src
        params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
        self.env = {params[i]: (i, nd) for i, nd in arrays.items() if i < len(params)}  # local -> (root, ndim)
        self.functions = {params[i]: f for i, f in functions.items() if i < len(params)}  # wp.Function params
        self.params = params
        self.read_flags = {i: False for i in arrays}
        self.writes = set()
        self.lineno = src.first_line

    # -- marks
    def _read(self, root):
        self.read_flags[root] = True

    def _write(self, root, detailed=True):
        if self.read_flags[root] and config.verify_autograd_array_access:
            line = self.src.first_line + self.lineno - 1
            if detailed:
                warn(f"Array passed to argument {self.params[root]} in kernel {self.name} at "
                     f"{self.src.filename}:{line} {_SAME_KERNEL}")
            else:
                warn(f"Array {self.params[root]} {_SAME_KERNEL}")
        self.writes.add(root)

    # -- what an expression is: (root, ndim left) for an array or a view of one
    def _array_of(self, node):
        if isinstance(node, ast.Name):
            return self.env.get(node.id)
        if isinstance(node, ast.Subscript):
            base = self._array_of(node.value)
            if base is not None:
                root, nd = base
                k = len(node.slice.elts) if isinstance(node.slice, ast.Tuple) else 1
                if nd is not None and k < nd:
                    return root, nd - k
        return None

    def _element_root(self, node):
        """The root parameter when `node` is a subscript naming one element of a tracked array (all indices)."""
        if isinstance(node, ast.Subscript):
            base = self._array_of(node.value)
            if base is not None and self._array_of(node) is None:
                return base[0]
        return None

    def visit(self, node):
        if isinstance(node, ast.stmt):
            self.lineno = node.lineno
        return super().visit(node)

    # -- loads
    def visit_Subscript(self, node):
        self.visit(node.value)
        self.visit(node.slice)
        root = self._element_root(node)
        if root is not None:
            self._read(root)

    def visit_BinOp(self, node):
        saved = dict(self.read_flags)
        self.visit(node.left)
        self.read_flags = saved  # Warp's rule: reads in the left operand do not count
        self.visit(node.right)

    # -- stores
    def _store(self, target, alias=None):
        """A store into `target` (an element, a component of one, or a local name: then `alias`, the (root,
        ndim) of an array value stored, or None)."""
        if isinstance(target, ast.Name):
            if alias is not None:
                self.env[target.id] = alias
            else:
                self.env.pop(target.id, None)
            return
        node = target
        while isinstance(node, ast.Attribute):
            node = node.value
        if isinstance(node, ast.Subscript):
            # the indices are loads; the element (or the composite holding the component) is stored
            chain = node
            while isinstance(chain, ast.Subscript) and self._element_root(chain) is None and \
                    self._array_of(chain.value) is None:
                self.visit(chain.slice)
                chain = chain.value
            if isinstance(chain, ast.Subscript) and self._element_root(chain) is not None:
                self.visit(chain.slice)
                self.visit(chain.value)
                self._write(self._element_root(chain))
                return
            self.visit(node)  # a local composite's component: its subscripts may read arrays
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._store(t)

    def visit_Assign(self, node):
        self.visit(node.value)
        alias = self._array_of(node.value)
        for target in node.targets:
            self._store(target, alias)

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.visit(ast.Assign(targets=[node.target], value=node.value))

    def visit_AugAssign(self, node):
        self.visit(node.value)
        self._store(node.target)  # its load is part of the write, not a read

    # -- calls
    def _resolve(self, node):
        f = self.py_func
        if isinstance(node, ast.Name) and node.id in self.functions:
            return self.functions[node.id]
        if isinstance(node, ast.Name):
            if f.__code__.co_freevars and node.id in f.__code__.co_freevars and f.__closure__:
                try:
                    return f.__closure__[f.__code__.co_freevars.index(node.id)].cell_contents
                except ValueError:
                    return None
            return f.__globals__.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self._resolve(node.value)
            return getattr(base, node.attr, None) if base is not None else None
        return None

    def visit_Call(self, node):
        callee = self._resolve(node.func)
        by_ref = _reference_arguments(callee, node)
        for a in [*node.args, *(k.value for k in node.keywords)]:
            if id(a) in by_ref and not isinstance(a, ast.Name):
                self._store(a)  # a wp.ref[T] argument: written back, as `a[i] += ...` (its load is the write's)
            else:
                self.visit(a)
        fname = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if getattr(callee, "_wp_function_", False):
            self._call_function(callee, node)
        elif fname in _ATOMICS and node.args:
            base = self._array_of(node.args[0])
            if base is not None:
                self._write(base[0], detailed=False)

    def _call_function(self, callee, node):
        passed = {i: self._array_of(a) for i, a in enumerate(node.args)}
        by_name = {k.arg: self._array_of(k.value) for k in node.keywords if k.arg}
        functions = {i: f for i, f in enumerate(self._resolve(a) for a in node.args)
                     if getattr(f, "_wp_function_", False)}
        for overload in callee.overloads:
            names = [p.name for p in overload.params]
            if len(names) < len(node.args):
                continue
            bound = dict(passed)
            for n, v in by_name.items():
                if n in names:
                    bound[names.index(n)] = v
            arrays = {}
            for i, v in bound.items():
                if v is not None:
                    ann = overload.annotations[i] if i < len(overload.annotations) else None
                    nd = getattr(ann, "ndim", None) if wt.is_array(ann) else None
                    arrays[i] = nd if isinstance(nd, int) else v[1]
            if not arrays:
                continue
            access = _callee_access(overload.func, callee.key, arrays, functions)
            for i in arrays:
                root = bound[i][0]
                if i in access.writes:
                    self._write(root)
                if i in access.reads:
                    self._read(root)

    # -- scopes that are not the kernel's
    def visit_FunctionDef(self, node):
        pass

    visit_Lambda = visit_ClassDef = visit_AsyncFunctionDef = visit_FunctionDef
