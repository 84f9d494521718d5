// gemv.mma — skinny GEMM on NVIDIA tensor cores (sm_80+), N = 1..16.
// Contract: K, ldx, ldw multiples of 8; x, W 16-byte aligned.
// Work split: a block owns kRows rows of W (kRowGroups groups of kMTiles 16-row tiles, the M side of
// mma.sync m16n8k16) and strides over such blocks of rows; each group's warps split K in steps of 32. Per
// step a lane loads 16 bytes of W rows g and g+8 and 16 bytes of x row(s) g (and g+8), at the same k
// offset: since a dot product does not care about the order of k, the k order inside a step is permuted
// so that these whole-vector loads land directly in the A and B fragments, with no shuffles and no shared
// memory. A warp loads kUnroll steps at a time (with kDoubleBuffer, the next kUnroll while it multiplies
// the current ones). Partial tiles are summed across a group's warps in shared memory. Launched as a
// dependent launch where the device has them (begin_gemv).
#pragma once
#include "dcukern/gemv/kernels/common.hpp"
#include "dcukern/platform/mma.hpp"

namespace dcukern::gemv_detail {

// Tuning knobs (compile-time): kWarps per block, kUnroll k-steps in flight per warp, kMTiles 16-row
// tiles per row group (each warp of the group covers all of them, so one x load feeds kMTiles W tiles).
// kRunOfSteps: a warp takes kUnroll consecutive k-steps at a time (its loads then cover 64 * kUnroll
// contiguous bytes of each row) instead of every kWarps-th step. kDoubleBuffer: a warp issues the loads
// of its next kUnroll steps before the MMAs of the current ones (two register sets), so its loads stay in
// flight during its math. kPrefetch: bytes of each row head of the block's first tile asked of L2 before
// the dependent-launch wait (begin_gemv). kRowGroups: the block's warps form this many groups, each over
// its own kMTiles tiles (the block's rows) with the group's kWarps / kRowGroups warps splitting K; the
// groups read the same x at the same time (one SM's L1 serves the repeats). kMinBlocks: blocks per SM the
// compiler must leave registers for (DCUKERN_CUDA_MIN_BLOCKS), 0 for no bound. (Not 1: a bound of one block
// lets ptxas spend more registers than no bound does: 164 and 186 against 128 and 138 for the defaults.)
template <int kWarps_, int kUnroll_, int kMTiles_, bool kRunOfSteps_ = false, bool kDoubleBuffer_ = false,
          int kPrefetch_ = kWPrefetchBytes, NextLaunch kNext_ = NextLaunch::after_loads, int kRowGroups_ = 1,
          int kMinBlocks_ = 0>
struct MmaConfig {
  static constexpr int kWarps = kWarps_, kUnroll = kUnroll_, kMTiles = kMTiles_, kRowGroups = kRowGroups_;
  static constexpr int kMinBlocks = kMinBlocks_;
  static constexpr bool kRunOfSteps = kRunOfSteps_, kDoubleBuffer = kDoubleBuffer_;
  static constexpr int kPrefetch = kPrefetch_;
  static constexpr NextLaunch kNext = kNext_;
  static constexpr int kKWarps = kWarps / kRowGroups;  // warps splitting K over the same rows
  static constexpr int kGroupRows = 16 * kMTiles, kThreads = 32 * kWarps, kRows = kGroupRows * kRowGroups;
  static_assert(kWarps % kRowGroups == 0, "whole warps per row group");
};

// The loads of kUnroll k-steps: W vectors (kW a step) and x vectors (kX a step).
template <int kUnroll, int kW, int kX>
struct GroupRegs {
  vec16_t w[kUnroll][kW], x[kUnroll][kX];
};

// kNT: tiles of 8 along N (1: N <= 8, 2: N <= 16).
template <DType DT, int kNT, class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, DCUKERN_CUDA_MIN_BLOCKS(Cfg::kMinBlocks)) gemv_mma_kernel(GemvArgs a) {
#if DCUKERN_DEVICE_HAS_NV_MMA_F16
  constexpr int kWarps = Cfg::kWarps, kUnroll = Cfg::kUnroll, kMT = Cfg::kMTiles, kKWarps = Cfg::kKWarps;
  __shared__ float partial[kWarps][Cfg::kGroupRows][8 * kNT];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int kw = warp % kKWarps, group = warp / kKWarps;  // the warp's K share and row group
  const int g = lane / 4, c = lane % 4;
  const int64_t tiles = (a.m + Cfg::kRows - 1) / Cfg::kRows;
  const int64_t steps = (a.k + 31) / 32;
  begin_gemv<Cfg::kPrefetch, Cfg::kNext>(a, int64_t(blockIdx.x) * Cfg::kRows + threadIdx.x, threadIdx.x < Cfg::kRows);

  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    // Rows g + 8h of each 16-row tile t: row index r = 2t + h.
    const uint16_t* w_row[2 * kMT];
    bool w_ok[2 * kMT];
#pragma unroll
    for (int r = 0; r < 2 * kMT; ++r) {
      const int64_t m = tile * Cfg::kRows + group * Cfg::kGroupRows + 8 * r + g;
      w_ok[r] = m < a.m;
      w_row[r] = a.w + (w_ok[r] ? m : 0) * a.ldw + c * 8;
    }
    const uint16_t* x_row[kNT];
    bool x_ok[kNT];
#pragma unroll
    for (int t = 0; t < kNT; ++t) {
      x_ok[t] = g + 8 * t < a.n;
      x_row[t] = a.x + (x_ok[t] ? g + 8 * t : 0) * a.ldx + c * 8;
    }
    float d[kMT][kNT][4] = {};

    auto load_step = [&](int64_t s, vec16_t (&wv)[2 * kMT], vec16_t (&xv)[kNT]) {
      const int64_t k = s * 32;
      const bool in = k + c * 8 < a.k;
#pragma unroll
      for (int r = 0; r < 2 * kMT; ++r) wv[r] = w_ok[r] && in ? load_stream16(w_row[r] + k) : vec16_zero();
#pragma unroll
      for (int t = 0; t < kNT; ++t) xv[t] = x_ok[t] && in ? load16(x_row[t] + k) : vec16_zero();
    };
    auto accumulate = [&](const vec16_t (&wv)[2 * kMT], const vec16_t (&xv)[kNT]) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int t = 0; t < kNT; ++t) {
          const vec16_t& lo = wv[2 * mt];
          const vec16_t& hi = wv[2 * mt + 1];
          mma_16816<DT>(d[mt][t], lo.x, hi.x, lo.y, hi.y, xv[t].x, xv[t].y);
          mma_16816<DT>(d[mt][t], lo.z, hi.z, lo.w, hi.w, xv[t].z, xv[t].w);
        }
    };

    // Step of unrolled slot u in the group of kUnroll steps starting at s.
    constexpr int kStride = Cfg::kRunOfSteps ? 1 : kKWarps;
    constexpr int64_t kNextGroup = int64_t(kUnroll) * kKWarps;  // from a group of steps to the warp's next one
    using Group = GroupRegs<kUnroll, 2 * kMT, kNT>;
    auto load_group = [&](int64_t s0, Group& regs) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) load_step(s0 + u * kStride, regs.w[u], regs.x[u]);
    };
    auto accumulate_group = [&](const Group& regs) {
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) accumulate(regs.w[u], regs.x[u]);
    };
    auto whole = [&](int64_t s0) { return s0 + (kUnroll - 1) * kStride < steps; };
    int64_t s = Cfg::kRunOfSteps ? int64_t(kw) * kUnroll : kw;
    if constexpr (Cfg::kDoubleBuffer) {
      // Two register sets in turn, the loop unrolled by two so that neither is indexed at run time.
      Group ga, gb;
      if (whole(s)) load_group(s, ga);
      while (whole(s)) {
        if (whole(s + kNextGroup)) load_group(s + kNextGroup, gb);
        accumulate_group(ga);
        s += kNextGroup;
        if (!whole(s)) break;
        if (whole(s + kNextGroup)) load_group(s + kNextGroup, ga);
        accumulate_group(gb);
        s += kNextGroup;
      }
    } else {
      for (; whole(s); s += kNextGroup) {
        Group regs;
        load_group(s, regs);
        accumulate_group(regs);
      }
    }
    // Remainder: the steps of this warp's last, incomplete group, one at a time.
    const int64_t group_end = s + kUnroll < steps ? s + kUnroll : steps;
    for (; Cfg::kRunOfSteps && s < group_end; ++s) {
      vec16_t wv[2 * kMT], xv[kNT];
      load_step(s, wv, xv);
      accumulate(wv, xv);
    }
    for (; !Cfg::kRunOfSteps && s < steps; s += kKWarps) {
      vec16_t wv[2 * kMT], xv[kNT];
      load_step(s, wv, xv);
      accumulate(wv, xv);
    }

    if (tile + gridDim.x >= tiles) gemv_loads_done<Cfg::kNext>();

    // d[mt][t] = {(g, 8t+2c), (g, 8t+2c+1), (g+8, 8t+2c), (g+8, 8t+2c+1)} as (row in tile mt, n)
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int t = 0; t < kNT; ++t) {
        partial[warp][16 * mt + g][8 * t + 2 * c] = d[mt][t][0];
        partial[warp][16 * mt + g][8 * t + 2 * c + 1] = d[mt][t][1];
        partial[warp][16 * mt + g + 8][8 * t + 2 * c] = d[mt][t][2];
        partial[warp][16 * mt + g + 8][8 * t + 2 * c + 1] = d[mt][t][3];
      }
    __syncthreads();
    for (int i = threadIdx.x; i < Cfg::kRows * 8 * kNT; i += blockDim.x) {
      const int row = i / (8 * kNT), n = i % (8 * kNT);
      const int64_t m = tile * Cfg::kRows + row;
      if (n < a.n && m < a.m) {
        const int first = row / Cfg::kGroupRows * kKWarps, r = row % Cfg::kGroupRows;
        float sum = 0.f;
#pragma unroll
        for (int w = 0; w < kKWarps; ++w) sum += partial[first + w][r][n];
        store_output<DT>(a, n, m, sum);
      }
    }
    __syncthreads();
  }
#else
  unreachable_on_this_target();
#endif
}

}  // namespace dcukern::gemv_detail
