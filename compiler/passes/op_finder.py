"""The native half of ir_walk.ops_named: a walk that collects the ops of some names without calling Python per op.

The passes look ops up by name (ir_walk.ops_named) some 30 times a compile, each a walk of the whole module: MLIR's
Python walk calls back into Python for every op (a bindings object made, its name read and compared), ~2 us an op,
and a large kernel's module holds tens of thousands (diffray's draw adjoint: 0.4 s of its 2.6 s of passes in
walks). Here the walk is MLIR's own (`mlirOperationWalk`, C API) with a callback in native code that compares each
op's name (`mlirOperationGetName`: a uniqued identifier, so a pointer compare) with the wanted names' identifiers and
keeps the matching ops' pointers; Python then wraps only those (`ir.Operation._CAPICreate`).

The callback is the small LLVM-dialect module SOURCE, compiled by the kernels' own LLVM and linker (object_code.py)
into a shared library once per machine, as the CPU thread pool is (runtime/cpu_pool.py): at install into the library
cache (`<library>/op-finder-<key>/op_finder.so`, python -m mlwarp.kernels.precompile), else on first use into the
library cache where it can be written, else the kernel cache. It takes the C API's functions as arguments (the
bindings load that library privately), so it links against nothing. Where it cannot be built or loaded (no linker,
not x86-64 Linux), `find` returns None and ops_named walks in Python.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import sys

from mlir import _mlir_libs, ir

from mlwarp.core.host import cpu_flags
from mlwarp.runtime import cache

from ..native import llvm_library

# The walk's state: the C API's mlirOperationGetName, the wanted identifiers and their count, the buffer of found
# ops, its capacity, and the number found (which may pass the capacity: the walk is then run again, larger).
_STATE = "!llvm.struct<(ptr, ptr, i64, ptr, i64, i64)>"

SOURCE = """
module {
  llvm.func @mlwarp_op_finder_visit(%op: !llvm.ptr, %state: !llvm.ptr) -> i32 {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %advance = llvm.mlir.constant(0 : i32) : i32
    %get_name = llvm.load %state : !llvm.ptr -> !llvm.ptr
    %name = llvm.call %get_name(%op) : !llvm.ptr, (!llvm.ptr) -> !llvm.ptr
    %names_at = llvm.getelementptr %state[0, 1] : (!llvm.ptr) -> !llvm.ptr, STATE
    %names = llvm.load %names_at : !llvm.ptr -> !llvm.ptr
    %count_at = llvm.getelementptr %state[0, 2] : (!llvm.ptr) -> !llvm.ptr, STATE
    %count = llvm.load %count_at : !llvm.ptr -> i64
    llvm.br ^loop(%c0 : i64)
  ^loop(%i: i64):
    %done = llvm.icmp "sge" %i, %count : i64
    llvm.cond_br %done, ^next, ^test
  ^test:
    %at = llvm.getelementptr %names[%i] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.ptr
    %wanted = llvm.load %at : !llvm.ptr -> !llvm.ptr
    %same = llvm.icmp "eq" %wanted, %name : !llvm.ptr
    %i1 = llvm.add %i, %c1 : i64
    llvm.cond_br %same, ^found, ^loop(%i1 : i64)
  ^found:
    %out_at = llvm.getelementptr %state[0, 3] : (!llvm.ptr) -> !llvm.ptr, STATE
    %out = llvm.load %out_at : !llvm.ptr -> !llvm.ptr
    %cap_at = llvm.getelementptr %state[0, 4] : (!llvm.ptr) -> !llvm.ptr, STATE
    %cap = llvm.load %cap_at : !llvm.ptr -> i64
    %len_at = llvm.getelementptr %state[0, 5] : (!llvm.ptr) -> !llvm.ptr, STATE
    %len = llvm.load %len_at : !llvm.ptr -> i64
    %fits = llvm.icmp "slt" %len, %cap : i64
    llvm.cond_br %fits, ^keep, ^counted
  ^keep:
    %slot = llvm.getelementptr %out[%len] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.ptr
    llvm.store %op, %slot : !llvm.ptr, !llvm.ptr
    llvm.br ^counted
  ^counted:
    %len1 = llvm.add %len, %c1 : i64
    llvm.store %len1, %len_at : i64, !llvm.ptr
    llvm.br ^next
  ^next:
    llvm.return %advance : i32
  }
  llvm.func @mlwarp_find_ops(%root: !llvm.ptr, %walk: !llvm.ptr, %state: !llvm.ptr) -> i64 {
    %visit = llvm.mlir.addressof @mlwarp_op_finder_visit : !llvm.ptr
    %pre_order = llvm.mlir.constant(0 : i32) : i32
    llvm.call %walk(%root, %visit, %state, %pre_order) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr, i32) -> ()
    %len_at = llvm.getelementptr %state[0, 5] : (!llvm.ptr) -> !llvm.ptr, STATE
    %len = llvm.load %len_at : !llvm.ptr -> i64
    llvm.return %len : i64
  }
}
""".replace("STATE", _STATE)


class _State(ctypes.Structure):
    _fields_ = [("get_name", ctypes.c_void_p), ("names", ctypes.c_void_p), ("count", ctypes.c_int64),
                ("out", ctypes.c_void_p), ("capacity", ctypes.c_int64), ("found", ctypes.c_int64)]


class _StringRef(ctypes.Structure):  # MlirStringRef
    _fields_ = [("data", ctypes.c_char_p), ("length", ctypes.c_size_t)]


_OPERATION_CAPSULE = b"mlir.ir.Operation._CAPIPtr"  # (kept alive: a capsule holds a pointer to its name)


def supported() -> bool:
    """The library is built for x86-64 Linux, as the CPU kernels are."""
    return sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


def entry_name() -> str:
    """The library's folder in a cache (the kernel cache or the library cache): its source and the host CPU."""
    host = platform.machine() + " " + " ".join(cpu_flags())
    return f"op-finder-{hashlib.sha256((SOURCE + host).encode()).hexdigest()[:20]}"


def build_into(folder: str, write_object) -> str:
    """The library's path under `folder`, built there first when missing (`write_object`: the CPU target's,
    object_code.py, which the passes cannot import: it runs passes)."""
    path = os.path.join(folder, entry_name(), "op_finder.so")
    if not os.path.exists(path):
        llvm_library.build(SOURCE, path, write_object)
    return path


class _Finder:
    def __init__(self, path: str):
        self.find_ops = ctypes.CDLL(path).mlwarp_find_ops
        self.find_ops.argtypes, self.find_ops.restype = [ctypes.c_void_p] * 3, ctypes.c_int64
        capi = ctypes.CDLL(os.path.join(os.path.dirname(_mlir_libs.__file__), "libMLIRPythonCAPI.so"))
        self.walk = ctypes.cast(capi.mlirOperationWalk, ctypes.c_void_p).value
        self.get_name = ctypes.cast(capi.mlirOperationGetName, ctypes.c_void_p).value
        self.context_of = capi.mlirOperationGetContext
        self.context_of.argtypes, self.context_of.restype = [ctypes.c_void_p], ctypes.c_void_p
        self.identifier = capi.mlirIdentifierGet
        self.identifier.argtypes, self.identifier.restype = [ctypes.c_void_p, _StringRef], ctypes.c_void_p
        # (a handle of its own: ctypes.pythonapi's functions are shared, and others give them other argtypes, as
        # jax.ffi does PyCapsule_New's destructor)
        api = ctypes.PyDLL(ctypes.pythonapi._name, handle=ctypes.pythonapi._handle)
        self.capsule_pointer = api.PyCapsule_GetPointer
        self.capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        self.capsule_pointer.restype = ctypes.c_void_p
        self.new_capsule = api.PyCapsule_New
        self.new_capsule.argtypes, self.new_capsule.restype = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p], \
            ctypes.py_object
        self.capacity = 1024
        self.buffer = (ctypes.c_void_p * self.capacity)()

    def find(self, root, names) -> list:
        root_pointer = self.capsule_pointer(root.operation._CAPIPtr, _OPERATION_CAPSULE)
        context = self.context_of(root_pointer)
        # (the identifiers again each search: cheap, and a context freed and another made at its address would make
        # kept ones stale)
        encoded = [name.encode() for name in names]
        wanted = (ctypes.c_void_p * len(encoded))(*(self.identifier(context, _StringRef(n, len(n))) for n in encoded))
        while True:
            state = _State(self.get_name, ctypes.addressof(wanted), len(encoded), ctypes.addressof(self.buffer),
                           self.capacity, 0)
            found = self.find_ops(root_pointer, self.walk, ctypes.byref(state))
            if found <= self.capacity:
                break
            self.capacity = found * 2
            self.buffer = (ctypes.c_void_p * self.capacity)()
        create, capsule = ir.Operation._CAPICreate, self.new_capsule
        return [create(capsule(pointer, _OPERATION_CAPSULE, None)) for pointer in self.buffer[:found]]


_finder: _Finder | None = None
_failed: str | None = None


def prepare(write_object=None) -> None:
    """Loads the library once a process: the library cache's, else one built before (_build_folder), else, given
    `write_object` (the compiler's import: compiler/driver.py), one built now. In the process that forks the compile
    processes, which inherit it."""
    global _finder, _failed
    if _finder is not None or _failed is not None:
        return
    try:
        if not supported():
            raise OSError(f"no native op finder on {sys.platform}/{platform.machine()}")
        path = os.path.join(cache.library_dir(), entry_name(), "op_finder.so")
        if not os.path.exists(path):
            folder = _build_folder()
            path = build_into(folder, write_object) if write_object is not None else \
                os.path.join(folder, entry_name(), "op_finder.so")
        _finder = _Finder(path)
    except Exception as e:  # noqa: BLE001 (no linker, an unwritable cache: ops_named walks in Python)
        _failed = f"{type(e).__name__}: {e}"


def _build_folder() -> str:
    """Where a process builds the library the library cache lacks: there, when it can be written (it is the
    installation's, as the compiler is), else the kernel cache (whose folders are then the kernels' and this one)."""
    folder = cache.library_dir()
    try:
        os.makedirs(folder, exist_ok=True)
        if os.access(folder, os.W_OK):
            return folder
    except OSError:
        pass
    return cache.cache_dir()


def find(root, names) -> list | None:
    """The ops under `root` (itself included) named one of `names`, in pre-order; None without the library."""
    global _finder, _failed
    if _finder is None:
        if _failed is not None:
            return None
        prepare()
        if _finder is None:
            return None
    try:
        return _finder.find(root, names)
    except Exception as e:  # noqa: BLE001 (a speed-up: the passes walk in Python from now on)
        _finder, _failed = None, f"{type(e).__name__}: {e}"
        return None


def unavailable_reason() -> str | None:
    """Why `find` returns None (after prepare), else None."""
    return _failed
