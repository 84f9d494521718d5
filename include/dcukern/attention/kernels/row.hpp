// attention_row_kernel — paged decode attention for one query row (b, t, h) per block, or, split-KV, one
// (query row, chunk) per block. Any head_dim <= 256, any page size >= 1, any GQA ratio, KV f16/bf16/fp8.
// Contract: the op's (attention/params.hpp), validated on the host; contexts are clamped to
// max_pages * page_size, so a block-table row is never read past its end.
// Work split: the block's waves interleave over the keys (key j goes to wave (j - lo) / kKeysPerStep %
// waves); a wave computes kKeysPerStep keys at a time: lanes hold head_dim elements d = lane + i*kWarpSize
// of q and of the accumulator, each key's dot product is a wave reduction, the softmax is online (running
// max and sum in base 2). The waves' states then merge through shared memory in wave order (fixed: the
// same inputs give the same bits). Unsplit: the final output (sink added, normalised) and LSE are written.
// Split: the chunk's normalised fp32 partial and its base-2 LSE (-inf for an empty chunk) go to the
// workspace for attention_merge_kernel.
#pragma once
#include "dcukern/attention/kernels/common.hpp"

namespace dcukern::attn_detail {

template <DType QT, DType KVT, bool kSplit>
__global__ void __launch_bounds__(kAttnThreads) attention_row_kernel(AttnArgs a) {
  constexpr int kWaves = kAttnThreads / kWarpSize;
  constexpr int kPer = kAttnMaxHeadDim / kWarpSize;  // head_dim elements per lane
  __shared__ float s_acc[kAttnThreads / 32][kAttnMaxHeadDim];
  __shared__ float s_m[kAttnThreads / 32], s_l[kAttnThreads / 32];
  if constexpr (kSplit) grid_dependents_launch();  // the merge (a dependent launch) may start

  const int64_t blk = blockIdx.x;
  const int chunk = kSplit ? static_cast<int>(blk % a.num_chunks) : 0;
  const int64_t row = kSplit ? blk / a.num_chunks : blk;
  const RowInfo r = row_info(a, row);
  int64_t lo = r.lo, hi = r.hi;
  if constexpr (kSplit) {
    const int64_t c_lo = chunk * a.chunk_size;
    lo = lo > c_lo ? lo : c_lo;
    if (chunk < a.num_chunks - 1) hi = hi < c_lo + a.chunk_size ? hi : c_lo + a.chunk_size;
  }
  const int lane = lane_id(), wave = static_cast<int>(threadIdx.x) / kWarpSize;
  const int D = a.head_dim, hk = r.h / a.group;

  float qv[kPer];
  const uint16_t* q = a.q + r.b * a.q_bs + r.t * a.q_ts + r.h * a.q_hs;
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int d = lane + i * kWarpSize;
    qv[i] = d < D ? to_float<QT>(q[d]) : 0.f;
  }
  const float ks = KVT == DType::fp8_e4m3 ? a.k_scale : 1.f;
  const float vs = KVT == DType::fp8_e4m3 ? a.v_scale : 1.f;

  float m = neg_inf(), l = 0.f, acc[kPer];
#pragma unroll
  for (int i = 0; i < kPer; ++i) acc[i] = 0.f;

  for (int64_t j0 = lo + int64_t(wave) * kKeysPerStep; j0 < hi; j0 += int64_t(kWaves) * kKeysPerStep) {
    int64_t off[kKeysPerStep];
    float dot[kKeysPerStep];
#pragma unroll
    for (int u = 0; u < kKeysPerStep; ++u) {
      const int64_t j = j0 + u;
      off[u] = j < hi ? kv_offset(a, r.b, hk, j) : -1;
      float part = 0.f;
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        const int d = lane + i * kWarpSize;
        if (off[u] >= 0 && d < D) part += qv[i] * load_kv<KVT>(a.k, off[u] + d);
      }
      dot[u] = part;
    }
    float s[kKeysPerStep], m_new = m;
#pragma unroll
    for (int u = 0; u < kKeysPerStep; ++u) {
      const float full = warp_sum(dot[u]) * ks;
      s[u] = off[u] >= 0 ? logit2(a, full, r.h, j0 + u, r.pos) : neg_inf();
      m_new = s[u] > m_new ? s[u] : m_new;
    }
    const float corr = device_exp2(m - m_new);  // m = -inf on the first step: 0
    l *= corr;
#pragma unroll
    for (int i = 0; i < kPer; ++i) acc[i] *= corr;
#pragma unroll
    for (int u = 0; u < kKeysPerStep; ++u) {
      if (off[u] < 0) continue;
      const float p = device_exp2(s[u] - m_new);
      l += p;
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        const int d = lane + i * kWarpSize;
        if (d < D) acc[i] += p * (load_kv<KVT>(a.v, off[u] + d) * vs);
      }
    }
    m = m_new;
  }

  // Merge the waves' states in wave order.
#pragma unroll
  for (int i = 0; i < kPer; ++i) {
    const int d = lane + i * kWarpSize;
    if (d < D) s_acc[wave][d] = acc[i];
  }
  if (lane == 0) {
    s_m[wave] = m;
    s_l[wave] = l;
  }
  __syncthreads();
  float M = neg_inf();
  for (int w = 0; w < kWaves; ++w) M = s_m[w] > M ? s_m[w] : M;
  const bool empty = !(M > neg_inf());
  float L = 0.f;
  if (!empty)
    for (int w = 0; w < kWaves; ++w) L += s_l[w] * device_exp2(s_m[w] - M);
  if constexpr (!kSplit) {
    if (!empty && a.sinks) L += device_exp2(a.sinks[r.h] * kLog2e - M);
  }
  const float inv = empty ? 0.f : 1.f / L;
  for (int d = static_cast<int>(threadIdx.x); d < D; d += kAttnThreads) {
    float o = 0.f;
    if (!empty)
      for (int w = 0; w < kWaves; ++w) o += s_acc[w][d] * device_exp2(s_m[w] - M);
    o *= inv;
    if constexpr (kSplit) a.part_o[(row * a.num_chunks + chunk) * D + d] = o;
    else a.o[r.b * a.o_bs + r.t * a.o_ts + r.h * a.o_hs + d] = from_float<QT>(o);
  }
  if (threadIdx.x == 0) {
    if constexpr (kSplit) a.part_lse[row * a.num_chunks + chunk] = empty ? neg_inf() : M + device_log2(L);
    else if (a.lse) a.lse[row] = empty ? neg_inf() : (M + device_log2(L)) * kLn2;
  }
}

}  // namespace dcukern::attn_detail
