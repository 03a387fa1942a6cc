"""wp.Volume (NanoVDB grids) and the volume builtins against independent references: voxel dictionaries
(lookups, stores, index numbering), numpy trilinear interpolation and its analytic / finite-difference
gradients, the PNanoVDB byte layout read by hand (struct at documented offsets), hand-built .nvdb files, and
Warp's error messages for bad input."""

import os
import struct
import tempfile
import zlib

import numpy as np
import pytest

import mlwarp as wp

rng = np.random.default_rng(7)

# -- references ---------------------------------------------------------------------------------------------------


def field(ijk):
    """The test field (float): a product plus a shift, so trilinear interpolation is exact only between nodes."""
    ijk = np.asarray(ijk, dtype=np.float64)
    return ijk[..., 0] * 0.5 - ijk[..., 1] * 2.0 + ijk[..., 2] * ijk[..., 0] * 0.25 + 3.0


def trilinear(values_at, uvw):
    """Trilinear interpolation of values_at(ijk) at uvw (numpy, float64), and its gradient."""
    base = np.floor(uvw)
    f = uvw - base
    val, grad = 0.0, np.zeros(3)
    for dx in (0, 1):
        for dy in (0, 1):
            for dz in (0, 1):
                wx, wy, wz = (f[0] if dx else 1 - f[0]), (f[1] if dy else 1 - f[1]), (f[2] if dz else 1 - f[2])
                v = values_at(base + np.array([dx, dy, dz]))
                val += wx * wy * wz * v
                grad += v * np.array([(2 * dx - 1) * wy * wz, (2 * dy - 1) * wx * wz, (2 * dz - 1) * wx * wy])
    return val, grad


BG = -7.5
TILES = np.array([[0, 0, 0], [8, 0, 0], [0, 8, 0], [8, 8, 0], [0, 0, 8], [8, 0, 8], [0, 8, 8], [8, 8, 8],
                  [-8, -8, -8], [120, 0, 0], [128, 0, 0], [-4096, 0, 4096]], dtype=np.int32)


def active(ijk):
    """Whether voxel ijk lies in one of TILES' leaves."""
    origin = np.asarray(ijk, dtype=np.int64) & ~7
    return any((origin == t).all() for t in TILES)


def reference_value(ijk):
    return field(ijk) if active(ijk) else BG


# -- kernels ------------------------------------------------------------------------------------------------------


@wp.kernel
def fill(volume: wp.uint64, ijk: wp.array2d(dtype=wp.int32)):
    t = wp.tid()
    i, j, k = ijk[t, 0], ijk[t, 1], ijk[t, 2]
    v = float(i) * 0.5 - float(j) * 2.0 + float(k) * float(i) * 0.25 + 3.0
    wp.volume_store_f(volume, i, j, k, v)


@wp.kernel
def lookup(volume: wp.uint64, ijk: wp.array2d(dtype=wp.int32), out: wp.array(dtype=float),
           generic: wp.array(dtype=float), index: wp.array(dtype=int)):
    t = wp.tid()
    out[t] = wp.volume_lookup_f(volume, ijk[t, 0], ijk[t, 1], ijk[t, 2])
    generic[t] = wp.volume_lookup(volume, ijk[t, 0], ijk[t, 1], ijk[t, 2], dtype=generic.dtype)
    index[t] = wp.volume_lookup_index(volume, ijk[t, 0], ijk[t, 1], ijk[t, 2])


@wp.kernel
def sample(volume: wp.uint64, uvw: wp.array(dtype=wp.vec3), linear: wp.array(dtype=float),
           closest: wp.array(dtype=float), value: wp.array(dtype=float), grad: wp.array(dtype=wp.vec3)):
    t = wp.tid()
    linear[t] = wp.volume_sample_f(volume, uvw[t], wp.Volume.LINEAR)
    closest[t] = wp.volume_sample(volume, uvw[t], wp.Volume.CLOSEST, dtype=float)
    g = wp.vec3()
    value[t] = wp.volume_sample_grad_f(volume, uvw[t], wp.Volume.LINEAR, g)
    grad[t] = g


@wp.kernel
def sample_loss(volume: wp.uint64, uvw: wp.array(dtype=wp.vec3), loss: wp.array(dtype=float)):
    t = wp.tid()
    wp.atomic_add(loss, 0, wp.volume_sample_f(volume, uvw[t], wp.Volume.LINEAR))


@pytest.fixture(scope="module")
def float_volume():
    v = wp.Volume.allocate_by_tiles(wp.array(TILES, dtype=wp.int32), voxel_size=0.5, bg_value=BG,
                                    translation=wp.vec3(1.0, -2.0, 0.5))
    vox = np.array([t + np.array([x, y, z]) for t in TILES for x in range(8) for y in range(8) for z in range(8)],
                   dtype=np.int32)
    wp.launch(fill, dim=len(vox), inputs=[v.id, wp.array(vox, dtype=wp.int32)])
    return v


def query_points():
    inside = np.array([t + rng.integers(0, 8, 3) for t in TILES for _ in range(3)])
    outside = np.array([[50, 50, 50], [-9, 0, 0], [16, 0, 0], [119, 0, 0], [0, 0, 4096], [2**30, -2**30, 5]])
    return np.concatenate([inside, outside]).astype(np.int32)


# -- host side: layout and introspection ----------------------------------------------------------------------


def test_layout_fields_read_by_hand(float_volume):
    b = float_volume.array().numpy().tobytes()
    assert float_volume.array().dtype == wp.uint8 and float_volume.array().deleter is None
    magic, _checksum, version = struct.unpack_from("<QQI", b, 0)
    assert magic == 0x314244566F6E614E and version >> 21 == 32
    assert struct.unpack_from("<I", b, 636)[0] == 1  # PNANOVDB_GRID_TYPE_FLOAT
    leaf_off, lower_off, upper_off, root_off = struct.unpack_from("<QQQQ", b, 672)
    n_leaf, n_lower, n_upper = struct.unpack_from("<III", b, 672 + 32)
    lowers = {tuple(t & ~127) for t in TILES.astype(np.int64)}
    uppers = {tuple(t & ~4095) for t in TILES.astype(np.int64)}
    assert (n_leaf, n_lower, n_upper) == (len(TILES), len(lowers), len(uppers))
    root = 672 + root_off
    assert struct.unpack_from("<I", b, root + 24)[0] == len(uppers)
    assert struct.unpack_from("<f", b, root + 28)[0] == BG  # the float grid's background
    keys = {struct.unpack_from("<Q", b, root + 64 + 32 * n)[0] for n in range(len(uppers))}
    hand = {((x & 0xFFFFFFFF) >> 12) << 42 | ((y & 0xFFFFFFFF) >> 12) << 21 | ((z & 0xFFFFFFFF) >> 12)
            for x, y, z in uppers}
    assert keys == hand
    # every level laid out after the previous one, leaves last, the grid's size at the end
    assert 672 + upper_off < 672 + lower_off < 672 + leaf_off
    assert struct.unpack_from("<Q", b, 32)[0] == len(b) == 672 + leaf_off + n_leaf * 2144
    mat = np.frombuffer(b[296:332], "<f4").reshape(3, 3)
    np.testing.assert_array_equal(mat, np.diag([0.5] * 3))
    np.testing.assert_array_equal(np.frombuffer(b[296 + 72:296 + 84], "<f4"), [1.0, -2.0, 0.5])


def test_introspection(float_volume):
    info = float_volume.get_grid_info()
    assert (info.type_str, info.grid_index, info.grid_count, info.name) == ("float", 0, 1, "")
    assert float_volume.dtype is wp.float32 and not float_volume.is_index
    assert float_volume.get_voxel_size() == (0.5, 0.5, 0.5)
    tiles = float_volume.get_tiles().numpy()
    assert sorted(map(tuple, tiles)) == sorted(map(tuple, TILES))
    assert float_volume.get_voxel_count() == len(TILES) * 512
    vox = float_volume.get_voxels().numpy()
    assert len(np.unique(vox, axis=0)) == len(TILES) * 512 and all(active(v) for v in vox[::97])
    lowers = {tuple(t & ~127) for t in TILES.astype(np.int64)}  # (0, 0, 0) holds the tiles at 0, 8 and 120
    uppers = {tuple(t & ~4095) for t in TILES.astype(np.int64)}
    assert float_volume.get_active_stats() == wp.Volume.ActiveStats(len(TILES) * 512, len(TILES), len(lowers),
                                                                    len(uppers)) == (len(TILES) * 512, 12, 4, 3)


# -- kernels: lookups, stores, sampling, gradients ---------------------------------------------------------------


def test_lookup_and_store_against_a_voxel_dictionary(float_volume):
    pts = query_points()
    out, generic, index = (wp.zeros(len(pts), dtype=t) for t in (float, float, int))
    wp.launch(lookup, dim=len(pts), inputs=[float_volume.id, wp.array(pts, dtype=wp.int32), out, generic, index])
    expected = np.array([reference_value(p) for p in pts], dtype=np.float32)
    np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(generic.numpy(), expected)
    # a value grid's index: leaf * 512 + n, leaves in tree order (upper, lower, leaf by coordinates)
    order = sorted(range(len(TILES)), key=lambda n: (tuple(TILES[n] & ~4095), tuple(TILES[n] & ~127), tuple(TILES[n])))
    rank = {tuple(TILES[n]): r for r, n in enumerate(order)}
    for p, got in zip(pts, index.numpy()):
        if active(p):
            local = p & 7
            assert got == rank[tuple(p & ~7)] * 512 + local[0] * 64 + local[1] * 8 + local[2]
        else:
            assert got == -1


def test_sampling_against_numpy_trilinear(float_volume):
    uvw = np.concatenate([rng.uniform(-1.0, 16.0, (40, 3)), rng.uniform(118.0, 137.0, (10, 3)),
                          [[3.0, 4.0, 5.0], [2.5, 2.5, 2.5], [-0.5, 0.5, -0.5]]]).astype(np.float32)
    outs = [wp.zeros(len(uvw), dtype=t) for t in (float, float, float, wp.vec3)]
    wp.launch(sample, dim=len(uvw), inputs=[float_volume.id, wp.array(uvw, dtype=wp.vec3), *outs])
    linear, closest, value, grad = (o.numpy() for o in outs)
    for n, p in enumerate(uvw.astype(np.float64)):
        ref, ref_grad = trilinear(reference_value, p)
        assert linear[n] == pytest.approx(ref, abs=2e-4, rel=1e-5)
        assert value[n] == linear[n]
        np.testing.assert_allclose(grad[n], ref_grad, atol=2e-4, rtol=1e-5)
        rounded = np.where(p >= 0, np.floor(p + 0.5), np.ceil(p - 0.5))  # C round: halves away from zero
        assert closest[n] == np.float32(reference_value(rounded))


def test_tape_gradient_of_a_sample_matches_finite_differences(float_volume):
    uvw_np = np.array([[1.3, 2.6, 3.1], [7.5, 7.2, 8.4], [-3.3, -2.1, -4.9]], dtype=np.float32)
    uvw = wp.array(uvw_np, dtype=wp.vec3, requires_grad=True)
    loss = wp.zeros(1, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(sample_loss, dim=len(uvw_np), inputs=[float_volume.id, uvw, loss])
    tape.backward(loss)
    h = 1e-4
    for n, p in enumerate(uvw_np.astype(np.float64)):
        fd = [(trilinear(reference_value, p + h * e)[0] - trilinear(reference_value, p - h * e)[0]) / (2 * h)
              for e in np.eye(3)]
        np.testing.assert_allclose(uvw.grad.numpy()[n], fd, rtol=1e-4, atol=1e-4)


@wp.kernel
def transforms(volume: wp.uint64, p: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    out[0] = wp.volume_index_to_world(volume, p[0])
    out[1] = wp.volume_world_to_index(volume, p[0])
    out[2] = wp.volume_index_to_world_dir(volume, p[0])
    out[3] = wp.volume_world_to_index_dir(volume, p[0])
    out[4] = wp.volume_world_to_index(volume, wp.volume_index_to_world(volume, p[0]))


def test_transforms_against_numpy():
    rot = np.array([[0.0, -0.5, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 2.0]])
    t = np.array([1.0, 2.0, 3.0])
    v = wp.Volume.allocate_by_voxels(wp.array([[1, 2, 3]], dtype=wp.int32), transform=rot, translation=wp.vec3(*t))
    p = np.array([0.5, -1.5, 4.0])
    out = wp.zeros(5, dtype=wp.vec3)
    wp.launch(transforms, dim=1, inputs=[v.id, wp.array([p], dtype=wp.vec3), out])
    inv = np.linalg.inv(rot)
    np.testing.assert_allclose(out.numpy(), [rot @ p + t, inv @ (p - t), rot @ p, inv @ p, p], rtol=1e-6, atol=1e-6)
    assert v.get_voxel_size() == pytest.approx((0.5, 0.5, 2.0))


# -- index grids ------------------------------------------------------------------------------------------------


@wp.kernel
def sample_index(volume: wp.uint64, uvw: wp.array(dtype=wp.vec3), values: wp.array(dtype=float),
                 background: wp.array(dtype=float), out: wp.array(dtype=float)):
    t = wp.tid()
    out[t] = wp.volume_sample_index(volume, uvw[t], wp.Volume.LINEAR, values, background[0])


def test_index_grid_numbering_and_sampling_with_value_gradients():
    vox = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 1], [1, 1, 0], [0, 0, 1], [1, 0, 1], [0, 1, 1],
                    [9, 9, 9], [-1, -1, -1], [200, 3, 3], [1, 2, 3], [1, 2, 3]], dtype=np.int32)
    mask = np.ones(len(vox), np.int32)
    mask[-2] = 0  # dropped, but its duplicate stays
    v = wp.Volume.allocate_by_voxels(wp.array(vox, dtype=wp.int32), voxel_size=1.0,
                                     point_mask=wp.array(mask, dtype=wp.int32))
    unique = np.unique(vox, axis=0)
    assert v.is_index and v.get_voxel_count() == len(unique) and v.get_grid_info().type_str == "OnIndex"
    # the index order: leaves in tree order, voxels by their bit (x * 64 + y * 8 + z) within a leaf
    key = lambda p: (tuple(p & ~4095), tuple(p & ~127), tuple(p & ~7), tuple(p & 7))
    expected = sorted(map(tuple, unique.astype(np.int64)), key=lambda p: key(np.array(p)))
    assert list(map(tuple, v.get_voxels().numpy())) == expected
    pts = np.concatenate([unique, [[2, 2, 2], [-2, 0, 0], [1, 2, 4]]]).astype(np.int32)
    out, generic, index = (wp.zeros(len(pts), dtype=t) for t in (float, float, int))
    wp.launch(lookup, dim=len(pts), inputs=[v.id, wp.array(pts, dtype=wp.int32), out, generic, index])
    rank = {p: n for n, p in enumerate(expected)}
    np.testing.assert_array_equal(index.numpy(), [rank.get(tuple(p), -1) for p in pts.astype(np.int64)])
    np.testing.assert_array_equal(out.numpy(), 0.0)  # not a float grid: Warp's lookups read 0

    values_np = rng.uniform(-1, 1, len(unique)).astype(np.float32)
    values = wp.array(values_np, dtype=float, requires_grad=True)
    bg = wp.array([0.25], dtype=float, requires_grad=True)
    uvw_np = np.array([[0.3, 0.6, 0.2], [0.5, 0.5, 0.5], [8.5, 8.7, 9.1], [-0.5, -0.5, -0.5]], dtype=np.float32)
    out = wp.zeros(len(uvw_np), dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(sample_index, dim=len(uvw_np), inputs=[v.id, wp.array(uvw_np, dtype=wp.vec3), values, bg, out])
    tape.backward(grads={out: wp.ones(len(uvw_np), dtype=float)})

    def at(ijk):
        n = rank.get(tuple(np.asarray(ijk, dtype=np.int64)))
        return 0.25 if n is None else values_np[n]

    np.testing.assert_allclose(out.numpy(), [trilinear(at, p)[0] for p in uvw_np.astype(np.float64)], rtol=1e-5)
    # d sum / d values[n] = the sum of the trilinear weights that land on voxel n; the rest on the background
    weights = np.zeros(len(unique))
    bg_weight = 0.0
    for p in uvw_np.astype(np.float64):
        base, f = np.floor(p), p - np.floor(p)
        for dx in (0, 1):
            for dy in (0, 1):
                for dz in (0, 1):
                    w = (f[0] if dx else 1 - f[0]) * (f[1] if dy else 1 - f[1]) * (f[2] if dz else 1 - f[2])
                    n = rank.get(tuple((base + [dx, dy, dz]).astype(np.int64)))
                    if n is None:
                        bg_weight += w
                    else:
                        weights[n] += w
    np.testing.assert_allclose(values.grad.numpy(), weights, rtol=1e-5, atol=1e-6)
    assert bg.grad.numpy()[0] == pytest.approx(bg_weight, rel=1e-5)


@wp.kernel
def count(volume: wp.uint64, out: wp.array(dtype=int)):
    out[0] = wp.volume_voxel_count(volume)


def test_rebuild_in_place_with_capacity_status():
    status = wp.zeros(1, dtype=wp.uint32)
    v = wp.Volume.allocate_by_voxels(wp.array([[0, 0, 0]], dtype=wp.int32), voxel_size=1.0, rebuildable=True,
                                     max_active_voxels=3, max_leaf_nodes=2, status=status)
    vid, size = v.id, v.get_grid_info().size_in_bytes
    assert v.get_rebuild_info() == wp.Volume.RebuildInfo("voxels", 3, 2, 2, 2) and v.is_rebuildable
    v.rebuild(wp.array([[1, 2, 3], [9, 0, 0], [1, 2, 3]], dtype=wp.int32), status=status)
    assert int(status.numpy()[0]) == wp.Volume.REBUILD_SUCCESS
    assert (v.id, v.get_grid_info().size_in_bytes) == (vid, size)
    assert v.get_active_stats() == wp.Volume.ActiveStats(2, 2, 1, 1)
    out = wp.zeros(1, dtype=int)
    wp.launch(count, dim=1, inputs=[v.id, out])
    assert out.numpy()[0] == 2
    v.rebuild(wp.array([[0, 0, 0], [8, 0, 0], [16, 0, 0]], dtype=wp.int32), status=status)
    assert int(status.numpy()[0]) == wp.Volume.REBUILD_LEAF_CAPACITY_EXCEEDED
    assert v.get_active_stats().voxel_count == 2  # over capacity: the topology stays


# -- files ------------------------------------------------------------------------------------------------------


def hand_built_nvdb(grid: bytes, zipped: bool) -> bytes:
    """A one-grid .nvdb file: header, 176-byte metadata with the name size at 136, the name, the grid."""
    payload = zlib.compress(grid) if zipped else grid
    meta = bytearray(176)
    struct.pack_into("<QQ", meta, 0, len(grid), len(payload))
    struct.pack_into("<I", meta, 136, 3)
    chunk = struct.pack("<Q", len(payload)) if zipped else b""
    return struct.pack("<QIHH", 0x304244566F6E614E, 32 << 21, 1, 1 if zipped else 0) + bytes(meta) + b"ab\0" + \
        chunk + payload


@pytest.mark.parametrize("zipped", [False, True])
def test_load_hand_built_files_and_save_roundtrip(float_volume, zipped):
    grid = float_volume.array().numpy().tobytes()
    loaded = wp.Volume.load_from_nvdb(hand_built_nvdb(grid, zipped))
    np.testing.assert_array_equal(loaded.array().numpy(), float_volume.array().numpy())
    assert loaded.load_next_grid() is None
    fd, path = tempfile.mkstemp(suffix=".nvdb")
    os.close(fd)
    try:
        loaded.save_to_nvdb(path, codec="zip" if zipped else "none")
        with open(path, "rb") as f:
            again = wp.Volume.load_from_nvdb(f)
        np.testing.assert_array_equal(again.array().numpy(), float_volume.array().numpy())
    finally:
        os.remove(path)


def test_load_from_numpy_fills_every_leaf_of_the_array():
    data = rng.uniform(-1, 1, (20, 9, 3)).astype(np.float32)
    v = wp.Volume.load_from_numpy(data, min_world=(1.0, 2.0, 3.0), voxel_size=0.5, bg_value=2.0)
    assert sorted(map(tuple, v.get_tiles().numpy())) == [(x, y, 0) for x in (0, 8, 16) for y in (0, 8)]
    pts = np.array([[3, 4, 2], [17, 8, 0], [19, 0, 1], [20, 0, 0], [0, 9, 0], [0, 0, 3], [24, 0, 0]], dtype=np.int32)
    out, generic, index = (wp.zeros(len(pts), dtype=t) for t in (float, float, int))
    wp.launch(lookup, dim=len(pts), inputs=[v.id, wp.array(pts, dtype=wp.int32), out, generic, index])
    inside = [data[tuple(p)] if (p < data.shape).all() else 2.0 for p in pts]  # padding and outside: bg
    np.testing.assert_array_equal(out.numpy(), inside)
    assert np.array(v.get_grid_info().translation).tolist() == [1.0, 2.0, 3.0]
    assert wp.Volume.load_from_numpy(np.zeros((4, 4, 4), np.int32), bg_value=3).dtype is wp.int32
    assert wp.Volume.load_from_numpy(np.zeros((4, 4, 4, 3)), bg_value=(0.0, 1.0, 2.0)).dtype is wp.vec3f


# -- errors -----------------------------------------------------------------------------------------------------


def test_bad_input_errors(float_volume):
    data = np.zeros((8, 8, 8), np.float32)
    with pytest.raises(ValueError, match=r"^voxel_size must have 3 elements, got 2$"):
        wp.Volume.load_from_numpy(data, voxel_size=(0.1, 0.2))
    with pytest.raises(ValueError, match=r"^voxel_size must be positive and finite, got \(0.1, -0.2, 0.3\)$"):
        wp.Volume.load_from_numpy(data, voxel_size=(0.1, -0.2, 0.3))
    with pytest.raises(TypeError, match=r"^voxel_size must be a number or a sequence of 3 numbers, got str$"):
        wp.Volume.load_from_numpy(data, voxel_size="0.5")
    with pytest.raises(RuntimeError, match=r"^NanoVDB signature not found$"):
        wp.Volume.load_from_nvdb(b"\0" * 64)
    with pytest.raises(RuntimeError, match=r"^Failed to create volume from input array$"):
        wp.Volume(wp.zeros(1024, dtype=wp.uint8))
    broken = bytearray(float_volume.array().numpy().tobytes())
    struct.pack_into("<Q", broken, 672 + 24, len(broken))  # the root past the grid
    with pytest.raises(RuntimeError, match=r"^Invalid NanoVDB grid structure$"):
        wp.Volume.load_from_nvdb(hand_built_nvdb(bytes(broken), False))
    struct.pack_into("<Q", broken, 672 + 24, 64)
    struct.pack_into("<I", broken, 20, 0)  # not breadth first
    with pytest.raises(RuntimeError, match=r"^Unsupported NanoVDB tree layout$"):
        wp.Volume.load_from_nvdb(hand_built_nvdb(bytes(broken), False))
    with pytest.raises(RuntimeError, match=r"^Unsupported codec requested: lz4$"):
        float_volume.save_to_nvdb(os.devnull, codec="lz4")
    with pytest.raises(RuntimeError, match=r"^Invalid feature array$"):
        float_volume.get_feature_array_info(0)


def test_kernel_errors(float_volume):
    grad_type = wp.types.matrix(shape=(3, 4), dtype=wp.float32)

    @wp.kernel
    def transposed(volume: wp.uint64, out: wp.array(dtype=wp.vec4)):
        g = grad_type()
        out[0] = wp.volume_sample_grad(volume, wp.vec3(), wp.Volume.LINEAR, g, dtype=wp.vec4)

    with pytest.raises(RuntimeError, match=r"Incompatible gradient type, expected mat43f, got mat34f"):
        wp.launch(transposed, dim=1, inputs=[float_volume.id, wp.zeros(1, dtype=wp.vec4)])

    @wp.kernel
    def no_dtype(volume: wp.uint64, out: wp.array(dtype=float)):
        out[0] = wp.volume_lookup(volume, 0, 0, 0)

    with pytest.raises(RuntimeError, match=r"wp.volume_lookup\(\) needs the keyword argument dtype="):
        wp.launch(no_dtype, dim=1, inputs=[float_volume.id, wp.zeros(1, dtype=float)])

    @wp.kernel
    def bad_dtype(volume: wp.uint64, out: wp.array(dtype=float)):
        out[0] = float(wp.volume_lookup(volume, 0, 0, 0, dtype=wp.int8))

    with pytest.raises(RuntimeError, match=r"volume_lookup: unsupported volume type int8"):
        wp.launch(bad_dtype, dim=1, inputs=[float_volume.id, wp.zeros(1, dtype=float)])


# -- the frontend: raw-pointer arrays in differentiated kernels --------------------------------------------------


@wp.kernel
def scaled_by_raw_memory(x: wp.array(dtype=float), table: wp.uint64, y: wp.array(dtype=float)):
    t = wp.tid()
    scale = wp.array(ptr=table, shape=(4,), dtype=float)[t]
    y[t] = scale * x[t] * x[t]


def test_raw_pointer_arrays_are_constants_for_autodiff():
    table = wp.array([1.0, 2.0, 3.0, 4.0], dtype=float, requires_grad=True)
    x = wp.array([0.5, 1.0, -1.0, 2.0], dtype=float, requires_grad=True)
    y = wp.zeros(4, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(scaled_by_raw_memory, dim=4, inputs=[x, wp.uint64(table.ptr), y])
    tape.backward(grads={y: wp.ones(4, dtype=float)})
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * np.array([1, 2, 3, 4]) * x.numpy())
    np.testing.assert_array_equal(table.grad.numpy(), 0.0)  # its memory has no gradient, as in Warp


# -- every value type through the generic builtins ----------------------------------------------------------------


def typed_kernels(T, G):
    """Store / lookup / sample_grad kernels for value type T (gradient type G)."""

    @wp.kernel(module="unique")
    def store_and_read(volume: wp.uint64, ijk: wp.array2d(dtype=wp.int32), values: wp.array(dtype=T),
                       out: wp.array(dtype=T)):
        t = wp.tid()
        wp.volume_store(volume, ijk[t, 0], ijk[t, 1], ijk[t, 2], values[t])

    @wp.kernel(module="unique")
    def read(volume: wp.uint64, ijk: wp.array2d(dtype=wp.int32), out: wp.array(dtype=T)):
        t = wp.tid()
        out[t] = wp.volume_lookup(volume, ijk[t, 0], ijk[t, 1], ijk[t, 2], dtype=T)

    @wp.kernel(module="unique")
    def grad(volume: wp.uint64, uvw: wp.array(dtype=wp.vec3), out: wp.array(dtype=T), grads: wp.array(dtype=G)):
        t = wp.tid()
        g = G()
        out[t] = wp.volume_sample_grad(volume, uvw[t], wp.Volume.LINEAR, g, dtype=T)
        grads[t] = g

    return store_and_read, read, grad


@pytest.mark.parametrize("T, G, bg, np_dtype, comps", [
    (wp.float64, wp.vec3d, wp.float64(-1.5), np.float64, 1),
    (wp.int64, None, wp.int64(-(2**40)), np.int64, 1),
    (wp.uint32, None, wp.uint32(7), np.uint32, 1),
    (wp.vec3d, wp.mat33d, wp.vec3d(1.0, -2.0, 0.5), np.float64, 3),
    (wp.vec4f, wp.types.matrix(shape=(4, 3), dtype=wp.float32), wp.vec4f(1.0, 2.0, 3.0, 4.0), np.float32, 4),
])
def test_value_types_store_lookup_and_gradients(T, G, bg, np_dtype, comps):
    tiles = np.array([[0, 0, 0], [8, 0, 0], [0, 8, 8]], dtype=np.int32)
    v = wp.Volume.allocate_by_tiles(wp.array(tiles, dtype=wp.int32), voxel_size=1.0, bg_value=bg)
    assert v.dtype is T
    vox = np.array([t + np.array([x, y, z]) for t in tiles for x in range(8) for y in range(8) for z in range(8)],
                   dtype=np.int32)
    A = np.arange(1, 3 * comps + 1, dtype=np.float64).reshape(comps, 3)  # a linear field v = A ijk + 1
    values_np = (vox @ A.T + 1.0).astype(np_dtype)
    values_np = values_np.reshape(-1) if comps == 1 else values_np
    store_and_read, read, grad = typed_kernels(T, G if G is not None else wp.vec3)
    wp.launch(store_and_read, dim=len(vox), inputs=[v.id, wp.array(vox, dtype=wp.int32),
                                                      wp.array(values_np, dtype=T), wp.zeros(1, dtype=T)])
    pts = np.concatenate([vox[::37], [[20, 0, 0], [-1, 0, 0], [0, 0, 8]]]).astype(np.int32)
    out = wp.zeros(len(pts), dtype=T)
    wp.launch(read, dim=len(pts), inputs=[v.id, wp.array(pts, dtype=wp.int32), out])
    lookup_of = {tuple(p): val for p, val in zip(vox, values_np)}
    bg_np = np.array(bg.value if comps == 1 else list(bg)).astype(np_dtype)
    expected = np.array([lookup_of.get(tuple(p), bg_np) for p in pts])
    np.testing.assert_array_equal(out.numpy().reshape(expected.shape), expected)
    if G is None:
        return
    uvw = np.array([[3.25, 4.5, 1.75], [9.5, 0.5, 6.25]], dtype=np.float32)  # all corners inside the leaves
    vals, grads = wp.zeros(len(uvw), dtype=T), wp.zeros(len(uvw), dtype=G)
    wp.launch(grad, dim=len(uvw), inputs=[v.id, wp.array(uvw, dtype=wp.vec3), vals, grads])
    np.testing.assert_allclose(vals.numpy().reshape(len(uvw), -1), (uvw @ A.T + 1.0).reshape(len(uvw), -1),
                               rtol=1e-5)
    np.testing.assert_allclose(grads.numpy().reshape(len(uvw), comps, 3), np.broadcast_to(A, (len(uvw), comps, 3)),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(__import__("shutil").which("ptxas") is None, reason="needs ptxas")
def test_volume_functions_compile_for_cuda():
    """The volume functions (stores, lookups by value, generic and index, closest and trilinear samples with
    gradients and their backward pass, transforms, index-grid samples, active-voxel walks) lower through the
    CUDA table and ptxas assembles them for sm_90 (no GPU needed)."""
    from mlwarp.launching import cuda_compile

    for k in (fill, lookup, sample, sample_loss, transforms, sample_index, count):
        meta = cuda_compile.build(k, 90)
        assert meta["cubin"] == "kernel.cubin" and meta["adj_error"] is None, (k.key, meta.get("adj_error"))


@wp.kernel
def _float64_transforms(id: wp.uint64, p: wp.array(dtype=wp.vec3d), out: wp.array(dtype=wp.vec3d),
                        sampled: wp.array(dtype=float)):
    i = wp.tid()
    out[4 * i + 0] = wp.volume_index_to_world(id, p[i])
    out[4 * i + 1] = wp.volume_world_to_index(id, p[i])
    out[4 * i + 2] = wp.volume_index_to_world_dir(id, p[i])
    out[4 * i + 3] = wp.volume_world_to_index_dir(id, p[i])
    # dtype as the last positional argument (Warp's signatures end in it)
    sampled[i] = wp.volume_sample(id, wp.vec3(p[i]), wp.Volume.LINEAR, float) + wp.volume_lookup(id, 1, 2, 3, float)


def test_float64_index_world_transforms_and_their_adjoints():
    """The float64 overloads (Warp's vec3d ones read NanoVDB's float64 map): a voxel size 0.25 and a translation
    t make index_to_world(p) = 0.25 p + t; the adjoint applies the transposed matrix."""
    t = np.array([0.5, -1.0, 2.0])
    vol = wp.Volume.allocate(min=[-2.0, -2.0, -2.0], max=[2.0, 2.0, 2.0], voxel_size=0.25, bg_value=0.0,
                             translation=tuple(t))
    pts = np.array([[1.0, 2.0, 3.5], [-1.0, 0.25, 7.0]])
    p = wp.array(pts, dtype=wp.vec3d, requires_grad=True)
    out, sampled = wp.zeros(8, dtype=wp.vec3d, requires_grad=True), wp.zeros(2, dtype=float)
    tape = wp.Tape()
    with tape:
        wp.launch(_float64_transforms, 2, inputs=[vol.id, p, out, sampled])
    expected = np.stack([np.stack([0.25 * q + t, (q - t) / 0.25, 0.25 * q, q / 0.25]) for q in pts]).reshape(8, 3)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-15)
    g = np.arange(24.0).reshape(8, 3)
    out.grad = wp.array(g, dtype=wp.vec3d)
    tape.backward()
    gi = g.reshape(2, 4, 3)
    np.testing.assert_allclose(p.grad.numpy(), 0.25 * (gi[:, 0] + gi[:, 2]) + 4.0 * (gi[:, 1] + gi[:, 3]))
    np.testing.assert_array_equal(sampled.numpy(), [0.0, 0.0])  # the background everywhere


def test_unique_rows_is_numpys_unique_of_rows():
    # nanovdb.unique_rows (one lexsort) against np.unique(axis=0, return_index=True, return_inverse=True):
    # coordinates of either sign, beyond 32 bits, repeated, none
    from mlwarp.geometry import nanovdb

    rng = np.random.default_rng(4)
    for n, scales in ((0, [1]), (1, [1]), (7, [1, 8, 4096, 2**40]), (3000, [1, 8, 4096, 2**40]), (3000, [1, 8])):
        ijk = rng.integers(-3, 3, (n, 3)) * rng.choice(scales, (n, 3))  # ([1, 8]: rows packed in one int64 key)
        rows, first, inverse = nanovdb.unique_rows(ijk)
        want_rows, want_first, want_inverse = np.unique(ijk, axis=0, return_index=True, return_inverse=True)
        np.testing.assert_array_equal(rows.reshape(-1, 3), want_rows.reshape(-1, 3))
        np.testing.assert_array_equal(first, want_first)
        np.testing.assert_array_equal(inverse, want_inverse.reshape(-1))


def test_grid_writer_merges_repeated_leaves():
    # nanovdb.build_grid given a leaf origin several times writes one leaf, its mask the OR of the given ones
    # (read back with nanovdb.leaf_nodes) against numpy's unique rows and OR; allocate_by_tiles with repeated
    # points makes one tile each, the distinct points' tiles
    from mlwarp.geometry import nanovdb

    rng = np.random.default_rng(6)
    origins = rng.integers(-40, 40, (400, 3)) & ~7
    masks = rng.integers(1, 2**63, (400, 8), dtype=np.uint64)
    masks[::3] = masks[0]  # (some repeats with equal masks, some with different ones)
    want_origins, inverse = np.unique(origins, axis=0, return_inverse=True)
    want_masks = np.zeros((len(want_origins), 8), np.uint64)
    np.bitwise_or.at(want_masks, inverse.reshape(-1), masks)
    for code in (nanovdb.FLOAT, nanovdb.ONINDEX):
        got_origins, got_masks = nanovdb.leaf_nodes(nanovdb.build_grid(nanovdb.GRID_TYPES[code], origins, masks))
        order = np.lexsort(got_origins.T[::-1])
        np.testing.assert_array_equal(got_origins[order], want_origins)
        np.testing.assert_array_equal(got_masks[order], want_masks)
    points = rng.integers(-100, 100, (300, 3)).astype(np.int32)
    v = wp.Volume.allocate_by_tiles(wp.array(np.concatenate([points, points[::2]]), dtype=wp.vec3i), bg_value=1.0)
    assert sorted(map(tuple, v.get_tiles().numpy())) == sorted(set(map(tuple, (points & ~7).tolist())))
