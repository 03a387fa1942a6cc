"""Kernels compiled side by side (python/mlwarp/kernels/parallel_compile.py): wp.load_module's kernels and a
geometry structure's build kernels compile in several compile processes at once, and their launches load them
from the kernel cache; a kernel that does not compile fails at its launch as it would have."""

import math
import os
import subprocess
import sys
import textwrap
import types
import weakref

import pytest

import mlwarp as wp
from mlwarp.kernels import parallel_compile

KERNELS = textwrap.dedent("""
    import mlwarp as wp

    @wp.kernel
    def scale(a: wp.array(dtype=float), s: float):
        i = wp.tid()
        a[i] = a[i] * s

    @wp.kernel
    def shift(a: wp.array(dtype=float), s: float):
        i = wp.tid()
        a[i] = a[i] + s

    @wp.kernel
    def square(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = a[i] * a[i]
""")

BROKEN = textwrap.dedent("""
    import mlwarp as wp

    @wp.kernel
    def fine(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = 1.0

    @wp.kernel
    def broken(a: wp.array(dtype=float)):
        i = wp.tid()
        a[i] = undefined_name
""")

LOAD = textwrap.dedent("""
    import sys
    import numpy as np
    import mlwarp as wp
    from mlwarp.runtime import cache
    import kernels_for_load as m

    stores = []
    real = cache.store
    cache.store = lambda *a, **k: (stores.append(a[0]), real(*a, **k))[1]  # a compile in this process
    wp.load_module(m, device="cpu", max_workers=int(sys.argv[1]) if len(sys.argv) > 1 else None)
    compiled_here = len(stores)
    a = wp.array(np.arange(4, dtype=np.float32))
    wp.launch(m.scale, 4, inputs=[a, 2.0])
    wp.launch(m.shift, 4, inputs=[a, 1.0])
    wp.launch(m.square, 4, inputs=[a])
    print(a.numpy().tolist(), compiled_here, len(stores) - compiled_here)
""")

LOAD_BROKEN = textwrap.dedent("""
    import numpy as np
    import mlwarp as wp
    import kernels_broken as m

    try:
        wp.load_module(m, device="cpu", max_workers=2)
    except Exception as e:  # (the failing kernel is compiled again where the load asks for it, and raises)
        print(type(e).__name__, str(e).splitlines()[0])
""")

MESH = textwrap.dedent("""
    import numpy as np
    import mlwarp as wp
    from mlwarp.runtime import cache

    stores = []
    real = cache.store
    cache.store = lambda *a, **k: (stores.append(a[0].rsplit("-", 1)[0]), real(*a, **k))[1]
    points = wp.array(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], np.float32), dtype=wp.vec3)
    mesh = wp.Mesh(points=points, indices=wp.array(np.array([0, 1, 2, 0, 1, 3], np.int32), dtype=int))
    print(stores)
""")


BACKWARD = textwrap.dedent("""
    import numpy as np
    import mlwarp as wp
    from mlwarp.runtime import cache

    @wp.kernel
    def square(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = x[i] * x[i]

    @wp.kernel
    def scaled_sin(y: wp.array(dtype=float), z: wp.array(dtype=float)):
        i = wp.tid()
        z[i] = 3.0 * wp.sin(y[i])

    @wp.kernel
    def total(z: wp.array(dtype=float), loss: wp.array(dtype=float)):
        i = wp.tid()
        wp.atomic_add(loss, 0, z[i])

    x = wp.array(np.array([0.5, 1.0, 1.5], np.float32), requires_grad=True)
    y, z = wp.zeros(3, requires_grad=True), wp.zeros(3, requires_grad=True)
    loss = wp.zeros(1, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(square, 3, inputs=[x, y])
        wp.launch(scaled_sin, 3, inputs=[y, z])
        wp.launch(total, 3, inputs=[z, loss])
    stores = []
    real = cache.store
    cache.store = lambda *a, **k: (stores.append(a[0]), real(*a, **k))[1]  # a compile in this process
    tape.backward(loss)
    print(" ".join(f"{g:.5f}" for g in x.grad.numpy()), len(stores))
""")


def _run(tmp_path, script, *args, **files):
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(text)
    (tmp_path / "main.py").write_text(script)
    env = dict(os.environ, MLWARP_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=os.pathsep.join(
        [str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    env.pop("MLWARP_COMPILE_IN_PROCESS", None)
    r = subprocess.run([sys.executable, str(tmp_path / "main.py"), *args], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_load_module_compiles_the_kernels_side_by_side_and_launches_load_them(tmp_path):
    out = _run(tmp_path, LOAD, "2", kernels_for_load=KERNELS)
    # ((i * 2) + 1)^2; the three compiled in compile processes, none here, none at a launch
    assert out == f"{[float((i * 2 + 1) ** 2) for i in range(4)]} 0 0"
    entries = [n for n in os.listdir(tmp_path / "cache") if not n.startswith(".")]
    assert sorted(n.rsplit("-", 1)[0] for n in entries) == ["scale", "shift", "square"]


def test_load_module_is_serial_by_default_as_warp_s(tmp_path):
    # max_workers None takes wp.config.load_module_max_workers, 0 (serial) by default as in Warp 1.19: the kernels
    # are compiled where their loads ask for them, so the launches find them loaded
    out = _run(tmp_path, LOAD, kernels_for_load=KERNELS)
    assert out == f"{[float((i * 2 + 1) ** 2) for i in range(4)]} 3 0"  # one after the other, here


def test_a_kernel_that_does_not_compile_fails_as_at_its_launch(tmp_path):
    out = _run(tmp_path, LOAD_BROKEN, kernels_broken=BROKEN)
    assert out == (f"CompileKeyError {tmp_path / 'kernels_broken.py'}:12: in 'broken': Referencing undefined symbol: "
                   "undefined_name")


def test_a_mesh_build_compiles_its_kernels_ahead_and_its_launches_load_them(tmp_path):
    # (a store in this process is a compile at a launch; the compile processes store the ones compiled ahead)
    assert _run(tmp_path, MESH) == "[]"
    entries = sorted(n.rsplit("-", 1)[0] for n in os.listdir(tmp_path / "cache") if not n.startswith("."))
    assert entries == sorted(["item_bounds", "pack_leaf_groups", "pack_ray_nodes", "pack_triangles", "pack_wide_nodes",
                              "sah_preorder", "sah_split", "triangle_boxes", "wide_collapse"])


def test_a_first_backward_pass_compiles_its_adjoints_side_by_side(tmp_path):
    # d/dx sum(3 sin(x^2)) = 6 x cos(x^2); the three adjoint libraries compiled in compile processes, none here
    grads, compiled_here = _run(tmp_path, BACKWARD).rsplit(" ", 1)
    expected = [6 * x * math.cos(x * x) for x in (0.5, 1.0, 1.5)]
    assert [float(g) for g in grads.split()] == pytest.approx(expected, rel=1e-5)
    assert compiled_here == "0"
    entries = [n for n in os.listdir(tmp_path / "cache") if not n.startswith(".")]
    assert sorted(n.rsplit("-", 1)[0] for n in entries) == ["scaled_sin"] * 2 + ["square"] * 2 + ["total"] * 2


RECORDED = textwrap.dedent("""
    import sys
    import numpy as np
    import mlwarp as wp
    from mlwarp.autodiff.adjoint import with_adjoint
    from mlwarp.kernels import parallel_compile
    from mlwarp.runtime import cache

    @wp.kernel
    def cube(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        wp.atomic_add(y, 0, x[i] * x[i] * x[i])

    x = wp.array(np.array([0.5, 1.0, 2.0], np.float32), requires_grad=True)
    y = wp.zeros(1, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(cube, 3, inputs=[x, y])
    key = with_adjoint(cube).cache_key(wp.get_device("cpu"))
    child = parallel_compile._background.get(key)
    started = child is not None  # the adjoint library compiling while the program goes on
    if sys.argv[1] == "exit":  # leaves with the compile running: it is stopped, not left behind
        print(child.pid)
        sys.exit(0)
    stores = []
    real = cache.store
    cache.store = lambda *a, **k: (stores.append(a[0]), real(*a, **k))[1]  # a compile in this process
    tape.backward(y)
    print(started, key not in parallel_compile._background, len(stores), *x.grad.numpy())
""")


def test_a_recorded_launch_starts_compiling_its_adjoint_in_the_background(tmp_path):
    # the tape's launch starts the with_adjoint library's compile; backward() waits for it instead of compiling
    started, done, compiled_here, *grads = _run(tmp_path, RECORDED, "backward").split()
    assert (started, done, compiled_here) == ("True", "True", "0")
    assert [float(g) for g in grads] == pytest.approx([3 * 0.25, 3 * 1.0, 3 * 4.0], rel=1e-6)  # 3 x^2
    entries = [n for n in os.listdir(tmp_path / "cache") if not n.startswith(".")]
    assert sorted(n.rsplit("-", 1)[0] for n in entries) == ["cube", "cube"]  # forward and adjoint libraries


def test_a_background_compile_still_running_at_exit_is_stopped(tmp_path):
    pid = int(_run(tmp_path, RECORDED, "exit"))
    with pytest.raises(ProcessLookupError):  # reaped: not running, not a zombie of a dead parent
        os.kill(pid, 0)


FIRST_LAUNCH = textwrap.dedent("""
    import sys
    import numpy as np
    import mlwarp as wp
    from mlwarp.compiler import contained
    from mlwarp.runtime import cache

    @wp.kernel
    def cube(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        wp.atomic_add(y, 0, x[i] * x[i] * x[i])

    started = []
    real_start = contained.start
    contained.start = lambda fn, args, kwargs, name, niceness=0: (
        started.append(f"{name}:{niceness}"),
        real_start(fn, args, kwargs, name, niceness))[1]
    grad = sys.argv[1] == "grad"
    x = wp.array(np.array([0.5, 1.0, 2.0], np.float32), requires_grad=grad)
    y = wp.zeros(1, requires_grad=grad)
    wp.launch(cube, 3, inputs=[x, y])  # its first launch: outside any tape
    print(*started)
    if grad:
        stores = []
        real = cache.store
        cache.store = lambda *a, **k: (stores.append(a[0]), real(*a, **k))[1]  # a compile in this process
        y.zero_()
        tape = wp.Tape()
        with tape:
            wp.launch(cube, 3, inputs=[x, y])
        tape.backward(y)
        print(len(stores), *x.grad.numpy())
""")


def test_a_first_launch_with_arrays_that_require_grad_compiles_the_adjoint_beside_the_kernel(tmp_path):
    # the adjoint library's compile starts first, in the background at a low priority, then the kernel's own;
    # backward waits for it
    launched, backward = _run(tmp_path, FIRST_LAUNCH, "grad").splitlines()
    assert launched == "cube:10 cube:0"
    compiled_here, *grads = backward.split()
    assert compiled_here == "0"
    assert [float(g) for g in grads] == pytest.approx([3 * 0.25, 3 * 1.0, 3 * 4.0], rel=1e-6)  # 3 x^2


def test_a_first_launch_without_gradients_in_sight_compiles_the_kernel_alone(tmp_path):
    assert _run(tmp_path, FIRST_LAUNCH, "plain") == "cube:0"
    assert len([n for n in os.listdir(tmp_path / "cache") if not n.startswith(".")]) == 1


def test_background_compiles_of_kernels_whose_forward_compiles_were_quicker_run_at_a_lower_priority(monkeypatch):
    # the program waits for the longest background compile: one of a kernel whose forward compile took a quarter of
    # another's is two halvings (NICENESS_PER_HALVING each) nicer; a kernel not compiled forward yet keeps its niceness
    def small():
        pass

    def large():
        pass

    def unknown():
        pass

    def larger():
        pass

    processes = [subprocess.Popen(["sleep", "60"]) for _ in range(3)]
    try:
        base = parallel_compile.BACKGROUND_NICENESS
        children = {}
        for process, func in zip(processes, (small, large, unknown)):
            os.setpriority(os.PRIO_PROCESS, process.pid, base)
            children[func.__name__] = types.SimpleNamespace(pid=process.pid, niceness=base,
                                                            kernel=types.SimpleNamespace(func=func))
        monkeypatch.setattr(parallel_compile, "_background", children)
        monkeypatch.setattr(parallel_compile, "_forward_seconds", weakref.WeakKeyDictionary())

        def niceness():
            return [os.getpriority(os.PRIO_PROCESS, p.pid) for p in processes]

        parallel_compile.note_forward_compile(types.SimpleNamespace(func=large), 2.0)
        assert niceness() == [base, base, base]  # (one known: nothing to compare)
        parallel_compile.note_forward_compile(types.SimpleNamespace(func=small), 0.5)
        step = parallel_compile.NICENESS_PER_HALVING
        assert niceness() == [base + 2 * step, base, base]
        parallel_compile.note_forward_compile(types.SimpleNamespace(func=larger), 8.0)  # (no compile of its own)
        assert niceness() == [base + 2 * step, base, base]
        children["larger"] = types.SimpleNamespace(pid=processes[2].pid, niceness=base,
                                                   kernel=types.SimpleNamespace(func=larger))
        del children["unknown"]
        parallel_compile.note_forward_compile(types.SimpleNamespace(func=unknown), 1.0)
        assert niceness() == [19, base + 2 * step, base]  # (a niceness only rises, to 19 at most)
    finally:
        for process in processes:
            process.kill()
            process.wait()



@wp.func
def _bounce(x: float):
    y = x
    for _ in range(3):
        if y > 1.0:
            y = 2.0 - y
        elif y < 0.0:
            y = -y
    return y


@wp.kernel
def _small(a: wp.array(dtype=float)):
    a[wp.tid()] = 1.0


@wp.kernel
def _large(a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = _bounce(a[i]) + _bounce(a[i] * 2.0) + wp.sin(a[i])


def test_queued_background_compiles_start_the_largest_first(monkeypatch):
    # the longest compile started first ends with the others, not after them (compile_cost.py: the code's size, the
    # @wp.func it calls included, an adjoint's ADJOINT_COST times its kernel's); equal ones in the order asked
    from mlwarp.autodiff.adjoint import with_adjoint
    from mlwarp.compiler import contained
    from mlwarp.kernels.compile_cost import ADJOINT_COST, code_size

    assert code_size(_large.func) > ADJOINT_COST * code_size(_small.func)  # (_bounce counted)
    started = []
    read_end, write_end = os.pipe()
    try:
        def start(fn, args, kwargs, name, niceness=0):
            started.append((name, args[1].__self__.options.get("with_adjoint", False)))  # (args: key, k._build)
            return types.SimpleNamespace(fileno=lambda: read_end, pid=0)

        slots = [0]
        monkeypatch.setattr(contained, "start", start)
        monkeypatch.setattr(parallel_compile, "_slots", lambda: slots[0])
        for state in ("_background", "_finished", "_costs"):
            monkeypatch.setattr(parallel_compile, state, {})
        monkeypatch.setattr(parallel_compile, "_queued", [])
        monkeypatch.setattr(parallel_compile, "compiles_in_background", lambda device: True)
        device = wp.get_device("cpu")
        for kernel in (_small, with_adjoint(_small), _large, with_adjoint(_large)):
            kernel.__dict__.pop("_background_requested", None)
            parallel_compile.compile_in_background(kernel, device)
        assert started == []  # (no slot yet)
        for count in range(1, 5):
            slots[0] = count
            parallel_compile._start_queued()
        assert started == [("_large", True), ("_large", False), ("_small", True), ("_small", False)]
    finally:
        os.close(read_end)
        os.close(write_end)
        for kernel in (_small, with_adjoint(_small), _large, with_adjoint(_large)):
            kernel.__dict__.pop("_background_requested", None)


MODULE = textwrap.dedent("""
    import select
    import sys
    import warnings
    from typing import Any

    import numpy as np
    import mlwarp as wp
    from mlwarp.compiler import contained
    from mlwarp.kernels import parallel_compile
    from mlwarp.runtime import cache

    @wp.kernel
    def scale(a: wp.array(dtype=float), s: float):
        i = wp.tid()
        a[i] = a[i] * s

    @wp.kernel
    def shift_square(a: wp.array(dtype=float), b: wp.array(dtype=float), s: float):
        i = wp.tid()
        wp.breakpoint()  # (a warning at its compile)
        b[i] = (a[i] + s) * (a[i] + s)

    @wp.kernel
    def any_negate(a: wp.array(dtype=Any)):  # generic: its types come with its launch
        i = wp.tid()
        a[i] = -a[i]

    def make_halve():
        @wp.kernel
        def halve(a: wp.array(dtype=float)):  # made by a function: maybe never launched as it is
            i = wp.tid()
            a[i] = a[i] * 0.5
        return halve

    halve = make_halve()
    started = []
    real_start = contained.start
    contained.start = lambda fn, args, kwargs, name, niceness=0: (
        started.append(f"{name}:{niceness}"),
        real_start(fn, args, kwargs, name, niceness))[1]
    stores = []
    real_store = cache.store
    cache.store = lambda *a, **k: (stores.append(a[0].rsplit("-", 1)[0]), real_store(*a, **k))[1]  # compiled here
    lookups = []
    real_lookup = cache.lookup
    cache.lookup = lambda key: (lookups.append(key.rsplit("-", 1)[0]), real_lookup(key))[1]
    phase = ["before"]
    issued = []
    warnings.showwarning = lambda message, *rest: issued.append(f"{phase[0]}:{str(message).split()[0]}")
    warnings.simplefilter("always")

    grad = sys.argv[1] == "grad"
    a = wp.array(np.array([1.0, 2.0, 3.0], np.float32), requires_grad=grad)
    b = wp.zeros(3, requires_grad=grad)
    wp.launch(scale, 3, inputs=[a, 2.0])
    scale_lookups = lookups.count("scale")
    # the background compiles finish; their slots are reclaimed (their outcomes kept) before a launch needs them
    while parallel_compile._background or parallel_compile._queued:
        select.select(list(parallel_compile._background.values()), [], [])
        parallel_compile._start_queued()
    print("started", *started)
    print("scale's entry looked up", scale_lookups)
    phase[0] = "launch"
    tape = wp.Tape()
    with tape:
        wp.launch(shift_square, 3, inputs=[a, b, 1.0])
    phase[0] = "after"
    if grad:
        compiled = len(stores)
        tape.backward(grads={b: wp.ones(3)})
        backward = f"{len(stores) - compiled} " + " ".join(str(g) for g in tape.gradients[a].numpy())
    wp.launch(any_negate, 3, inputs=[a])
    wp.launch(halve, 3, inputs=[a])
    print(",".join(sorted(stores)), ",".join(issued), *a.numpy(), *b.numpy())
    if grad:
        print(backward)
""")


def _background_names(started: str) -> list:
    return sorted(name for name in started.split() if name.endswith(":10"))


def test_a_kernels_first_launch_starts_compiling_the_other_kernels_of_its_module(tmp_path):
    # Warp builds a module at the first launch of any of its kernels: shift_square compiles in the background beside
    # scale (not the generic kernel, nor the one a function made); its launch loads it and issues its compile's
    # warning then, not where the program was when that compile ended
    started, _, launched = _run(tmp_path, MODULE, "plain").splitlines()
    assert started == "started shift_square:10 scale:0"
    stores, issued, *values = launched.split()
    assert stores == "any_negate,halve,scale"  # compiled at their own launches
    assert issued == "launch:wp.breakpoint()"
    assert [float(v) for v in values] == [-1.0, -2.0, -3.0, 9.0, 25.0, 49.0]  # -a/2 and (a + 1)^2, a = 2, 4, 6


def test_a_module_compiled_before_starts_no_compile_ahead(tmp_path):
    _run(tmp_path, MODULE, "plain")
    started, looked_up, launched = _run(tmp_path, MODULE, "plain").splitlines()
    assert looked_up == "scale's entry looked up 1"  # (once: whether its module was compiled, then loaded from it)
    assert started == "started"  # scale loaded from the cache: its module's kernels are left to their own launches
    assert launched.split() == ["-1.0", "-2.0", "-3.0", "9.0", "25.0", "49.0"]  # (nothing compiled, nothing issued)


def test_with_gradients_in_sight_the_modules_other_kernels_compile_their_adjoints_too(tmp_path):
    # a requires grad at scale's first launch: scale's adjoint, shift_square and its adjoint compile in the
    # background; the backward pass compiles nothing in the process
    started, _, _, backward = _run(tmp_path, MODULE, "grad").splitlines()
    assert _background_names(started) == ["scale:10", "shift_square:10", "shift_square:10"]
    compiled_here, *grads = backward.split()
    assert compiled_here == "0"
    assert [float(g) for g in grads] == [6.0, 10.0, 14.0]  # 2 (a + 1), a = 2, 4, 6
