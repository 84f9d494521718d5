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

// Threads a block, declared to the compiler on CUDA: with the bound of 256, ptxas gives the kernel 32
// registers on sm_90 (40 without one: 6 blocks an SM), so 8 blocks, the SM's whole 64 warps, fit and up to
// 64 rows an SM take one round of blocks (qkv's 7168 on the H200: 896 blocks, against 792 a round before
// and a second, short round). kMinBlocks (DCUKERN_CUDA_MIN_BLOCKS; 0: none) asks for that many blocks an SM
// outright: 8 gives the same 32 registers, and ran 0-1 % slower (gemv_variants_bench: u2p2048eb8).
constexpr int kRowwiseThreads = 256;
constexpr int kRowwiseMinBlocks = 0;

// kNext: the next kernel launches when this one ends (sm_90: letting it launch after the block's loads,
// or at its start, cost down and o 11-14 % and gained under 1 % elsewhere;
// capabilities/evidence/gemv-variants-sm_90.json).
template <template <DType> class Dot, DType DT, int kUnroll = kRowwiseUnroll, int kPrefetch = kWPrefetchBytes,
          NextLaunch kNext = NextLaunch::at_exit, int kMinBlocks = kRowwiseMinBlocks>
__global__ void
#if DCUKERN_PLATFORM_CUDA  // (AMD builds keep the compiler's own register choice: no bound measured there)
__launch_bounds__(kRowwiseThreads, DCUKERN_CUDA_MIN_BLOCKS(kMinBlocks))
#endif
gemv_rowwise_kernel(GemvArgs a) {
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
