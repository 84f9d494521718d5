// GEMV benchmark problems: the Qwen3.5-27B decode shapes and rotated, randomly filled buffer sets.
#pragma once
#include <vector>

#include "dcukern/gemv.hpp"
#include "harness.hpp"

namespace dcukern::bench {

struct Shape {
  const char* name;
  int64_t m, k;
};
constexpr Shape kShapes[] = {{"gate_up", 34816, 5120}, {"down", 5120, 17408}, {"qkv", 7168, 5120},
                             {"o", 5120, 6144},        {"lm_head", 248320, 5120}};
constexpr int kNs[] = {1, 2, 4, 8, 16};

// Deterministic pseudo-random fp16/bf16 values in [-1, 1): never zeros.
__global__ void fill_kernel(uint16_t* p, int64_t n, uint32_t seed, bool bf16) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    const float f = (h & 0xffffff) / float(1 << 23) - 1.0f;
    p[i] = bf16 ? float_to_bf16(f) : float_to_f16(f);
  }
}

// One problem's rotated buffer sets.
struct Buffers {
  int copies;
  int64_t m, k;
  int n;
  std::vector<uint16_t*> x, w, y;
  Buffers(DType dt, const Shape& s, int n_) : m(s.m), k(s.k), n(n_) {
    copies = rotation_copies(size_t(s.m) * s.k * 2);
    for (int c = 0; c < copies; ++c) {
      uint16_t *px, *pw, *py;
      device_alloc(&px, size_t(n) * k * 2);
      device_alloc(&pw, size_t(m) * k * 2);
      device_alloc(&py, size_t(n) * m * 2);
      fill_kernel<<<1024, 256>>>(px, int64_t(n) * k, 17u + c, dt == DType::bf16);
      fill_kernel<<<4096, 256>>>(pw, m * k, 91u + c, dt == DType::bf16);
      x.push_back(px);
      w.push_back(pw);
      y.push_back(py);
    }
    BENCH_RT(runtime_synchronize());
  }
  ~Buffers() {
    for (int c = 0; c < copies; ++c) {
      (void)runtime_free(x[c]);
      (void)runtime_free(w[c]);
      (void)runtime_free(y[c]);
    }
  }
  GemvParams params(DType dt, int c) const {
    GemvParams p;
    p.x = {x[c], dt, n, k, k};
    p.w = {w[c], dt, m, k, k};
    p.y = {y[c], dt, n, m, m};
    return p;
  }
  double bytes() const { return 2.0 * (double(m) * k + double(n) * k + double(n) * m); }
};

}  // namespace dcukern::bench
