"""Differential runs against warp-lang in another interpreter (MLWARP_FUZZ_WARP_PYTHON): a batch of
programs goes into one module (warp-lang compiles a module at once, seconds each), runs under both, and
each side is compared with the reference interpreter."""

from __future__ import annotations

import os
import pickle
import subprocess
import tempfile

from .loader import load_module
from .run_composite import Mismatch, compare, launch, results

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # test/python


def module_source(header, named_programs):
    lines = [header]
    for name, prog in named_programs:
        lines += prog.definitions(name)
    return "\n".join(lines) + "\n"


def run_warp(python, named, timeout=900):
    """{name: results or {"error": ...}} of warp-lang's forward launches (one module, one subprocess)."""
    folder = tempfile.mkdtemp(prefix="mlwarp-fuzz-warp-")
    module = os.path.join(folder, "batch.py")
    with open(module, "w") as f:
        f.write(module_source("import warp as wp", [(n, p) for n, p, _ in named]))
    batch, out = os.path.join(folder, "batch.pkl"), os.path.join(folder, "results.pkl")
    with open(batch, "wb") as f:
        pickle.dump({"module": module, "programs": named}, f)
    env = dict(os.environ, PYTHONPATH=HERE)
    proc = subprocess.run([python, "-m", "fuzz.warp_driver", batch, out], cwd=HERE, env=env, capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        error = {"error": f"warp_driver exited {proc.returncode}: {proc.stderr[-2000:]}"}
        return {n: error for n, _, _ in named}, module
    with open(out, "rb") as f:
        return pickle.load(f), module


def run_mlwarp(wp, named):
    module, path = load_module(module_source("import mlwarp as wp", [(n, p) for n, p, _ in named]))
    out = {}
    for name, prog, inputs in named:
        try:
            out[name] = results(launch(wp, getattr(module, name), getattr(module, name + "_S"), prog, inputs))
        except Exception as e:  # noqa: BLE001
            out[name] = {"error": f"{type(e).__name__}: {e}"}
    return out, path


def verdict(prog, expected, got):
    """("ok", stats) | ("mismatch", message) | ("error", message)."""
    if "error" in got:
        return "error", got["error"]
    try:
        return "ok", compare(prog, expected, got)
    except Mismatch as e:
        return "mismatch", str(e)
