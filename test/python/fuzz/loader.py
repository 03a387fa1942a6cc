"""Generated kernels must live in real files (the frontend reads source with `inspect`): each program is
written to its own module in a temporary folder and imported."""

from __future__ import annotations

import importlib.util
import itertools
import os
import tempfile

_folder = None
_count = itertools.count()


def load_kernel(source_for_name):
    """Writes `source_for_name(name)` to a new module and returns (kernel, path)."""
    global _folder
    if _folder is None:
        _folder = tempfile.mkdtemp(prefix="mlwarp-fuzz-")
    name = f"fuzz_{os.getpid()}_{next(_count)}"
    path = os.path.join(_folder, name + ".py")
    with open(path, "w") as f:
        f.write(source_for_name(name))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name), path


def load_module(source: str):
    """Writes `source` to a new module and returns (module, path): several kernels in one module."""
    global _folder
    if _folder is None:
        _folder = tempfile.mkdtemp(prefix="mlwarp-fuzz-")
    name = f"fuzz_{os.getpid()}_{next(_count)}"
    path = os.path.join(_folder, name + ".py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path
