"""Runs every benchmark in one go and writes their tables into bench/README.md.

    .venv/bin/python bench/run_all.py            # all
    .venv/bin/python bench/run_all.py saxpy      # some, by script name

Each script runs in its own process (without OpenBLAS tuning variables, see common.py), with
Warp side by side when warp-lang is available. The README's section between the RESULTS
markers is replaced by the tables of this run, with the date and the machine (the CPU model and
its widest vector ISA from /proc/cpuinfo, the core count, the load average).
"""

import datetime
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import clean_env  # noqa: E402

SCRIPTS = ["compile_time", "launch_overhead", "saxpy", "particles", "mass_spring", "cloth", "grad_reduction",
           "dynamic_loop", "tile_gemm", "tile_reduce", "tile_mlp", "tile_fft", "tile_mcgp", "geometry",
           "mesh_queries", "python_scope"]
BEGIN, END = "<!-- RESULTS BEGIN -->", "<!-- RESULTS END -->"


def main():
    wanted = sys.argv[1:] or SCRIPTS
    sections = []
    for name in wanted:
        script = os.path.join(HERE, f"{name}.py")
        if not os.path.exists(script):
            print(f"(skipping {name}: no {name}.py)")
            continue
        print(f"== {name}", flush=True)
        result_file = os.path.join(HERE, "results", f"{name}.json")
        if os.path.exists(result_file):
            os.remove(result_file)
        out = subprocess.run([sys.executable, script], capture_output=True, text=True, env=clean_env())
        print(out.stdout, end="")
        if out.returncode != 0:
            print(out.stderr[-3000:], file=sys.stderr)
            sections.append(f"{name}: failed (exit {out.returncode})")
            continue
        if os.path.exists(result_file):
            with open(result_file) as f:
                sections.append("\n".join(json.load(f)["table"]))
        else:  # a script that only prints its table
            sections.append(out.stdout.strip())
    if not sys.argv[1:]:
        write_readme(sections)


def cpu_description() -> str:
    """'<CPU model>, <vector ISA>' from /proc/cpuinfo (the widest of AVX-512F, AVX2, ... it reports)."""
    model, flags = "", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and not model:
                    model = value.strip()
                elif key in ("flags", "Features") and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    model = model or platform.processor() or "unknown CPU"
    isa = next((name for flag, name in (("avx512f", "AVX-512F"), ("avx2", "AVX2"), ("avx", "AVX"), ("sse4_2", "SSE4.2"),
                                         ("sve", "SVE"), ("asimd", "NEON")) if flag in flags), "vector ISA unknown")
    return f"{model} ({platform.machine()}, {isa})"


def write_readme(sections):
    path = os.path.join(HERE, "README.md")
    with open(path) as f:
        text = f.read()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    stamp = (f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {cpu_description()}, "
             f"{os.cpu_count()} cores, load average {load:.1f} at the end of the run.")
    body = "\n\n".join([stamp] + sections)
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    with open(path, "w") as f:
        f.write(f"{head}{BEGIN}\n{body}\n{END}{tail}")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
