"""The runtime below the user API: the device registry (device.py), the CPU back end, the CUDA one (cuda/).

Loading the package registers the CUDA devices with the registry: cuda/devices.py imports device.py and
hands it its lookups, so that device.py needs no import of the CUDA package."""

from .cuda import devices as _cuda_devices  # noqa: F401
