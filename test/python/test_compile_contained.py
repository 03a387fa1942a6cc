"""Compiles run in a child process (compiler/contained.py): a crash inside the compiler (an LLVM or MLIR
assertion aborts the process that runs it) is a Python exception in the user's process, which goes on;
compile errors and warnings come back as themselves."""

import os
import warnings

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.compiler.targets.cpu import artifacts as cpu_artifacts
from mlwarp.compiler.targets.cpu import table as cpu_target
from mlwarp.compiler.contained import CompilerCrash


def test_an_abort_inside_the_compiler_is_an_exception_and_the_process_goes_on(monkeypatch):
    monkeypatch.setattr(cpu_target, "link", lambda *args, **kwargs: os.abort())  # as an LLVM assertion would

    @wp.kernel
    def crashes_the_compiler(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = 1.0

    with pytest.raises(CompilerCrash, match=r"the compiler crashed compiling kernel 'crashes_the_compiler': its "
                                            r"process was killed by SIGABRT"):
        wp.launch(crashes_the_compiler, dim=2, inputs=[wp.zeros(2, dtype=float)])
    monkeypatch.undo()
    x = wp.zeros(2, dtype=float)
    wp.launch(crashes_the_compiler, dim=2, inputs=[x])  # the same kernel compiles once the bug is gone
    np.testing.assert_array_equal(x.numpy(), [1.0, 1.0])


def test_compile_errors_and_warnings_come_back_from_the_compile_process(monkeypatch):
    link = cpu_target.link

    def warning_link(*args, **kwargs):
        warnings.warn("a warning from inside the compiler", RuntimeWarning)
        return link(*args, **kwargs)

    monkeypatch.setattr(cpu_target, "link", warning_link)

    @wp.kernel
    def warns_while_compiling(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = 2.0

    with pytest.warns(RuntimeWarning, match="a warning from inside the compiler"):
        wp.launch(warns_while_compiling, dim=1, inputs=[wp.zeros(1, dtype=float)])

    @wp.kernel
    def refused(x: wp.array(dtype=float)):
        x[0] = undefined_name  # noqa: F821

    with pytest.raises(wp.WarpCodegenKeyError, match=r"test_compile_contained\.py:\d+: in 'refused': Referencing "
                                                     r"undefined symbol: undefined_name") as e:
        wp.launch(refused, dim=1, inputs=[wp.zeros(1, dtype=float)])
    assert e.value.filename.endswith("test_compile_contained.py") and e.value.function == "refused"


def test_a_kernel_that_crashes_llvm_with_avx512_is_rebuilt_without_it(monkeypatch):
    from mlwarp.compiler.targets.cpu.cpu_vector_math import host_isas

    write_object = cpu_artifacts.write_object  # (the object step the CPU table runs)

    def avx512_crashes(module, path):  # as LLVM's X86 shuffle combine did on some AVX-512 code
        if '"-avx512f"' not in str(module):
            os.abort()
        return write_object(module, path)

    monkeypatch.setattr(cpu_artifacts, "write_object", avx512_crashes)

    @wp.kernel
    def needs_the_fallback(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = wp.sin(x[i]) * 2.0

    x = np.linspace(-2.0, 2.0, 64).astype(np.float32)
    y = wp.zeros(64, dtype=float)
    if "avx512" not in host_isas():  # nothing to fall back to: the crash is the answer
        with pytest.raises(CompilerCrash, match="killed by SIGABRT"):
            wp.launch(needs_the_fallback, dim=64, inputs=[wp.array(x), y])
        return
    with pytest.warns(wp.CompilerWarning, match="kernel 'needs_the_fallback' was built without AVX-512: LLVM "
                                                "crashed compiling it for this CPU"):
        wp.launch(needs_the_fallback, dim=64, inputs=[wp.array(x), y])
    np.testing.assert_array_max_ulp(y.numpy(), (np.sin(x.astype(np.float64)) * 2).astype(np.float32), maxulp=4)


CHILD_IMPORTS = """
import sys
from mlwarp.compiler import contained

@contained.contained(lambda args: "probe")
def loads_a_module():
    import mlwarp.compiler.lowering.tiles_to_linalg  # noqa: F401  (loaded by tile kernels' compiles only)
    return "compiled"

@contained.contained(lambda args: "probe")
def sees_it_inherited():
    return "mlwarp.compiler.lowering.tiles_to_linalg" in contained.inherited_modules()

assert "mlwarp.compiler.lowering.tiles_to_linalg" not in sys.modules
print(loads_a_module(), "mlwarp.compiler.lowering.tiles_to_linalg" in sys.modules)  # not yet: at the next fork
print(sees_it_inherited(), "mlwarp.compiler.lowering.tiles_to_linalg" in sys.modules)
"""


def test_modules_a_compile_process_loaded_are_imported_here_before_the_next_compile(tmp_path):
    # each compile runs in a forked process: what one imports on demand (a tile table, a lowering) would be
    # imported again by every later compile; the parent imports it once, before its next fork
    import subprocess
    import sys

    (tmp_path / "child_imports.py").write_text(CHILD_IMPORTS)
    r = subprocess.run([sys.executable, str(tmp_path / "child_imports.py")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["compiled False", "True True"]


IMPORT_COLLECTOR = """
import gc
import sys
gc.disable() if sys.argv[1] == "off" else None
import mlwarp.compiler.driver  # (MLIR and the compiler, as a first compile imports them)
print(gc.isenabled())
"""


@pytest.mark.parametrize("before", ["on", "off"])
def test_importing_the_compiler_leaves_the_collector_as_it_found_it(tmp_path, before):
    # the import runs with the collector paused (its objects are all kept): a program's own choice stands after it
    import subprocess
    import sys

    (tmp_path / "import_compiler.py").write_text(IMPORT_COLLECTOR)
    r = subprocess.run([sys.executable, str(tmp_path / "import_compiler.py"), before], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(before == "on")


def _contexts_made_here():
    from mlwarp.compiler import context

    first, second = context.make_context("cpu"), context.make_context("cpu")
    return id(first), id(second), first.is_registered_operation("warp.tid")


def test_each_compile_process_takes_the_context_its_parent_made_ahead():
    # making a context (dialects, the warp dialect's IRDL) was ~5-13 ms of every compile process: the process
    # that forks them makes one when it loads the compiler, and each compile process's first takes its copy
    import mlwarp.compiler.driver  # noqa: F401  (what the first compile imports: it prepares the context)
    from mlwarp.compiler import contained, context

    prepared = context._prepared["cpu"]
    for _ in range(2):  # (each process its own copy: the parent's is never taken)
        first, second, loaded = contained.start(_contexts_made_here, (), {}, "contexts").result()
        assert first == id(prepared) and second != first and loaded
    assert context.make_context("cpu") is not prepared and context._prepared["cpu"] is prepared
