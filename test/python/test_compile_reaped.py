"""A compile process that sent its result back is not waited for while it exits (compiler/contained.py): it is
collected at the next compile, and what it printed still reaches the user's stderr whole."""

import os
import time

import numpy as np

import mlwarp as wp
from mlwarp.compiler import contained
from mlwarp.compiler.targets.cpu import table as cpu_target


def _collect_all():
    for _ in range(500):  # a child that sent its result exits soon after; poll until it has
        contained._reap()
        if not contained._exiting:
            return True
        time.sleep(0.01)
    return False


def test_compile_processes_are_collected(tmp_path, monkeypatch):
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path / "cache"))
    pids = []
    fork = os.fork

    def recording_fork():
        pid = fork()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", recording_fork)
    for scale in (2.0, 3.0, 4.0):
        @wp.kernel
        def scaled(x: wp.array(dtype=float), s: float):
            i = wp.tid()
            x[i] = s * float(i)

        x = wp.zeros(4, dtype=float)
        wp.launch(wp.Kernel(scaled.func, key=f"scaled_{int(scale)}"), 4, inputs=[x, scale])
        np.testing.assert_array_equal(x.numpy(), scale * np.arange(4))
    monkeypatch.undo()
    assert len(pids) == 3
    assert _collect_all()
    for pid in pids:  # none is left as a zombie of this process
        try:
            os.waitpid(pid, os.WNOHANG)
            assert False, f"compile process {pid} was not collected"
        except ChildProcessError:
            pass


def test_what_the_compile_process_prints_arrives_whole(tmp_path, monkeypatch, capfd):
    monkeypatch.setattr(wp.config, "kernel_cache_dir", str(tmp_path / "cache"))
    link = cpu_target.link

    def printing_link(*args, **kwargs):
        os.write(2, b"from the compiler's C side\n")
        import sys

        sys.stderr.write("from the compiler's Python side, " + "x" * 20000 + " end\n")  # buffered
        return link(*args, **kwargs)

    monkeypatch.setattr(cpu_target, "link", printing_link)

    @wp.kernel
    def prints_while_compiling(x: wp.array(dtype=float)):
        i = wp.tid()
        x[i] = 5.0

    x = wp.zeros(2, dtype=float)
    wp.launch(prints_while_compiling, 2, inputs=[x])
    np.testing.assert_array_equal(x.numpy(), [5.0, 5.0])
    err = capfd.readouterr().err
    assert "from the compiler's C side\n" in err
    assert "from the compiler's Python side, " + "x" * 20000 + " end\n" in err
