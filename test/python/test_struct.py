"""`@wp.struct`: C layout shared with numpy structured arrays, instances passed by value (with array and
nested struct fields), struct locals, field reads and writes, arrays of structs, and field typos."""

import ctypes

import numpy as np
import pytest

import mlwarp as wp


@wp.struct
class Particle:  # the seeds' example
    pos: wp.vec3
    vel: wp.vec3
    mass: wp.float32
    is_active: wp.bool


@wp.struct
class Inner:
    scale: wp.float64
    offset: wp.vec2


@wp.struct
class Params:
    gain: float
    count: wp.int32
    inner: Inner
    weights: wp.array(dtype=float)
    rot: wp.mat22
    small: wp.int8


def test_layout_matches_c_and_numpy():
    spec = Particle.numpy_dtype()  # Warp's: the dict np.dtype() takes
    assert isinstance(spec, dict) and spec["names"][:2] == ["pos", "vel"]
    dt = np.dtype(spec)
    assert dt.itemsize == 32 and dt.fields["mass"][1] == 24 and dt.fields["is_active"][1] == 28
    assert ctypes.sizeof(Particle._ctype_) == 32
    p = np.dtype(Params.numpy_dtype())
    assert p.itemsize == ctypes.sizeof(Params._ctype_)
    assert p.fields["inner"][1] == 8 and p.fields["weights"][1] == 24  # Inner: float64 (aligned to 8) + vec2
    a = wp.zeros(3, dtype=Particle)
    assert a.numpy().dtype == dt and a.shape == (3,) and a.strides == (32,)


def test_seed_particle_update_on_an_array_of_structs():
    @wp.kernel(enable_backward=False)
    def update_particle(p: wp.array(dtype=Particle), dt: wp.float32):
        tid = wp.tid()
        if p[tid].is_active:
            p[tid].pos = p[tid].pos + p[tid].vel * dt

    n = 6
    particles = wp.zeros(n, dtype=Particle)
    view = particles.numpy()
    rng = np.random.default_rng(1)
    pos, vel = rng.normal(size=(n, 3)).astype(np.float32), rng.normal(size=(n, 3)).astype(np.float32)
    active = np.array([True, False, True, True, False, True])
    view["pos"], view["vel"], view["mass"], view["is_active"] = pos, vel, np.arange(n), active
    before = view.copy()
    wp.launch(update_particle, n, [particles, 0.1])
    after = particles.numpy()
    expected = np.where(active[:, None], pos + vel * np.float32(0.1), pos)
    np.testing.assert_array_equal(after["pos"], expected)
    for field in ("vel", "mass", "is_active"):  # other fields keep their bytes
        np.testing.assert_array_equal(after[field], before[field])


def test_struct_argument_with_nested_struct_and_array_fields():
    @wp.kernel(enable_backward=False)
    def k(p: Params, out: wp.array(dtype=float), v: wp.array(dtype=wp.vec2)):
        i = wp.tid()
        out[i] = p.weights[i] * p.gain + float(p.count) + float(p.inner.scale) + float(p.small)
        v[i] = p.rot * p.inner.offset
        p.weights[i] = -1.0  # writes through the array field

    params = Params()
    params.gain = 2.0
    params.count = 3
    params.inner = Inner()
    params.inner.scale = 0.25
    params.inner.offset = wp.vec2(1.0, 2.0)
    weights = wp.array(np.array([1.0, 2.0, 3.0], dtype=np.float32), dtype=float)
    params.weights = weights
    params.rot = wp.mat22(0.0, -1.0, 1.0, 0.0)
    params.small = -7
    out, v = wp.zeros(3, dtype=float), wp.zeros(3, dtype=wp.vec2)
    wp.launch(k, 3, [params, out, v])
    np.testing.assert_array_equal(out.numpy(), np.array([1, 2, 3]) * 2.0 + 3 + 0.25 - 7)
    np.testing.assert_array_equal(v.numpy(), np.broadcast_to([-2.0, 1.0], (3, 2)))
    np.testing.assert_array_equal(weights.numpy(), [-1.0, -1.0, -1.0])


def test_struct_locals_field_writes_and_struct_stores():
    @wp.kernel(enable_backward=False)
    def k(src: wp.array(dtype=wp.vec3), out: wp.array(dtype=Particle), masses: wp.array(dtype=float)):
        i = wp.tid()
        p = Particle()
        p.pos = src[i]
        p.vel = p.pos * 2.0
        p.vel.y = 5.0
        p.pos[2] = -1.0
        p.mass = float(i) + 0.5
        p.is_active = i % 2 == 0
        if p.is_active:
            p.mass += 100.0
        out[i] = p
        masses[i] = out[i].mass

    src = np.arange(12, dtype=np.float32).reshape(4, 3)
    out, masses = wp.zeros(4, dtype=Particle), wp.zeros(4, dtype=float)
    wp.launch(k, 4, [wp.array(src, dtype=wp.vec3), out, masses])
    o = out.numpy()
    exp_pos = src.copy()
    exp_pos[:, 2] = -1.0
    exp_vel = src * 2
    exp_vel[:, 1] = 5.0
    np.testing.assert_array_equal(o["pos"], exp_pos)
    np.testing.assert_array_equal(o["vel"], exp_vel)
    np.testing.assert_array_equal(o["mass"], [100.5, 1.5, 102.5, 3.5])
    np.testing.assert_array_equal(o["is_active"], [True, False, True, False])
    np.testing.assert_array_equal(masses.numpy(), o["mass"])


def test_python_instances():
    p = Particle()
    # defaults are the fields' Warp types, as Warp's (a bool field reads wp.bool(False), not False)
    assert p.pos == wp.vec3(0.0, 0.0, 0.0) and p.mass == 0.0 and not p.is_active
    assert type(p.mass) is wp.float32 and type(p.is_active) is wp.bool
    p.pos = (1.0, 2.0, 3.0)
    p.mass = 2
    assert p.pos == wp.vec3(1.0, 2.0, 3.0) and p.mass == 2.0
    value = p.numpy_value()
    assert value["mass"] == 2.0 and list(value["pos"]) == [1.0, 2.0, 3.0]
    with pytest.raises(AttributeError, match=r"struct Particle has no field 'poss' \(fields: pos, vel, mass, "
                                             r"is_active\)"):
        p.poss = wp.vec3(0.0)


def test_field_typo_in_a_kernel_names_file_and_line():
    @wp.kernel(enable_backward=False)
    def k(p: wp.array(dtype=Particle)):
        tid = wp.tid()
        p[tid].pos = p[tid].positon

    # Warp's AttributeError text; the struct's fields come as a note
    with pytest.raises(AttributeError, match=r"test_struct.py:\d+: in 'k': `positon` is not an attribute of "
                                             r"'p\[\.\.\.\]' \([\w.]+\.Particle\)") as info:
        wp.launch(k, 1, [wp.zeros(1, dtype=Particle)])
    assert isinstance(info.value, wp.CompileError) and str(info.value).endswith("(test_struct.Particle)")
    assert "struct 'Particle' has the fields: pos, vel, mass, is_active" in info.value.__notes__


def test_struct_argument_type_is_checked():
    @wp.kernel(enable_backward=False)
    def k(p: Particle, out: wp.array(dtype=float)):
        out[0] = p.mass

    with pytest.raises(wp.LaunchError, match=r"argument 'p' expects a struct Particle, but passed value has type "
                                             r"Inner"):
        wp.launch(k, 1, [Inner(), wp.zeros(1, dtype=float)])


def test_array_of_structs_from_instances():
    a = Particle()
    a.pos = wp.vec3(1.0, 2.0, 3.0)
    a.is_active = True
    b = Particle()
    b.mass = 4.0
    arr = wp.array([a, b], dtype=Particle)
    assert arr.shape == (2,) and arr.dtype is Particle
    view = arr.numpy()
    np.testing.assert_array_equal(view["pos"], [[1, 2, 3], [0, 0, 0]])
    np.testing.assert_array_equal(view["mass"], [0.0, 4.0])
    np.testing.assert_array_equal(view["is_active"], [True, False])
