"""The kernel cache: warm launches in a new process need neither the compiler nor MLIR, corrupt entries are
rebuilt, an unwritable cache folder falls back to a temporary one, concurrent compiles leave one entry."""

import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.runtime import cache

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import mlwarp as wp

    @wp.kernel
    def twice_plus(a: wp.array(dtype=float), b: float):
        i = wp.tid()
        a[i] = a[i] * 2.0 + b

    a = wp.array(np.arange(5, dtype=np.float32))
    wp.launch(twice_plus, 5, inputs=[a, 0.5])
    print(a.numpy().tolist())
    print("mlir imported:", "mlir" in sys.modules)
    print("compiler driver imported:", "mlwarp.compiler.driver" in sys.modules)
""")
EXPECTED = str([x * 2.0 + 0.5 for x in range(5)])


def _run(script_path, cache_dir, check=True):
    env = dict(os.environ, MLWARP_CACHE_DIR=str(cache_dir))
    r = subprocess.run([sys.executable, str(script_path)], env=env, capture_output=True, text=True, timeout=None)
    if check:
        assert r.returncode == 0, r.stderr
    return r


def _entries(cache_dir):
    return sorted(n for n in os.listdir(cache_dir))


@pytest.fixture
def script(tmp_path):
    p = tmp_path / "kernel_script.py"
    p.write_text(SCRIPT)
    return p


def test_warm_cache_launches_without_compiler_or_mlir(script, tmp_path):
    cache_dir = tmp_path / "cache"
    cold = _run(script, cache_dir)
    assert cold.stdout.splitlines() == [EXPECTED, "mlir imported: True", "compiler driver imported: True"]
    warm = _run(script, cache_dir)
    assert warm.stdout.splitlines() == [EXPECTED, "mlir imported: False", "compiler driver imported: False"]
    (entry,) = _entries(cache_dir)
    assert entry.startswith("twice_plus-")


WARM_PATHS_SCRIPT = textwrap.dedent("""
    import importlib.abc, os, sys
    import numpy as np

    if os.environ.get("BLOCK_MLIR") == "1":
        class NoMLIR(importlib.abc.MetaPathFinder):  # any import of MLIR fails, naming its caller
            def find_spec(self, name, path=None, target=None):
                if name == "mlir" or name.startswith("mlir."):
                    raise ImportError(f"blocked import of {name}")

        sys.meta_path.insert(0, NoMLIR())
    import mlwarp as wp

    @wp.kernel
    def cube(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[i] * x[i] * x[i]

    x = wp.array(np.array([1.0, 2.0, -3.0], dtype=np.float32), requires_grad=True)
    y = wp.zeros(3, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(cube, 3, inputs=[x], outputs=[y])
    tape.backward(grads={y: wp.ones(3, dtype=float)})
    tangent = wp.zeros(3, dtype=float)
    wp.jvp(cube, 3, inputs=[x], outputs=[wp.zeros(3, dtype=float)],
           tan_inputs=[wp.array(np.array([1.0, 0.5, 2.0], dtype=np.float32))], tan_outputs=[tangent])
    print(y.numpy().tolist(), x.grad.numpy().tolist(), tangent.numpy().tolist())
    print("mlir imported:", any(m == "mlir" or m.startswith("mlir.") for m in sys.modules))
""")


def test_warm_launch_adjoint_and_jvp_import_no_mlir(tmp_path):
    """Forward, Tape.backward (the adjoint library) and wp.jvp (the tangent library), each from the disk
    cache, in a process where importing MLIR fails."""
    script = tmp_path / "warm_paths.py"
    script.write_text(WARM_PATHS_SCRIPT)
    cache_dir = tmp_path / "cache"
    # y = x^3, dy/dx = 3 x^2, tangent along t: 3 x^2 t
    expected = "[1.0, 8.0, -27.0] [3.0, 12.0, 27.0] [3.0, 6.0, 54.0]"
    assert _run(script, cache_dir).stdout.splitlines() == [expected, "mlir imported: True"]
    env = dict(os.environ, MLWARP_CACHE_DIR=str(cache_dir), BLOCK_MLIR="1")
    warm = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout.splitlines() == [expected, "mlir imported: False"]


def test_corrupt_library_is_detected_and_rebuilt(script, tmp_path):
    cache_dir = tmp_path / "cache"
    _run(script, cache_dir)
    (entry,) = _entries(cache_dir)
    meta = json.loads((cache_dir / entry / "meta.json").read_text())
    lib = cache_dir / entry / meta["library"]
    good = lib.read_bytes()
    lib.write_bytes(good[: len(good) // 2])  # truncated, as by a crash or a full disk
    rebuilt = _run(script, cache_dir)
    assert rebuilt.stdout.splitlines() == [EXPECTED, "mlir imported: True", "compiler driver imported: True"]
    assert f"discarding corrupt kernel cache entry {entry}: checksum mismatch in {meta['library']}" in rebuilt.stderr
    assert _entries(cache_dir) == [entry]
    assert (cache_dir / entry / meta["library"]).stat().st_size == len(good)
    again = _run(script, cache_dir)  # the rebuilt entry is trusted again
    assert again.stdout.splitlines()[1] == "mlir imported: False"


def test_flipped_byte_and_bad_metadata_are_rebuilt(script, tmp_path):
    cache_dir = tmp_path / "cache"
    _run(script, cache_dir)
    (entry,) = _entries(cache_dir)
    meta_path = cache_dir / entry / "meta.json"
    lib = cache_dir / entry / json.loads(meta_path.read_text())["library"]
    data = bytearray(lib.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, different bytes
    lib.write_bytes(bytes(data))
    assert _run(script, cache_dir).stdout.splitlines()[1] == "mlir imported: True"
    meta_path.write_text("{not json")
    r = _run(script, cache_dir)
    assert r.stdout.splitlines()[:2] == [EXPECTED, "mlir imported: True"]
    assert f"discarding corrupt kernel cache entry {entry}" in r.stderr


def test_entry_without_metadata_is_rebuilt(script, tmp_path):
    cache_dir = tmp_path / "cache"
    _run(script, cache_dir)
    (entry,) = _entries(cache_dir)
    os.remove(cache_dir / entry / "meta.json")  # an entry that never finished: ignored, replaced
    r = _run(script, cache_dir)
    assert r.stdout.splitlines()[:2] == [EXPECTED, "mlir imported: True"]
    assert _entries(cache_dir) == [entry]
    assert (cache_dir / entry / "meta.json").exists()


def test_four_processes_compiling_at_once(script, tmp_path):
    cache_dir = tmp_path / "cache"
    env = dict(os.environ, MLWARP_CACHE_DIR=str(cache_dir))
    procs = [subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate() for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert out.splitlines()[0] == EXPECTED
    (entry,) = _entries(cache_dir)  # one entry, no temporary or trash folders left behind
    assert entry.startswith("twice_plus-")
    assert _run(script, cache_dir).stdout.splitlines()[1] == "mlir imported: False"


@wp.kernel
def fallback_kernel(a: wp.array(dtype=wp.int32)):
    i = wp.tid()
    a[i] = i * 3


def test_unwritable_cache_dir_falls_back_to_temp(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    bad = str(blocker / "cache")  # cannot be created, even by root
    monkeypatch.setattr(wp.config, "kernel_cache_dir", bad)
    monkeypatch.setattr(cache, "_fallback_dir", None)
    try:
        with pytest.warns(RuntimeWarning, match=rf"kernel cache folder '{bad}' is not writable; using '.*mlwarp-cache-"):
            a = wp.zeros(4, dtype=wp.int32)
            wp.launch(fallback_kernel, 4, inputs=[a])
        assert a.numpy().tolist() == [0, 3, 6, 9]
        fallback = cache._fallback_dir
        assert os.path.isdir(fallback) and any(n.startswith("fallback_kernel-") for n in os.listdir(fallback))
    finally:
        import shutil

        if cache._fallback_dir:
            shutil.rmtree(cache._fallback_dir, ignore_errors=True)


def test_clear_kernel_cache_and_size(script, tmp_path, monkeypatch):
    cache_dir = tmp_path / "cache"
    _run(script, cache_dir)
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(cache_dir))
    assert wp.get_kernel_cache_dir() == str(cache_dir)
    expected = sum(f.stat().st_size for f in cache_dir.rglob("*") if f.is_file())
    assert expected > 0
    assert wp.kernel_cache_size() == expected
    wp.clear_kernel_cache()
    assert wp.kernel_cache_size() == 0
    assert _entries(cache_dir) == []
    assert _run(script, cache_dir).stdout.splitlines()[1] == "mlir imported: True"


def test_clearing_the_cache_spares_a_build_in_flight(tmp_path, monkeypatch):
    # another process's wp.clear_kernel_cache() while this one compiles (Warp's tests clear the cache in their
    # set-up, run in parallel): the build keeps the folder it writes into, and its entry lands
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path))
    finished = cache.store("finished", lambda folder: _write(folder, "a.o", b"old"))
    stale = tmp_path / ".left-by-a-dead-build.x1"
    stale.mkdir()
    os.utime(stale, (0, 0))

    def build(folder):
        wp.clear_kernel_cache()
        return _write(folder, "kernel.o", b"object")

    meta = cache.store("in-flight", build)
    assert (tmp_path / "in-flight" / "kernel.o").read_bytes() == b"object" and meta["dir"] == str(tmp_path / "in-flight")
    assert not os.path.exists(finished["dir"]) and not stale.exists()


def _write(folder, name, data):
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)
    return {"files": [name]}


def test_cache_key_follows_source_and_types():
    def body_a(a: wp.array(dtype=float)):
        a[wp.tid()] = 1.0

    def body_b(a: wp.array(dtype=float)):
        a[wp.tid()] = 2.0

    def body_a_f64(a: wp.array(dtype=wp.float64)):
        a[wp.tid()] = 1.0

    cpu = wp.get_device("cpu")
    keys = {wp.kernel(f, key="same").cache_key(cpu) for f in (body_a, body_b, body_a_f64)}
    assert len(keys) == 3
    assert wp.kernel(body_a, key="same").cache_key(cpu) == wp.kernel(body_a, key="same").cache_key(cpu)


def test_memory_cache_skips_disk(tmp_path, monkeypatch):
    a = wp.zeros(2, dtype=wp.int32)
    wp.launch(fallback_kernel, 2, inputs=[a])  # loaded in this process now
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path / "empty"))
    wp.launch(fallback_kernel, 2, inputs=[a])
    assert not os.path.exists(tmp_path / "empty") or _entries(tmp_path / "empty") == []
    assert np.array_equal(a.numpy(), [0, 3])


# -- what the key covers: the sources that decide generated code, and the MLIR/LLVM versions ------------------
from mlwarp.kernels import fingerprint as fingerprint_module  # the cache key's compiler part


def _forget_fingerprints():
    for f in (fingerprint_module._compiler_fingerprint, fingerprint_module._portable_compiler_fingerprint,
              fingerprint_module._toolchain, fingerprint_module._dist_info_folders):
        f.cache_clear()


@pytest.fixture
def code_copy(tmp_path, monkeypatch):
    """A copy of the folders the key reads, which the key reads instead: returns file path -> its copy."""
    import shutil

    real = fingerprint_module._code_roots()
    copies = [(label, str(tmp_path / "code" / label)) for label, _ in real]
    for (_, folder), (_, copy) in zip(real, copies):
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(fingerprint_module, "_code_roots", lambda: copies)
    _forget_fingerprints()

    def copy_of(path):
        path = os.path.realpath(path)
        for (_, folder), (_, copy) in zip(real, copies):
            if path.startswith(os.path.realpath(folder) + os.sep):
                return os.path.join(copy, os.path.relpath(path, os.path.realpath(folder)))
        pytest.fail(f"{path} is in none of the folders the cache key reads: {[f for _, f in real]}")

    yield copy_of
    monkeypatch.undo()
    _forget_fingerprints()


def _module_file(name):
    import importlib

    return importlib.import_module(name).__file__


# the runtime's error record (warp-bounds-check writes its layout), the modules of mlwarp the compiler reads,
# the compiler itself
KEYED_MODULES = ["mlwarp.runtime.error_record", "mlwarp.runtime.abi", "mlwarp.types", "mlwarp.core.vector",
                 "mlwarp.kernels.func", "mlwarp.core.source", "mlwarp.kernels.struct", "mlwarp.kernels.captures", "mlwarp.launching.debug",
                 "mlwarp.compiler.passes.bounds_check", "mlwarp.compiler.frontend.codegen"]


@pytest.mark.parametrize("module", KEYED_MODULES)
def test_editing_a_module_that_decides_generated_code_changes_the_key(code_copy, module):
    cpu = wp.get_device("cpu")
    before = fallback_kernel.cache_key(cpu)
    _forget_fingerprints()
    assert fallback_kernel.cache_key(cpu) == before  # stable while nothing changes
    copy = code_copy(_module_file(module))
    with open(copy, "a") as f:
        f.write("\n# edited\n")
    _forget_fingerprints()
    edited = fallback_kernel.cache_key(cpu)
    assert edited != before
    st = os.stat(copy)
    os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # same size, newer: edited again
    _forget_fingerprints()
    assert fallback_kernel.cache_key(cpu) not in (before, edited)


def test_an_edited_runtime_recompiles(code_copy, tmp_path, monkeypatch):
    """The first launch after an edit of runtime/error_record.py compiles a new entry instead of loading the
    old one."""
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path / "cache"))

    def launch():
        kernel = wp.Kernel(fallback_kernel.func, key="recompiled")  # a fresh kernel: nothing in memory
        a = wp.zeros(3, dtype=wp.int32)
        wp.launch(kernel, 3, inputs=[a])
        assert a.numpy().tolist() == [0, 3, 6]

    launch()
    launch()
    (first,) = _entries(tmp_path / "cache")
    with open(code_copy(_module_file("mlwarp.runtime.error_record")), "a") as f:
        f.write("\n# edited\n")
    _forget_fingerprints()
    launch()
    entries = _entries(tmp_path / "cache")
    assert len(entries) == 2 and first in entries


def test_cuda_keys_read_the_sources_contents_not_their_mtimes(code_copy):
    """A CUDA entry is compiled on one machine and loaded on another, whose checkout of the same sources has
    other mtimes (bench/gpu_check.sh): its key hashes the sources' contents. The CPU key, for this host alone,
    keeps the cheaper size and mtime."""
    from mlwarp.launching import cuda_compile

    cpu = wp.get_device("cpu")
    cuda_before, cpu_before = cuda_compile.cache_key(fallback_kernel, 90), fallback_kernel.cache_key(cpu)
    touched = code_copy(_module_file("mlwarp.compiler.frontend.codegen"))
    st = os.stat(touched)
    os.utime(touched, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))  # another checkout's mtime
    _forget_fingerprints()
    assert cuda_compile.cache_key(fallback_kernel, 90) == cuda_before
    assert fallback_kernel.cache_key(cpu) != cpu_before
    with open(touched, "a") as f:
        f.write("\n# edited\n")
    _forget_fingerprints()
    assert cuda_compile.cache_key(fallback_kernel, 90) != cuda_before


def test_a_checkout_that_is_not_installed_keys_with_its_pyproject_pins(monkeypatch):
    """mlwarp run from a checkout on sys.path (a GPU machine without MLIR or an install) has no metadata: the
    versions in its key are the pins of the pyproject.toml beside it, the ones the installed metadata has here."""
    from importlib import metadata
    from mlwarp.launching import cuda_compile

    pins = sorted(re.match(r"([\w.-]+)==([^;\s]+)", r).groups() for r in metadata.requires("mlwarp")
                  if 'extra == "compiler"' in r)
    _forget_fingerprints()
    installed_key = cuda_compile.cache_key(fallback_kernel, 90)
    real = fingerprint_module._dist_info_folders()
    uninstalled = {n: f for n, f in real.items() if n not in {"mlwarp", *(fingerprint_module._normalized(p) for p, _ in pins)}}
    monkeypatch.setattr(fingerprint_module, "_dist_info_folders", lambda: uninstalled)
    try:
        fingerprint_module._toolchain.cache_clear()
        fingerprint_module._portable_compiler_fingerprint.cache_clear()
        assert sorted(fingerprint_module._compiler_requirements()) == pins
        assert sorted(fingerprint_module._toolchain()) == pins
        assert cuda_compile.cache_key(fallback_kernel, 90) == installed_key
    finally:
        monkeypatch.undo()
        _forget_fingerprints()


def test_key_has_the_installed_mlir_and_llvm_versions(tmp_path, monkeypatch):
    from importlib import metadata

    # independent of mlwarp's reader: the distributions importlib says provide the mlir and llvm packages
    provided = metadata.packages_distributions()
    installed = sorted({(name, metadata.version(name)) for top in ("mlir", "llvm") for name in provided[top]})
    _forget_fingerprints()
    assert list(fingerprint_module._toolchain()) == installed
    cpu = wp.get_device("cpu")
    before = fallback_kernel.cache_key(cpu)
    # another MLIR bindings version, first on sys.path, as an upgrade would install it
    name = next(n for n, _ in installed if "mlir" in n)
    site = tmp_path / "site"
    (site / f"{name.replace('-', '_')}-99.0.1.dist-info").mkdir(parents=True)
    (site / f"{name.replace('-', '_')}-99.0.1.dist-info" / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 99.0.1\n\nA description.\n")
    monkeypatch.syspath_prepend(str(site))
    try:
        _forget_fingerprints()
        assert metadata.version(name) == "99.0.1"
        assert dict(fingerprint_module._toolchain())[name] == "99.0.1"
        assert fallback_kernel.cache_key(cpu) != before
    finally:
        monkeypatch.undo()
        _forget_fingerprints()
    assert fallback_kernel.cache_key(cpu) == before


def test_without_the_compiler_installed_the_key_has_the_pinned_versions(monkeypatch):
    """A machine that only loads cached kernels has no MLIR wheels: its keys use the versions mlwarp's
    `compiler` extra pins (here the installed ones), so it finds the entries a pinned compiler built."""
    from importlib import metadata

    pins = dict(re.match(r"([\w.-]+)==([^;\s]+)", r).groups() for r in metadata.requires("mlwarp")
                if 'extra == "compiler"' in r)
    assert pins and all(metadata.version(n) == v for n, v in pins.items())
    cpu = wp.get_device("cpu")
    _forget_fingerprints()
    with_compiler = fallback_kernel.cache_key(cpu)
    real = fingerprint_module._dist_info_folders()
    monkeypatch.setattr(fingerprint_module, "_dist_info_folders",
                        lambda: {n: f for n, f in real.items() if n not in {fingerprint_module._normalized(p) for p in pins}})
    try:
        fingerprint_module._compiler_fingerprint.cache_clear()
        fingerprint_module._toolchain.cache_clear()
        assert dict(fingerprint_module._toolchain()) == pins
        assert fallback_kernel.cache_key(cpu) == with_compiler
    finally:
        monkeypatch.undo()
        _forget_fingerprints()


PREFETCH = textwrap.dedent("""
    import os, sys, threading
    import mlwarp as wp
    from mlwarp.kernels import fingerprint

    wp.zeros(1)  # the API loads: the fingerprint's thread starts
    prefetched = [t for t in threading.enumerate() if t.name == "mlwarp-fingerprint"]
    for t in prefetched:
        t.join()
    value = fingerprint.compiler_fingerprint()
    assert fingerprint._compiler_fingerprint.cache_info().misses == 1  # computed once, by the thread
    fingerprint._compiler_fingerprint.cache_clear()
    assert fingerprint.compiler_fingerprint() == value  # what the thread computed is what the key is made of
    print("ok")
""")

FORK_DURING_PREFETCH = textwrap.dedent("""
    import os
    import mlwarp as wp
    from mlwarp.kernels import fingerprint

    fingerprint._compiler_fingerprint.cache_clear()
    fingerprint.prefetch()
    pid = os.fork()  # while the thread may be computing: the child must not wait on a lock no thread frees
    if pid == 0:
        fingerprint.compiler_fingerprint()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    print("child", os.waitstatus_to_exitcode(status), fingerprint.compiler_fingerprint() != "")
""")


def test_the_fingerprint_computed_in_a_thread_when_the_api_loads_is_the_key_s(tmp_path):
    (tmp_path / "prefetch.py").write_text(PREFETCH)
    assert _run(tmp_path / "prefetch.py", tmp_path / "cache").stdout.strip() == "ok"


def test_a_fork_while_the_fingerprint_is_computed_leaves_the_child_a_usable_lock(tmp_path):
    (tmp_path / "fork.py").write_text(FORK_DURING_PREFETCH)
    env = dict(os.environ, MLWARP_CACHE_DIR=str(tmp_path / "cache"))
    # a timeout only as a guard: a child waiting on a lock held by a thread it does not have never returns
    r = subprocess.run([sys.executable, str(tmp_path / "fork.py")], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "child 0 True"
