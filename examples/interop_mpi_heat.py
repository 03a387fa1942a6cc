"""A 1-D heat equation split across MPI ranks: each rank runs the mlwarp stencil kernel on its slab and
swaps one ghost cell with each neighbour per step, passing wp.arrays straight to mpi4py. Rank 0
gathers the result and checks it against the whole rod computed by numpy in one process.

    mpirun -n 2 python examples/interop_mpi_heat.py        (as root, OpenMPI also wants
                                                            OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
"""

import sys

import numpy as np
from mpi4py import MPI

import mlwarp as wp

N = 4096  # cells in the whole rod
STEPS = 200
ALPHA = 0.25


@wp.kernel
def diffuse(src: wp.array(dtype=float), dst: wp.array(dtype=float), alpha: float, first: int, last: int):
    # src/dst hold this rank's cells at 1..n with a ghost cell at each end
    i = wp.tid() + 1
    if (first == 1 and i == 1) or (last == 1 and i == src.shape[0] - 2):
        dst[i] = src[i]  # the rod's ends are held at their temperature
    else:
        dst[i] = src[i] + alpha * (src[i - 1] - 2.0 * src[i] + src[i + 1])


def initial(n):
    x = np.linspace(0.0, 1.0, n, dtype=np.float32)
    return np.where(np.abs(x - 0.5) < 0.1, np.float32(100.0), np.float32(0.0)).astype(np.float32)


def numpy_reference(u, steps, alpha):
    u = u.copy()
    for _ in range(steps):
        v = u.copy()
        v[1:-1] = u[1:-1] + np.float32(alpha) * (u[:-2] - np.float32(2.0) * u[1:-1] + u[2:])
        u = v
    return u


def exchange_ghosts(comm, u):
    """Swap the edge cells with the neighbouring ranks (wp.array views go straight into mpi4py)."""
    rank, size = comm.rank, comm.size
    n = u.shape[0] - 2
    if rank > 0:
        comm.Sendrecv(u[1:2], dest=rank - 1, sendtag=0, recvbuf=u[0:1], source=rank - 1, recvtag=1)
    if rank < size - 1:
        comm.Sendrecv(u[n:n + 1], dest=rank + 1, sendtag=1, recvbuf=u[n + 1:n + 2], source=rank + 1, recvtag=0)


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    if N % size:
        raise SystemExit(f"{N} cells do not split over {size} ranks")
    n = N // size
    whole = initial(N)
    u = wp.zeros(n + 2)
    u.numpy()[1:-1] = whole[rank * n:(rank + 1) * n]
    v = wp.zeros(n + 2)
    for _ in range(STEPS):
        exchange_ghosts(comm, u)
        wp.launch(diffuse, dim=n, inputs=[u, v, ALPHA, int(rank == 0), int(rank == size - 1)])
        u, v = v, u
    total = np.zeros(1, dtype=np.float32)
    comm.Reduce(wp.array([u.numpy()[1:-1].sum()], dtype=wp.float32), total, op=MPI.SUM, root=0)
    gathered = wp.zeros(N) if rank == 0 else None
    comm.Gather(wp.clone(u[1:n + 1]), gathered, root=0)
    if rank == 0:
        ref = numpy_reference(whole, STEPS, ALPHA)
        err = float(np.abs(gathered.numpy() - ref).max())
        print(f"{size} ranks x {n} cells, {STEPS} steps: heat {total[0]:.3f} (numpy {ref.sum():.3f}), "
              f"max |mpi - numpy| = {err:.2e}")
        ok = err <= 1e-4
        print("matches numpy" if ok else "MISMATCH")
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
