// attention_grouped_kernel — paged decode attention for a tile of query rows that share one KV head, on
// plain vector ALUs (every target): the tile reads each key and value once (GQA: up to kTile query heads
// x tokens per KV read). Unsplit, or one KV chunk per block for split-KV (attention_merge_kernel finishes).
// Contract (the grouped rows): head_dim a multiple of 8 and <= kDim; the pools' base pointers and page,
// token and head strides aligned to 8 elements (one 16-byte load per lane for f16/bf16, 8 bytes for fp8);
// any page size (positions -> pages through a FastDivide), any GQA ratio, q/o f16 or bf16 (runtime).
// Work split: block = (query tile, KV head, chunk, sequence) (query_tile.hpp). A key is held by kDim/8
// lanes, 8 elements each; the block's threads form kSlots key slots that walk the block's keys side by
// side, kUnroll keys per slot per step with all K and V loads issued before any math. Each slot keeps an
// online softmax (base 2) per query row of the tile; a step's scores are reduced across the key's lanes
// and the step rescales once. The slots' states merge in slot order (fixed: same inputs, same bits).
#pragma once
#include "dcukern/attention/kernels/kv_vec.hpp"
#include "dcukern/attention/kernels/query_tile.hpp"

namespace dcukern::attn_detail {

// Keys a slot takes per step: 4, or for 8-row tiles (whose q, accumulators and scores hold about 200
// registers) 2, and 1 on AMD targets without accumulation registers to spill into (gfx906, gfx10, gfx11):
// there 2 keys put the 8-row tiles at 251-256 VGPRs, the whole of a wave's registers, and bf16 spilled
// 132-136 bytes inside the key loop on gfx906 and gfx1030 (ISA audit: about 80 scratch accesses a step,
// against 64 bytes of K and V a lane); with 1 key, 229-241 VGPRs and no scratch. Compiled, not measured:
// no AMD hardware ran either form.
#if DCUKERN_PLATFORM_HIP && !(defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) || \
                              defined(__gfx941__) || defined(__gfx942__) || defined(__gfx950__))
constexpr int kWideTileUnroll = 1;
#else
constexpr int kWideTileUnroll = 2;
#endif

template <DType KVT, int kDim, int kTile>
__global__ void __launch_bounds__(kAttnThreads) attention_grouped_kernel(AttnArgs a) {
  constexpr int kLanesPerKey = kDim / 8;
  constexpr int kSlots = kAttnThreads / kLanesPerKey;
  constexpr int kUnroll = kTile >= 8 ? kWideTileUnroll : 4;
  constexpr bool kFp8 = KVT == DType::fp8_e4m3;
  static_assert(kLanesPerKey <= kWarpSize && kAttnThreads % kLanesPerKey == 0, "a key's lanes sit in one wave");
  __shared__ __align__(16) float s_acc[kSlots][kTile][kDim];  // (finish_tile reads it in 16-byte pieces)
  __shared__ float s_m[kTile][kSlots], s_l[kTile][kSlots];

  grid_dependents_launch();  // split: the merge (a dependent launch) may start
  const TileBlock tb = tile_block(a);
  const QueryTile<kTile> qt(a, tb);
  const int slot = static_cast<int>(threadIdx.x) / kLanesPerKey;
  const int d0 = (static_cast<int>(threadIdx.x) % kLanesPerKey) * 8;
  const bool lane_active = d0 < a.head_dim;  // head_dim 96 in the 128 build: 4 idle lanes per key

  const float qs = q_prescale(a, kFp8 ? a.k_scale * kFp8Rescale : 1.f);
  float q[kTile][8];
#pragma unroll
  for (int g = 0; g < kTile; ++g)
#pragma unroll
    for (int e = 0; e < 8; ++e)
      q[g][e] =
          g < qt.rows && lane_active && d0 + e < a.head_dim ? tile_q(a, tb.b, qt.t[g], qt.h[g], d0 + e) * qs : 0.f;

  float m[kTile], l[kTile], acc[kTile][8];
#pragma unroll
  for (int g = 0; g < kTile; ++g) {
    m[g] = neg_inf(), l[g] = 0.f;
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[g][e] = 0.f;
  }

  for (int64_t base = qt.blk_lo; base < qt.blk_hi; base += kSlots * kUnroll) {  // 64-bit: no wrap near 2^31
    KvVec<KVT> kr[kUnroll], vr[kUnroll];
    int j[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t key = base + u * kSlots + slot;
      j[u] = key < qt.blk_hi ? static_cast<int>(key) : qt.blk_hi;  // past the end: masked by every row
      if (key < qt.blk_hi && lane_active) {
        const int64_t off = kv_offset_fast(a, tb.b, tb.hk, j[u]) + d0;
        kr[u].load(a.k, off);
        vr[u].load(a.v, off);
      } else {
        kr[u].zero();
        vr[u].zero();
      }
    }
    float s[kTile][kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      float kf[8];
      kr[u].to_float(kf);
#pragma unroll
      for (int g = 0; g < kTile; ++g) {
        float dot = 0.f;
#pragma unroll
        for (int e = 0; e < 8; ++e) dot += q[g][e] * kf[e];
        s[g][u] = dot;
      }
    }
#pragma unroll
    for (int g = 0; g < kTile; ++g)
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
#pragma unroll
        for (int mask = kLanesPerKey / 2; mask > 0; mask /= 2) s[g][u] += shfl_xor(s[g][u], mask);
    // Scores -> probabilities (in place), one rescale of the state per row and step.
#pragma unroll
    for (int g = 0; g < kTile; ++g) {
      float mx = m[g];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        s[g][u] = tile_logit(a, qt.row(g), s[g][u], j[u]);
        mx = s[g][u] > mx ? s[g][u] : mx;
      }
      const float ref = mx > neg_inf() ? mx : 0.f;  // no key yet: keep everything at zero, no NaN
      const float corr = device_exp2(m[g] - ref);
      m[g] = mx;
      l[g] *= corr;
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[g][e] *= corr;
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        s[g][u] = device_exp2(s[g][u] - ref);
        l[g] += s[g][u];
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      float vf[8];
      vr[u].to_float(vf);
#pragma unroll
      for (int g = 0; g < kTile; ++g)
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[g][e] += s[g][u] * vf[e];
    }
  }

#pragma unroll
  for (int g = 0; g < kTile; ++g) {
    if (lane_active)
#pragma unroll
      for (int e = 0; e < 8; ++e) s_acc[slot][g][d0 + e] = acc[g][e];
    if (d0 == 0) s_m[g][slot] = m[g], s_l[g][slot] = l[g];
  }
  __syncthreads();
  finish_tile<kTile, kSlots, kDim>(a, tb, qt, s_acc, s_m, s_l, s_l, kFp8 ? a.v_scale * kFp8Rescale : 1.f);
}

}  // namespace dcukern::attn_detail
