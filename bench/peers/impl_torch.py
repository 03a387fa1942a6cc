"""benchmark_cloth_pytorch.py's TrIntegrator on the CPU as shipped (torch's default intra-op thread count), but
for gravity: Warp's 9.81 (cloth_setup.GRAVITY_Y) for the shipped 9.8."""

import torch

from cloth_setup import GRAVITY_Y


def eval_springs(x, v, indices, rest, ke, kd, f):
    i = indices[:, 0]
    j = indices[:, 1]
    xij = x[i] - x[j]
    vij = v[i] - v[j]
    l = torch.linalg.norm(xij, axis=1)  # noqa: E741
    l_inv = 1.0 / l
    dir = (xij.T * l_inv).T
    c = l - rest
    dcdt = torch.sum(dir * vij, axis=1)
    fs = dir.T * (ke * c + kd * dcdt)
    f.index_add_(dim=0, index=i, source=-fs.T)
    f.index_add_(dim=0, index=j, source=fs.T)


def integrate_particles(x, v, f, g, w, dt):
    s = w > 0.0
    a_ext = g * s[:, None]
    v += ((f.T * w).T + a_ext) * dt
    x += v * dt
    f *= 0.0


class TrIntegrator:
    def __init__(self, cloth, device="cpu"):
        self.cloth = cloth
        self.positions = torch.tensor(cloth.positions, device=device)
        self.velocities = torch.tensor(cloth.velocities, device=device)
        self.inv_mass = torch.tensor(cloth.inv_masses, device=device)
        self.spring_indices = torch.tensor(cloth.spring_indices, device=device, dtype=torch.long)
        self.spring_lengths = torch.tensor(cloth.spring_lengths, device=device)
        self.spring_stiffness = torch.tensor(cloth.spring_stiffness, device=device)
        self.spring_damping = torch.tensor(cloth.spring_damping, device=device)
        self.forces = torch.zeros((cloth.num_particles, 3), dtype=torch.float32, device=device)
        self.gravity = torch.tensor((0.0, GRAVITY_Y, 0.0), dtype=torch.float32, device=device)

    def simulate(self, dt, substeps):
        sim_dt = dt / substeps
        for _ in range(substeps):
            eval_springs(self.positions, self.velocities, self.spring_indices.reshape((self.cloth.num_springs, 2)),
                         self.spring_lengths, self.spring_stiffness, self.spring_damping, self.forces)
            integrate_particles(self.positions, self.velocities, self.forces, self.gravity, self.inv_mass, sim_dt)
        return self.positions.cpu().numpy()
