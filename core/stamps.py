"""Stamps of the files a kernel's generated code depends on, cheap enough for every warm start.

The kernel cache key (python/mlwarp/kernels/kernel.py) hashes the size and mtime of every source file of mlwarp's
compiler, runtime and modules, and the versions of the installed distributions that compile. Finding
those files (a walk of ~16 folders) and the distributions' metadata (a listing of every sys.path
entry) cost a warm start more than stat'ing the files themselves, so both are memoised in a small file
per user and mlwarp checkout, trusted only while the folders it lists keep their mtimes:

- a file created, removed or renamed in a folder changes that folder's mtime, so an unchanged mtime
  means the same names; every listed file is still stat'ed, so an edit in place changes its stamp;
- a folder that changed less than RACY_NS before the walk (timestamps have a granularity) is not
  trusted: the memo is written only when every folder is older than that (git's "racily clean" rule).

Facts about a kernel's source text are memoised under the text's digest (`per_text`): that it defines the
function, and the names it captures, which a warm start would otherwise parse it for. They live in files of their
own, TEXT_SHARDS per section by the digest's first byte, read when a text of the shard is first asked for: in the
one memo file, the facts of every program run from a checkout (a test suite's thousands of kernels) were ~500 KB
that each warm start read and unmarshalled (~1.3 ms of a 2.5 ms warm first launch).

Stdlib only, and no part of the key depends on the memo: with it or without it, the same files give the
same stamps (`MLWARP_NO_STAMP_MEMO=1` turns it off).
"""

from __future__ import annotations

import atexit
import hashlib
import marshal
import operator
import os
import sys
import time

RACY_NS = 2_000_000_000  # a folder modified this recently may change again within its mtime's granularity
MEMO_VERSION = 9


def checkout_tag(package_dir: str) -> str:
    """A folder name for the memo of the mlwarp installed at `package_dir`: one memo each. With one memo for
    every checkout, two checkouts (a worktree, a CI clone) run in turn replaced each other's and every warm
    start walked the sources again (a warm first launch 1.6 -> 3 ms)."""
    return hashlib.sha256(os.path.abspath(package_dir).encode()).hexdigest()[:16]


def memo_dir() -> str:
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # (core/stamps.py)
    return os.path.join(os.path.expanduser("~"), ".cache", "mlwarp-stamps", checkout_tag(package))


_memo = None  # this process's copy of the memo file: {"sources": {roots: ...}, "dist-info": {entry: ...}}


def _memo_path() -> str | None:
    if os.environ.get("MLWARP_NO_STAMP_MEMO") == "1":
        return None
    # marshal: a fifth of json's parse time; its format is the interpreter's own, hence one file per version
    return os.path.join(memo_dir(), f"v{MEMO_VERSION}-py{sys.version_info[0]}.{sys.version_info[1]}.marshal")


def _load(section: str) -> dict:
    global _memo
    if _memo is None:
        _memo = {}
        path = _memo_path()
        if path is not None:
            try:
                with open(path, "rb") as f:
                    _memo = marshal.loads(f.read())
            except (OSError, ValueError, EOFError, TypeError):
                pass
        if not isinstance(_memo, dict):
            _memo = {}
    found = _memo.get(section)
    if not isinstance(found, dict):
        found = _memo[section] = {}
    return found


def _save() -> None:
    path = _memo_path()
    if path is None or _memo is None:
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(marshal.dumps(_memo))
        os.replace(tmp, path)  # readers see the old memo or the new one, never half of one
        _remove_other_versions(os.path.dirname(path))
    except OSError:
        pass


def _remove_other_versions(folder: str) -> None:
    """Removes the memo files of other versions of their format (this interpreter's only)."""
    python = f"py{sys.version_info[0]}.{sys.version_info[1]}"
    current = (f"v{MEMO_VERSION}-{python}.marshal", f"texts-v{MEMO_VERSION}-{python}-")
    for name in os.listdir(folder):
        old_memo = name.startswith("v") and name.endswith(f"-{python}.marshal") and name != current[0]
        old_texts = name.startswith("texts-v") and f"-{python}-" in name and not name.startswith(current[1])
        if old_memo or old_texts:
            os.remove(os.path.join(folder, name))


_save_pending = False


def _save_at_exit() -> None:
    """Saves the facts learnt on the way (`per_text`) once, at the interpreter's exit: a program
    with many kernels and functions learns one per text, and a save per fact (the whole memo written and
    renamed, 4-10 ms on a loaded disk) cost warp-nn's warm start 158 writes. A forked compile process leaves
    with os._exit, so only the process that learnt the facts writes them."""
    global _save_pending
    if not _save_pending:
        _save_pending = True
        atexit.register(_flush_pending)


def _flush_pending() -> None:
    global _save_pending
    if _save_pending:
        _save_pending = False
        _save_text_shards()


def _mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None  # missing: it must still be missing for the memo to hold


_size_and_mtime = operator.attrgetter("st_size", "st_mtime_ns")


def _folders_unchanged(folders) -> bool:
    return all(_mtime(path) == mtime for path, mtime in folders)


def _trustworthy(folders, started_ns: int) -> bool:
    return all(mtime is None or mtime < started_ns - RACY_NS for _, mtime in folders)


# -- source files ------------------------------------------------------------------------------------
def source_stamps(roots) -> list:
    """Sorted "label/relative/path.py:size:mtime_ns" of every .py file under the (label, folder) roots,
    skipping __pycache__ and folders that are themselves roots (each is walked under its own label)."""
    roots = [(label, os.path.abspath(folder)) for label, folder in roots]
    memo = _load("sources")  # one set of roots: mlwarp's (a test's copies replace it while they are used)
    key = repr(roots)
    try:
        trusted = memo.get("roots") == key and _folders_unchanged(memo["folders"])
    except (KeyError, TypeError, ValueError):  # a memo of another shape: not used
        trusted = False
    if trusted:
        try:
            # one stat per file, the loop in C (map): a warm start's whole cost here
            now = list(map(_size_and_mtime, map(os.stat, memo["paths"])))
            if now == memo["stats"] and len(memo["stamps"]) == len(now):
                return memo["stamps"]  # every file as the memo has it: its stamps, already made
            memo["stats"] = now
            memo["stamps"] = sorted(f"{label}:{size}:{mtime}" for label, (size, mtime) in zip(memo["labels"], now))
            _save()
            return memo["stamps"]
        except (OSError, KeyError, TypeError, ValueError):  # a file went away without its folder's mtime
            pass  # changing, or a memo of another shape: walk
    started = time.time_ns()
    stamps, files, folders = _walk(roots)
    if _trustworthy(folders, started):
        _memo["sources"] = {"roots": key, "folders": folders, "stamps": stamps, "paths": [f[1] for f in files],
                            "labels": [f[0] for f in files], "stats": [(f[2], f[3]) for f in files]}
        _save()
    return stamps


def _walk(roots):
    skip = {os.path.realpath(folder) for _, folder in roots}
    stamps, files, folders = [], [], []

    def visit(folder, real, rel):
        folders.append((folder, os.stat(folder).st_mtime_ns))  # before the listing: a later change is newer
        with os.scandir(folder) as entries:
            for e in entries:
                name = e.name
                if name.endswith(".py"):
                    st = e.stat()
                    label = f"{rel}/{name}"
                    stamps.append(f"{label}:{st.st_size}:{st.st_mtime_ns}")
                    files.append((label, e.path, st.st_size, st.st_mtime_ns))
                elif name != "__pycache__" and e.is_dir():
                    sub = os.path.realpath(e.path) if e.is_symlink() else os.path.join(real, name)
                    if sub not in skip:
                        visit(e.path, sub, f"{rel}/{name}")

    for label, folder in roots:
        visit(folder, os.path.realpath(folder), label)
    stamps.sort()
    return stamps, files, folders


def source_digest(roots) -> str:
    """sha256 of the contents of every .py file under the (label, folder) roots, each under its label and
    relative path: the same for two checkouts of the same sources whatever their files' mtimes (a CUDA entry
    compiled on one machine is looked up by another, whose copy of the tree has other mtimes)."""
    roots = [(label, os.path.abspath(folder)) for label, folder in roots]
    h = hashlib.sha256()
    for label, path, _, _ in sorted(_walk(roots)[1]):  # (label, path, size, mtime), in label order
        with open(path, "rb") as f:
            data = f.read()
        h.update(f"{label}:{len(data)}\n".encode())
        h.update(data)
    return h.hexdigest()


# -- installed distributions ---------------------------------------------------------------------------
def per_file(path: str, make, what: str = ""):
    """`make(path)` (a value marshal can write), memoised while the file keeps its size and mtime (an
    installed distribution's METADATA, read on every warm start for its version); `what` names the value
    when one file has several."""
    try:
        st = os.stat(path)
    except OSError:
        return make(path)
    memo = _load("files")
    stamp = [st.st_mtime_ns, st.st_size]
    key = f"{what}:{path}" if what else path
    known = memo.get(key)
    if isinstance(known, list) and len(known) == 2 and known[0] == stamp:
        return known[1]
    value = make(path)
    if st.st_mtime_ns < time.time_ns() - RACY_NS:
        memo[key] = [stamp, value]
        if len(memo) > 16:  # a few distributions' files: forget the oldest
            del memo[next(iter(memo))]
        _save()
    return value


def dist_info_folders(normalize) -> dict:
    """normalized distribution name -> its .dist-info folder, the first on sys.path (as importlib.metadata
    finds it). Installing, upgrading or removing a distribution adds or removes a .dist-info folder, which
    changes its sys.path entry's mtime: each entry's listing is memoised under its mtime, and an entry that
    changed (the script's folder, say) is listed again."""
    memo = _load("dist-info")
    started = time.time_ns()
    found, changed = {}, False
    for entry in sys.path:
        entry = os.path.abspath(entry or ".")  # "" and relative entries: the folder they are now
        mtime = _mtime(entry)
        known = memo.get(entry)
        if isinstance(known, tuple) and len(known) == 2 and known[0] == mtime and isinstance(known[1], list):
            names = known[1]
        else:
            try:
                names = [(normalize(n[:-len(".dist-info")].split("-")[0]), os.path.join(entry, n))
                         for n in os.listdir(entry) if n.endswith(".dist-info")]
            except OSError:  # missing, or not a folder (a zip file)
                names = []
            if mtime is None or mtime < started - RACY_NS:
                memo[entry], changed = (mtime, names), True
        for name, folder in names:
            if name not in found:
                found[name] = folder
    if changed:  # the entries of this sys.path only: the memo stays the size of one
        _memo["dist-info"] = {entry: memo[entry] for entry in (os.path.abspath(e or ".") for e in sys.path)
                              if entry in memo}
        _save()
    return found


# -- facts about a text --------------------------------------------------------------------------------
# an entry is a digest and a value of ~40-400 bytes; a warm start reads the shards of the texts it asks about
TEXT_SHARDS = 16
TEXTS_KEPT = 128  # per shard: 2048 texts a section hold a program of many kernels and functions

_text_shards: dict = {}  # (section, shard) -> {digest: marshal bytes of the value}, as read or learnt
_dirty_shards: set = set()  # (section, shard) learnt something this process: written at its exit


def _text_shard_path(section: str, shard: int) -> str | None:
    if os.environ.get("MLWARP_NO_STAMP_MEMO") == "1":
        return None
    python = f"py{sys.version_info[0]}.{sys.version_info[1]}"
    return os.path.join(memo_dir(), f"texts-v{MEMO_VERSION}-{python}-{section}-{shard:02x}.marshal")


def _load_text_shard(section: str, shard: int) -> dict:
    found = _text_shards.get((section, shard))
    if found is None:
        path = _text_shard_path(section, shard)
        try:
            with open(path, "rb") as f:
                found = marshal.loads(f.read())
        except (OSError, ValueError, EOFError, TypeError):
            found = None
        if not isinstance(found, dict) or not all(isinstance(v, bytes) for v in found.values()):
            found = {}
        _text_shards[(section, shard)] = found
    return found


def _save_text_shards() -> None:
    """Writes the shards that learnt facts, each whole (a reader sees the old shard or the new one)."""
    folder = memo_dir()
    for section, shard in sorted(_dirty_shards):
        path = _text_shard_path(section, shard)
        if path is None:
            continue
        try:
            os.makedirs(folder, exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                f.write(marshal.dumps(_text_shards[(section, shard)]))
            os.replace(tmp, path)
        except OSError:
            pass
    if _dirty_shards:
        try:
            _remove_other_versions(folder)
        except OSError:
            pass
    _dirty_shards.clear()


def per_text(section: str, text: str, make):
    """`make()` (a value marshal can write), memoised under the text's digest: what a warm start would
    otherwise parse a kernel's source for (its definition checked, the names it captures). Each value is kept as
    its marshal bytes, read when asked for: a memo of a thousand texts' name lists loaded as lists and tuples was
    ~20,000 objects for the garbage collector, whose full collection then fell into a warm first launch
    (2.5 -> 17 ms); bytes are not tracked."""
    key = hashlib.sha1(text.encode()).digest()
    shard = key[0] % TEXT_SHARDS
    memo = _load_text_shard(section, shard)
    known = memo.get(key, _UNKNOWN)
    if known is not _UNKNOWN:
        return marshal.loads(known)
    value = make()
    memo[key] = marshal.dumps(value)
    while len(memo) > TEXTS_KEPT:
        del memo[next(iter(memo))]
    _dirty_shards.add((section, shard))
    _save_at_exit()
    return value


_UNKNOWN = object()
