"""Where the compiler finds ptxas: $MLWARP_PTXAS, then the nvidia-cuda-nvcc wheel (the test extra installs it,
so the PTX tests run on every machine, with or without a CUDA toolkit), then PATH."""

import os
import subprocess
from importlib import metadata

import pytest

from mlwarp.compiler.targets.cuda import cuda_tools
from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path


def _wheel_ptxas() -> str:
    """ptxas as the nvidia-cuda-nvcc distribution's own file list names it."""
    dist = metadata.distribution("nvidia-cuda-nvcc")
    (path,) = [f for f in dist.files if f.name == "ptxas" and f.parent.name == "bin"]
    return os.path.realpath(dist.locate_file(path))


def _fake_tool(folder, name="ptxas"):
    folder.mkdir(exist_ok=True)
    tool = folder / name
    tool.write_text("#!/bin/sh\necho fake\n")
    tool.chmod(0o755)
    return str(tool)


def test_the_wheel_comes_before_path(tmp_path, monkeypatch):
    monkeypatch.delenv("MLWARP_PTXAS", raising=False)
    monkeypatch.setenv("PATH", os.path.dirname(_fake_tool(tmp_path / "bin")))  # another ptxas on PATH
    found = ptxas_path()
    assert os.path.realpath(found) == _wheel_ptxas()
    out = subprocess.run([found, "--version"], capture_output=True, text=True, check=True).stdout
    assert "release 13.0" in out  # the CUDA version the compiler targets (pyproject's ptxas extra)


def test_the_environment_variable_comes_first(tmp_path, monkeypatch):
    tool = _fake_tool(tmp_path / "mine")
    monkeypatch.setenv("MLWARP_PTXAS", tool)
    assert ptxas_path() == tool


def test_path_without_the_wheel(tmp_path, monkeypatch):
    monkeypatch.delenv("MLWARP_PTXAS", raising=False)
    monkeypatch.setattr(cuda_tools, "_WHEEL_PTXAS", ())  # as where the wheel is not installed
    tool = _fake_tool(tmp_path / "bin")
    monkeypatch.setenv("PATH", os.path.dirname(tool))
    assert ptxas_path() == tool


def test_the_ptx_tests_find_ptxas_with_no_cuda_on_path(monkeypatch):
    """The CUDA toolkit's folders off PATH (a machine without it): the PTX tests still find ptxas."""
    monkeypatch.delenv("MLWARP_PTXAS", raising=False)
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    path = [d for d in os.environ["PATH"].split(os.pathsep) if not os.path.exists(os.path.join(d, "ptxas"))]
    monkeypatch.setenv("PATH", os.pathsep.join(path))
    found = ptxas_path()
    assert found is not None, "ptxas not found without a CUDA toolkit on PATH: is the test extra installed?"
    assert os.path.realpath(found) == _wheel_ptxas()


def test_ptx_calling_an_undefined_function_is_refused_with_its_name():
    from mlwarp.compiler.targets.cuda.gpu_binary import GpuCompileError, check_ptx

    ptx = b".version 8.0\n.target sm_90\n.extern .func (.param .b64 r) __nv_madeup(.param .b64 x);\n" \
          b".extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);\n"
    with pytest.raises(GpuCompileError, match=r"PTX calls external function\(s\) \['__nv_madeup'\] that no library "
                                              r"defines \(libdevice, which the MLIR wheel embeds, has no such"):
        check_ptx(ptx)
    check_ptx(b".extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);\n")  # the driver's own
