"""Warp's field-by-field arithmetic on tiles of structs: `a + b`, `a - b`, `t += u`, `t[i] += s`, `t[i] -= s`,
tile_scatter_add and tile_sum (whole tile and along an axis). A field whose scalars have an atomic add (floats,
32/64-bit ints, vectors of them, nested structs recursively) is combined; the others (bool, 8/16-bit ints) keep the
left operand's value, the first element's in a sum. Gradients through them, through tile_broadcast of struct and
vector tiles (tile_sum_to), and through a tile_map whose function closes over a struct read from an array.

References: numpy on the structured arrays, closed forms for the gradients; the rule for the carried fields and
the refusals' messages recorded from warp-lang 1.19 (the same kernels run there, CPU)."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path
from mlwarp.launching import cuda_compile

M = 4


@wp.struct
class Inner:
    a: wp.float32
    k: wp.int16


@wp.struct
class Mixed:
    flag: wp.bool
    small: wp.int8
    value: wp.float32
    v: wp.vec2d
    n: wp.int32
    inner: Inner


def _mixed(scale):
    a = wp.zeros(M, dtype=Mixed, device="cpu").numpy()
    a["flag"] = np.arange(M) % 2 == 1
    a["small"] = np.arange(M) + 5
    a["value"] = (np.arange(M) + 1) * scale
    a["v"] = np.arange(2 * M).reshape(M, 2) * scale
    a["n"] = (np.arange(M) + 10) * scale
    a["inner"]["a"] = np.arange(M) * 0.5 * scale
    a["inner"]["k"] = np.arange(M) + 100
    return a


ADDED = ("value", "v", "n")  # the fields that accumulate (Inner.a too); flag, small and Inner.k ride along


@wp.kernel(enable_backward=False)
def struct_arithmetic(a: wp.array(dtype=Mixed), b: wp.array(dtype=Mixed), sums: wp.array(dtype=Mixed),
                      diffs: wp.array(dtype=Mixed), inplace: wp.array(dtype=Mixed), elements: wp.array(dtype=Mixed),
                      total: wp.array(dtype=Mixed), rows: wp.array(dtype=Mixed), scattered: wp.array(dtype=Mixed)):
    ta = wp.tile_load(a, shape=M)
    tb = wp.tile_load(b, shape=M)
    wp.tile_store(sums, ta + tb)
    wp.tile_store(diffs, ta - tb)
    u = wp.tile_load(a, shape=M)
    u += tb
    u -= ta
    u += tb
    wp.tile_store(inplace, u)  # a + 2b - a: every added field 2b, the others a's
    e = wp.tile_load(a, shape=M)
    e[1] += tb[2]
    e[3] -= tb[0]
    wp.tile_store(elements, e)
    wp.tile_store(total, wp.tile_sum(tb))
    wp.tile_store(rows, wp.tile_sum(wp.tile_reshape(tb, shape=(2, 2)), axis=1))
    s = wp.tile_zeros(M, dtype=Mixed)
    wp.tile_scatter_add(s, 1, b[3], True)
    wp.tile_scatter_add(s, 1, b[2], True)
    wp.tile_store(scattered, s)


def _combine(x, y, sign=1):
    """Warp's rule on one element (numpy records): the accumulating fields combined, the others x's."""
    out = x.copy()
    for f in ADDED:
        out[f] = x[f] + sign * y[f]
    out["inner"]["a"] = x["inner"]["a"] + sign * y["inner"]["a"]
    return out


def _assert_records(got, want):
    for f in ("flag", "small", "value", "v", "n"):
        np.testing.assert_array_equal(got[f], want[f], err_msg=f)
    for f in ("a", "k"):
        np.testing.assert_array_equal(got["inner"][f], want["inner"][f], err_msg=f"inner.{f}")


def test_struct_tile_arithmetic_field_by_field():
    a0, b0 = _mixed(1), _mixed(3)
    outs = {n: wp.zeros(M, dtype=Mixed, device="cpu") for n in
            ("sums", "diffs", "inplace", "elements", "total", "rows", "scattered")}
    wp.launch_tiled(struct_arithmetic, dim=1, block_dim=1, device="cpu",
                    inputs=[wp.array(a0, dtype=Mixed, device="cpu"), wp.array(b0, dtype=Mixed, device="cpu"),
                            *outs.values()])
    _assert_records(outs["sums"].numpy(), np.array([_combine(x, y) for x, y in zip(a0, b0)]))
    _assert_records(outs["diffs"].numpy(), np.array([_combine(x, y, -1) for x, y in zip(a0, b0)]))
    twice_b = np.array([_combine(x, y) for x, y in zip(a0, b0)])
    for f in ADDED:
        twice_b[f] = 2 * b0[f]
    twice_b["inner"]["a"] = 2 * b0["inner"]["a"]
    _assert_records(outs["inplace"].numpy(), twice_b)
    elements = a0.copy()
    elements[1], elements[3] = _combine(a0[1], b0[2]), _combine(a0[3], b0[0], -1)
    _assert_records(outs["elements"].numpy(), elements)
    total = b0[0].copy()  # a sum starts from the first element: its bool / int8 / int16 fields are the sum's
    for y in b0[1:]:
        total = _combine(total, y)
    _assert_records(outs["total"].numpy()[:1], np.array([total]))
    rows = np.array([_combine(b0[0], b0[1]), _combine(b0[2], b0[3])])
    _assert_records(outs["rows"].numpy()[:2], rows)
    scattered = wp.zeros(M, dtype=Mixed, device="cpu").numpy()
    scattered[1] = _combine(_combine(scattered[1], b0[3]), b0[2])
    _assert_records(outs["scattered"].numpy(), scattered)


@wp.kernel(enable_backward=False, module="unique")  # (a module of its own: Warp refuses it)
def negated(a: wp.array(dtype=Mixed), out: wp.array(dtype=Mixed)):
    wp.tile_store(out, -wp.tile_load(a, shape=M))


@wp.kernel(enable_backward=False, module="unique")  # (a module of its own: Warp refuses it)
def scaled(a: wp.array(dtype=Mixed), out: wp.array(dtype=Mixed)):
    wp.tile_store(out, 2.0 * wp.tile_load(a, shape=M))


@wp.kernel(enable_backward=False, module="unique")  # (a module of its own: Warp refuses it)
def product(a: wp.array(dtype=Mixed), out: wp.array(dtype=Mixed)):
    t = wp.tile_load(a, shape=M)
    wp.tile_store(out, t * t)


@wp.kernel(enable_backward=False, module="unique")  # (a module of its own: Warp refuses it)
def plus_scalar(a: wp.array(dtype=Mixed), out: wp.array(dtype=Mixed)):
    wp.tile_store(out, wp.tile_load(a, shape=M) + 1.0)


@wp.kernel(enable_backward=False, module="unique")  # (a module of its own: Warp refuses it)
def plus_struct(a: wp.array(dtype=Mixed), out: wp.array(dtype=Mixed)):
    wp.tile_store(out, wp.tile_load(a, shape=M) + a[0])


@wp.kernel(enable_backward=False, module="unique")  # (a module of its own: Warp refuses it)
def element_product(a: wp.array(dtype=Mixed), out: wp.array(dtype=Mixed)):
    t = wp.tile_load(a, shape=M)
    t[0] *= t[1]
    wp.tile_store(out, t)


@pytest.mark.parametrize("kernel, message", [
    (negated, r"in 'negated': Tile unary operators do not support Warp struct tile elements"),
    (scaled, r"in 'scaled': Underlying scalar types don't match: tile=Mixed, const=float32"),
    (product, r"in 'product': Cannot multiply tile<Mixed> by tile<Mixed>: at least one element type must be scalar"),
    (plus_scalar, r"in 'plus_scalar': Couldn't find function overload for 'add' that matched inputs with types: "
                  r"\[tile\(shape=\(4,\), dtype=Mixed\), float32\]"),
    (plus_struct, r"in 'plus_struct': Couldn't find function overload for 'add' that matched inputs with types: "
                  r"\[tile\(shape=\(4,\), dtype=Mixed\), Mixed\]"),
    (element_product, r"in 'element_product': Couldn't find function overload for 'mul' that matched inputs with "
                      r"types: \[Mixed, Mixed\]"),
], ids=["negate", "scale", "product", "plus_scalar", "plus_struct", "element_product"])
def test_struct_tile_operators_warp_refuses(kernel, message):
    with pytest.raises(wp.CompileError, match=r"test_tile_struct_arithmetic.py:\d+: " + message):
        wp.launch_tiled(kernel, dim=1, block_dim=1, device="cpu",
                        inputs=[wp.zeros(M, dtype=Mixed, device="cpu"), wp.zeros(M, dtype=Mixed, device="cpu")])


@wp.struct
class P:
    x: wp.float32
    y: wp.vec3


@wp.func
def p_total(s: P) -> float:
    return s.x + s.y[0] + s.y[1] + s.y[2]


@wp.func
def shifted(s: P, by: P) -> P:
    out = P()
    out.x = s.x * by.x
    out.y = s.y + by.y
    return out


@wp.kernel
def struct_losses(inp: wp.array(dtype=P), bias: wp.array(dtype=P), loss: wp.array(dtype=float)):
    t = wp.tile_load(inp, shape=M)
    zero = wp.tile_zeros(M, dtype=P)
    mixed = (t + t) + (zero - t)  # t: gradient 2 - 1
    by = bias[0]  # closed over by the tile_map's function: its adjoint is summed over the tile
    shifted_t = wp.tile_map(shifted, mixed, by)
    summed = wp.tile_sum(shifted_t)  # a struct tile of one element
    first = wp.tile_view(t, offset=(0,), shape=(1,))
    spread = wp.tile_broadcast(first, shape=(M,))  # its adjoint: tile_sum_to of a struct tile
    wp.tile_store(loss, wp.tile_map(p_total, summed))
    wp.tile_atomic_add(loss, wp.tile_sum(wp.tile_map(p_total, spread)))


def test_gradients_of_struct_tile_arithmetic_sums_and_closures():
    x = np.arange(1, M + 1, dtype=np.float32)
    y = np.arange(3 * M, dtype=np.float32).reshape(M, 3)
    inp_np = wp.zeros(M, dtype=P, device="cpu").numpy()
    inp_np["x"], inp_np["y"] = x, y
    bias_np = wp.zeros(1, dtype=P, device="cpu").numpy()
    bias_np["x"], bias_np["y"] = 3.0, [[1.0, 2.0, 3.0]]
    inp = wp.array(inp_np, dtype=P, device="cpu", requires_grad=True)
    bias = wp.array(bias_np, dtype=P, device="cpu", requires_grad=True)
    loss = wp.zeros(1, dtype=float, device="cpu", requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(struct_losses, dim=1, inputs=[inp, bias, loss], block_dim=1, device="cpu")
    # loss = sum_i (3 x_i + sum(y_i + b_y)) + M (x_0 + sum(y_0))
    np.testing.assert_allclose(loss.numpy(), [3 * x.sum() + y.sum() + M * 6.0 + M * (x[0] + y[0].sum())])
    tape.backward(loss=loss)
    gx = np.full(M, 3.0, np.float32)
    gx[0] += M
    gy = np.ones((M, 3), np.float32)
    gy[0] += M
    np.testing.assert_allclose(inp.grad.numpy()["x"], gx)
    np.testing.assert_allclose(inp.grad.numpy()["y"], gy)
    np.testing.assert_allclose(bias.grad.numpy()["x"], [x.sum()])  # d/db_x sum_i x_i b_x
    np.testing.assert_allclose(bias.grad.numpy()["y"], [[M, M, M]])


@wp.kernel
def vector_broadcast(v: wp.array2d(dtype=wp.vec2), w: wp.array2d(dtype=wp.vec2), loss: wp.array(dtype=float)):
    t = wp.tile_load(v, shape=(1, 3))
    spread = wp.tile_broadcast(t, shape=(M, 3))  # its adjoint sums the vectors over the rows (tile_sum_to)
    weights = wp.tile_load(w, shape=(M, 3))
    wp.tile_store(loss, wp.tile_sum(wp.tile_map(wp.dot, spread, weights)))


def test_gradient_of_a_broadcast_tile_of_vectors():
    rng = np.random.default_rng(3)
    v0 = rng.random((1, 3, 2), dtype=np.float32)
    w0 = rng.random((M, 3, 2), dtype=np.float32)
    v = wp.array(v0, dtype=wp.vec2, device="cpu", requires_grad=True)
    w = wp.array(w0, dtype=wp.vec2, device="cpu", requires_grad=True)
    loss = wp.zeros(1, dtype=float, device="cpu", requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(vector_broadcast, dim=1, inputs=[v, w, loss], block_dim=1, device="cpu")
    np.testing.assert_allclose(loss.numpy(), [np.sum(v0 * w0)], rtol=1e-6)
    tape.backward(loss=loss)
    np.testing.assert_allclose(v.grad.numpy(), w0.sum(axis=0, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), np.broadcast_to(v0, w0.shape), rtol=1e-6)


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not installed (scripts/setup-env.sh)")
@pytest.mark.parametrize("kernel", [struct_arithmetic, struct_losses], ids=["arithmetic", "losses"])
def test_struct_tile_arithmetic_assembles_for_cuda(kernel):
    assert cuda_compile.build(kernel, 90)["cubin"] == "kernel.cubin"


@wp.struct
class Counted:
    x: wp.float32
    k: wp.int8


@wp.kernel
def lane_sums(a: wp.array(dtype=Counted), total: wp.array(dtype=Counted), rows: wp.array(dtype=Counted)):
    t = wp.tile_load(a, shape=8)
    wp.tile_store(total, wp.tile_sum(t))
    wp.tile_store(rows, wp.tile_sum(wp.tile_reshape(t, shape=(2, 4)), axis=1))


@pytest.mark.parametrize("threads, total, rows", [
    (4, 36.0, [10.0, 26.0]),  # a full block of 4 lanes: every element
    (3, 24.0, [6.0, 18.0]),  # a partial block of 3: lane 3's elements (3 and 7: x = 4 and 8) take no part
], ids=["full_block", "partial_block"])
def test_struct_sums_with_warps_cpu_lanes(threads, total, rows):
    # recorded from warp-lang 1.19 (wp.config.enable_cpu_blocks, block_dim=4); the int8 field is the first element's
    wp.config.enable_cpu_blocks = True
    try:
        a = wp.zeros(8, dtype=Counted, device="cpu").numpy()
        a["x"], a["k"] = np.arange(1, 9), np.arange(8) + 3
        out, out_rows = wp.zeros(1, dtype=Counted, device="cpu"), wp.zeros(2, dtype=Counted, device="cpu")
        wp.launch(lane_sums, dim=threads, inputs=[wp.array(a, dtype=Counted, device="cpu"), out, out_rows],
                  block_dim=4, device="cpu")
    finally:
        wp.config.enable_cpu_blocks = False
    np.testing.assert_array_equal(out.numpy()["x"], [total])
    np.testing.assert_array_equal(out.numpy()["k"], [3])
    np.testing.assert_array_equal(out_rows.numpy()["x"], rows)
    np.testing.assert_array_equal(out_rows.numpy()["k"], [3, 7])
