"""Locals first assigned in one branch of an `if`, or only inside a loop, and read after it.

Warp declares every local at the top of the generated C function, so such a local reads, on a path that skipped
its assignment, whatever the declaration left there: zero for vectors, matrices, structs and tiles (their
constructors zero them), a null array of shape 0 for arrays, an indeterminate value for scalars, which mlwarp
makes zero as well. A loop keeps the value its last iteration assigned, and a loop that runs no iteration leaves
the declaration's value. Expected values here are written by hand or computed with numpy (or, where a test says
so, recorded from warp-lang); gradients are checked against central differences of numpy forwards."""

from __future__ import annotations

import numpy as np
import pytest

import mlwarp as wp

from grad_util import central_difference

A = np.array([1.0, -1.0, 0.5, -3.0, 2.0, 0.0], dtype=np.float32)


def run(kernel, inputs, n, dtype=float, size=None):
    out = wp.zeros(size or n, dtype=dtype)
    wp.launch(kernel, dim=n, inputs=inputs, outputs=[out])
    return out.numpy()


# -- if -----------------------------------------------------------------------------------------------------
@wp.kernel
def if_only(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    if a[i] > 0.0:
        x = a[i] * 2.0
    out[i] = x


def test_assigned_in_the_if_branch_only_is_zero_on_the_other_path():
    np.testing.assert_array_equal(run(if_only, [wp.array(A)], len(A)), np.where(A > 0, 2 * A, 0))


@wp.kernel
def else_only(a: wp.array(dtype=float), out: wp.array(dtype=int)):
    i = wp.tid()
    if a[i] > 0.0:
        pass
    else:
        k = int(a[i]) - 1
    out[i] = k


def test_assigned_in_the_else_branch_only():
    np.testing.assert_array_equal(run(else_only, [wp.array(A)], len(A), int),
                                  np.where(A > 0, 0, A.astype(np.int32) - 1))


@wp.kernel
def same_value_in_both(a: wp.array(dtype=float), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    p = wp.vec3(a[i], 1.0, 2.0)
    q = wp.vec3(3.0, a[i], 4.0)
    if a[i] > 0.0:  # a new local both branches bind to the same earlier value (Newton's heightfield triangles)
        first = p
        second = q
    else:
        first = p
        second = p
    out[i] = first + second * 10.0


def test_a_new_local_both_branches_bind_to_one_value():
    p = np.stack([A, np.ones_like(A), np.full_like(A, 2.0)], 1)
    q = np.stack([np.full_like(A, 3.0), A, np.full_like(A, 4.0)], 1)
    expected = p + np.where((A > 0)[:, None], q, p) * 10.0
    np.testing.assert_allclose(run(same_value_in_both, [wp.array(A)], len(A), wp.vec3), expected, rtol=1e-6)


@wp.kernel
def if_elif(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    if a[i] > 1.0:
        x = 1.0
    elif a[i] > 0.0:
        x = 2.0
    out[i] = x


def test_if_and_elif_without_else():
    np.testing.assert_array_equal(run(if_elif, [wp.array(A)], len(A)), np.select([A > 1, A > 0], [1.0, 2.0], 0.0))


@wp.kernel
def two_ifs(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    if a[i] > 0.0:
        x = 10.0
    if a[i] > 1.0:
        x = x + 5.0  # reads x, defined before this if on every path now
    out[i] = x


def test_a_second_if_reads_and_reassigns_it():
    np.testing.assert_array_equal(run(two_ifs, [wp.array(A)], len(A)), np.where(A > 1, 15.0, np.where(A > 0, 10.0, 0)))


@wp.kernel
def nested(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    if a[i] > -2.0:
        if a[i] < 1.0:
            y = a[i] + 100.0
        z = 1.0
    out[i] = y + z


def test_nested_ifs():
    want = np.where(A > -2, 1.0, 0.0) + np.where((A > -2) & (A < 1), A + 100, 0.0)
    np.testing.assert_array_equal(run(nested, [wp.array(A)], len(A)), want)


@wp.kernel
def if_composites(a: wp.array(dtype=float), v_out: wp.array(dtype=wp.vec3), m_out: wp.array(dtype=wp.mat22),
                  q_out: wp.array(dtype=wp.quat)):
    i = wp.tid()
    if a[i] > 0.0:
        v = wp.vec3(a[i], 1.0, 2.0)
        m = wp.mat22(a[i], 1.0, 2.0, 3.0)
        q = wp.quat(1.0, 2.0, 3.0, a[i])
    v_out[i] = v
    m_out[i] = m
    q_out[i] = q


def test_vectors_matrices_quaternions_are_zero_on_the_other_path():
    n = len(A)
    v, m, q = wp.zeros(n, dtype=wp.vec3), wp.zeros(n, dtype=wp.mat22), wp.zeros(n, dtype=wp.quat)
    wp.launch(if_composites, dim=n, inputs=[wp.array(A)], outputs=[v, m, q])
    on = (A > 0)[:, None]
    np.testing.assert_array_equal(v.numpy(), np.where(on, np.stack([A, np.ones(n), 2 * np.ones(n)], 1), 0))
    m_want = np.stack([A, np.ones(n), 2 * np.ones(n), 3 * np.ones(n)], 1)
    np.testing.assert_array_equal(m.numpy().reshape(n, 4), np.where(on, m_want, 0))
    q_want = np.stack([np.ones(n), 2 * np.ones(n), 3 * np.ones(n), A], 1)
    np.testing.assert_array_equal(q.numpy(), np.where(on, q_want, 0))


@wp.struct
class Body:
    mass: float
    pos: wp.vec2
    tag: int


@wp.kernel
def if_struct(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    if a[i] > 0.0:
        b = Body()
        b.mass = a[i]
        b.pos = wp.vec2(3.0, 4.0)
        b.tag = 7
    out[i] = b.mass + b.pos[0] + b.pos[1] + float(b.tag)


def test_a_struct_is_zero_on_the_other_path():
    np.testing.assert_array_equal(run(if_struct, [wp.array(A)], len(A)), np.where(A > 0, A + 14.0, 0.0))


@wp.func
def clamp_positive(x: float):
    if x > 0.0:
        r = x
    return r


@wp.kernel
def via_func(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = clamp_positive(a[i])


def test_in_a_function():
    np.testing.assert_array_equal(run(via_func, [wp.array(A)], len(A)), np.maximum(A, 0))


@wp.kernel
def if_array(a: wp.array(dtype=float), out: wp.array(dtype=float), lengths: wp.array(dtype=int)):
    i = wp.tid()
    if a[i] > 0.0:
        view = a
    lengths[i] = view.shape[0]
    if a[i] > 0.0:
        out[i] = view[i] * 2.0


def test_an_array_is_null_and_empty_on_the_other_path():
    """Warp's default array_t (no data, shape 0) on the path that skipped the assignment; it is read only where it
    was assigned (MuJoCo Warp's multicontact binds a mesh's arrays in the branch for meshes). Expected values as
    warp-lang 1.19 computes them on the CPU."""
    lengths = wp.zeros(len(A), dtype=int)
    out = wp.zeros(len(A))
    wp.launch(if_array, dim=len(A), inputs=[wp.array(A), out, lengths])
    np.testing.assert_array_equal(out.numpy(), np.where(A > 0, 2 * A, 0))
    np.testing.assert_array_equal(lengths.numpy(), np.where(A > 0, len(A), 0))


@wp.kernel
def pick_array(which: int, a: wp.array(dtype=float), b: wp.array2d(dtype=float), out: wp.array(dtype=int)):
    if which > 0:
        rows = a
    else:
        rows = b[1]
    out[0] = rows.shape[0]
    out[1] = int(rows[rows.shape[0] - 1])


def test_an_if_else_picks_one_of_two_arrays():
    """Both branches only rename an array: canonicalization makes the scf.if a select of two arrays."""
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    for which, expected in ((1, [len(A), int(A[-1])]), (0, [4, int(b[1, -1])])):
        out = wp.zeros(2, dtype=int)
        wp.launch(pick_array, dim=1, inputs=[which, wp.array(A), wp.array(b), out])
        np.testing.assert_array_equal(out.numpy(), expected)


# -- loops --------------------------------------------------------------------------------------------------
@wp.kernel
def for_only(n: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    for j in range(n[i]):
        y = j + 10
    out[i] = y


def test_assigned_only_in_a_loop_keeps_its_last_value_and_is_zero_after_no_iteration():
    n = np.array([3, 0, 1, -2, 5], dtype=np.int32)
    np.testing.assert_array_equal(run(for_only, [wp.array(n)], len(n), int), np.where(n > 0, n - 1 + 10, 0))


@wp.kernel
def while_only(n: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    k = int(0)
    while k < n[i]:
        z = k * 3
        k = k + 1
    out[i] = z


@wp.struct
class Shape:
    scale: float
    verts: wp.array(dtype=wp.vec3)


@wp.kernel
def pick_struct_field(which: int, g: Shape, h: Shape, out: wp.array(dtype=float)):
    if which > 0:
        verts = g.verts
    elif which < 0:
        verts = h.verts
    out[0] = float(verts.shape[0])
    if verts.shape[0] > 0:
        out[1] = verts[verts.shape[0] - 1][2]


def test_an_array_field_of_a_struct_picked_in_branches():
    """An array read from a struct field and carried out of an if/elif (MuJoCo Warp's multicontact picks a mesh's
    arrays from one of two geoms); the path that assigns nothing sees an empty array, as under warp-lang 1.19."""
    g, h = Shape(), Shape()
    g.verts = wp.array(np.arange(9, dtype=np.float32).reshape(3, 3), dtype=wp.vec3)
    h.verts = wp.array(-np.arange(15, dtype=np.float32).reshape(5, 3), dtype=wp.vec3)
    for which, expected in ((1, [3.0, 8.0]), (-1, [5.0, -14.0]), (0, [0.0, 0.0])):
        out = wp.zeros(2)
        wp.launch(pick_struct_field, dim=1, inputs=[which, g, h, out])
        np.testing.assert_array_equal(out.numpy(), expected)


@wp.kernel
def for_array(n: int, a: wp.array2d(dtype=float), out: wp.array(dtype=int)):
    for j in range(n):
        last = a
    out[0] = last.shape[0]
    out[1] = last.shape[1]


@wp.kernel
def for_struct_field(n: int, g: Shape, out: wp.array(dtype=int)):
    for j in range(n):
        verts = g.verts
    out[0] = verts.shape[0]


def test_an_array_assigned_only_in_a_loop_is_empty_after_no_iteration():
    """Expected values as warp-lang 1.19 computes them on the CPU (a null array of shape (0, 0))."""
    for n, expected in ((2, [3, 5]), (0, [0, 0])):
        out = wp.zeros(2, dtype=int)
        wp.launch(for_array, dim=1, inputs=[n, wp.zeros((3, 5), dtype=float), out])
        np.testing.assert_array_equal(out.numpy(), expected)
    g = Shape()
    g.verts = wp.zeros(4, dtype=wp.vec3)
    for n, expected in ((2, 4), (0, 0)):
        out = wp.zeros(1, dtype=int)
        wp.launch(for_struct_field, dim=1, inputs=[n, g, out])
        assert out.numpy()[0] == expected


def test_while_loop():
    n = np.array([3, 0, 1, -2, 5], dtype=np.int32)
    np.testing.assert_array_equal(run(while_only, [wp.array(n)], len(n), int), np.where(n > 0, 3 * (n - 1), 0))


@wp.kernel
def last_positive(a: wp.array(dtype=float), n: int, out: wp.array(dtype=float)):
    i = wp.tid()
    for j in range(n):
        if a[j] > 0.0:
            y = a[j]
        out[i * n + j] = y  # within the loop: the last positive so far, zero before the first


def test_if_inside_a_loop_keeps_the_value_of_earlier_iterations():
    a = np.array([-1.0, 2.0, -3.0, 4.0, -5.0], dtype=np.float32)
    want = np.array([0.0, 2.0, 2.0, 4.0, 4.0])
    np.testing.assert_array_equal(run(last_positive, [wp.array(a), len(a)], 2, size=2 * len(a)), np.tile(want, 2))


@wp.kernel
def running_min(a: wp.array(dtype=float), n: int, out: wp.array(dtype=float)):
    i = wp.tid()
    for j in range(n):
        if j == 0:
            best = a[j]
            where = j
        elif a[j] < best:  # best comes from the iteration before
            best = a[j]
            where = j
    out[i] = best + float(where) * 1000.0


def test_first_iteration_initialises_and_later_ones_read():
    # Warp refuses this kernel ("Referencing undefined symbol: best": its elif branch starts from the symbols
    # before the if); mlwarp gives it Python's meaning
    a = np.array([3.0, -1.0, 4.0, -1.5, 9.0, 2.0], dtype=np.float32)
    for n in (0, 1, 3, 6):
        want = 0.0 if n == 0 else a[:n].min() + float(np.argmin(a[:n])) * 1000.0
        np.testing.assert_allclose(run(running_min, [wp.array(a), n], 1), [want])


@wp.kernel
def reassigned_after_the_if(a: wp.array(dtype=float), n: int, out: wp.array(dtype=float)):
    i = wp.tid()
    for j in range(n):
        if j == 0:
            y = a[i]
        y = y + 1.0
        out[i * n + j] = y


def test_later_iterations_read_the_last_assignment():
    # Python's semantics, and Warp's for loops it unrolls (range(3)); Warp's dynamic loops read the branch's own
    # copy instead (a[i] + 1 on every iteration)
    a = np.array([1.0, -2.0], dtype=np.float32)
    want = (a[:, None] + np.arange(1, 4)[None, :]).ravel()
    np.testing.assert_array_equal(run(reassigned_after_the_if, [wp.array(a), 3], 2, size=6), want)


@wp.kernel
def inner_loop_only(n: wp.array(dtype=int), out: wp.array(dtype=int)):
    i = wp.tid()
    for r in range(3):
        for j in range(n[r]):
            y = r * 100 + j
    out[i] = y


def test_nested_loops_keep_the_last_assignment_of_any_iteration():
    # outer iteration 2 runs no inner iteration: y keeps the value outer iteration 1 left
    np.testing.assert_array_equal(run(inner_loop_only, [wp.array(np.array([2, 3, 0], dtype=np.int32))], 1, int),
                                  [102])
    np.testing.assert_array_equal(run(inner_loop_only, [wp.array(np.array([0, 0, 0], dtype=np.int32))], 1, int),
                                  [0])


# -- gradients ----------------------------------------------------------------------------------------------
@wp.kernel
def square_if_positive(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    if a[i] > 0.0:
        x = a[i] * a[i]
    out[i] = x * 3.0


@wp.kernel
def weighted_last_positive(a: wp.array(dtype=float), n: int, out: wp.array(dtype=float)):
    i = wp.tid()
    for j in range(n):
        if a[j] > 0.0:
            y = a[j] * a[j]
            k = j
    out[i] = y * float(k + 1)


def tape_grad(kernel, a, inputs, n):
    x = wp.array(a, dtype=float, requires_grad=True)
    out = wp.zeros(n, dtype=float, requires_grad=True)
    tape = wp.Tape()
    with tape:
        wp.launch(kernel, dim=n, inputs=[x, *inputs], outputs=[out])
    tape.backward(grads={out: wp.ones(n, dtype=float)})
    return out.numpy(), x.grad.numpy()


def test_gradient_through_a_one_branch_local():
    a = np.array([0.7, -1.3, 2.0, -0.2, 1.1], dtype=np.float32)

    def forward(x):
        return np.where(x > 0, 3 * x * x, 0.0)

    out, grad = tape_grad(square_if_positive, a, [], len(a))
    np.testing.assert_allclose(out, forward(a.astype(np.float64)), rtol=1e-6)
    np.testing.assert_allclose(grad, central_difference(forward, [a.astype(np.float64)])[0], rtol=1e-4)


def test_gradient_through_a_local_only_a_loop_assigns():
    a = np.array([0.5, -1.0, 1.5, 0.8, -2.0], dtype=np.float32)

    def forward(x):
        pos = np.nonzero(x > 0)[0]
        return np.array([x[pos[-1]] ** 2 * (pos[-1] + 1) if len(pos) else 0.0])

    out, grad = tape_grad(weighted_last_positive, a, [len(a)], 1)
    np.testing.assert_allclose(out, forward(a.astype(np.float64)), rtol=1e-6)
    np.testing.assert_allclose(grad, central_difference(forward, [a.astype(np.float64)])[0], rtol=1e-4, atol=1e-6)


# -- what stays refused -------------------------------------------------------------------------------------
def test_types_that_differ_between_the_branches():
    @wp.kernel
    def differ(a: wp.array(dtype=float)):
        i = wp.tid()
        if a[i] > 0.0:
            x = 1
        else:
            x = 2.0
        a[i] = float(x)

    with pytest.raises(wp.CompileTypeError, match="variable 'x' has type int32 in one branch and float32 in the "
                                                  "other"):
        wp.launch(differ, dim=1, inputs=[wp.zeros(1)])


def test_a_tuple_assigned_in_one_branch():
    @wp.kernel
    def tuple_branch(a: wp.array(dtype=float)):
        i = wp.tid()
        if i > 0:
            t = (a[i], 1.0)
        a[i] = t[1]

    with pytest.raises(wp.CompileError, match="'t' is not defined on every path through the if at line"):
        wp.launch(tuple_branch, dim=1, inputs=[wp.zeros(1)])


def test_chained_comparison_of_unequal_types():
    @wp.kernel
    def chain(a: wp.array(dtype=float)):
        x = wp.int32(10)
        y = 10
        z = True
        if x == y == z:  # Warp chains only operands of one type
            a[0] = 1.0

    with pytest.raises(TypeError, match=r"Cannot chain comparisons of unequal types: int32 == bool\."):
        wp.launch(chain, dim=1, inputs=[wp.zeros(1)])


@wp.kernel
def _assigned_after_an_early_return(sources: wp.array(dtype=int), indirect: int, src: wp.array(dtype=float),
                                    out: wp.array(dtype=float)):
    block = wp.tid()
    if indirect:
        compact = sources[block]
        if compact < 0:
            return
        src_block = sources[compact]
    else:
        src_block = block
    out[block] = src[src_block]


def test_local_assigned_after_a_nested_return_keeps_its_value():
    """A local first assigned in a branch after a nested early `return` (and assigned by the other branch too) is
    read after the `if` with the value it was given: mlwarp read zero here (warp.sparse's transpose, found by
    its tests). Expected: numpy's indexing; a returning thread leaves its element alone."""
    sources = np.array([1, 0, -1, 3], dtype=np.int32)
    src = np.array([10.0, 11.0, 12.0, 13.0], dtype=np.float32)
    for indirect in (1, 0):
        out = wp.full(4, -1.0, dtype=float)
        wp.launch(_assigned_after_an_early_return, 4, inputs=[wp.array(sources), indirect, wp.array(src), out])
        if indirect:
            expected = [src[sources[sources[b]]] if sources[b] >= 0 else -1.0 for b in range(4)]
        else:
            expected = src
        np.testing.assert_array_equal(out.numpy(), expected)


@wp.func
def _first_positive_twice(a: wp.array(dtype=float), n: int) -> float:
    for i in range(n):
        if a[i] <= 0.0:
            continue
        found = a[i] * 2.0
        return found
    return -1.0


@wp.kernel
def _call_first_positive(a: wp.array(dtype=float), out: wp.array(dtype=float)):
    out[0] = _first_positive_twice(a, a.shape[0])


def test_local_assigned_after_continue_then_returned():
    out = wp.zeros(1, dtype=float)
    wp.launch(_call_first_positive, 1, inputs=[wp.array(np.array([-1.0, 0.0, 3.0, 5.0], dtype=np.float32)), out])
    assert out.numpy()[0] == 6.0
