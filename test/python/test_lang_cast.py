"""`wp.cast(a, dtype)`: a's bits as a dtype of the same size (Warp's reinterpret_cast), and wp.breakpoint().
Expected values: numpy's views of the same bytes (`np.array(a).view(dtype)`), which warp-lang 1.19 also gives
for every case below (checked by running the same kernel under it)."""

import importlib.util
import warnings

import numpy as np
import pytest

import mlwarp as wp


@wp.struct
class HalfAndShort:
    f: wp.float16
    i: wp.int16


@wp.kernel
def cast_everything(out_f: wp.array(dtype=float), out_i: wp.array(dtype=int), out_v: wp.array(dtype=wp.vec2i),
                    out_l: wp.array(dtype=wp.int64), out_s: wp.array(dtype=HalfAndShort)):
    out_f[0] = wp.cast(wp.int32(0x40000000), wp.float32)
    s = HalfAndShort()
    s.f = wp.float16(2.0)
    s.i = wp.int16(4096)
    out_i[0] = wp.cast(s, wp.int32)
    out_f[1] = wp.cast(wp.vec2h(wp.float16(1.0), wp.float16(2.0)), wp.float32)
    out_v[0] = wp.cast(wp.float64(1.5), wp.vec2i)
    out_l[0] = wp.cast(wp.vec2f(1.0, -2.0), dtype=wp.int64)
    out_s[0] = wp.cast(wp.uint32(0x3C00ABCD), HalfAndShort)
    out_i[1] = wp.cast(-1.0, wp.int32)
    out_i[2] = wp.cast(a=wp.uint32(4294967295), dtype=int)


def test_cast_reinterprets_scalars_vectors_and_structs():
    out_f, out_i = wp.zeros(2, dtype=float), wp.zeros(3, dtype=int)
    out_v, out_l, out_s = wp.zeros(1, dtype=wp.vec2i), wp.zeros(1, dtype=wp.int64), wp.zeros(1, dtype=HalfAndShort)
    wp.launch(cast_everything, 1, inputs=[out_f, out_i, out_v, out_l, out_s])
    as_bytes = lambda *parts: b"".join(np.array(p).tobytes() for p in parts)  # noqa: E731
    np.testing.assert_array_equal(out_f.numpy(), [
        np.frombuffer(as_bytes(np.int32(0x40000000)), np.float32)[0],
        np.frombuffer(as_bytes(np.float16(1.0), np.float16(2.0)), np.float32)[0]])
    np.testing.assert_array_equal(out_i.numpy(), [
        np.frombuffer(as_bytes(np.float16(2.0), np.int16(4096)), np.int32)[0],
        np.frombuffer(as_bytes(np.float32(-1.0)), np.int32)[0], -1])
    np.testing.assert_array_equal(out_v.numpy()[0], np.frombuffer(as_bytes(np.float64(1.5)), np.int32))
    assert out_l.numpy()[0] == np.frombuffer(as_bytes(np.float32(1.0), np.float32(-2.0)), np.int64)[0]
    s = out_s.numpy()[0]
    assert s["i"] == 0x3C00 and s["f"] == np.frombuffer(np.uint16(0xABCD).tobytes(), np.float16)[0]


@wp.kernel
def cast_in_a_loop(values: wp.array(dtype=float), bits: wp.array(dtype=wp.uint32)):
    i = wp.tid()
    bits[i] = wp.cast(values[i], wp.uint32)


def test_cast_per_thread_matches_numpy_view():
    values = np.linspace(-3.0, 7.0, 97, dtype=np.float32)
    bits = wp.zeros(97, dtype=wp.uint32)
    wp.launch(cast_in_a_loop, 97, inputs=[wp.array(values), bits])
    np.testing.assert_array_equal(bits.numpy(), values.view(np.uint32))


@pytest.fixture
def kernel_error(tmp_path):
    """The exception compiling a one-line kernel body raises (the kernel written to a file, as users' are)."""

    def compile_body(body):
        path = tmp_path / f"cast_case_{abs(hash(body))}.py"
        path.write_text(f"import mlwarp as wp\n\n\n@wp.kernel\ndef bad(a: wp.array(dtype=float)):\n    {body}\n")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        with pytest.raises(Exception) as info:
            wp.launch(module.bad, 1, inputs=[wp.zeros(1, dtype=float)])
        assert f"{path}:6" in str(info.value)  # the user's file and line
        return info

    return compile_body


def test_cast_of_different_sizes_is_refused(kernel_error):
    info = kernel_error("a[0] = wp.cast(wp.float64(1.0), wp.float32)")
    assert type(info.value).__name__ == "CompileError"
    assert "wp.cast(): source and destination must have the same size: float64 is 8 bytes, float32 is 4" in \
        str(info.value)


def test_cast_needs_a_type(kernel_error):
    info = kernel_error("a[0] = wp.cast(1.0, 3)")
    assert "wp.cast(a, dtype): dtype must be a scalar, vector, matrix or struct type" in str(info.value)


def test_cast_takes_a_and_dtype(kernel_error):
    info = kernel_error("a[0] = wp.cast(1.0, wp.int32, 2)")
    assert "wp.cast() takes the arguments a and dtype" in str(info.value)


def test_cast_of_an_array_is_refused(kernel_error):
    info = kernel_error("b = wp.cast(a, wp.int32)")
    assert "wp.cast() reinterprets a scalar, vector, matrix or struct, not array(ndim=1, dtype=float32)" in str(info.value)


def test_cast_and_breakpoint_are_kernel_names_only():
    # as in Warp, whose module has neither attribute: both exist in kernels only
    assert not hasattr(wp, "cast") and not hasattr(wp, "breakpoint")


@wp.kernel
def stop_when_negative(a: wp.array(dtype=float)):
    i = wp.tid()
    if a[i] < 0.0:
        wp.breakpoint()
    a[i] = a[i] * 2.0


def test_breakpoint_compiles_and_is_ignored_with_a_warning():
    a = wp.array(np.array([1.0, -2.0], dtype=np.float32))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wp.launch(stop_when_negative, 2, inputs=[a])
    np.testing.assert_array_equal(a.numpy(), [2.0, -4.0])
    said = [w for w in caught if "wp.breakpoint() does not stop in a debugger under mlwarp" in str(w.message)]
    if said:  # (a kernel the cache already holds is not compiled again, and says nothing)
        assert said[0].filename == __file__


@wp.kernel
def discard_tuple_results(m: wp.array(dtype=wp.mat44), out: wp.array(dtype=wp.vec3)):
    wp.transform_decompose(m[0])  # a statement: its tuple value is discarded, as in Python
    p, q, s = wp.transform_decompose(m[0])
    out[0] = s


def test_tuple_valued_call_as_a_statement():
    m = wp.array([np.diag([2.0, 3.0, 4.0, 1.0])], dtype=wp.mat44)
    out = wp.zeros(1, dtype=wp.vec3)
    wp.launch(discard_tuple_results, 1, inputs=[m, out])
    np.testing.assert_allclose(out.numpy()[0], [2.0, 3.0, 4.0])
