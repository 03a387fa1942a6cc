"""JAX interop through DLPack: zero-copy from_jax / to_jax, dtype and device maps.

jax is imported only inside these functions. JAX arrays are immutable: an
array from `from_jax` shares JAX's buffer, so write to it only when nothing on
the JAX side relies on the old values (as with Warp).
"""

from __future__ import annotations

from mlwarp.core import types as wt


def _jax():
    try:
        import jax  # lazy: jax
    except ImportError:  # pragma: no cover - jax is optional
        raise ImportError("JAX is required for this function: pip install jax") from None
    return jax


def _warp_to_jax_names():
    return {wt.float16: "float16", wt.bfloat16: "bfloat16", wt.float32: "float32", wt.float64: "float64",
            wt.int8: "int8", wt.int16: "int16", wt.int32: "int32", wt.int64: "int64", wt.uint8: "uint8",
            wt.uint16: "uint16", wt.uint32: "uint32", wt.uint64: "uint64", wt.bool_: "bool_"}


def dtype_to_jax(warp_dtype):
    """The jax.numpy dtype of a Warp scalar type."""
    import jax.numpy as jnp  # lazy: jax

    _jax()
    name = _warp_to_jax_names().get(wt.canonical_type(warp_dtype))
    if name is None:
        raise TypeError(f"Cannot convert {wt.type_name(warp_dtype)} to a JAX type")
    return getattr(jnp, name)


def dtype_from_jax(jax_dtype):
    """The Warp scalar type of a JAX dtype (a jnp type or a numpy dtype)."""
    import jax.numpy as jnp  # lazy: jax

    _jax()
    try:
        d = jnp.dtype(jax_dtype)
    except TypeError:
        d = None
    for t, name in _warp_to_jax_names().items():
        if d is not None and d == jnp.dtype(getattr(jnp, name)):
            return t
    raise TypeError(f"Cannot convert {jax_dtype} to a Warp type")


def device_from_jax(jax_device):
    """The Warp device of a JAX device."""
    from mlwarp.runtime.device import get_device

    if jax_device.platform == "cpu":
        return get_device("cpu")
    if jax_device.platform in ("gpu", "cuda"):
        try:
            return get_device(f"cuda:{jax_device.local_hardware_id if jax_device.local_hardware_id is not None else jax_device.id}")
        except ValueError as e:
            raise RuntimeError(f"JAX device {jax_device} has no Warp device: {e}") from None
    raise RuntimeError(f"JAX device {jax_device} has no Warp device")


def device_to_jax(warp_device=None):
    """The JAX device of a Warp device."""
    from mlwarp.runtime.device import get_device

    jax = _jax()
    d = get_device(warp_device)
    if d.is_cpu:
        return jax.devices("cpu")[0]
    if d.is_cuda:
        index = int(str(d).split(":")[1]) if ":" in str(d) else 0
        for dev in jax.devices("gpu"):
            if dev.local_hardware_id == index:
                return dev
    raise RuntimeError(f"Warp device {d} has no JAX device")


def get_jax_device():
    """JAX's current device: the one `jax.default_device` selects, else the first local device."""
    jax = _jax()
    device = jax.config.jax_default_device
    if isinstance(device, str):  # (jax.default_device also takes a platform name)
        device = jax.local_devices(backend=device)[0]
    return device if device is not None else jax.local_devices()[0]


def from_jax(jax_array, dtype=None):
    """A wp.array sharing the buffer of a JAX array (through DLPack)."""
    from mlwarp.interop.dlpack import from_dlpack

    jax = _jax()
    if not isinstance(jax_array, jax.Array):
        raise TypeError(f"from_jax expects a jax.Array, got {type(jax_array).__name__}")
    return from_dlpack(jax_array, dtype=dtype)


def to_jax(warp_array):
    """A JAX array sharing the memory of a wp.array (through DLPack)."""
    from mlwarp.arrays.array import array

    jax = _jax()
    if not isinstance(warp_array, array) or warp_array.is_annotation:
        raise TypeError(f"to_jax expects a wp.array, got {type(warp_array).__name__}")
    import jax.dlpack  # lazy: jax

    try:
        return jax.dlpack.from_dlpack(warp_array)
    except Exception as e:  # XLA refuses layouts that are not a permutation of a compact buffer
        raise RuntimeError(f"to_jax: JAX cannot take an array with shape {warp_array.shape} and strides "
                           f"{warp_array.strides}; call .contiguous() first ({e})") from None
