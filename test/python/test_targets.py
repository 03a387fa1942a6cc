"""Each target's stage table is built by one function from the build options; every variant is an explicit
entry (the expected tables are written out here, not derived from another table)."""

import pytest

from mlwarp.compiler.targets.cpu.cpu_vector_math import host_isas
from mlwarp.compiler.targets import BuildOptions, stage_table

CPU_RELEASE = ["warp", "warp-opt", "autodiff", "asserts", "tiles", "lowered", "tiles-to-llvm", "parts", "llvm", "llvm-ir",
               "object", "library"]
CUDA_RELEASE = ["warp", "warp-opt", "autodiff", "asserts", "tiles", "lowered", "tiles-to-llvm", "nvvm", "ptx", "cubin"]


def names(table):
    return [s.name for s in table]


def passes(table, stage):
    """A stage's entries as pipeline text (an mlwarp pass object prints so, upstream entries are text)."""
    return [str(p) for s in table if s.name == stage for p in s.passes]


def test_release_tables_and_their_artifact_stages():
    cpu, cuda = stage_table("cpu"), stage_table("cuda")
    assert names(cpu) == CPU_RELEASE and names(cuda) == CUDA_RELEASE
    assert [s.name for s in cpu if s.emit] == ["parts", "llvm-ir", "object", "library"]
    assert [(s.name, s.only_if) for s in cpu if s.only_if] == [("tiles", "warp.tiles"), ("tiles-to-llvm", "warp.tiles")]
    assert [s.name for s in cuda if s.emit] == ["ptx", "cubin"]
    assert passes(cpu, "autodiff") == ["warp-autodiff", "warp-inline", "warp-expand-geometry", "canonicalize", "cse"]
    assert passes(cuda, "autodiff") == ["warp-autodiff{tape-bytes=0}", "warp-inline", "warp-expand-geometry",
                                        "canonicalize", "cse"]
    assert passes(cpu, "asserts") == passes(cuda, "asserts") == ["warp-strip-asserts"]  # (debug: bounds-check)
    assert "warp-cpu-entry" in passes(cpu, "lowered") and "warp-gpu-kernel" not in passes(cpu, "lowered")
    assert passes(cuda, "lowered") == ["convert-warp-composites-to-vector", "convert-warp-builtins-to-arith",
                                       "convert-warp-arrays-to-llvm", "warp-gpu-kernel", "convert-warp-native-calls",
                                       "canonicalize{top-down=false}", "cse"]
    assert passes(cpu, "llvm")[-1] == "warp-cpu-vector-math"
    assert passes(cuda, "nvvm")[0] == "nvvm-attach-target{chip=sm_90 O=3}"
    assert passes(stage_table("cuda", BuildOptions(arch=80)), "nvvm")[0] == "nvvm-attach-target{chip=sm_80 O=3}"
    assert names(stage_table("cuda", BuildOptions(cubin=False))) == CUDA_RELEASE[:-1]


def test_debug_jvp_and_no_avx512_variants():
    debug = stage_table("cpu", BuildOptions.of({"mode": "debug"}))
    assert names(debug) == ["warp", "warp-opt", "autodiff", "bounds-check", "tiles", "lowered", "tiles-to-llvm",
                            "parts", "llvm", "llvm-ir", "object", "library"]
    assert passes(debug, "bounds-check") == ["warp-bounds-check"]
    assert passes(debug, "llvm")[-1] == "ensure-debug-info-scope-on-llvm-func{emission-kind=LineTablesOnly}"
    cuda_debug = stage_table("cuda", BuildOptions.of({"mode": "debug"}))
    assert names(cuda_debug) == ["warp", "warp-opt", "autodiff", "bounds-check", "tiles", "lowered", "tiles-to-llvm", "nvvm",
                                 "ptx", "cubin"]
    assert passes(cuda_debug, "nvvm")[-1] == "ensure-debug-info-scope-on-llvm-func{emission-kind=DebugDirectivesOnly}"
    jvp = BuildOptions.of({"jvp": True})
    assert (jvp.jvp, jvp.backward) == (True, False)
    for target in ("cpu", "cuda"):
        assert passes(stage_table(target, jvp), "autodiff") == ["warp-jvp", "warp-inline", "warp-expand-geometry",
                                                                "canonicalize", "cse"]
    assert BuildOptions.of({"enable_backward": False}).backward is False
    no_avx512 = passes(stage_table("cpu", BuildOptions.of({"no_avx512": True})), "llvm")[-1]
    expected = ",".join(i for i in host_isas() if i != "avx512") or "none"
    assert no_avx512 == f"warp-cpu-vector-math{{isa={expected}}}" and "avx512" not in no_avx512.split("=")[1]


def test_unknown_target():
    with pytest.raises(ValueError, match=r"^unknown target 'tpu'; targets: cpu, cuda$"):
        stage_table("tpu")


def test_gathers_left_out_on_cpus_where_they_are_slow():
    # AMD Zen's gathers are slower than the lanes' scalar loads (object_code.SLOW_GATHER_CPUS): LLVM is told to
    # prefer scalar loads there; other CPUs keep LLVM's own choice
    from mlwarp.compiler.targets.cpu.object_code import host_target, tuned_features

    assert tuned_features(b"znver4", b"+avx2,+avx512f") == b"+avx2,+avx512f,+prefer-no-gather"
    assert tuned_features(b"znver2", b"") == b"+prefer-no-gather"
    assert tuned_features(b"sapphirerapids", b"+avx2,+avx512f") == b"+avx2,+avx512f"
    assert tuned_features(b"skylake", b"+avx2") == b"+avx2"
    _, cpu, features, _ = host_target()
    assert features.endswith(b",+prefer-no-gather") == cpu.startswith(b"znver")


def test_adjoint_only_libraries_leave_the_kernels_own_entries_out():
    # a kernel's with_adjoint library (autodiff/adjoint.py) holds its adjoint's entries only: the kernel's own
    # library runs it forward
    table = stage_table("cpu", BuildOptions.of({"with_adjoint": True}))
    assert "warp-cpu-entry{adjoint-only=true}" in passes(table, "lowered")
    assert "warp-cpu-entry" in passes(stage_table("cpu", BuildOptions.of({})), "lowered")
    assert not BuildOptions.of({"with_adjoint": True, "jvp": True}).adjoint_only


def test_an_adjoint_library_has_no_forward_entry():
    import ctypes

    import numpy as np

    import mlwarp as wp
    from mlwarp.autodiff.adjoint import adjoint_kernel, with_adjoint

    @wp.kernel
    def cube(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        wp.atomic_add(y, 0, x[i] * x[i] * x[i])

    x = wp.array(np.arange(4, dtype=np.float32), requires_grad=True)
    y = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(cube, 4, inputs=[x, y])
    tape.backward(loss=y)
    np.testing.assert_allclose(x.grad.numpy(), 3.0 * np.arange(4) ** 2)
    device = wp.get_device("cpu")
    meta = with_adjoint(cube).compiled(device).meta
    assert meta["entry"] == meta["adj_entry"] == "cube_adj_cpu"
    library = ctypes.CDLL(f"{meta['dir']}/{meta['library']}")
    assert not hasattr(library, "cube_cpu") and adjoint_kernel(cube, device) is with_adjoint(cube).compiled(device)
