"""The design card's layout (shared DESIGN.md, issue 31): the compiler, the core types, the runtime and mlwarp-opt at
the top of the repository, the user API in python/mlwarp/ grouped by topic, all one installable package by
pyproject.toml's package-dir, for an editable install, a wheel and a checkout run without installing alike.
(No import cycles anywhere: test_import_graph.py.)"""

import ast
import os
import pathlib
import subprocess
import sys
import tomllib
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Modules at the top of python/mlwarp: Warp's public module paths (`import warp.types`, `warp.utils`, ...) and the
# package's own machinery. Everything else lives in a topic subpackage.
WARP_MODULE_PATHS = {"types", "utils", "autograd", "config", "context", "errors", "build_experimental"}
PACKAGE_OWN = {"__init__", "_api", "_source_layout"}
TOPICS = {"kernels", "arrays", "launching", "autodiff", "interop", "algorithms", "library",
          "geometry", "sparse", "optim", "jax_experimental", "render", "_src"}


def _package_dirs() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["setuptools"]["package-dir"]


def test_pyproject_maps_the_design_cards_folders_into_one_package():
    assert _package_dirs() == {"mlwarp": "python/mlwarp", "mlwarp.core": "core", "mlwarp.compiler": "compiler",
                               "mlwarp.runtime": "runtime", "mlwarp.tools": "tools/mlwarp-opt"}
    for folder in ("compiler/dialects/warp", "compiler/frontend", "compiler/passes", "compiler/lowering",
                   "compiler/targets/cpu", "compiler/targets/cuda", "core", "runtime", "python/mlwarp",
                   "tools/mlwarp-opt"):
        assert (ROOT / folder / "__init__.py").is_file(), folder
    assert (ROOT / "test/lit/lit.cfg.py").is_file() and (ROOT / "test/python").is_dir()
    assert not (ROOT / "mlwarp").exists()  # the old single folder


def test_the_api_package_holds_warps_module_paths_and_topic_subpackages():
    top = ROOT / "python/mlwarp"
    modules = {p.stem for p in top.glob("*.py")}
    folders = {p.name for p in top.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert modules == WARP_MODULE_PATHS | PACKAGE_OWN, sorted(modules ^ (WARP_MODULE_PATHS | PACKAGE_OWN))
    assert folders == TOPICS, sorted(folders ^ TOPICS)
    for topic in TOPICS:  # each says what it holds
        assert ast.get_docstring(ast.parse((top / topic / "__init__.py").read_text())), topic


def test_this_checkout_is_the_package_that_runs():
    import mlwarp
    import mlwarp.compiler
    import mlwarp.core
    import mlwarp.runtime
    import mlwarp.tools

    assert pathlib.Path(mlwarp.__file__).resolve() == ROOT / "python/mlwarp/__init__.py"
    for name, folder in _package_dirs().items():
        module = sys.modules[name]
        assert pathlib.Path(module.__file__).resolve().parent == ROOT / folder, name


def test_a_checkout_without_an_install_maps_its_own_folders():
    from mlwarp import _source_layout

    assert _source_layout.checkout_root() == ROOT
    finder = next(f for f in sys.meta_path if isinstance(f, _source_layout.SourceLayoutFinder))
    import importlib.machinery

    # ahead of the path search, and so of an installed copy's finder (an editable install's comes after it)
    assert sys.meta_path.index(finder) < sys.meta_path.index(importlib.machinery.PathFinder)
    assert finder.folders == {name: ROOT / folder for name, folder in _package_dirs().items() if name != "mlwarp"}
    spec = finder.find_spec("mlwarp.compiler")
    assert spec.origin == str(ROOT / "compiler/__init__.py")
    assert spec.submodule_search_locations == [str(ROOT / "compiler")]
    assert finder.find_spec("mlwarp.kernels") is None  # python/mlwarp's own subpackages: the usual path search


KERNEL = """
import mlwarp as wp
import mlwarp.compiler.driver


@wp.kernel
def double(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = 2.0 * a[i]


a = wp.array([1.0, 2.0, 3.0], dtype=float)
wp.launch(double, 3, [a])
print(a.numpy().tolist(), mlwarp.compiler.driver.__file__, wp.__file__)
"""


def test_the_wheel_holds_the_package_and_runs_a_kernel(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(tmp_path / "dist"), str(ROOT)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("mlwarp-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for member in ("mlwarp/__init__.py", "mlwarp/kernels/kernel.py", "mlwarp/core/types.py",
                   "mlwarp/compiler/driver.py", "mlwarp/compiler/dialects/warp/README.md",
                   "mlwarp/compiler/native/warp_snippet.h", "mlwarp/runtime/cpu.py", "mlwarp/tools/opt.py",
                   "mlwarp/tools/README.md"):
        assert member in names, member
    assert not any(n.startswith(("compiler/", "core/", "runtime/", "python/", "tools/")) for n in names)
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    script = tmp_path / "kernel.py"
    script.write_text(KERNEL)
    env = {**os.environ, "PYTHONPATH": str(site), "MLWARP_CACHE_DIR": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.startswith("[2.0, 4.0, 6.0] ")
    driver, package = r.stdout.split()[-2:]
    assert driver == str(site / "mlwarp/compiler/driver.py") and package == str(site / "mlwarp/__init__.py")
