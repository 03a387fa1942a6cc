"""The library cache (runtime/cache.py library_dir, python -m mlwarp.kernels.precompile): mlwarp's own geometry
kernels and the CPU thread pool's library compiled ahead at install are found there by a process whose kernel
cache is empty, wp.clear_kernel_cache() leaves them, a compiler change (another fingerprint) misses them and compiles into the
kernel cache as before, and an unusable library folder never breaks a launch."""

import os
import subprocess
import sys
import textwrap

import pytest

from mlwarp.compiler.passes import op_finder
from mlwarp.kernels import precompile
from mlwarp.runtime import cpu_pool

# A cube's 12 triangles, refitted after a shift; the closest point to (2, 0.5, 0.5) is on the face x = 1.1.
MESH = textwrap.dedent("""
    import sys
    import numpy as np
    import mlwarp as wp
    from mlwarp.kernels import kernel as kernel_module

    if len(sys.argv) > 1:  # another compiler: every key changes
        fingerprint = kernel_module.compiler_fingerprint()
        kernel_module.compiler_fingerprint = lambda: "another " + fingerprint

    @wp.kernel
    def closest(mesh: wp.uint64, p: wp.vec3, out: wp.array(dtype=wp.vec3)):
        q = wp.mesh_query_point_no_sign(mesh, p, 10.0)
        out[0] = wp.mesh_eval_position(mesh, q.face, q.u, q.v)

    corners = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], np.float32)
    faces = [[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6], [0, 2, 6],
             [0, 6, 4], [1, 5, 7], [1, 7, 3]]
    points = wp.array(corners, dtype=wp.vec3)
    mesh = wp.Mesh(points=points, indices=wp.array(np.array(faces, np.int32).ravel(), dtype=int))
    points.assign(corners + np.float32(0.1))
    mesh.refit()
    out = wp.zeros(1, dtype=wp.vec3)
    wp.launch(closest, 1, inputs=[mesh.id, wp.vec3(2.0, 0.5, 0.5), out])
    print(out.numpy()[0].round(5).tolist())
""")

GEOMETRY_KERNELS = ["item_bounds", "mesh_refit_positions", "mesh_refit_walk", "pack_leaf_groups", "pack_ray_nodes",
                    "pack_triangles", "pack_wide_nodes", "sah_preorder", "sah_split", "triangle_boxes", "wide_collapse"]


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """A library cache folder that `python -m mlwarp.kernels.precompile` filled."""
    folder = tmp_path_factory.mktemp("library")
    env = dict(os.environ, MLWARP_LIBRARY_CACHE_DIR=str(folder))
    r = subprocess.run([sys.executable, "-m", "mlwarp.kernels.precompile", "--workers", "2"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    count = len(precompile.library_kernels()) + POOL + FINDER
    assert f"{count} compiled, 0 already there, 0 failed" in r.stdout
    return folder


POOL = 1 if cpu_pool.supported() else 0  # the pool library is one more entry where there is a native pool
FINDER = 1 if op_finder.supported() else 0  # and the passes' native op finder (compiler/passes/op_finder.py)

# A parallel launch (the thread pool's first use): which pool library the process loaded.
POOL_USER = textwrap.dedent("""
    import mlwarp as wp
    from mlwarp.runtime import cpu_pool

    wp.config.cpu_threads = 2

    @wp.kernel
    def fill(out: wp.array(dtype=int)):
        i = wp.tid()
        out[i] = i

    out = wp.zeros(1 << 16, dtype=int)
    for _ in range(4):
        wp.launch(fill, out.shape[0], inputs=[out])
    assert out.numpy().sum() == (1 << 16) * ((1 << 16) - 1) // 2
    print(cpu_pool.library()._name)
""")


def _run(tmp_path, library_folder, *args):
    (tmp_path / "main.py").write_text(MESH)
    env = dict(os.environ, MLWARP_CACHE_DIR=str(tmp_path / "cache"), MLWARP_LIBRARY_CACHE_DIR=str(library_folder))
    env.pop("MLWARP_COMPILE_IN_PROCESS", None)
    r = subprocess.run([sys.executable, str(tmp_path / "main.py"), *args], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # what compiled (here or in compile processes): the kernel cache's entries
    return [float(v) for v in r.stdout.strip().strip("[]").split(",")], _entries(tmp_path / "cache")


def _entries(folder):
    return sorted(n.rsplit("-", 1)[0] for n in os.listdir(folder) if not n.startswith("."))


def test_precompile_fills_the_library_with_the_geometry_kernels(library):
    entries = _entries(library)
    assert set(GEOMETRY_KERNELS) <= set(entries)
    assert len(entries) == len(precompile.library_kernels()) + POOL + FINDER
    assert entries.count("cpu-pool") == POOL and entries.count("op-finder") == FINDER


def test_an_empty_kernel_cache_loads_the_pool_library_from_the_library(tmp_path, library):
    if not POOL:
        pytest.skip("the native pool is x86-64 Linux's")
    (tmp_path / "main.py").write_text(POOL_USER)
    env = dict(os.environ, MLWARP_CACHE_DIR=str(tmp_path / "cache"), MLWARP_LIBRARY_CACHE_DIR=str(library))
    env.pop("MLWARP_CPU_POOL", None)
    r = subprocess.run([sys.executable, str(tmp_path / "main.py")], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(library / cpu_pool.entry_name() / "pool.so")
    assert "cpu-pool" not in _entries(tmp_path / "cache")  # nothing built: the user's cache holds the kernel only


def test_without_the_library_the_pool_library_is_built_into_the_kernel_cache(tmp_path):
    if not POOL:
        pytest.skip("the native pool is x86-64 Linux's")
    (tmp_path / "main.py").write_text(POOL_USER)
    env = dict(os.environ, MLWARP_CACHE_DIR=str(tmp_path / "cache"), MLWARP_LIBRARY_CACHE_DIR=str(tmp_path / "none"))
    env.pop("MLWARP_CPU_POOL", None)
    r = subprocess.run([sys.executable, str(tmp_path / "main.py")], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(tmp_path / "cache" / cpu_pool.entry_name() / "pool.so")


def test_an_empty_kernel_cache_finds_the_geometry_kernels_in_the_library(tmp_path, library):
    before = sorted(os.listdir(library))
    point, compiled = _run(tmp_path, library)
    assert point == pytest.approx([1.1, 0.5, 0.5])
    assert compiled == ["closest"]  # only the user's kernel
    assert sorted(os.listdir(library)) == before  # launches only read it


def test_another_compiler_fingerprint_misses_the_library_and_compiles_into_the_kernel_cache(tmp_path, library):
    before = sorted(os.listdir(library))
    point, compiled = _run(tmp_path, library, "another-compiler")
    assert point == pytest.approx([1.1, 0.5, 0.5])
    assert compiled == sorted(GEOMETRY_KERNELS + ["closest"])
    assert sorted(os.listdir(library)) == before


def test_clear_kernel_cache_leaves_the_library(tmp_path, library, monkeypatch):
    import mlwarp as wp

    monkeypatch.setenv("MLWARP_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache" / "some-entry").mkdir(parents=True)
    before = sorted(os.listdir(library))
    wp.clear_kernel_cache()
    assert os.listdir(tmp_path / "cache") == []
    assert sorted(os.listdir(library)) == before


def test_a_corrupt_library_entry_is_skipped_not_removed(tmp_path, library, monkeypatch):
    from mlwarp.runtime import cache

    copy = tmp_path / "library"
    name = next(n for n in os.listdir(library) if n.startswith("triangle_boxes-"))
    (copy / name).mkdir(parents=True)
    for file in os.listdir(library / name):
        (copy / name / file).write_bytes((library / name / file).read_bytes())
    library_file = next(f for f in os.listdir(copy / name) if f != cache.META)
    (copy / name / library_file).write_bytes(b"not the compiled library")
    monkeypatch.setenv("MLWARP_LIBRARY_CACHE_DIR", str(copy))
    with pytest.warns(RuntimeWarning, match="skipping corrupt kernel cache entry"):
        assert cache.lookup_library(name) is None
    assert (copy / name / library_file).exists()
    assert cache.lookup_library("triangle_boxes-000000000000000000000000") is None  # a miss: no warning


def test_precompile_into_a_folder_it_cannot_create_says_so_and_succeeds(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert precompile.main(["--dir", str(blocker / "library")]) == 0  # setup goes on; kernels compile on first use
    assert "will compile on first use instead" in capsys.readouterr().err


def test_the_library_kernels_are_mlwarps_own_and_concrete():
    kernels = precompile.library_kernels()
    assert {k.key for k in kernels} >= set(GEOMETRY_KERNELS) | {"_sgd_step", "_adam_step"}
    assert all(k.func.__module__.startswith(("mlwarp.geometry.", "mlwarp.optim.")) and not k.is_generic
               for k in kernels)


# One SGD and one Adam step on parameters of each floating-point type, from a fresh process
OPTIMIZERS = textwrap.dedent("""
    import numpy as np
    import mlwarp as wp
    from mlwarp.optim import SGD, Adam

    out = []
    for dtype in (wp.float16, wp.float32, wp.float64, wp.quat, wp.vec3d):
        p = wp.array(np.ones((4, 4)) if dtype in (wp.quat,) else np.ones((4, 3)) if dtype is wp.vec3d
                     else np.ones(4), dtype=dtype)
        g = wp.array(np.full(p.numpy().shape, 0.5), dtype=dtype)
        SGD([p], lr=0.1).step([g])  # p - lr g = 0.95
        q = wp.array(np.ones(p.numpy().shape), dtype=dtype)
        Adam([q], lr=0.1).step([g])  # first step: p - lr g / (|g| + eps) = 0.9
        out.append([float(p.numpy().ravel()[0]), float(q.numpy().ravel()[0])])
    print(out)
""")


def test_the_optimizers_steps_are_found_in_the_library(tmp_path, library):
    (tmp_path / "main.py").write_text(OPTIMIZERS)
    env = dict(os.environ, MLWARP_CACHE_DIR=str(tmp_path / "cache"), MLWARP_LIBRARY_CACHE_DIR=str(library))
    env.pop("MLWARP_COMPILE_IN_PROCESS", None)
    r = subprocess.run([sys.executable, str(tmp_path / "main.py")], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for sgd_value, adam_value in eval(r.stdout):  # noqa: S307 (our own script's printed list)
        assert sgd_value == pytest.approx(0.95, abs=1e-3) and adam_value == pytest.approx(0.9, abs=1e-3)
    compiled = _entries(tmp_path / "cache") if os.path.exists(tmp_path / "cache") else []
    assert not {"_sgd_step", "_adam_step"} & set(compiled)  # (the kernel cache holds the native pool's library)


def test_a_users_kernel_is_not_looked_up_in_the_library():
    import mlwarp as wp

    @wp.kernel
    def user_kernel(a: wp.array(dtype=float)):
        a[wp.tid()] = 1.0

    assert not user_kernel.is_library_kernel()
    assert all(k.is_library_kernel() for k in precompile.library_kernels())
