"""Runs a batch of composite programs under warp-lang (another interpreter: see test_fuzz_composite.py).

    python -m fuzz.warp_driver batch.pkl results.pkl     (from test/python)

batch.pkl: {"module": path of a module that does `import warp as wp` and defines every program, "programs":
[(kernel name, Program, inputs)]}. results.pkl: {kernel name: {array name: numpy array} or {"error": text}}.
Forward launches only (Warp's own adjoints are not the reference: see docs/robustness.md)."""

import importlib.util
import pickle
import sys
import traceback

import warp as wp

from fuzz.run_composite import launch, results


def main(batch_path, out_path):
    wp.config.quiet = True
    wp.config.enable_backward = False
    wp.init()
    with open(batch_path, "rb") as f:
        batch = pickle.load(f)
    spec = importlib.util.spec_from_file_location("warp_fuzz_batch", batch["module"])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = {}
    for name, prog, inputs in batch["programs"]:
        try:
            arrays = launch(wp, getattr(module, name), getattr(module, name + "_S"), prog, inputs, device="cpu")
            wp.synchronize()
            out[name] = results(arrays)
        except Exception as e:  # noqa: BLE001 - a refused program is a result to report
            out[name] = {"error": f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}"}
    with open(out_path, "wb") as f:
        pickle.dump(out, f)


if __name__ == "__main__":
    main(*sys.argv[1:])
