#!/usr/bin/env bash
# Runs the GPU evidence for a CUDA build on a machine with an NVIDIA GPU: every device test binary (each
# test case in its own process, DCUKERN_GPU_JOBS of them at a time, default: the CPU count, since the
# host references dominate), the same binaries under compute-sanitizer memcheck (quick mode), every
# benchmark with JSON output, and dcukern-audit (its smoke run) where BIN_DIR has it.
#   tools/gpu_check.sh BIN_DIR OUT_DIR [benchmark filter]
# BIN_DIR holds *_device_tests and *_bench binaries (and libbenchmark beside the benches).
# DCUKERN_GPU_ONLY="attention gdn" limits the run to those ops' binaries (a whole run can outlast a
# 10-minute call); DCUKERN_STEP_TIMEOUT (seconds, default 450) bounds each step. DCUKERN_RACECHECK=1 adds
# compute-sanitizer racecheck (shared-memory hazards, quick mode) after memcheck: memcheck does not see a
# block's threads racing on shared memory (the sampling suite takes about 200 s under it).
set -u
bin=$1 out=$2 filter=${3:-.}
mkdir -p "$out"
export LD_LIBRARY_PATH="$bin:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
status=0
only=${DCUKERN_GPU_ONLY:-} limit=${DCUKERN_STEP_TIMEOUT:-450}
wanted() { [ -z "$only" ] && return 0; for op in $only; do case $1 in "$op"_*) return 0;; esac; done; return 1; }
# sanitize TOOL BINARY [compute-sanitizer options]: the binary's quick set under compute-sanitizer's TOOL.
sanitize() {
  local tool=$1 t=$2 name
  name=$(basename "$2")
  shift 2
  echo "== $name under compute-sanitizer $tool (DCUKERN_TEST_QUICK=1)"
  DCUKERN_TEST_QUICK=1 timeout "$limit" compute-sanitizer --tool "$tool" "$@" --error-exitcode 9 "$t" \
    > "$out/$name.$tool.log" 2>&1 || status=1
  tail -4 "$out/$name.$tool.log"
}
for t in "$bin"/*_device_tests; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  wanted "$name" || continue
  echo "== $name (one process per test case)"
  mkdir -p "$out/$name"
  jobs=${DCUKERN_GPU_JOBS:-$(nproc)} i=0
  while IFS= read -r tc; do
    i=$((i + 1))
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 1; done
    # doctest filters split at commas: escape them so the exact name is one filter
    log="$out/$name/case$i.log"
    ( timeout "$limit" "$t" -tc="${tc//,/\\,}" > "$log" 2>&1; echo "rc=$?" >> "$log" ) &
  done < <("$t" --list-test-cases | grep -v '^\[doctest\]\|^====')
  wait
  for f in "$out/$name"/case*.log; do
    grep -q '^rc=0$' "$f" || { status=1; echo "FAILED: $f"; tail -12 "$f"; }
  done
  cat "$out/$name"/case*.log | awk '/test cases:/ {c += $4; p += $6} /assertions:/ {a += $3; ap += $5}
    END {print "   cases " p "/" c " passed, assertions " ap "/" a " passed"}'
  sanitize memcheck "$t"
  [ "${DCUKERN_RACECHECK:-0}" = 1 ] && sanitize racecheck "$t" --racecheck-report hazard
done
for b in "$bin"/*_bench; do
  [ -x "$b" ] || continue
  name=$(basename "$b")
  wanted "$name" || continue
  echo "== $name"
  timeout "$limit" "$b" --benchmark_filter="$filter" --benchmark_out="$out/$name.json" --benchmark_out_format=json \
    > "$out/$name.txt" 2>&1 || status=1
  head -2 "$out/$name.txt"
done
if [ -x "$bin/dcukern-audit" ] && [ -z "$only" ]; then
  echo "== dcukern-audit (device facts, smoke run of every enabled row, capability tables)"
  timeout "$limit" "$bin/dcukern-audit" > "$out/dcukern-audit.md" 2>&1 || status=1
  grep -c '| pass |' "$out/dcukern-audit.md" | sed 's/^/   smoke rows passed: /'
  grep '| FAIL \|| [a-z]*: ' "$out/dcukern-audit.md" | grep -v '| pass |' | head -5
fi
exit $status
