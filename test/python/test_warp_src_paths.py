"""mlwarp/_src: the `warp._src` paths that libraries built on Warp import (docs/clients.md). References: the
appdirs 1.4.4 rules (XDG base directories, ~/Library, %LOCALAPPDATA%) and Warp's `warp._src.types` hints."""

import ast
import pathlib
import typing
from typing import Literal

import pytest

import mlwarp as wp
from mlwarp._src import types as src_types
from mlwarp._src.thirdparty import appdirs


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "LOCALAPPDATA", "APPDATA"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_posix_user_directories_follow_xdg(home, monkeypatch):
    monkeypatch.setattr("sys.platform", "linux")
    assert appdirs.user_cache_dir("newton", "newton-physics") == f"{home}/.cache/newton"
    assert appdirs.user_data_dir("app", version="1.2") == f"{home}/.local/share/app/1.2"
    assert appdirs.user_config_dir("app") == f"{home}/.config/app"
    assert appdirs.user_cache_dir() == f"{home}/.cache"
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg/cache")
    monkeypatch.setenv("XDG_DATA_HOME", "/xdg/data")
    monkeypatch.setenv("XDG_CONFIG_HOME", "/xdg/config")
    assert appdirs.user_cache_dir("warp", "NVIDIA", "1.19.0") == "/xdg/cache/warp/1.19.0"
    assert appdirs.user_data_dir("app") == "/xdg/data/app"
    assert appdirs.user_config_dir("app", version="3") == "/xdg/config/app/3"


def test_macos_user_directories(home, monkeypatch):
    monkeypatch.setattr("sys.platform", "darwin")
    assert appdirs.user_cache_dir("newton", "newton-physics") == f"{home}/Library/Caches/newton"
    assert appdirs.user_data_dir("app", version="2") == f"{home}/Library/Application Support/app/2"
    assert appdirs.user_config_dir("app") == f"{home}/Library/Application Support/app"


def test_windows_user_directories(home, monkeypatch):
    monkeypatch.setattr("sys.platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", "/Users/u/AppData/Local")
    monkeypatch.setenv("APPDATA", "/Users/u/AppData/Roaming")
    assert appdirs.user_cache_dir("newton", "newton-physics") == "/Users/u/AppData/Local/newton-physics/newton/Cache"
    assert appdirs.user_cache_dir("app", opinion=False, version="1") == "/Users/u/AppData/Local/app/app/1"
    assert appdirs.user_data_dir("app", False) == "/Users/u/AppData/Local/app"
    assert appdirs.user_config_dir("app", "acme", roaming=True) == "/Users/u/AppData/Roaming/acme/app"


def test_types_is_wp_types_with_any():
    assert src_types.Any is typing.Any
    assert src_types.type_length(wp.vec3) == 3
    assert src_types.type_scalar_type(wp.mat22d) is wp.float64
    assert src_types.Int is wp.types.Int


def test_subscript_hints_are_the_runtime_types():
    assert src_types.Vector[wp.float32, Literal[3]] is wp.vec3f
    assert src_types.Vector[float, 5] is wp.types.vector(5, wp.float32)
    assert src_types.Matrix[wp.float64, Literal[2], Literal[3]] is wp.types.matrix((2, 3), wp.float64)
    assert src_types.Quaternion[float] is wp.quatf
    assert src_types.Transformation[wp.float64] is wp.transformd


def test_subscript_hints_with_typevars_stay_generic_aliases():
    alias = src_types.Vector[typing.Any, src_types.Int]
    assert typing.get_origin(alias) is src_types.Vector
    assert typing.get_args(alias) == (typing.Any, src_types.Int)
    assert typing.get_origin(src_types.Quaternion[src_types.Float]) is src_types.Quaternion


@pytest.mark.parametrize("make, message", [
    (lambda: src_types.Vector[float], "Vector requires 2 parameters (dtype, length), got 1"),
    (lambda: src_types.Vector[float, 0], "Vector length must be a positive integer, got 0"),
    (lambda: src_types.Vector[float, Literal[2, 3]], "Expected a single Literal value, got Literal[2, 3]"),
    (lambda: src_types.Matrix[float, 2], "Matrix requires 3 parameters (dtype, rows, cols), got 2"),
    (lambda: src_types.Matrix[float, 2, -1], "Matrix cols must be a positive integer, got -1"),
    (lambda: src_types.Vector[str, 3], "<class 'str'> is not a Warp scalar type"),
])
def test_subscript_hint_errors(make, message):
    with pytest.raises(TypeError) as e:
        make()
    assert str(e.value) == message


def test_modules_import_mlwarp_by_absolute_path():
    # imported as `warp._src.x` through a `warp` alias, a relative import would load a second copy of an
    # mlwarp module under a `warp.*` name (a second set of types, a second runtime state)
    root = pathlib.Path(wp.__file__).parent / "_src"
    relative = [f"{path.name}:{node.lineno}" for path in sorted(root.rglob("*.py"))
                for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.ImportFrom) and node.level]
    assert relative == []


def test_submodules_read_as_attributes_once_under_the_warp_alias():
    # Warp's package imports warp._src.types, so `wp._src.types.int_types` works without an import of it; under
    # the `warp` alias the attribute is the module `import warp._src.types` gives (one copy, one `Vector`)
    import subprocess
    import sys

    code = ("import sys, mlwarp\nsys.modules['warp'] = mlwarp\nimport warp._src as src\n"
            "types = src.types\nimport warp._src.types as imported\n"
            "assert types is imported and types.__name__ == 'warp._src.types', types.__name__\n"
            "assert set(types.int_types) == set(mlwarp.types.int_types)\n"
            "assert src.thirdparty.__name__ == 'warp._src.thirdparty'\n"
            "assert src.codegen.WarpCodegenError is mlwarp.WarpCodegenError\n"
            "try:\n    src.builder\nexcept AttributeError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ("module 'warp._src' has no attribute 'builder' (mlwarp keeps only the internals "
                                  "clients use: docs/clients.md)")


def test_codegen_exceptions_and_reference_under_warps_internal_paths():
    # Warp defines its code generator's exceptions in warp._src.codegen and wp.ref[T]'s class in warp._src.types;
    # code catching them by those paths catches what mlwarp raises
    from mlwarp._src import codegen
    from mlwarp._src.types import Reference

    assert isinstance(wp.ref[wp.int32], Reference)
    assert issubclass(codegen.WarpCodegenTypeError, TypeError) and issubclass(codegen.WarpCodegenKeyError, KeyError)

    @wp.kernel
    def uses_undefined(out: wp.array(dtype=float)):
        out[0] = not_defined_anywhere  # noqa: F821

    with pytest.raises(codegen.WarpCodegenError, match="not_defined_anywhere"):
        wp.launch(uses_undefined, dim=1, inputs=[wp.zeros(1)], device="cpu")


def test_warps_type_tables_for_tests_and_clients():
    # warp/_src/types.py 1.19's tables (read there): 54 composite types in its order, numpy scalars and dtypes to
    # Warp's, Warp's to numpy's with bfloat16 as its uint16 bits, the four narrow integers atomics refuse
    import numpy as np

    import mlwarp as wp

    t = wp._src.types
    assert len(t.vector_types) == 54 and t.vector_types[:3] == (wp.vec2b, wp.vec2ub, wp.vec2s)
    assert t.vector_types[-3:] == (wp.spatial_matrixh, wp.spatial_matrixf, wp.spatial_matrixd)
    assert t.np_dtype_to_warp_type[np.float32] is wp.float32 and t.np_dtype_to_warp_type[np.dtype(np.byte)] is wp.int8
    assert t.warp_type_to_np_dtype[wp.bfloat16] is np.uint16 and t.warp_type_to_np_dtype[wp.handle] is np.uint64
    assert t.non_atomic_types == (wp.int8, wp.uint8, wp.int16, wp.uint16)
    assert t.array is wp.array and t.scalar_and_bool_types[-1] is wp.bool
    assert t.scalar_types == (wp.int8, wp.uint8, wp.int16, wp.uint16, wp.int32, wp.uint32, wp.int64, wp.uint64,
                              wp.float16, wp.bfloat16, wp.float32, wp.float64)  # no bool, in Warp's order
    assert t.int_types + t.float_types == t.scalar_types
    core = wp._src.context.runtime.core
    assert core.wp_is_mathdx_enabled() is False and core.wp_cuda_toolkit_version() == 0
