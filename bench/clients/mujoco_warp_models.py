"""MuJoCo Warp (PyPI `mujoco-warp` 4.0.0) steps three MJCF models on the CPU under Warp and under mlwarp, unchanged:
under `mlwarp`, `import warp` is made to be mlwarp (bench/clients/warp_alias.py) before MuJoCo Warp is imported.
Each run also steps the same model with MuJoCo C's `mj_step`, the reference both are compared with. A client check,
not a test (it needs mujoco and mujoco-warp, which the project does not install):

    .venv/bin/pip download --no-deps -d /tmp/mjw_dl mujoco-warp==4.0.0 mujoco==4.0.0
    .venv/bin/pip install --no-deps --target /tmp/mjw_site /tmp/mjw_dl/*.whl   (+ its light Requires-Dist)
    PYTHONPATH=/tmp/mjw_site .venv/bin/python bench/clients/mujoco_warp_models.py mlwarp box --save /tmp/box_ml.npz
    PYTHONPATH=/tmp/mjw_site /tmp/compatvenv/bin/python bench/clients/mujoco_warp_models.py warp box --save /tmp/box_wp.npz
    python bench/clients/mujoco_warp_models.py compare /tmp/box_wp.npz /tmp/box_ml.npz

or all of it, each model and implementation in its own process, with a table at the end:

    PYTHONPATH=/tmp/mjw_site .venv/bin/python bench/clients/mujoco_warp_models.py all \
        --warp-python /tmp/compatvenv/bin/python [--steps 100] [pendulum box stack humanoid]

Models: `pendulum` (a double pendulum, two hinges, no contact), `box` (a box falling onto a plane and coming to rest
on it), `stack` (contact-rich: three boxes stacked on a plane, a sphere and a capsule beside them, box-box,
box-plane, sphere-plane and capsule-plane contacts), `humanoid` (a small humanoid after MuJoCo's humanoid.xml:
a free torso and 13 limited, damped hinges, capsules and spheres, dropped onto its feet, tilted, so that it falls:
sphere-plane and capsule-plane contacts, self-collisions, joint-limit constraints). Times: `first step` is the first `mjw.step` (it compiles every
kernel the step reaches, from the kernel cache when it is warm), `step` the median of the later steps.
"""

import argparse
import os
import subprocess
import sys
import time

import numpy as np

MODELS = {
    "pendulum": """
<mujoco>
  <option timestep="0.01"/>
  <worldbody>
    <body name="upper" pos="0 0 2">
      <joint name="shoulder" type="hinge" axis="0 1 0"/>
      <geom type="capsule" size="0.05" fromto="0 0 0 0 0 -0.5" mass="1"/>
      <body name="lower" pos="0 0 -0.5">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <geom type="capsule" size="0.05" fromto="0 0 0 0 0 -0.5" mass="1"/>
      </body>
    </body>
  </worldbody>
</mujoco>
""",
    "box": """
<mujoco>
  <option timestep="0.005"/>
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body pos="0 0 0.3" euler="10 20 30"><freejoint/><geom type="box" size="0.1 0.15 0.05" mass="1"/></body>
  </worldbody>
</mujoco>
""",
    "stack": """
<mujoco>
  <option timestep="0.005"/>
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
    <body pos="0.02 0 0.305"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
    <body pos="-0.01 0.02 0.51" euler="0 0 15"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="1"/></body>
    <body pos="0.5 0 0.3"><freejoint/><geom type="sphere" size="0.1" mass="1"/></body>
    <body pos="-0.5 0 0.3" euler="0 80 0"><freejoint/><geom type="capsule" size="0.05 0.15" mass="1"/></body>
  </worldbody>
</mujoco>
""",
    "humanoid": """
<mujoco>
  <option timestep="0.005"/>
  <default>
    <joint type="hinge" damping="0.5" limited="true" range="-70 70"/>
    <geom type="capsule" size="0.045" condim="3" friction="0.8"/>
  </default>
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body name="torso" pos="0 0 1.25" euler="0 8 0">
      <freejoint/>
      <geom fromto="0 -0.07 0 0 0.07 0" size="0.07"/>
      <geom type="sphere" pos="0 0 0.19" size="0.09"/>
      <geom fromto="0 0 0 0 0 -0.25" size="0.06"/>
      <body name="upper_arm_r" pos="0 -0.17 0.06">
        <joint axis="1 0 0"/><joint axis="0 1 0"/>
        <geom fromto="0 0 0 0.16 -0.16 -0.16"/>
        <body name="lower_arm_r" pos="0.18 -0.18 -0.18">
          <joint axis="0 -1 1" range="-90 50"/>
          <geom fromto="0.01 0.01 0.01 0.17 0.17 0.17" size="0.031"/>
        </body>
      </body>
      <body name="upper_arm_l" pos="0 0.17 0.06">
        <joint axis="1 0 0"/><joint axis="0 1 0"/>
        <geom fromto="0 0 0 0.16 0.16 -0.16"/>
        <body name="lower_arm_l" pos="0.18 0.18 -0.18">
          <joint axis="0 -1 -1" range="-90 50"/>
          <geom fromto="0.01 -0.01 0.01 0.17 -0.17 0.17" size="0.031"/>
        </body>
      </body>
      <body name="pelvis" pos="0 0 -0.3">
        <joint axis="0 1 0" range="-45 45"/>
        <geom fromto="0 -0.07 0 0 0.07 0" size="0.09"/>
        <body name="thigh_r" pos="0 -0.1 -0.04">
          <joint axis="1 0 0"/><joint axis="0 1 0" range="-110 20"/>
          <geom fromto="0 0 0 0 0.01 -0.34" size="0.06"/>
          <body name="shin_r" pos="0 0.01 -0.403">
            <joint axis="0 -1 0" range="-160 2"/>
            <geom fromto="0 0 0 0 0 -0.3" size="0.049"/>
            <geom type="sphere" pos="0 0 -0.35" size="0.075"/>
          </body>
        </body>
        <body name="thigh_l" pos="0 0.1 -0.04">
          <joint axis="-1 0 0"/><joint axis="0 1 0" range="-110 20"/>
          <geom fromto="0 0 0 0 -0.01 -0.34" size="0.06"/>
          <body name="shin_l" pos="0 -0.01 -0.403">
            <joint axis="0 -1 0" range="-160 2"/>
            <geom fromto="0 0 0 0 0 -0.3" size="0.049"/>
            <geom type="sphere" pos="0 0 -0.35" size="0.075"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
""",
}

# the pendulum starts away from rest (the others fall under gravity)
INITIAL_QPOS = {"pendulum": [0.6, -0.4]}


def _step_model(impl: str, model: str, steps: int, save: str | None) -> None:
    if impl == "mlwarp":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import warp_alias

        warp_alias.install()

    import mujoco
    import mujoco_warp as mjw
    import warp as wp

    wp.config.quiet = True
    mjm = mujoco.MjModel.from_xml_string(MODELS[model])
    mjd = mujoco.MjData(mjm)
    if model in INITIAL_QPOS:
        mjd.qpos[:] = INITIAL_QPOS[model]
    mujoco.mj_forward(mjm, mjd)
    times = []
    with wp.ScopedDevice("cpu"):
        m = mjw.put_model(mjm)
        d = mjw.put_data(mjm, mjd)
        for _ in range(steps):
            start = time.perf_counter()
            mjw.step(m, d)
            wp.synchronize()
            times.append(time.perf_counter() - start)
        qpos, qvel = d.qpos.numpy().reshape(-1), d.qvel.numpy().reshape(-1)
        ncon = int(d.nacon.numpy()[0])
    for _ in range(steps):
        mujoco.mj_step(mjm, mjd)
    first, steady = times[0], float(np.median(times[1:])) if steps > 1 else float("nan")
    scale = max(float(np.max(np.abs(mjd.qpos))), float(np.max(np.abs(mjd.qvel))))
    diff = max(float(np.max(np.abs(qpos - mjd.qpos))), float(np.max(np.abs(qvel - mjd.qvel))))
    print(f"{impl} {model}: {steps} steps, contacts {ncon} (MuJoCo C {mjd.ncon})")
    print(f"  max |{impl} - MuJoCo C| over qpos, qvel = {diff:.3g} (state magnitude {scale:.3g})")
    print(f"  first step {first:.2f} s, step {steady * 1e3:.3f} ms (median of {steps - 1})")
    if save:
        np.savez(save, qpos=qpos, qvel=qvel, ref_qpos=mjd.qpos, ref_qvel=mjd.qvel, first=first, step=steady,
                 ncon=ncon, ref_ncon=mjd.ncon)


def _differences(a, b) -> tuple[float, float]:
    diff = max(float(np.max(np.abs(a["qpos"] - b["qpos"]))), float(np.max(np.abs(a["qvel"] - b["qvel"]))))
    scale = max(float(np.max(np.abs(a["qpos"]))), float(np.max(np.abs(a["qvel"]))))
    return diff, scale


def _compare(path_a: str, path_b: str) -> None:
    a, b = np.load(path_a), np.load(path_b)
    diff, scale = _differences(a, b)
    print(f"max |a - b| over qpos, qvel = {diff:.3g} (state magnitude {scale:.3g}, relative {diff / scale:.3g})")


def _all(options) -> None:
    here = os.path.abspath(__file__)
    rows = []
    for model in options.models or list(MODELS):
        saved = {}
        for impl, python in (("warp", options.warp_python), ("mlwarp", sys.executable)):
            path = f"/tmp/mujoco_warp_{model}_{impl}.npz"
            if os.path.exists(path):
                os.remove(path)
            command = [python, here, impl, model, "--steps", str(options.steps), "--save", path]
            subprocess.run(command, check=False)
            saved[impl] = np.load(path) if os.path.exists(path) else None
        warp_run, mlwarp_run = saved["warp"], saved["mlwarp"]
        if warp_run is None or mlwarp_run is None:
            rows.append(f"| {model} | failed under {'warp' if warp_run is None else 'mlwarp'} | | | | |")
            continue
        diff, scale = _differences(warp_run, mlwarp_run)
        ref = {"qpos": warp_run["ref_qpos"], "qvel": warp_run["ref_qvel"]}
        to_c = [_differences(ref, run)[0] for run in (warp_run, mlwarp_run)]
        rows.append(
            f"| {model} | {diff / scale:.2g} | {to_c[0] / scale:.2g} / {to_c[1] / scale:.2g} "
            f"| {warp_run['first']:.1f} / {mlwarp_run['first']:.1f} "
            f"| {warp_run['step'] * 1e3:.2f} / {mlwarp_run['step'] * 1e3:.2f} |"
        )
    print(f"\n{options.steps} steps; differences relative to the state's magnitude (max |qpos|, |qvel|)")
    print("| model | mlwarp vs Warp | vs MuJoCo C (Warp / mlwarp) | first step, s (Warp / mlwarp) "
          "| step, ms (Warp / mlwarp) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print("\n".join(rows))


def main() -> None:
    if sys.argv[1:2] == ["compare"]:
        return _compare(*sys.argv[2:4])
    parser = argparse.ArgumentParser()
    if sys.argv[1:2] == ["all"]:
        parser.add_argument("all")
        parser.add_argument("models", nargs="*", help=f"of {', '.join(MODELS)} (all of them if none)")
        parser.add_argument("--warp-python", required=True, help="a Python with warp-lang, mujoco and mujoco-warp")
        parser.add_argument("--steps", type=int, default=100)
        options = parser.parse_args()
        unknown = sorted(set(options.models) - set(MODELS))
        if unknown:
            parser.error(f"no model named {', '.join(unknown)}: the models are {', '.join(MODELS)}")
        return _all(options)
    parser.add_argument("impl", choices=("warp", "mlwarp"))
    parser.add_argument("model", choices=list(MODELS))
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--save", help="an .npz file for the final state and the times")
    options = parser.parse_args()
    _step_model(options.impl, options.model, options.steps, options.save)


if __name__ == "__main__":
    main()
