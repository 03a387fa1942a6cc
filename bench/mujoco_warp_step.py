"""MuJoCo Warp (PyPI `mujoco-warp`) on mlwarp: `import warp` made to be mlwarp, a small MJCF model put on the CPU
and stepped, its state compared with MuJoCo C's `mj_step`. A client check, not a test (it needs mujoco and
mujoco-warp, which the project does not install):

    .venv/bin/pip download --no-deps -d /tmp/mjw_dl mujoco-warp==4.0.0 mujoco==4.0.0
    .venv/bin/pip install --no-deps --target /tmp/mjw_site /tmp/mjw_dl/*.whl   (+ its light Requires-Dist)
    PYTHONPATH=/tmp/mjw_site .venv/bin/python bench/mujoco_warp_step.py [contacts]

The first step compiles every kernel it reaches (~90 s on 2 cores), later steps take milliseconds.
"""

import importlib
import sys
import time

import numpy as np

import mlwarp

# `import warp` anywhere below is mlwarp, and so are the submodules MuJoCo Warp imports
sys.modules["warp"] = mlwarp
for _name in ("types", "utils", "config"):
    sys.modules[f"warp.{_name}"] = importlib.import_module(f"mlwarp.{_name}")

import mujoco  # noqa: E402
import mujoco_warp as mjw  # noqa: E402

PENDULUM = """
<mujoco>
  <option timestep="0.01"/>
  <worldbody>
    <body name="pole" pos="0 0 1">
      <joint name="hinge" type="hinge" axis="0 1 0"/>
      <geom type="capsule" size="0.05" fromto="0 0 0 0 0 -0.5" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""

CONTACTS = """
<mujoco>
  <option timestep="0.005"/>
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body pos="0 0 0.3"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
    <body pos="0.5 0 0.3"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
  </worldbody>
</mujoco>
"""


def main(xml: str, steps: int = 3) -> None:
    mjm = mujoco.MjModel.from_xml_string(xml)
    mjd = mujoco.MjData(mjm)
    if mjm.nq == 1:
        mjd.qpos[0] = 0.3
    start = time.perf_counter()
    with mlwarp.ScopedDevice("cpu"):
        m = mjw.put_model(mjm)
        d = mjw.put_data(mjm, mjd)
        for i in range(steps):
            mjw.step(m, d)
            print(f"step {i}: {time.perf_counter() - start:.2f} s", flush=True)
        for _ in range(steps):
            mujoco.mj_step(mjm, mjd)
        qpos, qvel = d.qpos.numpy().reshape(-1), d.qvel.numpy().reshape(-1)
    print("qpos max |mlwarp - MuJoCo C|:", float(np.max(np.abs(qpos - mjd.qpos))))
    print("qvel max |mlwarp - MuJoCo C|:", float(np.max(np.abs(qvel - mjd.qvel))))


if __name__ == "__main__":
    main(CONTACTS if sys.argv[1:] == ["contacts"] else PENDULUM)
