"""The guide's multi-device section on one machine: shard_map and pmap over several host devices with Warp
kernels inside (aux_jax_multidevice.py). XLA_FLAGS must be set before jax is imported, so the script runs in a
process of its own."""

import os
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("jax")

SCRIPT = pathlib.Path(__file__).with_name("aux_jax_multidevice.py")
ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_shard_map_and_pmap_over_four_host_devices():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu",
               PYTHONPATH=os.pathsep.join([str(ROOT / "python"), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, str(SCRIPT), "4"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split("\n")[:-1] == ["guide shard_map ok", "shard_map jax_kernel ok", "shard_map jax_callable ok",
                                         "pmap jax_kernel ok", "pmap jax_callable ok"]
