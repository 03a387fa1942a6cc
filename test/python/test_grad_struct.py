"""Gradients through @wp.struct values (fields read, a copy with a field replaced) against central
finite differences in float64 of a numpy forward written here; a struct array read at an index several threads
share: its adjoint is an atomic add of the struct, field by field (Warp's adj_atomic_add of a struct)."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp

f64 = wp.float64


@wp.struct
class Particle:
    pos: wp.vec3d
    mass: f64
    id: int


@wp.kernel
def energy(ps: wp.array(dtype=Particle), e: wp.array(dtype=f64)):
    i = wp.tid()
    p = ps[i]
    q = p
    q.mass = p.mass * f64(2.0)
    e[i] = q.mass * wp.dot(p.pos, p.pos) + wp.sin(p.pos[1]) * f64(float(p.id))


def particles(pos, mass):
    a = wp.zeros(len(mass), dtype=Particle)
    v = a.numpy()
    v["pos"], v["mass"], v["id"] = pos, mass, np.arange(1, len(mass) + 1)
    return a


def energies(pos, mass):
    """numpy forward of `energy`: q is a copy of p with twice its mass; ids are 1, 2, ..."""
    return 2 * mass * np.sum(pos * pos, axis=1) + np.sin(pos[:, 1]) * np.arange(1, len(mass) + 1)


def mlwarp_energies(pos, mass):
    e = wp.zeros(len(mass), dtype=f64)
    wp.launch(energy, len(mass), inputs=[particles(pos, mass)], outputs=[e])
    return e.numpy().copy()


def test_struct_fields_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    pos, mass = rng.normal(size=(3, 3)), np.array([0.5, 1.5, 2.5])
    np.testing.assert_allclose(mlwarp_energies(pos, mass), energies(pos, mass), rtol=1e-14)
    adj = wp.zeros(3, dtype=Particle)
    wp.launch(energy, 3, inputs=[particles(pos, mass)], outputs=[wp.zeros(3, dtype=f64)], adjoint=True,
              adj_inputs=[adj], adj_outputs=[wp.ones(3, dtype=f64)])
    h = 1e-6
    fd_pos = np.zeros_like(pos)
    for idx in np.ndindex(pos.shape):
        p, m = pos.copy(), pos.copy()
        p[idx] += h
        m[idx] -= h
        fd_pos[idx] = np.sum(energies(p, mass) - energies(m, mass)) / (2 * h)
    fd_mass = np.array([np.sum(energies(pos, mass + h * e) - energies(pos, mass - h * e)) / (2 * h)
                        for e in np.eye(3)])
    np.testing.assert_allclose(adj.numpy()["pos"], fd_pos, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(adj.numpy()["mass"], fd_mass, rtol=1e-6)
    np.testing.assert_array_equal(adj.numpy()["id"], 0)


@wp.kernel
def shared(ps: wp.array(dtype=Particle), e: wp.array(dtype=f64)):
    i = wp.tid()
    p = ps[0]
    e[i] = p.mass * wp.dot(p.pos, p.pos)


def test_struct_read_at_a_shared_index_adds_every_threads_adjoint():
    ps = particles(np.array([[1.0, 2.0, 3.0]]), np.array([2.0]))
    e = wp.zeros(3, dtype=f64)
    wp.launch(shared, 3, inputs=[ps], outputs=[e])
    assert e.numpy().tolist() == [28.0, 28.0, 28.0]
    adj = wp.zeros(1, dtype=Particle)
    wp.launch(shared, 3, inputs=[ps], outputs=[e], adjoint=True, adj_inputs=[adj],
              adj_outputs=[wp.ones(3, dtype=f64)])
    # closed form, 3 threads: d/dpos (m pos.pos) = 2 m pos, d/dm = pos.pos; the int field takes no adjoint
    np.testing.assert_array_equal(adj.numpy()["pos"], [3 * 2 * 2.0 * np.array([1.0, 2.0, 3.0])])
    np.testing.assert_array_equal(adj.numpy()["mass"], [3 * 14.0])
    np.testing.assert_array_equal(adj.numpy()["id"], [0])
