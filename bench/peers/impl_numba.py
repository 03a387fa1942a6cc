"""A CPU port of benchmark_cloth_numba.py, which ships for numba.cuda only (one CUDA thread a spring, a particle):
the same two kernels as @njit loops over the springs and the particles, float32 throughout like the CUDA file
(float32 constants, float32 dt), parallel=False: the spring loop scatters into shared particles (the CUDA file's
atomics), which a prange would race on; Warp 1.19 also runs its CPU launches on one thread."""

import math

import numpy as np
from numba import float32, njit

from cloth_setup import GRAVITY_Y


@njit(parallel=False)
def eval_springs(xs, vs, indices, rests, kes, kds, fs):
    for tid in range(rests.shape[0]):
        i = indices[tid * 2]
        j = indices[tid * 2 + 1]
        xij0, xij1, xij2 = xs[i, 0] - xs[j, 0], xs[i, 1] - xs[j, 1], xs[i, 2] - xs[j, 2]
        vij0, vij1, vij2 = vs[i, 0] - vs[j, 0], vs[i, 1] - vs[j, 1], vs[i, 2] - vs[j, 2]
        length = math.sqrt(xij0 * xij0 + xij1 * xij1 + xij2 * xij2)
        l_inv = float32(1.0) / length
        d0, d1, d2 = xij0 * l_inv, xij1 * l_inv, xij2 * l_inv  # normalized spring direction
        c = length - rests[tid]
        dcdt = d0 * vij0 + d1 * vij1 + d2 * vij2
        fac = kes[tid] * c + kds[tid] * dcdt  # mass-spring-damper
        fs[i, 0] -= d0 * fac
        fs[i, 1] -= d1 * fac
        fs[i, 2] -= d2 * fac
        fs[j, 0] += d0 * fac
        fs[j, 1] += d1 * fac
        fs[j, 2] += d2 * fac


@njit(parallel=False)
def integrate_particles(xs, vs, fs, ws, dt):
    for i in range(xs.shape[0]):
        w = ws[i]
        gy = float32(GRAVITY_Y) if w > float32(0.0) else float32(0.0)
        for k in range(3):
            a = gy if k == 1 else float32(0.0)
            vs[i, k] = vs[i, k] + (fs[i, k] * w + a) * dt
            xs[i, k] = xs[i, k] + vs[i, k] * dt
            fs[i, k] = float32(0.0)


class NbIntegrator:
    def __init__(self, cloth):
        self.cloth = cloth
        self.positions = cloth.positions.copy()
        self.velocities = cloth.velocities.copy()
        self.inv_mass = cloth.inv_masses
        self.spring_indices = cloth.spring_indices
        self.spring_lengths = cloth.spring_lengths
        self.spring_stiffness = cloth.spring_stiffness
        self.spring_damping = cloth.spring_damping
        self.forces = np.zeros((cloth.num_particles, 3), dtype=np.float32)

    def simulate(self, dt, substeps):
        sim_dt = np.float32(dt / substeps)
        for _ in range(substeps):
            eval_springs(self.positions, self.velocities, self.spring_indices, self.spring_lengths,
                         self.spring_stiffness, self.spring_damping, self.forces)
            integrate_particles(self.positions, self.velocities, self.forces, self.inv_mass, sim_dt)
        return self.positions
