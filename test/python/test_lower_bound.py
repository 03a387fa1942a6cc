"""wp.lower_bound (a generic @wp.func, python/mlwarp/library/array_search.py): Warp's binary search, checked against
numpy.searchsorted (side="left") clipped as Warp clips it (to end - 1)."""

import numpy as np
import pytest

import mlwarp as wp


@wp.kernel
def _search(values: wp.array(dtype=float), arr: wp.array(dtype=float), begin: int, end: int,
            whole: wp.array(dtype=int), part: wp.array(dtype=int)):
    i = wp.tid()
    whole[i] = wp.lower_bound(arr, values[i])
    part[i] = wp.lower_bound(arr, begin, end, values[i])


def _expected(sorted_values, begin, end, queries):
    found = begin + np.searchsorted(sorted_values[begin:end], queries, side="left")
    return np.minimum(found, end - 1)  # Warp's search never returns end


def test_lower_bound_hand_values():
    arr = wp.array(np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], dtype=np.float32))
    values = wp.array(np.array([-0.1, 0.0, 2.5, 4.0, 5.0, 5.5], dtype=np.float32))
    whole, part = wp.zeros(6, dtype=int), wp.zeros(6, dtype=int)
    wp.launch(_search, dim=6, inputs=[values, arr, 1, 4, whole, part])
    assert whole.numpy().tolist() == [0, 0, 3, 4, 5, 5]
    assert part.numpy().tolist() == [1, 1, 3, 3, 3, 3]


@pytest.mark.parametrize("seed", [0, 1])
def test_lower_bound_against_searchsorted(seed):
    rng = np.random.default_rng(seed)
    data = np.sort(rng.integers(0, 20, size=37)).astype(np.float32)  # with repeats
    queries = rng.uniform(-2.0, 22.0, size=64).astype(np.float32)
    queries[:10] = data[rng.integers(0, 37, size=10)]  # exact hits: the first of equal elements
    whole, part = wp.zeros(64, dtype=int), wp.zeros(64, dtype=int)
    wp.launch(_search, dim=64, inputs=[wp.array(queries), wp.array(data), 5, 30, whole, part])
    assert whole.numpy().tolist() == _expected(data, 0, 37, queries).tolist()
    assert part.numpy().tolist() == _expected(data, 5, 30, queries).tolist()


def test_lower_bound_on_integers():
    @wp.kernel
    def search_ints(arr: wp.array(dtype=wp.int64), out: wp.array(dtype=int)):
        out[0] = wp.lower_bound(arr, wp.int64(7))
        out[1] = wp.lower_bound(arr, wp.int64(100))

    out = wp.zeros(2, dtype=int)
    wp.launch(search_ints, dim=1, inputs=[wp.array([1, 3, 7, 7, 9], dtype=wp.int64), out])
    assert out.numpy().tolist() == [2, 4]
