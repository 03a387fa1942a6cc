"""@wp.func_native for CUDA, compile-checked without a GPU: nvcc compiles the snippets (their `__CUDA_ARCH__`
branch) to PTX for sm_90, which joins the kernel's PTX, and ptxas assembles the whole into a cubin; a snippet
nvcc refuses is a CompileError at the user's line. (test_func_native.py runs snippets on the CPU.)"""

import re

import pytest

import mlwarp as wp
from mlwarp.compiler.driver_cuda import compile_cuda
from mlwarp.compiler.native.toolchain import nvcc_path
from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path

pytestmark = pytest.mark.skipif(nvcc_path() is None, reason="nvcc (the nvidia-cuda-nvcc wheel) is not installed")

F32_1D = wp.types.ArrayT(wp.float32, 1)


@wp.func_native("""
#if defined(__CUDA_ARCH__)
    return __fsqrt_rn(x);
#else
    return -1.0f;
#endif
""", adj_snippet="adj_x += 0.5f / sqrtf(x) * adj_ret;")
def rounded_sqrt(x: float) -> float: ...


@wp.func_native("""
    __shared__ float s[128];
    s[threadIdx.x % 128] = x[tid];
    __syncthreads();
    out[tid] = s[(threadIdx.x + 1) % 128] * v[2];
""")
def shared_shift(x: wp.array[float], out: wp.array[float], tid: int, v: wp.vec3): ...


def sqrt_and_shift(d: wp.array[float], o: wp.array[float]):
    i = wp.tid()
    d[i] = rounded_sqrt(d[i])
    shared_shift(d, o, i, wp.vec3(1.0, 2.0, 3.0))


def test_snippets_join_the_kernels_ptx_and_assemble(tmp_path):
    meta = compile_cuda(wp.kernel(sqrt_and_shift, module="unique").func, {"d": F32_1D, "o": F32_1D},
                        str(tmp_path), 90)
    ptx = (tmp_path / meta["ptx"]).read_text()
    entries = re.findall(r"^\.visible \.func (wp_native_\w+)\(", ptx, re.M)
    assert sorted(e.split("_")[2] for e in entries) == ["rounded", "rounded", "shared"]  # forward, adjoint, forward
    assert not re.search(r"\.extern\s+\.func", ptx)  # every entry the kernel calls is defined in the module
    assert "sqrt.rn.f32" in ptx  # the snippet's CUDA branch (__fsqrt_rn), not its CPU fallback
    assert "bar.sync" in ptx and ".shared" in ptx
    assert len(re.findall(r"^\.version", ptx, re.M)) == 1 and ".target sm_90" in ptx
    for entry in set(entries):
        assert re.search(rf"call\.uni\s+{entry},", ptx), entry  # the kernel and its adjoint call them
    if ptxas_path() is not None:
        assert meta["cubin"] == "kernel.cubin" and (tmp_path / "kernel.cubin").stat().st_size > 0


def test_snippet_refused_by_nvcc_names_the_users_line(tmp_path):
    @wp.func_native("""
    return __no_such_intrinsic(x);
""")
    def broken(x: float) -> float: ...

    def calls_broken(a: wp.array[float]):
        a[0] = broken(a[0])

    line = broken.func.__code__.co_firstlineno + 1  # the decorator's line, then the snippet's `return`
    with pytest.raises(wp.CompileError) as info:
        compile_cuda(wp.kernel(calls_broken, module="unique").func, {"a": F32_1D}, str(tmp_path), 90)
    assert (info.value.filename, info.value.lineno) == (__file__, line)
    assert str(info.value).startswith(f"{__file__}:{line}: in 'broken': the native snippet of 'broken' does not "
                                      f"compile (nvcc): identifier \"__no_such_intrinsic\" is undefined")
