"""The error record of a debug-mode launch: the ABI shared by `warp-bounds-check` and the runtime.

A debug build of a kernel takes one hidden trailing parameter, a 1-d int64
array of RECORD_SLOTS slots, zeroed before each launch. The first thread that
makes an out-of-bounds access claims the record (an atomic add on COUNT
returns 0 to it alone) and writes where and how; every later one only counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_DIMS = 4
COUNT = 0  # out-of-bounds accesses in this launch
SITE = 1  # index into the build's site table (one entry per checked access)
THREAD = 2  # linear thread index of the first failing thread
NDIM = 3  # number of indices of the failing access
INDEX = 4  # MAX_DIMS slots: the indices
SHAPE = INDEX + MAX_DIMS  # MAX_DIMS slots: the array's shape
RECORD_SLOTS = SHAPE + MAX_DIMS


def new_record() -> np.ndarray:
    return np.zeros(RECORD_SLOTS, dtype=np.int64)


@dataclass(frozen=True)
class Site:
    """One checked access, as the compiler saw it."""

    op: str  # "load", "store", "atomic", "address", "view", "assert"
    arg: int  # kernel parameter index of the array, -1 when it is not a parameter
    location: str  # "file:line:col" of the access in the user's source
    called_from: tuple = ()  # "file:line:col" of the calls that inlined it, innermost first
    fields: tuple = ()  # the array is field fields[0] (of field fields[1] ...) of struct parameter `arg`
    message: str = ""  # an "assert" site: the statement's source text

    @staticmethod
    def from_json(d: dict) -> "Site":
        return Site(d["op"], d["arg"], d["location"], tuple(d.get("called_from", ())), tuple(d.get("fields", ())),
                    d.get("message", ""))


@dataclass(frozen=True)
class Failure:
    count: int
    site: Site | None
    thread: int
    index: tuple
    shape: tuple


def read_record(record: np.ndarray, sites: list) -> Failure | None:
    """The first out-of-bounds access a launch recorded, or None when there was none."""
    count = int(record[COUNT])
    if count == 0:
        return None
    ndim = int(record[NDIM])
    site_id = int(record[SITE])
    site = Site.from_json(sites[site_id]) if 0 <= site_id < len(sites) else None
    return Failure(count, site, int(record[THREAD]), tuple(int(v) for v in record[INDEX:INDEX + ndim]),
                   tuple(int(v) for v in record[SHAPE:SHAPE + ndim]))
