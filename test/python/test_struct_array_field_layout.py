"""A struct's array field in memory is Warp's C `array_t`: data and gradient addresses (uint64), int32 shape[4] and
byte strides[4], ndim and flags (uint16), 56 bytes. What `.numpy()` of an array of such structs shows, what a launch
packs, and what a kernel reads and writes (it converts to and from its own array descriptor). The dtype and the
values are those warp-lang 1.19 shows for the same structs (recorded)."""

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.compiler.targets.cuda.cuda_tools import ptxas_path
from mlwarp.launching import cuda_compile


@wp.struct
class Holder:
    values: wp.array(dtype=wp.float64)
    n: wp.int32


@wp.struct
class Grid:
    cells: wp.array2d(dtype=wp.float32)


# recorded from warp-lang 1.19: wp.zeros(2, dtype=Holder).numpy().dtype
WARP_ARRAY_T = np.dtype({"names": ["data", "grad", "shape", "strides", "ndim", "flags"],
                         "formats": ["<u8", "<u8", ("<i4", (4,)), ("<i4", (4,)), "<u2", "<u2"],
                         "offsets": [0, 8, 16, 32, 48, 50], "itemsize": 56})


def test_the_numpy_layout_of_an_array_field_is_warps_array_t():
    dtype = wp.zeros(2, dtype=Holder, device="cpu").numpy().dtype
    assert dtype.names == ("values", "n")
    assert dtype.fields["values"][0] == WARP_ARRAY_T
    assert dtype.fields["n"][1] == 56 and dtype.itemsize == 64
    zeros = wp.zeros(3, dtype=Holder, device="cpu").numpy()
    for field in WARP_ARRAY_T.names:  # (Warp's test_tile_construction reads data, grad and ndim of zeros)
        assert np.all(zeros["values"][field] == 0), field


def test_a_struct_value_packs_the_arrays_address_gradient_extents_and_strides():
    values = wp.array(np.arange(5.0), dtype=wp.float64, device="cpu", requires_grad=True)
    h = Holder()
    h.values, h.n = values, 7
    record = wp.array([h], dtype=Holder, device="cpu").numpy()[0]
    field = record["values"]
    assert int(field["data"]) == values.ptr
    assert int(field["grad"]) == values.grad.ptr
    assert field["shape"].tolist() == [5, 0, 0, 0] and field["strides"].tolist() == [8, 0, 0, 0]
    assert int(field["ndim"]) == 1 and int(field["flags"]) == 0 and int(record["n"]) == 7


@wp.kernel
def sum_field(holders: wp.array(dtype=Holder), grids: wp.array(dtype=Grid), out: wp.array(dtype=float)):
    i = wp.tid()
    h = holders[i]
    total = float(0.0)
    for k in range(h.values.shape[0]):
        total += float(h.values[k])
    g = grids[i].cells
    out[i] = total + g[1, 2] + float(g.shape[1])


def test_kernels_read_array_fields_of_structs_in_arrays():
    a, b = np.arange(3.0), np.arange(4.0) + 10
    cells = np.arange(12, dtype=np.float32).reshape(3, 4)
    keep = [wp.array(a, dtype=wp.float64, device="cpu"), wp.array(b, dtype=wp.float64, device="cpu"),
            wp.array(cells, dtype=wp.float32, device="cpu")]
    holders, grids = [], []
    for arr in keep[:2]:
        h = Holder()
        h.values = arr
        holders.append(h)
        g = Grid()
        g.cells = keep[2]
        grids.append(g)
    out = wp.zeros(2, dtype=float, device="cpu")
    wp.launch(sum_field, 2, inputs=[wp.array(holders, dtype=Holder, device="cpu"),
                                    wp.array(grids, dtype=Grid, device="cpu"), out], device="cpu")
    np.testing.assert_array_equal(out.numpy(), [a.sum() + cells[1, 2] + 4, b.sum() + cells[1, 2] + 4])


@wp.kernel
def store_field(src: wp.array2d(dtype=wp.float32), out: wp.array(dtype=Grid)):
    g = Grid()
    g.cells = src
    out[0] = g


def test_a_kernel_writes_an_array_field_as_warps_array_t():
    src = wp.array(np.ones((3, 5), np.float32), dtype=wp.float32, device="cpu")
    out = wp.zeros(1, dtype=Grid, device="cpu")
    wp.launch(store_field, 1, inputs=[src, out], device="cpu")
    field = out.numpy()[0]["cells"]
    assert int(field["data"]) == src.ptr and int(field["grad"]) == 0  # (a kernel's arrays carry no gradient address)
    assert field["shape"].tolist() == [3, 5, 0, 0] and field["strides"].tolist() == [20, 4, 0, 0]
    assert int(field["ndim"]) == 2


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas is not installed (scripts/setup-env.sh)")
@pytest.mark.parametrize("kernel", [sum_field, store_field], ids=["read", "write"])
def test_array_fields_assemble_for_cuda(kernel):
    assert cuda_compile.build(kernel, 90)["cubin"] == "kernel.cubin"
