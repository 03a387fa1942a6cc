"""benchmark_cloth_numpy.py's NpIntegrator as shipped (np.add.at for the scatter), but for gravity: Warp's 9.81
(cloth_setup.GRAVITY_Y) for the shipped 9.8."""

import numpy as np

from cloth_setup import GRAVITY_Y


def eval_springs(x, v, indices, rest, ke, kd, f):
    i = indices[:, 0]
    j = indices[:, 1]
    xij = x[i] - x[j]
    vij = v[i] - v[j]
    l = np.linalg.norm(xij, axis=1)  # noqa: E741
    l_inv = 1.0 / l
    dir = (xij.T * l_inv).T
    c = l - rest
    dcdt = np.sum(dir * vij, axis=1)
    fs = dir.T * (ke * c + kd * dcdt)
    np.add.at(f, i, -fs.T)
    np.add.at(f, j, fs.T)


def integrate_particles(x, v, f, w, dt):
    g = np.array((0.0, GRAVITY_Y, 0.0))
    s = w > 0.0
    a_ext = g * s[:, None]
    v += ((f.T * w).T + a_ext) * dt
    x += v * dt
    f *= 0.0


class NpIntegrator:
    def __init__(self, cloth):
        self.cloth = cloth
        self.forces = np.zeros((cloth.num_particles, 3), dtype=np.float32)

    def simulate(self, dt, substeps):
        sim_dt = dt / substeps
        for _ in range(substeps):
            eval_springs(self.cloth.positions, self.cloth.velocities,
                         self.cloth.spring_indices.reshape((self.cloth.num_springs, 2)), self.cloth.spring_lengths,
                         self.cloth.spring_stiffness, self.cloth.spring_damping, self.forces)
            integrate_particles(self.cloth.positions, self.cloth.velocities, self.forces, self.cloth.inv_masses,
                                sim_dt)
        return self.cloth.positions
