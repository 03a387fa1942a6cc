"""Geometry structures and their queries executed on every device: the CPU always, a CUDA device when one is
present (skipped, with the reason, on a machine without a GPU, as test_cuda_exec.py). On the GPU the structures
are built from device arrays, their descriptors are in device memory, and the query kernels run there; each
check (geometry_device_checks.py) compares with brute force in numpy."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.core import geometry as layout
from mlwarp.runtime.cuda import memory as mem

import geometry_device_checks as checks

CUDA = wp.is_cuda_available()
NO_GPU = "no CUDA device on this machine (needs a GPU, its driver and cuda-python)"

DEVICES = ["cpu", pytest.param("cuda:0", marks=pytest.mark.skipif(not CUDA, reason=NO_GPU))]
GPU_ONLY = pytest.mark.skipif(not CUDA, reason=NO_GPU)


@pytest.mark.parametrize("device", DEVICES)
def test_mesh_queries(device):
    checks.check_mesh_queries(device)


@pytest.mark.parametrize("device", DEVICES)
def test_mesh_refit(device):
    checks.check_mesh_refit(device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("constructor", [None, "median"])
def test_bvh_queries(device, constructor):
    checks.check_bvh_queries(device, constructor)


@pytest.mark.parametrize("device", DEVICES)
def test_bvh_refit_and_rebuild(device):
    checks.check_bvh_refit_and_rebuild(device)


@pytest.mark.parametrize("device", DEVICES)
def test_hash_grid_neighbours(device):
    checks.check_hash_grid_neighbours(device)


@pytest.mark.parametrize("device", DEVICES)
def test_grouped_float64_hash_grid(device):
    checks.check_grouped_f64_hash_grid(device)


@pytest.mark.parametrize("device", DEVICES)
def test_grouped_mesh(device):
    checks.check_grouped_mesh(device)


@pytest.mark.parametrize("device", DEVICES)
def test_volume_stores_lookups_and_samples(device):
    checks.check_volume(device)


@GPU_ONLY
def test_device_descriptors_hold_the_users_device_arrays():
    pts, tris = checks.triangle_soup(20, 1)
    mesh = checks.device_mesh(pts, tris, "cuda:0")
    words = mesh._mirror.read_descriptor()
    assert words[layout.MESH_POINTS] == mesh.points.ptr and words[layout.MESH_INDICES] == mesh.indices.ptr
    assert words[layout.MESH_BVH] == mesh._bvh.id == mesh._bvh._mirror.id


@GPU_ONLY
def test_device_memory_is_returned_with_the_structures():
    """The device allocations a Mesh, a Bvh and a HashGrid make (runtime/cuda/memory.py Allocations) are
    all freed when the structures go; the user's arrays stay."""
    pts, tris = checks.triangle_soup(200, 2)
    points = wp.array(pts, dtype=wp.vec3, device="cuda:0")
    indices = wp.array(tris.reshape(-1), dtype=wp.int32, device="cuda:0")

    def live():
        gc.collect()
        return {id(o) for o in gc.get_objects() if isinstance(o, mem.Allocation) and o.ptr}

    before = live()
    mesh = wp.Mesh(points, indices, support_winding_number=True)
    mesh.refit()
    bvh = wp.Bvh(points, points)
    grid = wp.HashGrid(8, 8, 8, device="cuda:0")
    grid.build(points, 0.2)
    assert len(live() - before) > 10
    del mesh, bvh, grid
    assert live() - before == set()
    wp.synchronize_device("cuda:0")
    np.testing.assert_array_equal(points.numpy(), pts)
