#!/usr/bin/env bash
# The GPU check: the test suite's kernels on a real GPU, compiled here (MLIR, no GPU), run there (no MLIR).
#
#   bench/gpu_check.sh prepare   here: compiles bench/gpu_smoke.py's kernels (bench/gpu_cache/) and runs the
#                                test files below against a fake sm_90 GPU backed by the CPU
#                                (MLWARP_TEST_FAKE_GPU=1, test/python/conftest.py), which compiles every CUDA
#                                kernel they load into .device/cache; their outcomes go to .device/fake.txt
#   bench/gpu_check.sh run       on the GPU machine (numpy, pytest, cuda-python; no MLIR, no install): the
#                                smoke checks, then the same test files on the real GPU with that cache; logs
#                                and outcomes under $OUT (else .device/out)
#   bench/gpu_check.sh compare DIR   the tests that passed on the fake GPU and not on the real one
#
# With a GPU, a test's default device is cuda:0 (Warp's rule), as on the fake one: a test that names no device
# runs its kernels on the GPU. Tests of the CPU device fail there (no compiler) and on the fake GPU alike; a test
# that passes on the fake GPU (the CPU build on the same launch struct) and fails on the real one is a GPU bug.
# Carry: `run(command="bash bench/gpu_check.sh run", carry=[".device", "bench/gpu_cache"])`.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# first the files that exist for the GPU, then those whose kernels run on the default device
DEVICE_TESTS=(test_cuda_exec.py test_tiles_cuda.py test_interop_torch.py test_interop_cuda_array_interface.py
  test_tiles.py test_vec.py test_mat.py test_quat.py test_transform.py test_lang_math.py test_lang_builtins.py
  test_lang_operators.py test_lang_control.py test_struct.py test_lang_atomics.py test_random.py
  test_grad_builtins.py test_grad_composite.py test_grad_control.py test_grad_loop_tape.py test_tape.py
  test_scalar_types.py test_bf16_math.py test_fixedarray.py test_map.py test_utils_module.py
  test_tiles_scatter_view_random.py test_tile_streamed_reductions.py test_array_kernels.py)

outcomes() {  # pytest -rA's summary lines: "PASSED file::test" ...
  grep -hE '^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) ' "$@" | sed -E 's/ - .*//' | sort -u
}

case "${1:-}" in
prepare)
  PY=.venv/bin/python
  rm -rf .device/cache .device/fake-logs && mkdir -p .device/cache .device/fake-logs
  "$PY" bench/gpu_smoke.py compile --out bench/gpu_cache || exit 1
  work=$(mktemp -d)
  for f in "${DEVICE_TESTS[@]}"; do
    (cd test/python && MLWARP_TEST_FAKE_GPU=1 MLWARP_CACHE_DIR="$work" timeout 900 "../../$PY" -m pytest -q -rA \
      -p no:cacheprovider "$f" >"../../.device/fake-logs/$f.log" 2>&1)
    echo "$f: $(tail -1 ".device/fake-logs/$f.log")"
  done
  for entry in "$work"/*/; do  # the CUDA entries only (the CPU builds the fake ran are this host's)
    [ -f "$entry/kernel.ptx" ] && cp -r "$entry" .device/cache/
  done
  rm -rf "$work"
  outcomes .device/fake-logs/*.log >.device/fake.txt
  echo "$(ls .device/cache | wc -l) CUDA entries, $(du -sh .device/cache | cut -f1), in .device/cache"
  ;;
run)
  out=${OUT:-.device/out}
  mkdir -p "$out/logs"
  export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import sys, numpy; print(sys.version.split()[0], 'numpy', numpy.__version__)"
  python3 -m pip list 2>/dev/null | grep -iE '^(cuda-bindings|cuda-python|torch|pytest) ' || true
  timeout 180 python3 bench/gpu_smoke.py run --dir bench/gpu_cache 2>&1 | tee "$out/smoke.txt"
  cache=$(mktemp -d) && cp -r .device/cache/. "$cache/"  # a copy: the tests write to their cache
  deadline=$((SECONDS + ${GPU_CHECK_SECONDS:-300}))
  for f in "${DEVICE_TESTS[@]}"; do
    if [ $SECONDS -ge $deadline ]; then echo "$f: not run (time)"; continue; fi
    (cd test/python && MLWARP_CACHE_DIR="$cache" timeout 120 python3 -m pytest -q -rA -p no:cacheprovider \
      "$f" >"$out/logs/$f.log" 2>&1)
    echo "$f: rc=$? $(tail -1 "$out/logs/$f.log")"
  done
  outcomes "$out"/logs/*.log >"$out/gpu.txt"
  tar -czf "$out/logs.tar.gz" -C "$out" logs && rm -rf "$out/logs"
  echo "outcomes: $(grep -c ^PASSED "$out/gpu.txt") passed, $(grep -c ^FAILED "$out/gpu.txt") failed," \
       "$(grep -c ^ERROR "$out/gpu.txt") errors"
  ;;
compare)
  dir=${2:?the folder the run wrote (its gpu.txt)}
  comm -23 <(grep ^PASSED .device/fake.txt | cut -d' ' -f2 | sort) \
           <(grep ^PASSED "$dir/gpu.txt" | cut -d' ' -f2 | sort)
  ;;
*)
  sed -n 2,17p "$0"; exit 2
  ;;
esac
