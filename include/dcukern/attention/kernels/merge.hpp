// attention_merge_kernel — the second half of split-KV: combines a query row's chunk partials (fp32
// outputs normalised per chunk, base-2 LSEs) into the final output and natural-log LSE.
// Contract: the workspace written by attention_row_kernel<..., true> for the same plan.
// Work split: one block per query row; threads stride over head_dim; every thread walks the chunks in
// index order (skipping empty ones, lse = -inf), so the result depends only on the row's own chunks:
// with a fixed chunk size its bits do not depend on the batch around it. The sink joins the denominator
// here (once per row); a row without keys gives zeros and LSE -inf.
#pragma once
#include "dcukern/attention/kernels/common.hpp"

namespace dcukern::attn_detail {

template <DType QT>
__global__ void __launch_bounds__(kMergeThreads) attention_merge_kernel(AttnArgs a) {
  const int64_t row = blockIdx.x;
  const RowInfo r = row_info(a, row);
  const int D = a.head_dim, nc = a.num_chunks;
  const float* lse = a.part_lse + row * nc;
  float M = neg_inf();
  for (int c = 0; c < nc; ++c) M = lse[c] > M ? lse[c] : M;
  const bool empty = !(M > neg_inf());
  float L = 0.f;
  if (!empty) {
    for (int c = 0; c < nc; ++c)
      if (lse[c] > neg_inf()) L += device_exp2(lse[c] - M);
    if (a.sinks) L += device_exp2(a.sinks[r.h] * kLog2e - M);
  }
  const float inv = empty ? 0.f : 1.f / L;
  for (int d = static_cast<int>(threadIdx.x); d < D; d += kMergeThreads) {
    float o = 0.f;
    if (!empty)
      for (int c = 0; c < nc; ++c)
        if (lse[c] > neg_inf()) o += device_exp2(lse[c] - M) * a.part_o[(row * nc + c) * D + d];
    a.o[r.b * a.o_bs + r.t * a.o_ts + r.h * a.o_hs + d] = from_float<QT>(o * inv);
  }
  if (threadIdx.x == 0 && a.lse) a.lse[row] = empty ? neg_inf() : (M + device_log2(L)) * kLn2;
}

}  // namespace dcukern::attn_detail
