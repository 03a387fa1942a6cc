"""wp.Mesh, wp.Bvh and wp.HashGrid on a CUDA device, against the fake driver (cuda_fake_driver.py: "device memory"
is host memory the fake tracks, a launch runs the CPU build of the same kernel on the launch struct a GPU would
get; the CUDA build of each kernel is still made and assembled by ptxas, as cuLaunchKernel needs its image).

The structures are built from device arrays, their descriptors live in device memory and hold device addresses
(every address word lies inside a fake device allocation), the query kernels launched on the device find what
brute force in numpy finds (geometry_device_checks.py: every triangle, every box, all pairs of points), refit()
follows points edited on the device, the device memory goes with the object, and bad input raises Warp's
errors."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.core import geometry as layout
from mlwarp.runtime import device as device_registry
from mlwarp.runtime.cuda import devices as cuda_devices
from mlwarp.runtime.cuda import driver as drv

import geometry_device_checks as checks
from cuda_fake_driver import FakeDriver
from geometry_device_checks import device_mesh, triangle_soup


@wp.kernel
def translate_voxel_value(volume: wp.uint64):
    wp.volume_store_f(volume, 0, 0, 0, wp.volume_lookup_f(volume, 0, 0, 0) + 5.0)


@pytest.fixture
def fake(monkeypatch):
    """Two fake sm_90 GPUs in place of the driver, each query kernel's CPU build under its CUDA entry name;
    mlwarp's CUDA state is reset before and after."""
    fake = FakeDriver(arches=(90, 90))
    monkeypatch.setattr(drv, "_driver", fake)
    monkeypatch.setattr(drv, "_init_error", None)
    monkeypatch.setattr(cuda_devices, "_devices", None)
    monkeypatch.setattr(device_registry, "_default", None)
    saved = dict(device_registry._devices)
    cpu = wp.get_device("cpu")
    for k in checks.KERNELS + [translate_voxel_value]:
        fake.cpu_entries[f"{k.key}_cuda"] = k.compiled(cpu)
    yield fake
    for k in checks.KERNELS + [translate_voxel_value]:
        for alias in [a for a in k._compiled if a.startswith("cuda")]:
            del k._compiled[alias]
    device_registry._devices.clear()
    device_registry._devices.update(saved)


def assert_addresses_on_device(fake, words, address_words):
    """Each listed descriptor word is a nonzero address inside a fake device allocation (not host memory)."""
    for w in address_words:
        address = int(words[w])
        assert address, f"descriptor word {w} is null"
        assert any(base <= address < base + len(buf) for base, (buf, _) in fake.buffers.items()), \
            f"descriptor word {w} ({address:#x}) is not a device address"


# -- wp.Mesh -------------------------------------------------------------------------------------------------
def test_mesh_descriptor_lives_on_the_device_and_points_at_the_users_arrays(fake):
    pts, tris = triangle_soup(40, 1)
    mesh = device_mesh(pts, tris, "cuda:0", support_winding_number=True)
    assert mesh.device == "cuda:0" and mesh.points.device == "cuda:0"
    words = mesh._mirror.read_descriptor()
    assert mesh.id == mesh._mirror.id
    assert_addresses_on_device(fake, [mesh.id], [0])  # the id itself is a device address
    # the user's device arrays, referenced (not copied), as on the CPU
    assert words[layout.MESH_POINTS] == mesh.points.ptr and words[layout.MESH_INDICES] == mesh.indices.ptr
    assert words[layout.MESH_BVH] == mesh._bvh.id
    assert (words[layout.MESH_NUM_POINTS], words[layout.MESH_NUM_TRIS]) == (120, 40)
    assert_addresses_on_device(fake, words, [layout.MESH_POINTS, layout.MESH_INDICES, layout.MESH_BVH,
                                             layout.MESH_WN_NORMALS, layout.MESH_WN_CENTERS, layout.MESH_WN_RADII,
                                             layout.MESH_RAY_NODES, layout.MESH_RAY_TRIS])
    tree = mesh._bvh._mirror.read_descriptor()
    assert_addresses_on_device(fake, tree, [layout.BVH_NODE_LOWERS, layout.BVH_NODE_UPPERS, layout.BVH_SKIP,
                                            layout.BVH_PRIM_START, layout.BVH_PRIM_END, layout.BVH_PRIMITIVES,
                                            layout.BVH_ITEM_LOWERS, layout.BVH_ITEM_UPPERS])
    # the edge-length average (a float32 in its word's low half): the mean of every triangle's three edges
    corners = pts[tris].astype(np.float64)
    edges = np.linalg.norm(corners - np.roll(corners, 1, axis=1), axis=2)
    np.testing.assert_allclose(words.view(np.float32)[2 * layout.MESH_AVERAGE_EDGE_LENGTH], edges.mean(), rtol=1e-5)


def test_mesh_descriptor_holds_the_device_grad_addresses(fake):
    """wp.mesh_get's points and velocities differentiate into the user's device .grad arrays: the descriptor
    holds their device addresses, 0 for an array without a grad (the adjoint then skips it)."""
    pts, tris = triangle_soup(8, 1)
    points = wp.array(pts, dtype=wp.vec3, device="cuda:0", requires_grad=True)
    velocities = wp.array(pts, dtype=wp.vec3, device="cuda:0")
    mesh = wp.Mesh(points, wp.array(tris.reshape(-1), dtype=wp.int32, device="cuda:0"), velocities=velocities)
    words = mesh._mirror.read_descriptor()
    assert words[layout.MESH_POINTS_GRAD] == points.grad.ptr and words[layout.MESH_VELOCITIES_GRAD] == 0
    assert_addresses_on_device(fake, words, [layout.MESH_POINTS_GRAD])
    mesh.velocities = wp.array(pts, dtype=wp.vec3, device="cuda:0", requires_grad=True)
    assert mesh._mirror.read_descriptor()[layout.MESH_VELOCITIES_GRAD] == mesh.velocities.grad.ptr


def test_mesh_point_ray_and_box_queries_on_the_device_match_brute_force(fake):
    mesh = checks.check_mesh_queries("cuda:0")
    assert mesh.device == "cuda:0" and mesh.id == mesh._mirror.id
    assert len(fake.launches) == 3 and {launch["name"] for launch in fake.launches} == {
        "closest_points_cuda", "first_hits_cuda", "mesh_box_hits_cuda"}  # (the builds ran on the host)


def test_mesh_refit_follows_points_moved_on_the_device(fake):
    mesh = checks.check_mesh_refit("cuda:0")
    assert mesh._mirror.read_descriptor()[layout.MESH_POINTS] == mesh.points.ptr  # the setter's array


def test_grouped_mesh_on_the_device(fake):
    mesh = checks.check_grouped_mesh("cuda:0")
    tree = mesh._bvh._mirror.read_descriptor()
    assert tree[layout.BVH_NUM_GROUPS] == 3
    assert_addresses_on_device(fake, tree, [layout.BVH_GROUP_IDS, layout.BVH_GROUP_ROOTS])


# -- wp.Bvh --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("constructor", [None, "sah", "median", "lbvh"])
def test_bvh_box_and_ray_queries_on_the_device_match_every_box(fake, constructor):
    bvh = checks.check_bvh_queries("cuda:0", constructor)
    words = bvh._mirror.read_descriptor()
    assert words[layout.BVH_ITEM_LOWERS] == bvh.lowers.ptr and words[layout.BVH_ITEM_UPPERS] == bvh.uppers.ptr
    assert words[layout.BVH_NUM_ITEMS] == 120
    assert words[layout.BVH_CONSTRUCTOR] == (1 if constructor == "median" else 0)  # "lbvh": built "sah" on the host
    assert_addresses_on_device(fake, words, [layout.BVH_NODE_LOWERS, layout.BVH_NODE_UPPERS, layout.BVH_SKIP,
                                             layout.BVH_PRIM_START, layout.BVH_PRIM_END, layout.BVH_PRIMITIVES,
                                             layout.BVH_NODE_PARENTS, layout.BVH_ROOT, layout.BVH_GROUP_IDS,
                                             layout.BVH_GROUP_ROOTS])


def test_bvh_refit_and_rebuild_follow_boxes_moved_on_the_device(fake):
    checks.check_bvh_refit_and_rebuild("cuda:0")


# -- wp.HashGrid ---------------------------------------------------------------------------------------------
def test_hash_grid_on_the_device_counts_the_neighbours_of_all_pairs(fake):
    grid = checks.check_hash_grid_neighbours("cuda:0")
    assert_addresses_on_device(fake, [grid.id], [0])
    words = grid._mirror.read_descriptor()
    assert_addresses_on_device(fake, words, [layout.HG_POINT_IDS, layout.HG_CELL_STARTS, layout.HG_CELL_ENDS])
    assert words[layout.HG_NUM_POINTS] == 400 and tuple(words[layout.HG_DIM_X:layout.HG_DIM_Z + 1]) == (16, 16, 16)


def test_grouped_float64_grid_on_the_device(fake):
    grid = checks.check_grouped_f64_hash_grid("cuda:0")
    words = grid._mirror.read_descriptor()
    assert_addresses_on_device(fake, words, [layout.HG_POINT_IDS, layout.HG_CELL_STARTS, layout.HG_CELL_ENDS,
                                             layout.HG_GROUPS])
    assert words[layout.HG_HAS_GROUPS] == 1


def test_an_unbuilt_device_grid_finds_nothing(fake):
    grid = wp.HashGrid(4, 4, 4, device="cuda:0")
    assert grid._mirror.read_descriptor()[layout.HG_CAPACITY] == 0  # (the queries' "never built" test)
    points = wp.array(np.zeros((5, 3), np.float32), dtype=wp.vec3, device="cuda:0")
    counts = wp.full(5, -1, dtype=int, device="cuda:0")
    wp.launch(checks.neighbour_counts, dim=5, inputs=[grid.id, points, 1.0, counts], device="cuda:0")
    np.testing.assert_array_equal(counts.numpy(), np.zeros(5))


# -- wp.Volume -----------------------------------------------------------------------------------------------
def ramp_reads_on(device, volume, ijk):
    looked = wp.zeros(len(ijk), dtype=float, device=device)
    sampled = wp.zeros(len(ijk), dtype=float, device=device)
    wp.launch(checks.volume_reads, dim=len(ijk), inputs=[volume.id, wp.array(ijk, dtype=wp.int32, device=device),
                                                         wp.array(ijk.astype(np.float32), dtype=wp.vec3, device=device),
                                                         looked, sampled], device=device)
    return looked.numpy()


def test_volume_on_the_device_reads_and_writes_its_device_copy(fake, tmp_path):
    volume = checks.check_volume("cuda:0")
    assert_addresses_on_device(fake, [volume.id], [0])
    raw = volume.array()
    assert raw.device == "cuda:0" and raw.ptr == volume.id and raw.shape == (volume.get_grid_info().size_in_bytes,)
    # the values the kernel stored on the device come back with save_to_nvdb
    path = tmp_path / "ramp.nvdb"
    volume.save_to_nvdb(str(path))
    with open(path, "rb") as f:
        on_host = wp.Volume.load_from_nvdb(f, device="cpu")
    ijk = np.array([[0, 0, 0], [15, 15, 15], [3, 9, 12], [16, 0, 0]], np.int32)
    np.testing.assert_array_equal(ramp_reads_on("cpu", on_host, ijk), [0.0, 1665.0, 1293.0, -1.0])
    # the topology, from the host copy, into arrays on the volume's device
    tiles = volume.get_tiles()
    assert tiles.device == "cuda:0"
    np.testing.assert_array_equal(np.unique(tiles.numpy(), axis=0), np.unique(checks.CUBE_TILES, axis=0))
    assert volume.get_voxel_count() == 8 * 512 and volume.get_active_stats().leaf_node_count == 8
    with pytest.raises(RuntimeError, match=r"^'out' array must an array with at least 8 rows on device cuda:0$"):
        volume.get_tiles(out=wp.zeros((8, 3), dtype=wp.int32, device="cpu"))


def test_volume_over_a_device_array_copies_or_aliases_it(fake):
    source = checks.check_volume("cpu")  # a grid built and filled on the CPU
    grid_bytes = source.array().numpy()
    block = wp.zeros(grid_bytes.size + 32, dtype=wp.uint8, device="cuda:0")
    start = (-block.ptr) % 32  # (NanoVDB grids are 32-byte aligned; an unaligned copy=False would copy)
    data = block[start:start + grid_bytes.size]
    data.assign(grid_bytes)
    ijk = np.array([[1, 2, 3], [14, 0, 7], [-5, 0, 0]], np.int32)
    ramp = [321.0, 714.0, -1.0]
    copied = wp.Volume(data)
    aliased = wp.Volume(data, copy=False)
    at_address = wp.Volume.load_from_address(data.ptr, device="cuda:0")
    assert copied.id != data.ptr and aliased.id == data.ptr == at_address.id
    assert copied.device == aliased.device == at_address.device == "cuda:0"
    for v in (copied, aliased, at_address):
        np.testing.assert_array_equal(ramp_reads_on("cuda:0", v, ijk), ramp)
    # a store through the aliasing volume writes the user's device array; the copy keeps its own bytes
    wp.launch(checks.volume_store_ramp, dim=1, inputs=[aliased.id, wp.array([[0, 0, 0]], dtype=wp.int32,
                                                                               device="cuda:0")], device="cuda:0")
    wp.launch(translate_voxel_value, dim=1, inputs=[aliased.id], device="cuda:0")
    assert ramp_reads_on("cuda:0", at_address, np.zeros((1, 3), np.int32))[0] == 5.0
    assert ramp_reads_on("cuda:0", copied, np.zeros((1, 3), np.int32))[0] == 0.0
    assert not np.array_equal(data.numpy(), grid_bytes)
    with pytest.raises(RuntimeError, match=r"^Failed to create volume from input array$"):
        wp.Volume(wp.zeros(64, dtype=wp.uint8, device="cuda:0"))


def test_rebuilding_a_device_volume_keeps_its_id(fake):
    points = wp.array([[0, 0, 0]], dtype=wp.int32, device="cuda:0")
    status = wp.zeros(1, dtype=wp.uint32, device="cuda:0")
    volume = wp.Volume.allocate_by_voxels(points, voxel_size=1.0, rebuildable=True, max_active_voxels=3,
                                          max_leaf_nodes=2, device="cuda:0", status=status)
    vid = volume.id
    assert volume.device == "cuda:0" and status.numpy()[0] == wp.Volume.REBUILD_SUCCESS
    volume.rebuild(wp.array([[1, 2, 3], [40, 0, 0]], dtype=wp.int32, device="cuda:0"), status=status)
    assert volume.id == vid and status.numpy()[0] == wp.Volume.REBUILD_SUCCESS
    np.testing.assert_array_equal(volume.get_voxels().numpy(), [[1, 2, 3], [40, 0, 0]])
    volume.rebuild(wp.array(np.arange(12, dtype=np.int32).reshape(4, 3) * 8, dtype=wp.int32, device="cuda:0"),
                   status=status)  # four voxels in four leaves: over both capacities, the topology stays
    assert status.numpy()[0] == wp.Volume.REBUILD_VOXEL_CAPACITY_EXCEEDED | wp.Volume.REBUILD_LEAF_CAPACITY_EXCEEDED
    np.testing.assert_array_equal(volume.get_voxels().numpy(), [[1, 2, 3], [40, 0, 0]])


# -- lifetime and bad input ----------------------------------------------------------------------------------
def test_device_memory_goes_with_the_structures(fake):
    pts, tris = triangle_soup(20, 10)
    points = wp.array(pts, dtype=wp.vec3, device="cuda:0")
    indices = wp.array(tris.reshape(-1), dtype=wp.int32, device="cuda:0")
    before = set(fake.buffers)
    mesh = wp.Mesh(points, indices, support_winding_number=True)
    bvh = wp.Bvh(points, points)
    grid = wp.HashGrid(4, 4, 4, device="cuda:0")
    grid.build(points, 0.3)
    volume = wp.Volume.allocate_by_tiles(wp.array(checks.CUBE_TILES, dtype=wp.int32, device="cuda:0"), bg_value=0.0,
                                         device="cuda:0")
    mesh.refit()
    bvh.rebuild()
    assert len(set(fake.buffers) - before) > 10
    del mesh, bvh, grid, volume
    gc.collect()
    assert set(fake.buffers) == before  # every device allocation of the three is freed, the user's arrays kept
    np.testing.assert_array_equal(points.numpy(), pts)


def test_structures_on_the_second_device(fake):
    pts, tris = triangle_soup(10, 11)
    mesh = device_mesh(pts, tris, "cuda:1")
    assert mesh.device == "cuda:1"
    owners = {dev for base, (buf, dev) in fake.buffers.items() if base <= mesh.id < base + len(buf)}
    assert owners == {1}  # the descriptor is allocated on the mesh's device


def test_bad_device_combinations_raise_warps_errors(fake):
    pts, tris = triangle_soup(4, 12)
    on = {d: (wp.array(pts, dtype=wp.vec3, device=d), wp.array(tris.reshape(-1), dtype=wp.int32, device=d))
          for d in ("cpu", "cuda:0", "cuda:1")}
    with pytest.raises(RuntimeError, match=r"^Mesh points and indices must live on the same device$"):
        wp.Mesh(on["cuda:0"][0], on["cpu"][1])
    with pytest.raises(RuntimeError, match=r"^Mesh points and indices must live on the same device$"):
        wp.Mesh(on["cuda:0"][0], on["cuda:1"][1])
    groups_cpu = wp.zeros(4, dtype=wp.int32, device="cpu")
    with pytest.raises(RuntimeError, match=r"^groups must live on the same device as points$"):
        wp.Mesh(*on["cuda:0"], groups=groups_cpu)
    with pytest.raises(RuntimeError, match=r"^Lower and upper bounds must live on the same device$"):
        wp.Bvh(on["cuda:0"][0], on["cpu"][0])
    with pytest.raises(RuntimeError, match=r"^groups must live on the same device as lowers/uppers$"):
        wp.Bvh(on["cuda:0"][0], on["cuda:0"][0], groups=wp.zeros(12, dtype=wp.int32, device="cpu"))
    grid = wp.HashGrid(4, 4, 4, device="cuda:0")
    with pytest.raises(RuntimeError, match=r"^points must live on the same device as this HashGrid$"):
        grid.build(on["cpu"][0], 0.5)
    with pytest.raises(RuntimeError, match=r"^points must live on the same device as this HashGrid$"):
        grid.build(on["cuda:1"][0], 0.5)
    mesh = wp.Mesh(*on["cuda:0"])
    with pytest.raises(RuntimeError, match=r"^The new points and the original points must live on the same device, "
                                           r"the new points are on cpu while the old points are on cuda:0\.$"):
        mesh.points = on["cpu"][0]
    with pytest.raises(RuntimeError, match=r"^Mesh indices must lie in \[0, 12\) \(the number of points\), got 12$"):
        wp.Mesh(on["cuda:0"][0], wp.array(np.full(3, 12, np.int32), dtype=wp.int32, device="cuda:0"))


def test_the_gpu_smoke_checks_pass_on_the_fake_device(fake, capsys):
    """bench/gpu_smoke.py's checks (its geometry ones included: a mesh ray cast, hash-grid neighbour counts, each
    against numpy) run here on the fake device, so the script a GPU machine runs is known to be right."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "bench" / "gpu_smoke.py"
    spec = importlib.util.spec_from_file_location("gpu_smoke_under_test", path)
    smoke = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(smoke)
    for k in smoke.KERNELS:
        fake.cpu_entries[f"{k.key}_cuda"] = k.compiled(wp.get_device("cpu"))
    assert smoke.run_checks(wp.get_device("cuda:0")) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "PASS wp.Mesh on the device: ray casts vs every triangle" in out
    assert "PASS wp.HashGrid on the device: neighbour counts vs all pairs" in out
