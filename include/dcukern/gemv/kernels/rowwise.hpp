// gemv.rowwise[.fdot2|.dot2c] — N = 1 (the LLMM1 class).
// Contract: K, ldx, ldw multiples of 8; x, W 16-byte aligned.
// Work split: one wave per row of W, grid-stride over M. Each lane streams 16-byte chunks of its row
// (kUnroll loads in flight) against the matching chunks of x (cached), then one wave reduction.
// A dependent launch where the device has them: each wave's first row head goes to L2 before the wait
// (begin_gemv), while the kernel before it finishes.
#pragma once
#include "dcukern/gemv/kernels/common.hpp"

namespace dcukern::gemv_detail {

// Loads in flight per lane: 2 measured best on sm_90 (bench/gemv_variants_bench); 4 on AMD, unmeasured.
#if DCUKERN_PLATFORM_CUDA
constexpr int kRowwiseUnroll = 2;
#else
constexpr int kRowwiseUnroll = 4;
#endif

// kNext: the next kernel launches when this one ends (sm_90: letting it launch after the block's loads,
// or at its start, cost down and o 11-14 % and gained under 1 % elsewhere;
// capabilities/evidence/gemv-variants-sm_90.json).
template <template <DType> class Dot, DType DT, int kUnroll = kRowwiseUnroll, int kPrefetch = kWPrefetchBytes,
          NextLaunch kNext = NextLaunch::at_exit>
__global__ void gemv_rowwise_kernel(GemvArgs a) {
  using D = Dot<DT>;
  if constexpr (!D::kAvailable) {
    unreachable_on_this_target();
  } else {
    const int lane = lane_id();
    begin_gemv<kPrefetch, kNext>(a, global_wave(), lane == 0);
    const int64_t chunks = a.k / 8;
    const uint16_t* x = a.x;
    for (int64_t m = global_wave(); m < a.m; m += grid_waves()) {
      const uint16_t* wr = a.w + m * a.ldw;
      float acc = 0.f;
      int64_t c = lane;
      for (; c + (kUnroll - 1) * kWarpSize < chunks; c += kUnroll * kWarpSize) {
        vec16_t wv[kUnroll], xv[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) wv[u] = load_stream16(wr + (c + u * kWarpSize) * 8);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) xv[u] = load16(x + (c + u * kWarpSize) * 8);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) acc = D::dot(wv[u], xv[u], acc);
      }
      for (; c < chunks; c += kWarpSize) acc = D::dot(load_stream16(wr + c * 8), load16(x + c * 8), acc);
      if (m + grid_waves() >= a.m) gemv_loads_done<kNext>();
      acc = warp_sum(acc);
      if (lane == 0) store_output<DT>(a, 0, m, acc);
    }
  }
}

}  // namespace dcukern::gemv_detail
