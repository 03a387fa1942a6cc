"""The cloth of Warp's cross-framework benchmark (warp/examples/benchmarks/benchmark_cloth.py, `Cloth` and
`run_benchmark`'s parameters): a dim x dim grid 0.1 apart, stretch, bend and shear springs of stiffness 1000 and
damping 10, mass 0.1, the two corners of the first row fixed (inverse mass 0). numpy only: every worker builds the
same arrays in its own interpreter."""

import numpy as np

FPS = 60.0
SUBSTEPS = 16  # benchmark_cloth.py's sim_substeps
FRAME_DT = 1.0 / FPS
FRAMES = 60  # benchmark_cloth.py's sim_frames (one second): the frames run before positions are compared
# benchmark_cloth_warp.py's and _taichi.py's gravity; the shipped numpy, torch, jax and numba files use 9.8, set to
# Warp's here so that every implementation steps the same physics
GRAVITY_Y = -9.81


class Cloth:
    """benchmark_cloth.py's Cloth(lower=(0, 0, 0), dx=dy=dim, radius=0.1, stretch = bend = shear stiffness 1000,
    mass=0.1, fix_corners=True): the same arrays in the same order (positions, velocities, inv_masses,
    spring_indices flat (i0, j0, i1, j1, ...), spring_lengths, spring_stiffness, spring_damping)."""

    def __init__(self, dim, radius=0.1, stiffness=1000.0, damping=10.0, mass=0.1):
        positions = [radius * np.array((float(x), 0.0, float(y))) for y in range(dim) for x in range(dim)]
        inv_masses = [0.0 if y == 0 and x in (0, dim - 1) else 1.0 / mass for y in range(dim) for x in range(dim)]
        pairs = []
        for y in range(dim):  # horizontal, bend, and the two shear diagonals
            for x in range(dim):
                i = y * dim + x
                if x > 0:
                    pairs.append((i, y * dim + x - 1))
                if x > 1:
                    pairs.append((i, y * dim + x - 2))
                if y > 0 and x < dim - 1:
                    pairs.append((i, (y - 1) * dim + x + 1))
                if y > 0 and x > 0:
                    pairs.append((i, (y - 1) * dim + x - 1))
        for x in range(dim):  # vertical and bend
            for y in range(dim):
                i = y * dim + x
                if y > 0:
                    pairs.append((i, (y - 1) * dim + x))
                if y > 1:
                    pairs.append((i, (y - 2) * dim + x))
        pair_array = np.array(pairs, np.int64)
        lengths = np.linalg.norm(np.array(positions)[pair_array[:, 0]] - np.array(positions)[pair_array[:, 1]],
                                 axis=1)
        self.positions = np.array(positions, np.float32)
        self.velocities = np.zeros_like(self.positions)
        self.inv_masses = np.array(inv_masses, np.float32)
        self.spring_indices = pair_array.reshape(-1).astype(np.int32)
        self.spring_lengths = lengths.astype(np.float32)
        self.spring_stiffness = np.full(len(pairs), stiffness, np.float32)
        self.spring_damping = np.full(len(pairs), damping, np.float32)
        self.num_particles = len(self.positions)
        self.num_springs = len(pairs)
