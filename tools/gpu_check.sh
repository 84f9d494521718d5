#!/usr/bin/env bash
# Runs the GPU evidence for a CUDA build on a machine with an NVIDIA GPU: every device test binary,
# the same binaries under compute-sanitizer memcheck (quick mode), and every benchmark with JSON output.
#   tools/gpu_check.sh BIN_DIR OUT_DIR [benchmark filter]
# BIN_DIR holds *_device_tests and *_bench binaries (and libbenchmark beside the benches).
set -u
bin=$1 out=$2 filter=${3:-.}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bin:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
status=0
for t in "$bin"/*_device_tests; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  echo "== $name"
  "$t" > "$out/$name.log" 2>&1; rc=$?
  tail -4 "$out/$name.log"; [ $rc -eq 0 ] || status=1
  echo "== $name under compute-sanitizer memcheck (DCUKERN_TEST_QUICK=1)"
  DCUKERN_TEST_QUICK=1 compute-sanitizer --tool memcheck --error-exitcode 9 "$t" > "$out/$name.memcheck.log" 2>&1; rc=$?
  tail -4 "$out/$name.memcheck.log"; [ $rc -eq 0 ] || status=1
done
for b in "$bin"/*_bench; do
  [ -x "$b" ] || continue
  name=$(basename "$b")
  echo "== $name"
  "$b" --benchmark_filter="$filter" --benchmark_out="$out/$name.json" --benchmark_out_format=json \
    > "$out/$name.txt" 2>&1 || status=1
  head -2 "$out/$name.txt"
done
exit $status
