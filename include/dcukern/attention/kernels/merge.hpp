// attention_merge_kernel — the second half of split-KV: combines a query row's chunk partials (fp32
// outputs normalised per chunk, base-2 LSEs) into the final output and natural-log LSE.
// Contract: the workspace written by a split kernel for the same plan (part_o [rows, chunks, D], part_lse
// [rows, chunks]).
// Work split: one block per query row. Every wave reads all of the row's chunk LSEs (lanes stride over the
// chunks, then a butterfly reduction, so every lane of every wave holds the same max and sum); wave w then
// adds the chunks c = w, w + waves, ... (lanes stride over head_dim; kAhead chunks' loads are issued
// before they are added), and the waves' sums are added in wave order. A chunk's place in that order
// depends only on its index, and empty chunks (lse = -inf) are skipped, so with a fixed chunk size the
// result depends only on the row's own chunks: its bits do not depend on the batch around it. The sink
// joins the denominator here (once per row); a row without keys gives zeros and LSE -inf. Launched as a
// programmatic dependent of the split kernel where the device has them (attention/launch.hpp, LaunchSetup).
#pragma once
#include "dcukern/attention/kernels/common.hpp"

namespace dcukern::attn_detail {

template <DType QT>
__global__ void __launch_bounds__(kMergeThreads) attention_merge_kernel(AttnArgs a) {
  constexpr int kWaves = kMergeThreads / kWarpSize;
  constexpr int kPerLane = (kAttnMaxHeadDim + kWarpSize - 1) / kWarpSize;  // head elements per lane
  constexpr int kAhead = 4;                                                 // chunks in flight per wave
  __shared__ float s_o[kWaves][kAttnMaxHeadDim];
  grid_dependency_wait();  // launched as a dependent of the split kernel: its partials are complete after this
  const int64_t row = blockIdx.x;
  const RowInfo r = row_info(a, row);
  const int D = a.head_dim, nc = a.num_chunks;
  const int lane = lane_id(), wave = static_cast<int>(threadIdx.x) / kWarpSize;
  const float* lse = a.part_lse + row * nc;
  const float* part = a.part_o + row * nc * D;

  float M = neg_inf();
  for (int c = lane; c < nc; c += kWarpSize) M = lse[c] > M ? lse[c] : M;
  M = warp_max(M);
  const bool empty = !(M > neg_inf());
  float L = 0.f;
  if (!empty) {
    for (int c = lane; c < nc; c += kWarpSize)
      if (lse[c] > neg_inf()) L += device_exp2(lse[c] - M);
    L = warp_sum(L);
    if (a.sinks) L += device_exp2(a.sinks[r.h] * kLog2e - M);
  }

  float acc[kPerLane] = {};
  if (!empty)
    for (int c0 = wave; c0 < nc; c0 += kWaves * kAhead) {
      float w[kAhead], x[kAhead][kPerLane];
#pragma unroll
      for (int i = 0; i < kAhead; ++i) {
        const int c = c0 + i * kWaves;
        w[i] = c < nc && lse[c] > neg_inf() ? device_exp2(lse[c] - M) : 0.f;
#pragma unroll
        for (int j = 0; j < kPerLane; ++j) {
          const int d = lane + j * kWarpSize;
          x[i][j] = w[i] > 0.f && d < D ? part[int64_t(c) * D + d] : 0.f;
        }
      }
#pragma unroll
      for (int i = 0; i < kAhead; ++i)
        if (w[i] > 0.f)
#pragma unroll
          for (int j = 0; j < kPerLane; ++j) acc[j] += w[i] * x[i][j];
    }
#pragma unroll
  for (int j = 0; j < kPerLane; ++j)
    if (lane + j * kWarpSize < D) s_o[wave][lane + j * kWarpSize] = acc[j];
  __syncthreads();

  const float inv = empty ? 0.f : 1.f / L;
  for (int d = static_cast<int>(threadIdx.x); d < D; d += kMergeThreads) {
    float o = 0.f;
#pragma unroll
    for (int w = 0; w < kWaves; ++w) o += s_o[w][d];
    a.o[r.b * a.o_bs + r.t * a.o_ts + r.h * a.o_hs + d] = from_float<QT>(o * inv);
  }
  if (threadIdx.x == 0 && a.lse) a.lse[row] = empty ? neg_inf() : (M + device_log2(L)) * kLn2;
}

}  // namespace dcukern::attn_detail
