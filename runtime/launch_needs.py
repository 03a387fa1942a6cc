"""What a kernel needs brought up to date before it runs.

Some data a kernel reads is kept lazily by its owner: a wp.Mesh refit leaves the 4-wide tree that only
whole-tree ray casts read stale (python/mlwarp/geometry/mesh.py), so that a simulation refitting every frame
for point queries never pays for it. A library function that reads such data names the need
(`Function.launch_needs`); the frontend lists the needs of every function a kernel calls in its build's meta
(compiler/frontend/functions.py, compiler/build.py), and each CPU launch of the kernel first runs the refresh
registered here for each need (runtime/cpu.py CpuKernel.run). A refresh must be cheap when nothing is stale:
it runs at every launch of such a kernel."""

from __future__ import annotations

from typing import Callable

_REFRESH: dict[str, Callable[[], None]] = {}


def register(need: str, refresh: Callable[[], None]) -> None:
    """`refresh()` brings up to date whatever a kernel with `need` in its meta may read."""
    _REFRESH[need] = refresh


def refresh(needs: tuple) -> None:
    """Runs the refresh of each of `needs` (a need nothing registered: nothing is kept lazily for it)."""
    for need in needs:
        found = _REFRESH.get(need)
        if found is not None:
            found()
