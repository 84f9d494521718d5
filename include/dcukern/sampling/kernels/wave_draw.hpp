// The draw among a small candidate set, by one wave: the split rows' last block hands rows whose gathered
// candidates number at most kWaveDrawCap (two per lane) to its first wave, which sorts them with a
// register bitonic network and applies top-k, top-p, min-p and the inverse-CDF draw with wave shuffles.
// Same rules as draw_sorted (the block-wide draw), without the block's ~30 barriers.
// Contract: n <= kWaveDrawCap; s.cand[0, n) holds the row's candidates (unsorted), a prefix of its sort
// order that holds its top k (top_k >= 2); called by every lane of wave 0 and no other; the token index
// lands in s.b64[1] (the caller synchronises the block before reading it).
// Determinism: keys are unique; masses are integers; the float sum of the draw runs in lane order.
#pragma once
#include "dcukern/platform/warp.hpp"
#include "dcukern/sampling/kernels/sample_block.hpp"

namespace dcukern::sampling_detail {

constexpr int kWaveDrawCap = 2 * kWarpSize;

// Descending bitonic sort of the wave's 2 * kWarpSize keys; element e = lane + kWarpSize * h is v[h].
__device__ __forceinline__ void wave_sort_desc(uint64_t (&v)[2]) {
  const int lane = lane_id();
#pragma unroll
  for (int k2 = 2; k2 <= 2 * kWarpSize; k2 <<= 1) {
#pragma unroll
    for (int j = k2 >> 1; j > 0; j >>= 1) {
      if (j == kWarpSize) {  // partners in one lane: element lane (lower) and lane + kWarpSize
        if (v[0] < v[1]) {   // k2 == 2 * kWarpSize: the whole sequence descends
          const uint64_t t = v[0];
          v[0] = v[1];
          v[1] = t;
        }
        continue;
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int e = lane + kWarpSize * h;
        const uint64_t other = shfl_xor_any(v[h], j);
        const bool lower = (e & j) == 0, descending = (e & k2) == 0;
        const bool keep_max = lower == descending;
        v[h] = keep_max ? (other > v[h] ? other : v[h]) : (other < v[h] ? other : v[h]);
      }
    }
  }
}

__device__ inline void wave_draw(const RowScale& sc, const RowParams& p, float tmin, int n, float u, Shared& s) {
  const int lane = lane_id();
  uint64_t v[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int e = lane + kWarpSize * h;
    v[h] = e < n ? s.cand[e] : 0;  // 0 sorts below every real key
  }
  wave_sort_desc(v);
  float t[2];
  uint64_t fm[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int e = lane + kWarpSize * h;
    t[h] = e < n ? sc.t(key_logit(v[h])) : -INFINITY;
    fm[h] = e < n ? fixed_mass(t[h]) : 0;
  }
  const uint64_t k = uint64_t(p.top_k);
  int keep = n < int(k) ? n : int(k);  // top-k
  if (p.top_p < 1.0f) {                // top-p on the top-k mass: the first position whose running mass reaches it
    uint64_t in_k = 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) in_k += uint64_t(lane + kWarpSize * h) < k ? fm[h] : 0;
    const uint64_t target = top_p_target(p.top_p, wave_all_sum(in_k));
    const uint64_t run0 = wave_inclusive_sum(fm[0]);
    const uint64_t run1 = wave_all_sum(fm[0]) + wave_inclusive_sum(fm[1]);
    int first = n - 1;
    if (lane + kWarpSize < n && run1 >= target) first = lane + kWarpSize;
    if (lane < n && run0 >= target) first = lane;
    first = wave_all_min(first);
    keep = keep < first + 1 ? keep : first + 1;
  }
  int out = n;  // min-p: the first candidate below the threshold ends the kept prefix
#pragma unroll
  for (int h = 1; h >= 0; --h)
    if (lane + kWarpSize * h < n && t[h] < tmin) out = lane + kWarpSize * h;
  out = wave_all_min(out);
  keep = keep < out ? keep : out;
  float w[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) w[h] = lane + kWarpSize * h < keep ? device_exp2(t[h]) : 0.0f;
  // Inverse CDF in sort order: the kept position whose interval [before, before + w) holds u * total.
  const float before0 = wave_exclusive_sum(w[0]);
  const float total0 = wave_all_max(before0 + w[0]);  // running sums never decrease: the last is the largest
  const float before1 = total0 + wave_exclusive_sum(w[1]);
  const float target = u * wave_all_max(before1 + w[1]);
  int pick = 0;  // 1 + the last kept position whose interval starts at or below the target
  if (w[0] > 0.0f && before0 <= target) pick = lane + 1;
  if (w[1] > 0.0f && before1 <= target) pick = lane + kWarpSize + 1;
  pick = wave_all_max(pick);
  if (lane == (pick - 1) % kWarpSize) s.b64[1] = uint64_t(key_index(pick - 1 < kWarpSize ? v[0] : v[1]));
}

}  // namespace dcukern::sampling_detail
