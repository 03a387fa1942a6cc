"""benchmark_cloth_jax.py's JxIntegrator on the CPU, with its spring forces assigned: the shipped file calls
`f.at[i].add(-fs.T)` and `f.at[j].add(fs.T)` and drops their results (JAX arrays are immutable), so its
eval_springs returns zeros and its cloth falls freely; here `f = f.at[i].add(...)`. Also dropped: the shipped
constructor's `print(positions.device_buffer.device())` (an attribute later JAX versions removed). Gravity: Warp's
9.81 (cloth_setup.GRAVITY_Y) for the shipped 9.8."""

import jax
import jax.numpy as jnp
import numpy as np

from cloth_setup import GRAVITY_Y


@jax.jit
def eval_springs(x, v, indices, rest, ke, kd):
    i = indices[:, 0]
    j = indices[:, 1]
    xij = x[i] - x[j]
    vij = v[i] - v[j]
    l = jnp.linalg.norm(xij, axis=1)  # noqa: E741
    l_inv = 1.0 / l
    dir = (xij.T * l_inv).T
    c = l - rest
    dcdt = jnp.sum(dir * vij, axis=1)
    fs = dir.T * (ke * c + kd * dcdt)
    f = jnp.zeros_like(v)
    f = f.at[i].add(-fs.T)
    f = f.at[j].add(fs.T)
    return f


@jax.jit
def eval_springs_as_shipped(x, v, indices, rest, ke, kd):
    """The shipped eval_springs, kept to show that the position check flags it: the `f.at[...].add` results are
    dropped, so the forces are zeros."""
    i = indices[:, 0]
    j = indices[:, 1]
    xij = x[i] - x[j]
    vij = v[i] - v[j]
    l = jnp.linalg.norm(xij, axis=1)  # noqa: E741
    dir = (xij.T * (1.0 / l)).T
    fs = dir.T * (ke * (l - rest) + kd * jnp.sum(dir * vij, axis=1))
    f = jnp.zeros_like(v)
    f.at[i].add(-fs.T)
    f.at[j].add(fs.T)
    return f


@jax.jit
def integrate_particles(x, v, f, w, dt):
    g = jnp.array((0.0, GRAVITY_Y, 0.0))
    s = w > 0.0
    a_ext = g * s[:, None]
    v += ((f.T * w).T + a_ext) * dt
    x += v * dt
    return (x, v)


class JxIntegrator:
    spring_forces = staticmethod(eval_springs)

    def __init__(self, cloth):
        self.cloth = cloth
        self.positions = jnp.array(cloth.positions)
        self.velocities = jnp.array(cloth.velocities)
        self.inv_mass = jnp.array(cloth.inv_masses)
        self.spring_indices = jnp.array(cloth.spring_indices)
        self.spring_lengths = jnp.array(cloth.spring_lengths)
        self.spring_stiffness = jnp.array(cloth.spring_stiffness)
        self.spring_damping = jnp.array(cloth.spring_damping)

    def simulate(self, dt, substeps):
        sim_dt = dt / substeps
        for _ in range(substeps):
            f = self.spring_forces(self.positions, self.velocities,
                             self.spring_indices.reshape((self.cloth.num_springs, 2)), self.spring_lengths,
                             self.spring_stiffness, self.spring_damping)
            self.positions, self.velocities = integrate_particles(self.positions, self.velocities, f,
                                                                  self.inv_mass, sim_dt)
        return np.array(self.positions)


class JxIntegratorAsShipped(JxIntegrator):
    spring_forces = staticmethod(eval_springs_as_shipped)
