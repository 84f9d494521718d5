# Shared by tools/*.sh: where things are built, and how to find nvcc.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${DCUKERN_BUILD_DIR:-$root/build}
jobs=${DCUKERN_JOBS:-$(nproc)}
nvcc=$(command -v nvcc || true)
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
export HIP_PLATFORM=amd  # the hip flavour targets AMD/Hygon; NVIDIA builds use nvcc directly
