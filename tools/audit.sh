#!/usr/bin/env bash
# The main job: build dcukern-audit and run it. With an NVIDIA or AMD GPU here: device facts, detected
# target, a smoke run of every enabled row and the capability table. Without one: the capability tables
# for every known target. Arguments go to dcukern-audit (e.g. --target gfx906).
set -euo pipefail
source "$(dirname "$0")/common.sh"
bash "$root/tools/install_deps.sh"
flavour=host
if [ $# -eq 0 ]; then
  if [ -n "$nvcc" ] && command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then flavour=cuda
  elif [ -e /dev/kfd ]; then flavour=hip; fi
fi
args=(-DDCUKERN_BACKEND=$flavour -DDCUKERN_BUILD_TESTS=OFF)
[ $flavour = cuda ] && args+=(-DCMAKE_CUDA_COMPILER="$nvcc")
[ $flavour = hip ] && args+=(-DCMAKE_CXX_COMPILER=hipcc)
cmake -S "$root" -B "$build/audit-$flavour" "${args[@]}" >/dev/null
cmake --build "$build/audit-$flavour" -j "$jobs" --target dcukern-audit >/dev/null
exec "$build/audit-$flavour/examples/dcukern-audit" "$@"
