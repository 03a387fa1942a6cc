"""Warp names that reach outside Warp: OpenGL interop (wp.RegisteredGLBuffer, wp.GLTextureResource), RMM
(wp.utils.AllocatorRmm) and external C++ (warp.build_experimental).

pyglet and rmm are optional packages these need; the tests stand in small fakes for them (a GL buffer as bytes,
an RMM DeviceBuffer as an object with a pointer), so they check mlwarp's side: what is copied where, and the
errors. Message texts are Warp 1.19's (warp/_src/context.py, texture.py, rmm_allocator.py) where mlwarp takes
Warp's path, and name what mlwarp lacks where it cannot."""

import ctypes
import sys
import types

import numpy as np
import pytest

import mlwarp as wp
from mlwarp.interop import gl_interop


class _FakeGL:
    """pyglet.gl over one buffer held as bytes."""

    GL_ARRAY_BUFFER, GL_DYNAMIC_DRAW = 0x8892, 0x88E8
    GL_TEXTURE_1D, GL_TEXTURE_2D, GL_TEXTURE_3D = 0x0DE0, 0x0DE1, 0x806F

    def __init__(self, data: bytes):
        self.data = bytearray(data)
        self.bound = []

    def glBindBuffer(self, target, buffer_id):
        self.bound.append((target, buffer_id))

    def glGetBufferSubData(self, target, offset, nbytes, ptr):
        ctypes.memmove(ptr, bytes(self.data[offset:offset + nbytes]), nbytes)

    def glBufferData(self, target, nbytes, ptr, usage):
        self.data = bytearray(ctypes.string_at(ptr, nbytes))


@pytest.fixture
def fake_gl(monkeypatch):
    gl = _FakeGL(np.arange(6, dtype=np.float32).tobytes())
    monkeypatch.setitem(sys.modules, "pyglet", types.SimpleNamespace(gl=gl))
    monkeypatch.setattr(gl_interop.RegisteredGLBuffer, "_RegisteredGLBuffer__fallback_warning_shown", True)
    return gl


def test_registered_gl_buffer_copies_through_the_host(fake_gl):
    buf = wp.RegisteredGLBuffer(7, device="cpu")
    assert buf.flags == wp.RegisteredGLBuffer.NONE and buf.resource is None and buf.context is None
    a = buf.map(dtype=wp.float32, shape=(6,))
    np.testing.assert_array_equal(a.numpy(), np.arange(6, dtype=np.float32))
    assert fake_gl.bound == [(fake_gl.GL_ARRAY_BUFFER, 7), (fake_gl.GL_ARRAY_BUFFER, 0)]
    a.fill_(2.5)
    buf.unmap()
    np.testing.assert_array_equal(np.frombuffer(bytes(fake_gl.data), np.float32), np.full(6, 2.5, np.float32))
    assert buf.map(dtype=wp.float32, shape=6) is a  # same dtype and shape: the same array, refreshed


def test_registered_gl_buffer_flags(fake_gl):
    read_only = wp.RegisteredGLBuffer(1, "cpu", flags=wp.RegisteredGLBuffer.READ_ONLY)
    a = read_only.map(wp.float32, (6,))
    a.zero_()
    read_only.unmap()  # READ_ONLY: nothing goes back
    np.testing.assert_array_equal(np.frombuffer(bytes(fake_gl.data), np.float32), np.arange(6, dtype=np.float32))
    discard = wp.RegisteredGLBuffer(1, "cpu", flags=wp.RegisteredGLBuffer.WRITE_DISCARD)
    b = discard.map(wp.float32, (6,))
    assert fake_gl.bound == [(fake_gl.GL_ARRAY_BUFFER, 1), (fake_gl.GL_ARRAY_BUFFER, 0)]  # (the read-only map)
    b.fill_(1.0)
    discard.unmap()
    np.testing.assert_array_equal(np.frombuffer(bytes(fake_gl.data), np.float32), np.ones(6, np.float32))


def test_registered_gl_buffer_errors(monkeypatch):
    with pytest.raises(RuntimeError, match=r"^Failed to register OpenGL buffer 3 with CUDA: mlwarp's CUDA runtime "
                                           r"has no CUDA/OpenGL interop \(cuGraphicsGLRegisterBuffer\); pass "
                                           r"fallback_to_copy=True"):
        wp.RegisteredGLBuffer(3, "cpu", fallback_to_copy=False)
    monkeypatch.setattr(gl_interop.RegisteredGLBuffer, "_RegisteredGLBuffer__fallback_warning_shown", False)
    with pytest.warns(UserWarning, match=r"^Could not register GL buffer since CUDA/OpenGL interoperability is not "
                                         r"available\. Falling back to copy operations"):
        buf = wp.RegisteredGLBuffer(3, "cpu")
    with pytest.raises(RuntimeError, match=r"^RegisteredGLBuffer first has to be mapped$"):
        buf.unmap()


def test_gl_texture_resource(fake_gl):
    with pytest.raises(ValueError, match=r"^Invalid GL texture target$"):
        wp.GLTextureResource(1, 0x1234)
    with pytest.raises(ValueError, match=r"^Must be a CUDA device$"):
        wp.GLTextureResource(1, fake_gl.GL_TEXTURE_2D, device="cpu")
    if wp.is_cuda_available():
        with pytest.raises(NotImplementedError, match=r"cuGraphicsGLRegisterImage"):
            wp.GLTextureResource(1, fake_gl.GL_TEXTURE_2D, device="cuda:0")


class _FakeDeviceBuffer:
    next_ptr = 0x1000

    def __init__(self, size, stream):
        self.size, self.stream = size, stream
        self.ptr = _FakeDeviceBuffer.next_ptr
        _FakeDeviceBuffer.next_ptr += 0x1000


def test_allocator_rmm(monkeypatch):
    monkeypatch.delitem(sys.modules, "rmm", raising=False)
    monkeypatch.setattr(sys, "path", [])  # no rmm to find
    with pytest.raises(ImportError, match=r"^Failed to import 'rmm'\. Ensure it is installed and compatible with "
                                          r"your CUDA version\."):
        wp.utils.AllocatorRmm()
    monkeypatch.undo()
    monkeypatch.setitem(sys.modules, "rmm", types.SimpleNamespace(DeviceBuffer=_FakeDeviceBuffer))
    alloc = wp.utils.AllocatorRmm()
    assert isinstance(alloc, wp.Allocator)
    assert alloc.allocate(0) == 0 and repr(alloc) == "AllocatorRmm(active_buffers=0)"
    alloc.deallocate(0, 0)
    with pytest.raises(RuntimeError, match=r"^AllocatorRmm\.deallocate called with unrecognized pointer 0x40 "
                                           r"\(size=8\)\. This may indicate a double-free"):
        alloc.deallocate(0x40, 8)
    # an allocation: a DeviceBuffer on the stream of the device being allocated on, kept until deallocate
    monkeypatch.setattr(wp.utils.AllocatorRmm, "_get_rmm_stream", staticmethod(lambda: "stream"))
    ptr = alloc.allocate(256)
    assert ptr and repr(alloc) == "AllocatorRmm(active_buffers=1)"
    assert alloc._buffers[ptr].size == 256 and alloc._buffers[ptr].stream == "stream"
    alloc.deallocate(ptr, 256)
    assert repr(alloc) == "AllocatorRmm(active_buffers=0)"


def test_build_experimental():
    from mlwarp import build_experimental

    assert wp.build_experimental is build_experimental
    with pytest.raises(NotImplementedError, match=r"^warp\.build_experimental\.add_builtin\('my_add'\): mlwarp "
                                                  r"compiles kernels through MLIR and LLVM and generates no C\+\+, "
                                                  r"so there is no C\+\+ compile step to link an external C\+\+ "
                                                  r"function \(wp::my_add\) into; write the function as a @wp\.func"):
        build_experimental.add_builtin("my_add", {"a": float, "b": float}, float)

    class Pair(ctypes.Structure):
        _fields_ = [("x", ctypes.c_float), ("y", ctypes.c_float)]

    with pytest.raises(NotImplementedError, match=r"^warp\.build_experimental\.add_native_type\('Pair'\): .* "
                                                  r"external C\+\+ type \(my::Pair\) into; describe the type as a "
                                                  r"@wp\.struct instead$"):
        build_experimental.add_native_type(Pair, native_name="my::Pair")
