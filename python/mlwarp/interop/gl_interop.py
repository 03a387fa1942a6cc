"""Warp's OpenGL interop: `wp.RegisteredGLBuffer` (an OpenGL buffer seen as a Warp array) and
`wp.GLTextureResource` (an OpenGL texture seen as a Warp texture).

Warp registers the GL object with CUDA (cuGraphicsGLRegisterBuffer/Image) and maps it in place. mlwarp's CUDA
runtime has no graphics-interop path, so:

- `RegisteredGLBuffer` always takes the path Warp itself takes when CUDA/OpenGL interop is unavailable (a CPU
  device, or a driver without interop): with `fallback_to_copy=True` (the default) `map` copies the GL buffer
  into a Warp array through a host buffer (pyglet's glGetBufferSubData) and `unmap` copies the array back
  (glBufferData); with `fallback_to_copy=False` creating one raises Warp's RuntimeError. Needs pyglet and a
  current GL context, as in Warp.
- `GLTextureResource` raises Warp's ValueErrors for a bad target or a CPU device, and NotImplementedError on a
  CUDA device: a texture cannot be copied into a CUDA texture object without that registration.
"""

from __future__ import annotations

from mlwarp.core import types as _t
from mlwarp.arrays.array import copy, empty
from mlwarp.launching.logger import get_logger
from mlwarp.runtime.device import get_device
from mlwarp.arrays.texture import Texture1D, Texture2D, Texture3D, TextureResourceFlags

__all__ = ["RegisteredGLBuffer", "GLTextureResource"]

_NO_INTEROP = "mlwarp's CUDA runtime has no CUDA/OpenGL interop (cuGraphicsGLRegister{what})"


class RegisteredGLBuffer:
    """An OpenGL buffer mapped to a Warp array (by copies through the host: see the module's text)."""

    NONE = 0x00
    """No hint: the buffer is read and written (the default)."""
    READ_ONLY = 0x01
    """Warp will not write to the buffer: `unmap` copies nothing back."""
    WRITE_DISCARD = 0x02
    """Warp will overwrite the whole buffer: `map` copies nothing in."""

    __fallback_warning_shown = False

    def __new__(cls, *args, **kwargs):
        instance = super().__new__(cls)
        instance.resource = None  # (never a CUDA graphics resource here)
        return instance

    def __init__(self, gl_buffer_id: int, device=None, flags: int = NONE, fallback_to_copy: bool = True):
        self.gl_buffer_id = gl_buffer_id
        self.device = get_device(device)
        self.context = self.device.context
        self.flags = flags
        self.fallback_to_copy = fallback_to_copy
        if not fallback_to_copy:
            raise RuntimeError(f"Failed to register OpenGL buffer {gl_buffer_id} with CUDA: "
                               + _NO_INTEROP.format(what="Buffer")
                               + "; pass fallback_to_copy=True to copy through the host")
        self.warp_buffer = None
        self.warp_buffer_cpu = None
        if not RegisteredGLBuffer.__fallback_warning_shown:
            get_logger().warning(
                "Could not register GL buffer since CUDA/OpenGL interoperability is not available. Falling back "
                "to copy operations between the Warp array and the OpenGL buffer.", None, stacklevel=2)
            RegisteredGLBuffer.__fallback_warning_shown = True

    def map(self, dtype, shape):
        """The buffer's contents as a Warp array of `dtype` and `shape` on the buffer's device (copied from the
        GL buffer unless the flags say WRITE_DISCARD)."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if self.warp_buffer is None or self.warp_buffer.dtype != dtype or self.warp_buffer.shape != shape:
            self.warp_buffer = empty(shape, dtype, device=self.device)
            self.warp_buffer_cpu = empty(shape, dtype, device="cpu", pinned=True)
        if self.flags in (self.READ_ONLY, self.NONE):
            from pyglet import gl  # lazy: pyglet (optional; needs a current GL context)

            gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.gl_buffer_id)
            nbytes = self.warp_buffer.size * _t.type_size_in_bytes(dtype)
            gl.glGetBufferSubData(gl.GL_ARRAY_BUFFER, 0, nbytes, self.warp_buffer_cpu.ptr)
            gl.glBindBuffer(gl.GL_ARRAY_BUFFER, 0)
            copy(self.warp_buffer, self.warp_buffer_cpu)
        return self.warp_buffer

    def unmap(self) -> None:
        """Ends the mapping: the array's contents go back to the GL buffer unless the flags say READ_ONLY."""
        if self.warp_buffer is None:
            raise RuntimeError("RegisteredGLBuffer first has to be mapped")
        if self.flags in (self.WRITE_DISCARD, self.NONE):
            from pyglet import gl  # lazy: pyglet (optional; needs a current GL context)

            gl.glBindBuffer(gl.GL_ARRAY_BUFFER, self.gl_buffer_id)
            buffer = self.warp_buffer.numpy()
            gl.glBufferData(gl.GL_ARRAY_BUFFER, buffer.nbytes, buffer.ctypes.data, gl.GL_DYNAMIC_DRAW)
            gl.glBindBuffer(gl.GL_ARRAY_BUFFER, 0)


class GLTextureResource:
    """Warp's OpenGL texture registered with CUDA. Not available in mlwarp (see the module's text)."""

    def __new__(cls, *args, **kwargs):
        instance = super().__new__(cls)
        instance._resource = None
        instance._mapped_texture = None
        return instance

    def __init__(self, gl_tex_id: int, gl_tex_target: int, device=None,
                 flags: int = TextureResourceFlags.NONE):
        from pyglet import gl  # lazy: pyglet (optional; needs a current GL context)

        texture_class = {gl.GL_TEXTURE_1D: Texture1D, gl.GL_TEXTURE_2D: Texture2D,
                         gl.GL_TEXTURE_3D: Texture3D}.get(gl_tex_target)
        if texture_class is None:
            raise ValueError("Invalid GL texture target")
        self._TextureClass = texture_class
        self._device = get_device(device)
        if not self._device.is_cuda:
            raise ValueError("Must be a CUDA device")
        raise NotImplementedError(f"wp.GLTextureResource({gl_tex_id}): " + _NO_INTEROP.format(what="Image"))

    def map(self):
        """Warp: the texture as a Warp Texture. Unreachable here (no instance can be made)."""
        raise NotImplementedError("wp.GLTextureResource.map: " + _NO_INTEROP.format(what="Image"))

    def unmap(self) -> None:
        """Nothing is ever mapped (as Warp's unmap of an unmapped texture)."""
