#!/usr/bin/env bash
# Builds and tests every flavour: host (g++: registry, references, host tests, the sampling, GDN and GEMV
# device tests on the simulated device in both thread orders, install + find_package),
# CUDA (nvcc, sm_90: every device test, benchmark and example compiled; device tests run where a GPU
# is, else report skipped), HIP (hipcc for gfx906 gfx908 gfx90a gfx940 gfx1030 gfx1100: gemv_example, and
# dcukern-audit and the benchmarks for gfx90a only (DCUKERN_HIP_AUDIT_ARCHS, DCUKERN_HIP_BENCH_ARCHS: the ISA audit
# compiles every kernel of every op for every target; the device tests are not built there,
# DCUKERN_DEVICE_TESTS=OFF), plus the ISA audit).
# DCUKERN_TEST_TRACE=1 also compiles the phase trace's check (bench/trace_check.cu) in the CUDA flavour.
# Ends with one line: "dcukern: N passed, N failed, N skipped".
set -uo pipefail
source "$(dirname "$0")/common.sh"
bash "$root/tools/install_deps.sh" || exit 1

passed=0 failed=0 skipped=0
# run_ctest DIR: runs CTest there and adds its counts.
run_ctest() {
  local log
  log=$(cd "$1" && ctest --output-on-failure -j "$jobs" 2>&1)
  echo "$log"
  local total fail skip
  total=$(echo "$log" | sed -nE 's/.*tests failed out of ([0-9]+).*/\1/p' | tail -1)
  fail=$(echo "$log" | sed -nE 's/.* ([0-9]+) tests failed out of.*/\1/p' | tail -1)
  skip=$(echo "$log" | grep -c '(Skipped)$' || true)
  total=${total:-0} fail=${fail:-1}
  passed=$((passed + total - fail - skip)) failed=$((failed + fail)) skipped=$((skipped + skip))
}
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
build_failed() { echo "BUILD FAILED: $1"; failed=$((failed + 1)); }

step "host flavour (g++)"
if cmake -S "$root" -B "$build/host" -DDCUKERN_BACKEND=host >/dev/null && cmake --build "$build/host" -j "$jobs"; then
  run_ctest "$build/host"
  step "install + find_package consumer"
  rm -rf "$build/prefix" "$build/consumer"
  if cmake --install "$build/host" --prefix "$build/prefix" >/dev/null &&
     cmake -S "$root/tests/consumer" -B "$build/consumer" -DCMAKE_PREFIX_PATH="$build/prefix" >/dev/null &&
     cmake --build "$build/consumer" && "$build/consumer/consumer"; then
    passed=$((passed + 1)); echo "consumer: passed"
  else
    failed=$((failed + 1)); echo "consumer: FAILED"
  fi
else
  build_failed host
fi

step "CUDA flavour (nvcc, sm_90)"
if [ -n "$nvcc" ]; then
  if cmake -S "$root" -B "$build/cuda" -DDCUKERN_BACKEND=cuda -DCMAKE_CUDA_COMPILER="$nvcc" \
       -DDCUKERN_BUILD_BENCH=ON >/dev/null &&
     cmake --build "$build/cuda" -j "$jobs" --target all $([ "${DCUKERN_TEST_TRACE:-0}" = 1 ] && echo trace_check); then
    run_ctest "$build/cuda"
  else
    build_failed cuda
  fi
elif [ "${CI:-}" = true ]; then
  build_failed "cuda (no nvcc found)"
else
  echo "no nvcc found: CUDA flavour skipped"; skipped=$((skipped + 1))
fi

step "HIP flavour (hipcc, AMD targets; benchmarks too) + ISA audit"
if cmake -S "$root" -B "$build/hip" -DDCUKERN_BACKEND=hip -DCMAKE_CXX_COMPILER=hipcc -DDCUKERN_BUILD_BENCH=ON \
     -DDCUKERN_HIP_BENCH_ARCHS=gfx90a -DDCUKERN_HIP_AUDIT_ARCHS=gfx90a -DDCUKERN_DEVICE_TESTS=OFF >/dev/null &&
   cmake --build "$build/hip" -j "$jobs" \
     2> >(grep -v "linker' input unused\|argument unused during compilation" >&2); then
  run_ctest "$build/hip"
else
  build_failed hip
fi

echo
echo "elapsed: $((SECONDS / 60)) min $((SECONDS % 60)) s"
echo "dcukern: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
