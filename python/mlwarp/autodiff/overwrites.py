"""The values a recording wp.Tape saves because a launch overwrites them, and their restoring in backward().

A kernel's adjoint replays its loads (not its stores), so it reads its arrays as they are when it runs. After
the forward pass an array holds its last values; the adjoint of a launch that read older ones (it overwrote
them itself, `a[i] = a[i] * a[i]`, or a later launch, wp.copy, assign, fill_ or zero_ did) would read the new
ones and give a wrong gradient. So, while a tape records, before each write:

- a launch's written arrays are saved when the launch itself reads them before writing them (the kernel's
  order, from the compiler: meta["array_access"], compiler/array_access.py), or when a recorded launch
  with gradients read them before (byte spans on the device, views and aliases included);
- wp.copy's destination, and an array that assign, fill_ or zero_ writes, likewise for the earlier reads.

Nothing is saved for launches that write no array read before (the common case: no copy, no memory).
backward() walks the launches from the last, and swaps the saved values in where the forward pass wrote
them: before a launch's adjoint for the arrays it reads before writing, after it otherwise, so each adjoint
reads what its forward launch read. The swaps are undone, last first, when backward() ends: the arrays hold
their forward values again, and the tape can run backward() again.
"""

from __future__ import annotations

from mlwarp.core import types as wt
from mlwarp.arrays.array import array, copy, zeros
from mlwarp.launching.debug import for_launch
from mlwarp.autodiff.recording import paused


def _span(a):
    """(device, first byte, end byte) of the memory the array `a` covers, or None for an empty array. Remembered
    on the array with the numpy view that holds its geometry (set once, when the array is made): a recording
    tape asks for the spans of every array of every launch (~4 us each to compute; a training step's launches
    pass the same arrays each step)."""
    view = a._np
    known = a.__dict__.get("_tape_span")
    if known is not None and known[0] is view:
        return known[1]
    span = _measure_span(a)
    a.__dict__["_tape_span"] = (view, span)
    return span


def _measure_span(a):
    if a.size == 0:
        return None
    lo = hi = a.ptr
    for n, s in zip(a.shape, a.strides):
        d = (n - 1) * s
        lo, hi = lo + min(d, 0), hi + max(d, 0)
    return str(a.device), lo, hi + wt.type_size_in_bytes(a.dtype)  # (the last element's bytes past its start)


def _overlaps(span, spans) -> bool:
    device, lo, hi = span
    return any(d == device and lo < h and l < hi for d, l, h in spans)


def struct_arrays(value):
    """The arrays in the array fields of a struct instance, nested structs included (also the Tape's)."""
    for name, t in value._wp_fields_:
        field = getattr(value, name)
        if field is None:
            continue
        if wt.is_array(t):
            yield field
        elif wt.is_struct(t):
            yield from struct_arrays(field)


def _resolve(value, path):
    """The wp.arrays that `path` (the argument's fields, compiler/array_access.py) names in `value`."""
    for field in path:
        if getattr(value, "_wp_indexed_", False):  # wp.indexedarray: its data, whichever field
            value = value.data
            break
        if value is None or not wt.is_struct(type(value)):
            return
        value = getattr(value, type(value)._wp_fields_[field][0])
    if getattr(value, "_wp_indexed_", False):
        value = value.data
    if isinstance(value, array):
        if not value.is_annotation:
            yield value
    elif value is not None and wt.is_struct(type(value)):
        yield from (a for a in struct_arrays(value) if isinstance(a, array) and not a.is_annotation)


def _with_spans(arrays):
    out = {}
    for a in arrays:
        span = _span(a)
        if span is not None and span not in out:
            out[span] = a
    return out


def _has_grads(args) -> bool:
    for v in args:
        if isinstance(v, array):
            if v.requires_grad:
                return True
        elif getattr(v, "_wp_indexed_", False):
            if v.data.requires_grad:
                return True
        elif wt.is_struct(type(v)) and any(getattr(a, "requires_grad", False) for a in struct_arrays(v)):
            return True
    return False


class Overwrites:
    """What one tape saved: `saved[position]` = (before, after), the (array, saved copy) pairs swapped in
    before / after the adjoint of the tape's entry `position` (len(launches) when it was saved)."""

    def __init__(self):
        self.read_spans: list = []  # spans read by recorded launches with gradients
        self.saved: dict = {}

    def clear(self):
        self.read_spans = []
        self.saved = {}

    def _save(self, position, a, before):
        with paused():
            keep = zeros(a.shape, a.dtype, a.device)
            copy(keep, a)
        self.saved.setdefault(position, ([], []))[0 if before else 1].append((a, keep))

    def before_launch(self, position, kernel, args, device):
        meta = getattr(for_launch(kernel).compiled(device), "meta", None) or {}
        access = meta.get("array_access")
        if not access:
            return

        def named(key):
            return _with_spans(a for p in access[key] if p[0] < len(args) for a in _resolve(args[p[0]], p[1:]))

        reads_first, reads_after = named("reads_first"), named("reads_after")
        for span, a in named("writes").items():
            # a launch that also reads what it wrote (`y[0].x += x; out = y[0].x * y[0].x`) needs the values after
            # its writes for those reads: no single saved state serves both, so it keeps the values after it
            before = _overlaps(span, reads_first) and not _overlaps(span, reads_after)
            if before or _overlaps(span, self.read_spans):
                self._save(position, a, before)
        if _has_grads(args):
            self.read_spans += list(reads_first) + list(reads_after)

    def before_write(self, position, a):
        if isinstance(a, array) and not a.is_annotation:
            span = _span(a)
            if span is not None and _overlaps(span, self.read_spans):
                self._save(position, a, False)

    def swaps(self, position, before):
        """The pairs to swap at `position`, last saved first."""
        found = self.saved.get(position)
        return reversed(found[0 if before else 1]) if found else ()


def swap(pair) -> None:
    """Exchanges the values of an array and its saved copy."""
    a, keep = pair
    with paused():
        held = zeros(a.shape, a.dtype, a.device)
        copy(held, a)
        copy(a, keep)
        copy(keep, held)
