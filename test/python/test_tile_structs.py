"""Tiles of structs (Warp 1.19's tiles whose dtype is a wp.struct): tile_load / tile_store from struct arrays, the
indexed forms, tile_full / tile_zeros, tile_map of @wp.func over structs (nested ones too), element reads and writes
(t[i], t[i].field), tile_extract, tile_sort with struct values (array fields carried), reshape and transpose,
tile_atomic_add (field by field; fields without an atomic add left alone) and its result, the gradient through
tile_map, and the CUDA build. References: numpy on the structured arrays; the gradient and the atomic add's
previous values checked against warp-lang 1.19 (same kernels, recorded)."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.launching import cuda_compile
from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path

M = 8


@wp.struct
class P:
    x: wp.float32
    y: wp.vec3


@wp.struct
class Nested:
    payload: P
    weight: wp.float32


@wp.struct
class Payload:
    data: wp.array(dtype=float)
    tag: wp.int32


@wp.struct
class Mixed:
    flag: wp.bool
    small: wp.int8
    value: wp.float32
    v: wp.vec2d
    n: wp.int32


@wp.func
def scale(s: P) -> P:
    out = P()
    out.x = s.x + 1.0
    out.y = s.y * 2.0
    return out


@wp.func
def add(a: P, b: P) -> P:
    out = P()
    out.x = a.x + b.x
    out.y = a.y + b.y
    return out


@wp.func
def total(s: P) -> float:
    return s.x + s.y[0] + s.y[1] + s.y[2]


@wp.func
def nested_scale(s: Nested) -> Nested:
    out = Nested()
    out.payload = scale(s.payload)
    out.weight = s.weight + 3.0
    return out


@wp.kernel(enable_backward=False)
def struct_tile_ops(inp: wp.array(dtype=P), nested: wp.array(dtype=Nested), keys: wp.array(dtype=int),
                    idx: wp.array(dtype=int), mapped: wp.array(dtype=P), sums: wp.array(dtype=float),
                    nested_mapped: wp.array(dtype=Nested), full: wp.array(dtype=P), zeros: wp.array(dtype=P),
                    elements: wp.array(dtype=P), fields: wp.array(dtype=float), sorted_values: wp.array(dtype=P),
                    transposed: wp.array2d(dtype=P), gathered: wp.array(dtype=P), scattered: wp.array(dtype=P),
                    assigned: wp.array(dtype=P)):
    t = wp.tile_load(inp, shape=M)
    bias = P()
    bias.x = 10.0
    bias.y = wp.vec3(1.0, 2.0, 3.0)
    wp.tile_store(mapped, wp.tile_map(add, wp.tile_map(scale, t), bias))
    wp.tile_store(sums, wp.tile_map(total, t))
    wp.tile_store(nested_mapped, wp.tile_map(nested_scale, wp.tile_load(nested, shape=M)))
    wp.tile_store(full, wp.tile_full(M, value=bias, dtype=P))
    wp.tile_store(zeros, wp.tile_zeros(M, dtype=P))
    elements[0] = t[3]
    elements[1] = wp.tile_extract(t, 5)
    fields[0] = t[2].x
    fields[1] = t[4].y[1]
    values = wp.tile_load(inp, shape=M)
    wp.tile_sort(wp.tile_load(keys, shape=M), values)
    wp.tile_store(sorted_values, values)
    wp.tile_store(transposed, wp.tile_transpose(wp.tile_reshape(t, shape=(2, 4))))
    wp.tile_store(gathered, wp.tile_load_indexed(inp, indices=wp.tile_load(idx, shape=M), shape=(M,), axis=0))
    wp.tile_store_indexed(scattered, indices=wp.tile_load(idx, shape=M), t=t, axis=0)
    u = wp.tile_zeros(M, dtype=P)
    u[2] = bias
    u[5] = t[1]
    wp.tile_store(assigned, u)


def _p_array(x, y):
    a = np.zeros(len(x), dtype=wp.zeros(1, dtype=P, device="cpu").numpy().dtype)
    a["x"], a["y"] = x, y
    return a


def test_struct_tile_operations_against_numpy():
    rng = np.random.default_rng(3)
    x, y = rng.random(M, dtype=np.float32), rng.random((M, 3), dtype=np.float32)
    inp = wp.array(_p_array(x, y), dtype=P, device="cpu")
    nested_np = wp.zeros(M, dtype=Nested, device="cpu").numpy()
    nested_np["payload"]["x"] = np.arange(M)
    nested_np["payload"]["y"] = np.arange(3 * M).reshape(M, 3)
    nested_np["weight"] = -np.arange(M)
    keys_np, idx_np = np.array([5, 3, 7, 1, 0, 6, 2, 4]), np.arange(M)[::-1].copy()
    outs = {"mapped": wp.zeros(M, dtype=P, device="cpu"), "sums": wp.zeros(M, dtype=float, device="cpu"),
            "nested_mapped": wp.zeros(M, dtype=Nested, device="cpu"), "full": wp.zeros(M, dtype=P, device="cpu"),
            "zeros": wp.array(_p_array(x, y), dtype=P, device="cpu"), "elements": wp.zeros(2, dtype=P, device="cpu"),
            "fields": wp.zeros(2, dtype=float, device="cpu"), "sorted": wp.zeros(M, dtype=P, device="cpu"),
            "transposed": wp.zeros((4, 2), dtype=P, device="cpu"), "gathered": wp.zeros(M, dtype=P, device="cpu"),
            "scattered": wp.zeros(M, dtype=P, device="cpu"), "assigned": wp.zeros(M, dtype=P, device="cpu")}
    wp.launch_tiled(struct_tile_ops, dim=1, block_dim=1, device="cpu",
                    inputs=[inp, wp.array(nested_np, dtype=Nested, device="cpu"),
                            wp.array(keys_np, dtype=int, device="cpu"), wp.array(idx_np, dtype=int, device="cpu"),
                            *outs.values()])
    got = {k: v.numpy() for k, v in outs.items()}
    f32 = np.float32
    np.testing.assert_array_equal(got["mapped"]["x"], (x + f32(1)) + f32(10))
    np.testing.assert_array_equal(got["mapped"]["y"], y * f32(2) + np.array([1, 2, 3], f32))
    np.testing.assert_array_equal(got["sums"], ((x + y[:, 0]) + y[:, 1]) + y[:, 2])
    np.testing.assert_array_equal(got["nested_mapped"]["payload"]["x"], np.arange(M) + 1)
    np.testing.assert_array_equal(got["nested_mapped"]["payload"]["y"], np.arange(3 * M).reshape(M, 3) * 2)
    np.testing.assert_array_equal(got["nested_mapped"]["weight"], -np.arange(M) + 3)
    np.testing.assert_array_equal(got["full"]["x"], np.full(M, 10))
    np.testing.assert_array_equal(got["full"]["y"], np.tile([1, 2, 3], (M, 1)))
    np.testing.assert_array_equal(got["zeros"]["x"], np.zeros(M))
    np.testing.assert_array_equal(got["zeros"]["y"], np.zeros((M, 3)))
    np.testing.assert_array_equal(got["elements"]["x"], x[[3, 5]])
    np.testing.assert_array_equal(got["elements"]["y"], y[[3, 5]])
    np.testing.assert_array_equal(got["fields"], [x[2], y[4, 1]])
    order = np.argsort(keys_np, kind="stable")
    np.testing.assert_array_equal(got["sorted"]["x"], x[order])
    np.testing.assert_array_equal(got["sorted"]["y"], y[order])
    np.testing.assert_array_equal(got["transposed"]["x"], x.reshape(2, 4).T)
    np.testing.assert_array_equal(got["transposed"]["y"], y.reshape(2, 4, 3).transpose(1, 0, 2))
    np.testing.assert_array_equal(got["gathered"]["x"], x[idx_np])
    np.testing.assert_array_equal(got["scattered"]["y"][idx_np], y)
    expected_x, expected_y = np.zeros(M, f32), np.zeros((M, 3), f32)
    expected_x[2], expected_y[2] = 10, [1, 2, 3]
    expected_x[5], expected_y[5] = x[1], y[1]
    np.testing.assert_array_equal(got["assigned"]["x"], expected_x)
    np.testing.assert_array_equal(got["assigned"]["y"], expected_y)


@wp.kernel(enable_backward=False)
def sort_payloads(inp: wp.array(dtype=Payload), keys: wp.array(dtype=int), out: wp.array(dtype=Payload),
                  tags: wp.array(dtype=int), firsts: wp.array(dtype=float)):
    values = wp.tile_load(inp, shape=M)
    wp.tile_sort(wp.tile_load(keys, shape=M), values)
    wp.tile_store(out, values)
    for i in range(M):
        tags[i] = values[i].tag
        firsts[i] = values[i].data[0]


def test_structs_with_array_fields_sorted_in_a_tile():
    arrays = [wp.array(np.full(2, float(k)), dtype=float, device="cpu") for k in range(M)]
    payloads = []
    for k in range(M):
        s = Payload()
        s.data, s.tag = arrays[k], 100 + k
        payloads.append(s)
    keys = np.array([5, 3, 7, 1, 0, 6, 2, 4])
    out = wp.zeros(M, dtype=Payload, device="cpu")
    tags, firsts = wp.zeros(M, dtype=int, device="cpu"), wp.zeros(M, dtype=float, device="cpu")
    wp.launch_tiled(sort_payloads, dim=1, block_dim=1, device="cpu",
                    inputs=[wp.array(payloads, dtype=Payload, device="cpu"), wp.array(keys, dtype=int, device="cpu"),
                            out, tags, firsts])
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(tags.numpy(), 100 + order)
    np.testing.assert_array_equal(firsts.numpy(), order.astype(np.float32))
    np.testing.assert_array_equal(out.numpy()["tag"], 100 + order)


@wp.kernel(enable_backward=False)
def atomic_add_structs(a: wp.array(dtype=Mixed), src: wp.array(dtype=Mixed), previous: wp.array(dtype=Mixed)):
    p = wp.tile_atomic_add(a, wp.tile_load(src, shape=4), offset=1)
    wp.tile_store(previous, p)


def _mixed(scale):
    a = wp.zeros(5, dtype=Mixed, device="cpu").numpy()
    a["flag"] = [True, False, True, False, True]
    a["small"], a["value"] = np.arange(5) * scale, np.arange(5) * 0.5 * scale
    a["v"], a["n"] = np.arange(10).reshape(5, 2) * scale, np.arange(5) * 10 * scale
    return a


def test_atomic_add_of_structs_adds_the_atomic_fields_and_returns_previous_values():
    a0, src0 = _mixed(1), _mixed(3)
    a, previous = wp.array(a0, dtype=Mixed, device="cpu"), wp.zeros(4, dtype=Mixed, device="cpu")
    wp.launch_tiled(atomic_add_structs, dim=1, block_dim=1, device="cpu",
                    inputs=[a, wp.array(src0, dtype=Mixed, device="cpu"), previous])
    got, prev = a.numpy(), previous.numpy()
    # float, vec2d and int32 fields add; bool and int8 (no atomic add) stay as they were (warp-lang 1.19 agrees)
    np.testing.assert_array_equal(got["flag"], a0["flag"])
    np.testing.assert_array_equal(got["small"], a0["small"])
    np.testing.assert_array_equal(got["value"][1:], a0["value"][1:] + src0["value"][:4])
    np.testing.assert_array_equal(got["v"][1:], a0["v"][1:] + src0["v"][:4])
    np.testing.assert_array_equal(got["n"][1:], a0["n"][1:] + src0["n"][:4])
    for field in ("flag", "small", "value", "v", "n"):
        np.testing.assert_array_equal(prev[field], a0[field][1:], err_msg=field)


@wp.kernel
def struct_loss(inp: wp.array(dtype=P), loss: wp.array(dtype=float)):
    t = wp.tile_load(inp, shape=M)
    wp.tile_store(loss, wp.tile_sum(wp.tile_map(total, wp.tile_map(scale, t))))


def test_gradient_through_a_struct_tile_map():
    inp = wp.array(_p_array(np.arange(M), np.arange(3 * M).reshape(M, 3)), dtype=P, device="cpu",
                   requires_grad=True)
    loss = wp.zeros(1, dtype=float, device="cpu", requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch_tiled(struct_loss, dim=1, inputs=[inp, loss], block_dim=1, device="cpu")
    tape.backward(loss=loss)
    # sum over elements of (x + 1) + 2 (y0 + y1 + y2): d/dx = 1, d/dy = 2 (warp-lang 1.19: the same, loss 588)
    np.testing.assert_array_equal(loss.numpy(), [sum(k + 1 + 2 * (9 * k + 3) for k in range(M))])
    np.testing.assert_array_equal(inp.grad.numpy()["x"], np.ones(M))
    np.testing.assert_array_equal(inp.grad.numpy()["y"], np.full((M, 3), 2.0))


@wp.kernel(enable_backward=False)
def struct_ones(out: wp.array(dtype=P)):
    wp.tile_store(out, wp.tile_ones(M, dtype=P))


def test_tile_ones_of_a_struct_is_refused_as_warp():
    with pytest.raises(Exception, match=r"tile_ones\(\) does not support Warp struct dtypes; use tile_full\(\) "
                                        r"with an explicit value"):
        wp.launch_tiled(struct_ones, dim=1, inputs=[wp.zeros(M, dtype=P, device="cpu")], block_dim=1, device="cpu")


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not installed (scripts/setup-env.sh)")
@pytest.mark.parametrize("kernel", [struct_tile_ops, atomic_add_structs], ids=["operations", "atomic_add"])
def test_struct_tiles_assemble_for_cuda(kernel):
    assert cuda_compile.build(kernel, 90)["cubin"] == "kernel.cubin"


@wp.struct
class KeyValue:
    key: wp.int32
    value: wp.float32


@wp.func
def larger(a: KeyValue, b: KeyValue) -> KeyValue:
    # (Warp's test writes wp.where(a.value < b.value, b, a): mlwarp's wp.where takes no structs)
    if a.value < b.value:
        return b
    return a


@wp.kernel(enable_backward=False)
def argmax_by_reduce(values: wp.array2d(dtype=KeyValue), res: wp.array(dtype=KeyValue)):
    i = wp.tid()
    t = wp.tile_load(values, shape=(1, 16), offset=(i, 0))
    wp.tile_store(res, wp.tile_reduce(larger, t), offset=i)


def test_tile_reduce_of_structs_with_a_function():
    # Warp's test_tile_reduce_custom_struct_argmax: the key of each row's largest value, numpy's argmax
    values = np.random.default_rng(42).random((5, 16), dtype=np.float32)
    pairs = wp.zeros((5, 16), dtype=KeyValue, device="cpu").numpy()
    pairs["key"], pairs["value"] = np.arange(16), values
    res = wp.zeros(5, dtype=KeyValue, device="cpu")
    wp.launch_tiled(argmax_by_reduce, dim=5, inputs=[wp.array(pairs, dtype=KeyValue, device="cpu"), res],
                    block_dim=1, device="cpu")
    np.testing.assert_array_equal(res.numpy()["key"], np.argmax(values, axis=1))


@wp.kernel(enable_backward=False)
def struct_min(inp: wp.array(dtype=P), out: wp.array(dtype=P)):
    wp.tile_store(out, wp.tile_min(wp.tile_load(inp, shape=M)))


def test_ordering_reductions_of_struct_tiles_are_refused():
    # (tile_sum adds structs field by field: test_tile_struct_arithmetic.py)
    with pytest.raises(Exception, match=r"test_tile_structs.py:\d+: in 'struct_min': tile_min\(\) does not support "
                                        r"Warp struct tile elements"):
        wp.launch_tiled(struct_min, dim=1, inputs=[wp.zeros(M, dtype=P, device="cpu"),
                                                   wp.zeros(1, dtype=P, device="cpu")], block_dim=1, device="cpu")


@wp.kernel(enable_backward=False)
def tile_of_a_struct(inp: wp.array(dtype=P), out: wp.array(dtype=P), xs: wp.array(dtype=float)):
    i = wp.tid()
    t = wp.tile(inp[i])  # one lane per block: a tile of one struct
    wp.tile_store(out, t, offset=i)
    xs[i] = wp.untile(t).x


def test_wp_tile_and_untile_of_a_struct():
    x, y = np.array([1, 2, 3], np.float32), np.arange(9, dtype=np.float32).reshape(3, 3)
    out, xs = wp.zeros(3, dtype=P, device="cpu"), wp.zeros(3, dtype=float, device="cpu")
    wp.launch_tiled(tile_of_a_struct, dim=3, inputs=[wp.array(_p_array(x, y), dtype=P, device="cpu"), out, xs],
                    block_dim=1, device="cpu")
    np.testing.assert_array_equal(out.numpy()["x"], x)
    np.testing.assert_array_equal(out.numpy()["y"], y)
    np.testing.assert_array_equal(xs.numpy(), x)


@wp.kernel(enable_backward=False)
def struct_bit_and(inp: wp.array(dtype=P), out: wp.array(dtype=P)):
    t = wp.tile_load(inp, shape=M)
    t &= t
    wp.tile_store(out, t)


@wp.kernel(enable_backward=False)
def struct_reduce_min(inp: wp.array(dtype=P), out: wp.array(dtype=P)):
    wp.tile_store(out, wp.tile_reduce(wp.min, wp.tile_load(inp, shape=M)))


@pytest.mark.parametrize("kernel, message", [
    (struct_bit_and, r"in 'struct_bit_and': Tile bitwise inplace operators do not support Warp struct tile elements"),
    (struct_reduce_min, r"in 'struct_reduce_min': tile_reduce\(\) operator min has no overload accepting Warp struct "
                        r"tile element type P"),
], ids=["bitwise_inplace", "reduce_builtin"])
def test_warp_refusals_of_struct_tiles(kernel, message):
    # Warp's messages (its test_tile_struct.py checks them)
    with pytest.raises(Exception, match=message):
        wp.launch_tiled(kernel, dim=1, inputs=[wp.zeros(M, dtype=P, device="cpu"), wp.zeros(M, dtype=P, device="cpu")],
                        block_dim=1, device="cpu")
