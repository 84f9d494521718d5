// gemv.rowwise[.fdot2|.dot2c] — N = 1..4 (the LLMM1 class, widened to a few tokens).
// Contract: N <= kN (a bucket: 1, 2 or 4; rows n >= N are skipped), K, ldx, ldw multiples of 8; x, W
// 16-byte aligned.
// Work split: one wave per row of W, grid-stride over M. Each lane streams 16-byte chunks of its row
// (kUnroll loads in flight) and uses each against the matching chunks of the N rows of x (cached, read
// from L1/L2), then one wave reduction per output.
#pragma once
#include "dcukern/gemv/kernels/common.hpp"

namespace dcukern::gemv_detail {

// Loads in flight per lane: 2 measured best on sm_90 (bench/gemv_variants_bench); 4 on AMD, unmeasured.
#if DCUKERN_PLATFORM_CUDA
constexpr int kRowwiseUnroll = 2;
#else
constexpr int kRowwiseUnroll = 4;
#endif

template <template <DType> class Dot, DType DT, int kN = 1, int kUnroll = kRowwiseUnroll>
__global__ void gemv_rowwise_kernel(GemvArgs a) {
  using D = Dot<DT>;
  if constexpr (!D::kAvailable) {
    unreachable_on_this_target();
  } else {
    const int lane = lane_id();
    const int64_t chunks = a.k / 8;
    const uint16_t* x = a.x;
    for (int64_t m = global_wave(); m < a.m; m += grid_waves()) {
      const uint16_t* wr = a.w + m * a.ldw;
      float acc[kN] = {};
      // Chunk c of W row m against chunk c of every x row.
      auto use = [&](const vec16_t& wv, int64_t c) {
#pragma unroll
        for (int n = 0; n < kN; ++n)
          if (n < a.n) acc[n] = D::dot(wv, load16(x + n * a.ldx + c * 8), acc[n]);
      };
      int64_t c = lane;
      for (; c + (kUnroll - 1) * kWarpSize < chunks; c += kUnroll * kWarpSize) {
        vec16_t wv[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) wv[u] = load_stream16(wr + (c + u * kWarpSize) * 8);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) use(wv[u], c + u * kWarpSize);
      }
      for (; c < chunks; c += kWarpSize) use(load_stream16(wr + c * 8), c);
#pragma unroll
      for (int n = 0; n < kN; ++n) {
        if (n < a.n) {
          const float s = warp_sum(acc[n]);
          if (lane == 0) store_output<DT>(a, n, m, s);
        }
      }
    }
  }
}

}  // namespace dcukern::gemv_detail
