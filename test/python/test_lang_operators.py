"""Operators per scalar type, with Warp's (C's) semantics, checked against numpy."""

import numpy as np
import pytest

import mlwarp as wp

INT_TYPES = [wp.int32, wp.int64]
FLOAT_TYPES = [wp.float32, wp.float64]


def binary_kernel(T, R, op):
    """A kernel `out[i] = op(a[i], b[i])` with inputs of type T and output of type R."""

    src = {
        "add": "a[i] + b[i]", "sub": "a[i] - b[i]", "mul": "a[i] * b[i]", "div": "a[i] / b[i]",
        "floordiv": "a[i] // b[i]", "mod": "a[i] % b[i]", "pow": "a[i] ** b[i]", "and": "a[i] & b[i]",
        "or": "a[i] | b[i]", "xor": "a[i] ^ b[i]", "lshift": "a[i] << b[i]", "rshift": "a[i] >> b[i]",
        "lt": "a[i] < b[i]", "le": "a[i] <= b[i]", "gt": "a[i] > b[i]", "ge": "a[i] >= b[i]",
        "eq": "a[i] == b[i]", "ne": "a[i] != b[i]",
    }[op]
    namespace = {"wp": wp, "T": T, "R": R}
    code = (f"def k_{op}(a: wp.array(dtype=T), b: wp.array(dtype=T), out: wp.array(dtype=R)):\n"
            f"    i = wp.tid()\n"
            f"    out[i] = {src}\n")
    return _kernel_from_code(code, f"k_{op}", namespace)


def _kernel_from_code(code, name, namespace):
    """Kernels generated from text need a real file for their source: write one per kernel."""
    import hashlib
    import importlib.util
    import os
    import tempfile

    d = os.path.join(tempfile.gettempdir(), "mlwarp-test-generated")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"gen_{hashlib.sha1(code.encode()).hexdigest()[:16]}.py")
    with open(path, "w") as f:
        f.write("import mlwarp as wp\n" + code)
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    mod.__dict__.update(namespace)
    spec.loader.exec_module(mod)
    return wp.kernel(getattr(mod, name))


def run_binary(T, R, op, a, b):
    k = binary_kernel(T, R, op)
    a = np.asarray(a, dtype=T._np_)
    b = np.asarray(b, dtype=T._np_)
    out = wp.zeros(len(a), dtype=R)
    wp.launch(k, dim=len(a), inputs=[wp.array(a, dtype=T), wp.array(b, dtype=T), out])
    return out.numpy()


# -- floats ---------------------------------------------------------------------------------
F_A = [5.5, -5.5, 5.5, -5.5, 0.1, 1e20, -3.0, 7.25]
F_B = [2.0, 2.0, -2.0, -2.0, 0.3, 1e-10, 0.5, -0.75]


@pytest.mark.parametrize("T", FLOAT_TYPES)
@pytest.mark.parametrize("op,ref", [
    ("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide),
    ("mod", np.fmod),  # C fmod: the sign of the dividend, unlike Python's %
    ("floordiv", lambda a, b: np.floor(a / b)),
])
def test_float_arithmetic_is_exact_ieee(T, op, ref):
    a, b = np.array(F_A, T._np_), np.array(F_B, T._np_)
    np.testing.assert_array_equal(run_binary(T, T, op, a, b), ref(a, b).astype(T._np_))


def test_float_mod_and_floordiv_signs_match_warp():
    # Values checked against warp-lang 1.19: % is fmod, // floors.
    a, b = [5.5, -5.5, 5.5, -5.5], [2.0, 2.0, -2.0, -2.0]
    np.testing.assert_array_equal(run_binary(wp.float32, wp.float32, "mod", a, b), [1.5, -1.5, 1.5, -1.5])
    np.testing.assert_array_equal(run_binary(wp.float32, wp.float32, "floordiv", a, b), [2.0, -3.0, -3.0, 2.0])


@pytest.mark.parametrize("T", FLOAT_TYPES)
def test_float_pow(T):
    a, b = np.array([2.0, 9.0, 1.5, 10.0], T._np_), np.array([3.0, 0.5, -2.0, 0.25], T._np_)
    np.testing.assert_allclose(run_binary(T, T, "pow", a, b), np.power(a, b), rtol=1e-6)


def test_float_division_by_zero_gives_ieee_inf_and_nan():
    out = run_binary(wp.float32, wp.float32, "div", [1.0, -1.0, 0.0], [0.0, 0.0, 0.0])
    assert out[0] == np.inf and out[1] == -np.inf and np.isnan(out[2])


# -- signed integers --------------------------------------------------------------------------
I_A = [-7, 7, -7, 7, 0, 123456, -1, 100]
I_B = [2, 2, -2, -2, 5, 789, 3, -7]


@pytest.mark.parametrize("T", INT_TYPES)
@pytest.mark.parametrize("op,ref", [
    ("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
    ("div", lambda a, b: np.trunc(a / b)),  # C: truncates toward zero
    ("floordiv", np.floor_divide),  # //: floors, as Python
    ("mod", np.fmod),  # %: the sign of the dividend, as C
    ("and", np.bitwise_and), ("or", np.bitwise_or), ("xor", np.bitwise_xor),
])
def test_int_arithmetic(T, op, ref):
    a, b = np.array(I_A, T._np_), np.array(I_B, T._np_)
    np.testing.assert_array_equal(run_binary(T, T, op, a, b), ref(a, b).astype(T._np_))


def test_int_division_rules_match_warp():
    # Checked against warp-lang 1.19: -7 / 2 == -3, -7 // 2 == -4, -7 % 3 == -1.
    assert list(run_binary(wp.int32, wp.int32, "div", [-7, 7], [2, 2])) == [-3, 3]
    assert list(run_binary(wp.int32, wp.int32, "floordiv", [-7, 7], [2, 2])) == [-4, 3]
    assert list(run_binary(wp.int32, wp.int32, "mod", [-7, 7], [3, 3])) == [-1, 1]


@pytest.mark.parametrize("T", INT_TYPES)
def test_int_shifts_are_arithmetic(T):
    a, b = np.array([-5, 5, -1, 1 << 20], T._np_), np.array([1, 2, 3, 4], T._np_)
    np.testing.assert_array_equal(run_binary(T, T, "rshift", a, b), a >> b)
    np.testing.assert_array_equal(run_binary(T, T, "lshift", a, b), a << b)


# -- unsigned ---------------------------------------------------------------------------------
def test_uint32_wraps_around():
    a = np.array([1, 2, 0xFFFFFFFF, 0x80000000], np.uint32)
    b = np.array([3, 2, 1, 0x80000000], np.uint32)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(run_binary(wp.uint32, wp.uint32, "sub", a, b), a - b)
        np.testing.assert_array_equal(run_binary(wp.uint32, wp.uint32, "add", a, b), a + b)
        np.testing.assert_array_equal(run_binary(wp.uint32, wp.uint32, "mul", a, b), a * b)


def test_uint32_division_shift_and_compare_are_unsigned():
    a = np.array([0xFFFFFFFF, 7, 0x80000000, 9], np.uint32)
    b = np.array([2, 4, 31, 0xFFFFFFFF], np.uint32)
    np.testing.assert_array_equal(run_binary(wp.uint32, wp.uint32, "div", a, b), a // b)
    np.testing.assert_array_equal(run_binary(wp.uint32, wp.uint32, "mod", a, b), a % b)
    np.testing.assert_array_equal(run_binary(wp.uint32, wp.uint32, "floordiv", a, b), a // b)
    np.testing.assert_array_equal(run_binary(wp.uint32, wp.uint32, "rshift", a, np.array([1, 1, 31, 0], np.uint32)),
                                  a >> np.array([1, 1, 31, 0], np.uint32))
    np.testing.assert_array_equal(run_binary(wp.uint32, wp.bool, "lt", a, b), a < b)


@wp.kernel
def unary_uint(a: wp.array(dtype=wp.uint32), neg: wp.array(dtype=wp.uint32), inv: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    neg[i] = -a[i]
    inv[i] = ~a[i]


def test_uint32_negation_and_invert_wrap():
    a = np.array([1, 5, 0, 0xFFFFFFFF], np.uint32)
    neg, inv = wp.zeros(4, dtype=wp.uint32), wp.zeros(4, dtype=wp.uint32)
    wp.launch(unary_uint, dim=4, inputs=[wp.array(a), neg, inv])
    np.testing.assert_array_equal(neg.numpy(), (0 - a.astype(np.int64)) % 2 ** 32)
    np.testing.assert_array_equal(inv.numpy(), ~a)


@wp.kernel
def unary_int(a: wp.array(dtype=int), neg: wp.array(dtype=int), inv: wp.array(dtype=int), pos: wp.array(dtype=int)):
    i = wp.tid()
    neg[i] = -a[i]
    inv[i] = ~a[i]
    pos[i] = +a[i]


def test_int_unary_operators():
    a = np.array([-5, 0, 7, 2 ** 31 - 1], np.int32)
    outs = [wp.zeros(4, dtype=int) for _ in range(3)]
    wp.launch(unary_int, dim=4, inputs=[wp.array(a), *outs])
    np.testing.assert_array_equal(outs[0].numpy(), -a)
    np.testing.assert_array_equal(outs[1].numpy(), ~a)
    np.testing.assert_array_equal(outs[2].numpy(), a)


# -- comparisons -------------------------------------------------------------------------------
@pytest.mark.parametrize("T", [wp.float32, wp.float64, wp.int32, wp.int64, wp.uint32])
@pytest.mark.parametrize("op,ref", [("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                                    ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)])
def test_comparisons(T, op, ref):
    a = np.array([1, 2, 3, 0, 9], T._np_)
    b = np.array([2, 2, 1, 0, 10], T._np_)
    np.testing.assert_array_equal(run_binary(T, wp.bool, op, a, b), ref(a, b))


def test_float_comparisons_with_nan_are_false_except_ne():
    nan = np.float32("nan")
    a, b = [nan, 1.0], [1.0, nan]
    for op in ("lt", "le", "gt", "ge", "eq"):
        assert list(run_binary(wp.float32, wp.bool, op, a, b)) == [False, False]
    assert list(run_binary(wp.float32, wp.bool, "ne", a, b)) == [True, True]


@wp.kernel
def mixed_compare(x: wp.array(dtype=float), n: wp.array(dtype=wp.int64), out: wp.array(dtype=int)):
    i = wp.tid()
    r = 0
    if x[i] < 2:  # float32 against an int literal: C converts the int (Warp accepts this)
        r = r + 1
    if n[i] == i:  # int64 against int32
        r = r + 10
    if 1.5 < i:
        r = r + 100
    out[i] = r


def test_comparisons_convert_mixed_operands_as_c():
    out = wp.zeros(3, dtype=int)
    wp.launch(mixed_compare, dim=3, inputs=[wp.array(np.array([1.5, 2.0, 3.0], np.float32)), wp.array(np.array([0, 5, 2], np.int64)), out])
    assert list(out.numpy()) == [11, 0, 110]


# -- boolean operators -------------------------------------------------------------------------
@wp.kernel
def boolean_ops(a: wp.array(dtype=wp.bool), b: wp.array(dtype=wp.bool), n: wp.array(dtype=int),
                out: wp.array(dtype=int)):
    i = wp.tid()
    r = 0
    if a[i] and b[i]:
        r = r + 1
    if a[i] or b[i]:
        r = r + 10
    if not a[i]:
        r = r + 100
    if n[i] and a[i]:  # ints are truthy as in Python/C
        r = r + 1000
    if not n[i]:
        r = r + 10000
    if 0 < n[i] < 5:  # chained comparison
        r = r + 100000
    out[i] = r


def test_boolean_operators():
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    n = np.array([3, 0, 7, 0], np.int32)
    out = wp.zeros(4, dtype=int)
    wp.launch(boolean_ops, dim=4, inputs=[wp.array(a), wp.array(b), wp.array(n), out])
    expect = [(x and y) * 1 + (x or y) * 10 + (not x) * 100 + bool(k and x) * 1000 + (not k) * 10000
              + (0 < k < 5) * 100000 for x, y, k in zip(a, b, n)]
    assert list(out.numpy()) == expect
