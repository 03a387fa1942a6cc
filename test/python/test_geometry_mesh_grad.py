"""Gradients through wp.mesh_get(id).points and .velocities (Warp's Mesh holds the user's arrays with their
grads, so a loss read through m.points[m.indices[...]] reaches points.grad): against finite differences of a
numpy forward; a mesh over arrays without grads differentiates without writing anywhere; the grad address
follows refit and new points; the mesh_* builtins pass the points nothing, as Warp's (MISSINGADJOINT)."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path

# a tetrahedron, a little irregular so no gradient component vanishes by symmetry
POINTS = np.array([[0.0, 0.1, 0.0], [1.2, 0.0, 0.1], [0.1, 0.9, 0.2], [0.2, 0.1, 1.1]])
FACES = np.array([0, 1, 2, 0, 2, 3, 0, 3, 1, 1, 3, 2], dtype=np.int32)
CUDA = wp.is_cuda_available()
# on a GPU the same kernels' adjoints run there, against the mesh's device arrays and their device grads
DEVICES = ["cpu", pytest.param("cuda:0", marks=pytest.mark.skipif(not CUDA, reason="no CUDA device on this machine"))]
VELOCITIES = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-2.0, 1.0, 0.75], [0.3, 0.6, -0.9]])


@wp.func
def triangle_area(mesh: wp.uint64, f: int):
    m = wp.mesh_get(mesh)
    a = m.points[m.indices[f * 3 + 0]]
    b = m.points[m.indices[f * 3 + 1]]
    c = m.points[m.indices[f * 3 + 2]]
    return wp.length(wp.cross(b - a, c - a)) * 0.5


@wp.kernel
def area_loss(mesh: wp.uint64, loss: wp.array(dtype=float)):
    wp.atomic_add(loss, 0, triangle_area(mesh, wp.tid()))


@wp.kernel
def looped_area_loss(mesh: wp.uint64, num_faces: int, loss: wp.array(dtype=float)):
    total = float(0.0)
    for f in range(num_faces):  # one thread, the faces in a loop: the reverse loop accumulates each read
        total += triangle_area(mesh, f)
    loss[0] = total


@wp.kernel
def momentum_loss(mesh: wp.uint64, weight: wp.array(dtype=float), loss: wp.array(dtype=float)):
    f = wp.tid()
    m = wp.mesh_get(mesh)
    for k in range(3):
        i = m.indices[f * 3 + k]
        p = m.points[i]
        v = m.velocities[i]
        wp.atomic_add(loss, 0, weight[0] * wp.dot(v, p) + wp.dot(v, v))


@wp.kernel
def builtins_loss(mesh: wp.uint64, bary: wp.array(dtype=wp.vec2), loss: wp.array(dtype=float)):
    f = wp.tid()
    x = wp.mesh_eval_position(mesh, f, bary[f][0], bary[f][1]) + wp.mesh_get_point(mesh, f * 3)
    x += wp.mesh_eval_face_normal(mesh, f) + wp.mesh_eval_velocity(mesh, f, 0.25, 0.25)
    wp.atomic_add(loss, 0, wp.dot(x, x))


def areas(points: np.ndarray) -> float:
    a, b, c = (points[FACES.reshape(-1, 3)[:, k]] for k in range(3))
    return float(np.sum(np.linalg.norm(np.cross(b - a, c - a), axis=1) * 0.5))


def momentum(points: np.ndarray, velocities: np.ndarray, weight: float) -> float:
    i = FACES
    return float(np.sum(weight * np.sum(velocities[i] * points[i], axis=1) + np.sum(velocities[i] ** 2, axis=1)))


def finite_difference(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[k] += eps
        lo[k] -= eps
        g[k] = (f(hi) - f(lo)) / (2 * eps)
    return g


def make_mesh(points_grad=True, velocities=None, velocities_grad=False, device="cpu"):
    pos = wp.array(POINTS, dtype=wp.vec3, requires_grad=points_grad, device=device)
    vel = None if velocities is None else wp.array(velocities, dtype=wp.vec3, requires_grad=velocities_grad,
                                                   device=device)
    faces = wp.array(FACES, dtype=wp.int32, device=device)
    return wp.Mesh(points=pos, indices=faces, velocities=vel), pos, vel


def backward(kernel, dim, inputs, device="cpu"):
    loss = wp.zeros(1, dtype=float, requires_grad=True, device=device)
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim=dim, inputs=inputs, outputs=[loss], device=device)
    tape.backward(loss=loss)
    return tape, loss


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("looped", [False, True])
def test_area_gradient_matches_finite_differences(looped, device):
    mesh, pos, _ = make_mesh(device=device)
    if looped:
        _, loss = backward(looped_area_loss, 1, [mesh.id, len(FACES) // 3], device)
    else:
        _, loss = backward(area_loss, len(FACES) // 3, [mesh.id], device)
    assert loss.numpy()[0] == pytest.approx(areas(POINTS), rel=1e-5)
    np.testing.assert_allclose(pos.grad.numpy(), finite_difference(areas, POINTS), rtol=1e-4, atol=1e-5)


def test_velocity_and_point_gradients_match_finite_differences():
    mesh, pos, vel = make_mesh(velocities=VELOCITIES, velocities_grad=True)
    weight = wp.array([0.7], dtype=float, requires_grad=True)
    _, loss = backward(momentum_loss, len(FACES) // 3, [mesh.id, weight])
    assert loss.numpy()[0] == pytest.approx(momentum(POINTS, VELOCITIES, 0.7), rel=1e-5)
    np.testing.assert_allclose(pos.grad.numpy(), finite_difference(lambda p: momentum(p, VELOCITIES, 0.7), POINTS),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(vel.grad.numpy(), finite_difference(lambda v: momentum(POINTS, v, 0.7), VELOCITIES),
                               rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(weight.grad.numpy(), [np.sum(VELOCITIES[FACES] * POINTS[FACES])], rtol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_arrays_without_grads_differentiate_the_rest(device):
    """Points and velocities without requires_grad have grad address 0: the adjoint skips them (it would
    write through null) and still differentiates the kernel's own arguments."""
    mesh, pos, vel = make_mesh(points_grad=False, velocities=VELOCITIES, velocities_grad=False, device=device)
    weight = wp.array([0.7], dtype=float, requires_grad=True, device=device)
    backward(momentum_loss, len(FACES) // 3, [mesh.id, weight], device)
    assert pos.grad is None and vel.grad is None
    np.testing.assert_allclose(weight.grad.numpy(), [np.sum(VELOCITIES[FACES] * POINTS[FACES])], rtol=1e-5)

    mesh, pos, vel = make_mesh(points_grad=True, velocities=VELOCITIES, velocities_grad=False, device=device)
    backward(momentum_loss, len(FACES) // 3, [mesh.id, weight], device)  # one of the two with a grad
    np.testing.assert_allclose(pos.grad.numpy(), finite_difference(lambda p: momentum(p, VELOCITIES, 0.7), POINTS),
                               rtol=1e-4, atol=1e-5)


def test_zeroed_gradients_accumulate_afresh():
    """The descriptor holds the grad array's address, so zeroing it in place (the tape sees mesh.id, not the
    points: as in Warp, tape.zero() leaves them) and running backward again gives the same gradient."""
    mesh, pos, _ = make_mesh()
    tape, loss = backward(area_loss, len(FACES) // 3, [mesh.id])
    first = pos.grad.numpy().copy()
    tape.zero()
    pos.grad.zero_()
    assert not pos.grad.numpy().any() and not loss.grad.numpy().any()
    tape.backward(loss=loss)
    np.testing.assert_allclose(pos.grad.numpy(), first, rtol=1e-6)


def test_grad_address_follows_new_points_and_refit():
    mesh, pos, _ = make_mesh()
    moved = POINTS + np.array([0.1, -0.2, 0.3]) * POINTS[:, :1]
    new = wp.array(moved, dtype=wp.vec3, requires_grad=True)
    mesh.points = new  # refits; the new array's grad is the one to fill
    backward(area_loss, len(FACES) // 3, [mesh.id])
    np.testing.assert_allclose(new.grad.numpy(), finite_difference(areas, moved), rtol=1e-4, atol=1e-5)
    assert not pos.grad.numpy().any()

    # mlwarp rewrites the whole descriptor on refit(), so a .grad replaced since is seen from then on (Warp keeps
    # the grad pointer the mesh was built with until new points are assigned)
    new.grad = wp.zeros_like(new)
    mesh.refit()
    backward(area_loss, len(FACES) // 3, [mesh.id])
    np.testing.assert_allclose(new.grad.numpy(), finite_difference(areas, moved), rtol=1e-4, atol=1e-5)


def test_mesh_builtins_pass_the_points_nothing():
    """As Warp 1.19: mesh_eval_position, mesh_get_point, mesh_eval_face_normal and mesh_eval_velocity have no
    adjoint in the mesh's arrays; the barycentric coordinates still get theirs."""
    mesh, pos, vel = make_mesh(velocities=VELOCITIES, velocities_grad=True)
    bary = wp.array([[0.2, 0.3]] * 4, dtype=wp.vec2, requires_grad=True)
    backward(builtins_loss, len(FACES) // 3, [mesh.id, bary])
    assert not pos.grad.numpy().any() and not vel.grad.numpy().any()
    assert np.abs(bary.grad.numpy()).sum() > 0


def test_user_kernels_cannot_pass_a_grad_address():
    @wp.kernel
    def with_grad(a: wp.array(dtype=float)):
        b = wp.array(ptr=a.ptr, shape=(2,), dtype=float, grad=a.ptr)  # noqa: F841

    with pytest.raises(wp.CompileError, match=r"in 'with_grad': wp\.array\(\) in a kernel takes the arguments "
                                              r"ptr, shape and dtype \(an array over existing memory\)"):
        wp.launch(with_grad, dim=1, inputs=[wp.zeros(2)])


@pytest.mark.skipif(ptxas_path() is None, reason="needs ptxas")
def test_gradient_kernels_compile_for_cuda():
    """The adjoints, with their null checks and atomics into the grad memory, lower for the CUDA table and ptxas
    assembles them for sm_90 (no GPU needed; test_geometry_cuda_exec.py runs meshes on a GPU where there is one)."""
    from mlwarp.launching import cuda_compile

    for k in (area_loss, looped_area_loss, momentum_loss):
        meta = cuda_compile.build(k, 90)
        assert meta["cubin"] == "kernel.cubin" and meta["adj_error"] is None, (k.key, meta.get("adj_error"))
