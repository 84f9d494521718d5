// gemv.splitk[.fdot2|.dot2c] — skinny GEMM for small N (the wvSplitK class).
// Contract: N <= kN (a bucket: 1, 2, 4, 8 or 16; rows n >= N are zero), K, ldx, ldw multiples of 8,
// x and W 16-byte aligned.
// Work split: a block of 256 threads owns a tile of (waves x kRows) consecutive W rows, each wave kRows
// of them; blocks are persistent and stride over the tiles of M. x[N, K] is staged in shared memory
// kChunk columns at a time (once per block when all of K fits), and every W chunk a lane streams is
// used against all N staged rows before the next is loaded. Each wave reduces its kN x kRows sums.
#pragma once
#include "dcukern/gemv/kernels/common.hpp"

namespace dcukern::gemv_detail {

constexpr int kSplitkThreads = 256;
constexpr int kSplitkRows = 2;             // W rows per wave
constexpr int kSplitkStageBytes = 32768;   // shared memory for staged x

template <template <DType> class Dot, DType DT, int kN>
__global__ void __launch_bounds__(kSplitkThreads) gemv_splitk_kernel(GemvArgs a) {
  using D = Dot<DT>;
  constexpr int kChunkVecs = kSplitkStageBytes / 16 / kN;  // 16-byte vectors per staged x row
  __shared__ vec16_t xs[kN * kChunkVecs];
  if constexpr (!D::kAvailable) {
    unreachable_on_this_target();
  } else {
    const int lane = lane_id();
    const int wave = static_cast<int>(threadIdx.x) / kWarpSize;
    // The tile height: a constant (the kernel is launched with kSplitkThreads) on AMD, and on NVIDIA for kN >= 4;
    // from blockDim on NVIDIA for kN <= 2. AMD: taken from blockDim, the 64-bit multiply below compiles for
    // GFX11.0 to a v_mad_u64_u32 that overlaps its source (the ISA audit rejects it). NVIDIA (an H100): the
    // constant form took N = 1-2 up to 1.10x the time (capabilities/evidence/isa-gfx1100-mad64-overlap.json),
    // N >= 4 0.85-1.01x, median 0.98 (gemv-sm_90-splitk-tile.json).
#if DCUKERN_PLATFORM_HIP
    constexpr bool kConstantTile = true;
#else
    constexpr bool kConstantTile = kN >= 4;
#endif
    const int64_t rows_per_tile = kConstantTile ? int64_t(kSplitkThreads / kWarpSize) * kSplitkRows
                                                : int64_t(blockDim.x / kWarpSize) * kSplitkRows;
    const int64_t tiles = (a.m + rows_per_tile - 1) / rows_per_tile;
    const int64_t vecs = a.k / 8;
    const int64_t chunks = (vecs + kChunkVecs - 1) / kChunkVecs;

    for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      const int64_t m0 = tile * rows_per_tile + static_cast<int64_t>(wave) * kSplitkRows;
      float acc[kN][kSplitkRows] = {};
      for (int64_t ch = 0; ch < chunks; ++ch) {
        const int64_t v0 = ch * kChunkVecs;
        const int cvecs = static_cast<int>(vecs - v0 < kChunkVecs ? vecs - v0 : kChunkVecs);
        if (chunks > 1 || tile == blockIdx.x) {  // stage x[:, chunk]
          __syncthreads();
          for (int i = threadIdx.x; i < kN * cvecs; i += blockDim.x) {
            const int n = i / cvecs, c = i % cvecs;
            xs[n * kChunkVecs + c] = n < a.n ? load16(a.x + n * a.ldx + (v0 + c) * 8) : vec16_zero();
          }
          __syncthreads();
        }
        const uint16_t* wr[kSplitkRows];
        bool row_ok[kSplitkRows];
#pragma unroll
        for (int r = 0; r < kSplitkRows; ++r) {
          row_ok[r] = m0 + r < a.m;
          wr[r] = a.w + (row_ok[r] ? m0 + r : 0) * a.ldw + v0 * 8;
        }
        constexpr int kUnroll = 2;
        int c = lane;
        for (; c + (kUnroll - 1) * kWarpSize < cvecs; c += kUnroll * kWarpSize) {
          vec16_t wv[kUnroll][kSplitkRows];
#pragma unroll
          for (int u = 0; u < kUnroll; ++u)
#pragma unroll
            for (int r = 0; r < kSplitkRows; ++r)
              wv[u][r] = row_ok[r] ? load_stream16(wr[r] + (c + u * kWarpSize) * 8) : vec16_zero();
#pragma unroll
          for (int u = 0; u < kUnroll; ++u)
#pragma unroll
            for (int n = 0; n < kN; ++n) {
              const vec16_t xv = xs[n * kChunkVecs + c + u * kWarpSize];
#pragma unroll
              for (int r = 0; r < kSplitkRows; ++r) acc[n][r] = D::dot(wv[u][r], xv, acc[n][r]);
            }
        }
        for (; c < cvecs; c += kWarpSize) {
#pragma unroll
          for (int r = 0; r < kSplitkRows; ++r) {
            const vec16_t wv = row_ok[r] ? load_stream16(wr[r] + c * 8) : vec16_zero();
#pragma unroll
            for (int n = 0; n < kN; ++n) acc[n][r] = D::dot(wv, xs[n * kChunkVecs + c], acc[n][r]);
          }
        }
      }
#pragma unroll
      for (int n = 0; n < kN; ++n)
#pragma unroll
        for (int r = 0; r < kSplitkRows; ++r) {
          const float s = warp_sum(acc[n][r]);
          if (lane == 0 && n < a.n && m0 + r < a.m) store_output<DT>(a, n, m0 + r, s);
        }
    }
  }
}

}  // namespace dcukern::gemv_detail
