"""Vectors and matrices of bools: one byte per component in arrays (as numpy's bool and Warp's), so loads and
stores of whole values, rows and components keep every component; captured bool constants index in kernels."""

import numpy as np

import mlwarp as wp

vec3b = wp.types.vector(length=3, dtype=bool)
vec2b = wp.types.vector(length=2, dtype=bool)
mat22b = wp.types.matrix((2, 2), dtype=bool)

SELECT = wp.constant(vec3b([True, False, True]))
SELECT_M = wp.constant(mat22b([True, False, False, True]))


@wp.kernel
def bool_values(src: wp.array(dtype=vec3b), vout: wp.array(dtype=vec3b), mout: wp.array(dtype=mat22b),
                rows: wp.array(dtype=mat22b), counts: wp.array(dtype=int)):
    v = src[0]  # a whole-value load
    v[0] = not v[0]
    vout[0] = v  # a whole-value store
    m = mat22b()
    m[1] = vec2b(True, False)
    m[0, 1] = True
    mout[0] = m
    rows[0][1] = vec2b(False, True)  # a row store into an array element
    n = 0
    for k in range(3):
        if src[0][k]:
            n += 1
    counts[0] = n
    total = 0
    if SELECT[0]:
        total += 1
    if SELECT[1]:
        total += 2
    if SELECT[2]:
        total += 4
    if SELECT_M[0, 1]:
        total += 8
    if SELECT_M[1, 1]:
        total += 16
    counts[1] = total


def test_bool_vectors_and_matrices_round_trip_through_arrays():
    src = wp.array(np.array([[False, True, True]]), dtype=vec3b)
    vout, mout, rows = wp.zeros(1, dtype=vec3b), wp.zeros(1, dtype=mat22b), wp.zeros(1, dtype=mat22b)
    counts = wp.zeros(2, dtype=int)
    wp.launch(bool_values, dim=1, inputs=[src, vout, mout, rows, counts])
    np.testing.assert_array_equal(vout.numpy(), [[True, True, True]])
    np.testing.assert_array_equal(mout.numpy(), [[[False, True], [True, False]]])
    np.testing.assert_array_equal(rows.numpy(), [[[False, False], [False, True]]])
    assert counts.numpy().tolist() == [2, 1 + 4 + 16]
