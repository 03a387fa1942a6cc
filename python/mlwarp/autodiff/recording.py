"""Whether a wp.Tape is recording, and the recording itself: the state that wp.launch, wp.copy
(python/mlwarp/arrays/array.py) and wp.Tape (python/mlwarp/autodiff/tape.py) share. Below array.py, which records wp.copy's backward here;
the tape, which needs wp.array, is above it."""

from __future__ import annotations

import contextlib

from mlwarp.arrays import access
from mlwarp.config import config

_active: list = []  # tapes being recorded, innermost last


def recording() -> bool:
    return bool(_active)


def record_launch(kernel, dims, inputs, outputs, device) -> None:
    """Called by wp.launch after a forward launch: the innermost active tape records it."""
    if _active:
        tape = _active[-1]
        tape.launches.append(("launch", kernel, dims, list(inputs), list(outputs), device))
        tape.adjoint_needed_later(kernel, device)
        if config.verify_autograd_array_access:  # overwrites of arrays a recorded launch read (access.py)
            access.check_launch(kernel, list(inputs) + list(outputs))


@contextlib.contextmanager
def paused():
    """No tape records inside (wp.launch(..., record_tape=False))."""
    saved = list(_active)
    _active.clear()
    try:
        yield
    finally:
        _active[:] = saved


def before_launch(kernel, args, device) -> None:
    """Called by wp.launch before a forward launch the innermost active tape will record: the tape saves the
    arrays the launch overwrites that its adjoint, or an earlier launch's, reads (Tape.save_overwritten)."""
    if _active:
        _active[-1].save_overwritten(kernel, args, device)


def before_write(a) -> None:
    """Called before work that is not a kernel launch (wp.copy, assign, fill_, zero_) writes the array `a`
    while a tape records (Tape.save_before_write)."""
    if _active:
        _active[-1].save_before_write(a)


def record_func(backward, arrays) -> None:
    """Called by work that is not a kernel launch (wp.copy): the innermost active tape records its backward."""
    if _active:
        _active[-1].record_func(backward, arrays)
