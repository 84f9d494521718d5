// The draw among a small candidate set: the split rows' last block hands rows whose gathered candidates
// number at most kWaveDrawCap (two per lane) to this. The whole block first puts them in sort order
// (place_small: each key's place is the number of larger keys, counted by kThreads / kWaveDrawCap
// threads a key, two barriers), then its first wave applies top-k, top-p, min-p and the inverse-CDF draw
// with wave shuffles (wave_draw): the rules of draw_sorted (the block-wide draw), without its ~30
// barriers.
// Contract: n <= kWaveDrawCap; s.cand[0, n) holds the row's candidates (unique keys, unsorted), elements
// of the row that hold its top k (top_k >= 2). place_small: every thread of the block. wave_draw:
// every lane of wave 0 and no other, after place_small; the token index lands in s.b64[1] (the caller
// synchronises the block before reading it).
// Determinism: keys are unique; masses are integers; the float sum of the draw runs in lane order.
#pragma once
#include "dcukern/platform/warp.hpp"
#include "dcukern/sampling/kernels/sample_block.hpp"

namespace dcukern::sampling_detail {

constexpr int kWaveDrawCap = 2 * kWarpSize;

// s.cand[0, n) (n <= kWaveDrawCap, unique keys) into descending order, by the whole block: kPer threads
// a key each count the larger keys among kSpan of the others (reads of consecutive keys across the
// threads of a key: no bank conflicts), their sums give its place.
__device__ inline void place_small(int n, Shared& s) {
  constexpr int kPer = kThreads / kWaveDrawCap, kSpan = kWaveDrawCap / kPer;
  static_assert(kPer * kWaveDrawCap == kThreads && kPer <= kWarpSize && (kPer & (kPer - 1)) == 0,
                "a key's threads are a power-of-two group of one wave");
  const int c = int(threadIdx.x) / kPer, part = int(threadIdx.x) % kPer;
  const uint64_t key = c < n ? s.cand[c] : 0;
  uint32_t place = 0;
#pragma unroll
  for (int i = 0; i < kSpan; ++i) {
    const int j = i * kPer + part;
    place += j < n && s.cand[j] > key ? 1u : 0u;
  }
#pragma unroll
  for (int m = kPer / 2; m > 0; m /= 2) place += shfl_xor_word(place, m);
  __syncthreads();  // every read of s.cand is done
  if (part == 0 && c < n) s.cand[place] = key;
  __syncthreads();
}

__device__ inline void wave_draw(const RowScale& sc, const RowParams& p, float tmin, int n, float u, Shared& s) {
  const int lane = lane_id();
  uint64_t v[2];  // element e = lane + kWarpSize * h of the sorted candidates is v[h]
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int e = lane + kWarpSize * h;
    v[h] = e < n ? s.cand[e] : 0;
  }
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
