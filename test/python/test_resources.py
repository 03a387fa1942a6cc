"""Resources: create/launch/free cycles keep memory flat, views keep their base alive, and launches from
several Python threads at once are safe and correct."""

import gc
import threading

import numpy as np

import mlwarp as wp

N = 1 << 16  # 256 KiB of float32 per array: leaking one per cycle would be gigabytes


@wp.kernel
def axpy(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32), a: float):
    i = wp.tid()
    y[i] = a * x[i] + y[i]


@wp.kernel
def fill_index(out: wp.array(dtype=wp.int32), offset: int):
    i = wp.tid()
    out[i] = i + offset


def rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def cycle(k):
    x = wp.full(N, 1.0, dtype=wp.float32)
    y = wp.zeros(N, dtype=wp.float32)
    wp.launch(axpy, N, inputs=[x, y, float(k % 7)])
    value = float(y.numpy()[N - 1])
    del x, y
    return value


def test_ten_thousand_create_launch_free_cycles_keep_memory_flat():
    for k in range(500):  # warm-up: compile, thread pool, allocator pools
        cycle(k)
    gc.collect()
    before = rss_bytes()
    for k in range(500, 10_000):
        assert cycle(k) == float(k % 7)
    gc.collect()
    grown = rss_bytes() - before
    # 9,500 cycles of 2 x 256 KiB: a leak of one array per cycle is 2.3 GiB, of one launch struct or
    # ctypes object per cycle still several MiB
    assert grown < 24 * 1024 * 1024, f"RSS grew by {grown / 2**20:.1f} MiB over 9,500 cycles"


def test_a_view_keeps_its_base_alive():
    base = wp.array(np.arange(100, dtype=np.int32))
    view = base[10:20]
    del base
    gc.collect()
    _ = [np.full(1000, -1, dtype=np.int32) for _ in range(100)]  # reuse freed memory, if any was freed
    np.testing.assert_array_equal(view.numpy(), np.arange(10, 20))
    wp.launch(fill_index, 10, inputs=[view, 5])
    np.testing.assert_array_equal(view.numpy(), np.arange(5, 15))


def test_an_array_over_numpy_memory_keeps_it_alive():
    data = np.arange(50, dtype=np.int32)
    arr = wp.array(data, dtype=wp.int32, copy=False)
    del data
    gc.collect()
    wp.launch(fill_index, 50, inputs=[arr, 1])
    np.testing.assert_array_equal(arr.numpy(), np.arange(1, 51))


def test_launches_from_several_threads_at_once():
    errors = []
    start = threading.Barrier(4)

    def worker(w):
        try:
            start.wait()
            for k in range(150):
                out = wp.empty(257 + w, dtype=wp.int32)
                wp.launch(fill_index, out.shape[0], inputs=[out, w * 1000 + k])
                expected = np.arange(out.shape[0]) + w * 1000 + k
                if not np.array_equal(out.numpy(), expected):
                    errors.append((w, k))
                x = wp.full(N, 2.0, dtype=wp.float32)  # large enough to use the CPU thread pool too
                y = wp.full(N, float(w), dtype=wp.float32)
                wp.launch(axpy, N, inputs=[x, y, 0.5])
                if not np.all(y.numpy() == 1.0 + w):
                    errors.append((w, k, "axpy"))
        except Exception as e:  # noqa: BLE001  (reported below with the thread's number)
            errors.append((w, repr(e)))

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_first_compile_from_several_threads_at_once(tmp_path):
    """Threads that all launch a kernel nobody compiled yet get one compile and correct results."""
    src = tmp_path / "threads_first_compile.py"
    src.write_text(
        "import mlwarp as wp\n\n\n"
        "@wp.kernel\n"
        "def triple(out: wp.array(dtype=wp.int32), k: int):\n"
        "    i = wp.tid()\n"
        "    out[i] = 3 * i + k\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("threads_first_compile", src)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = {}
    start = threading.Barrier(4)

    def worker(w):
        start.wait()
        out = wp.zeros(16, dtype=wp.int32)
        wp.launch(module.triple, 16, inputs=[out, w])
        results[w] = out.numpy().tolist()

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {w: [3 * i + w for i in range(16)] for w in range(4)}
    assert len(module.triple._compiled) == 1
