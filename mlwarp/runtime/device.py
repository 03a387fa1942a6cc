"""Devices by name ("cpu", later "cuda:N"); the default device."""

from __future__ import annotations


class Device:
    def __init__(self, alias: str):
        self.alias = alias

    @property
    def is_cpu(self) -> bool:
        return self.alias == "cpu"

    @property
    def is_cuda(self) -> bool:
        return self.alias.startswith("cuda")

    def __str__(self):
        return self.alias

    def __repr__(self):
        return f'"{self.alias}"'

    def __eq__(self, other):
        if isinstance(other, str):
            other = _devices.get(other, other)
        return self is other

    def __hash__(self):
        return hash(self.alias)


_devices = {"cpu": Device("cpu")}
_default = None  # decided on first use: cuda:0 when a GPU is usable, else the CPU (as Warp)


def get_device(ident=None) -> Device:
    """Resolves None, a name or a Device to a Device; raises ValueError for an unknown name."""
    if ident is None:
        return _default if _default is not None else _first_default()
    if isinstance(ident, Device):
        return ident
    if isinstance(ident, str):
        dev = _devices.get(ident)
        if dev is not None:
            return dev
        if ident == "cuda" or ident.startswith("cuda:"):
            from .cuda.devices import get as get_cuda  # loads cuda-python on first use only

            return get_cuda(ident)
    raise ValueError(f"Invalid device identifier: {ident!r}")


def get_devices() -> list:
    _first_default()  # registers the CUDA devices, if any
    return list(_devices.values())


def _first_default() -> Device:
    global _default
    if _default is None:
        from .cuda.devices import devices  # cheap without a driver: no libcuda, no cuda-python import

        found = devices()
        _default = found[0] if found else _devices["cpu"]
    return _default


def set_device(ident) -> None:
    global _default
    _default = get_device(ident)
