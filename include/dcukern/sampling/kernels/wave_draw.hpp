// The draw among a small candidate set: the split rows' last block hands rows whose top candidates fit one
// wave (at most kWaveDrawCap, two per lane) to this. The whole block first puts the largest of them in sort
// order (place_top: each key's place is the number of larger keys, counted by kThreads / kKeys threads a
// key, two barriers; sort_top_by_bin's are in order already), then its first wave applies top-k, top-p,
// min-p and the inverse-CDF draw with wave scans, broadcasts and ballots (wave_draw): the rules and the
// fixed-point masses of draw_sorted_candidates (the block-wide draw), without its barriers.
// Contract: wave_draw: n <= kWaveDrawCap candidates s.cand[0, n) in descending order (or in bucket order:
// sorted_draw.hpp), elements of the row that hold its top k (top_k >= 2), or its top kWaveDrawCap where
// top_k is larger than n; every lane of wave 0 and no other; the drawn position lands in s.b64[0] and the
// row index of the key there in s.b64[1] (the caller synchronises the block before reading them).
// Determinism: keys are unique; masses are integers (sums in lane order).
#pragma once
#include "dcukern/platform/warp.hpp"
#include "dcukern/sampling/kernels/sample_block.hpp"

namespace dcukern::sampling_detail {

constexpr int kWaveDrawCap = 2 * kWarpSize;

// The largest min(n, kWaveDrawCap) of s.cand[0, n) (n <= kKeys, unique keys) into descending order at
// s.cand[0, ..), by the whole block; returns their number. kPer = kThreads / kKeys threads a key each count
// the larger keys among every kPer-th of the others (at one step the threads of a wave read kPer
// consecutive keys: broadcasts, no bank conflicts), their sums give its place. n / kPer compares a thread:
// 8 for kKeys = 64, 32 for 128, 128 for 256 (with 512 threads).
template <int kKeys>
__device__ inline int place_top(int n, Shared& s) {
  constexpr int kPer = kThreads / kKeys;
  static_assert(kPer * kKeys == kThreads && kPer <= kWarpSize && (kPer & (kPer - 1)) == 0 && kKeys >= kWaveDrawCap,
                "a key's threads are a power-of-two group of one wave");
  const int c = int(threadIdx.x) / kPer, part = int(threadIdx.x) % kPer;
  const uint64_t key = c < n ? s.cand[c] : 0;
  uint32_t place = 0;
#pragma unroll 8
  for (int j = part; j < n; j += kPer) place += s.cand[j] > key ? 1u : 0u;
#pragma unroll
  for (int m = kPer / 2; m > 0; m /= 2) place += shfl_xor_word(place, m);
  __syncthreads();  // every read of s.cand is done
  if (part == 0 && c < n && place < uint32_t(kWaveDrawCap)) s.cand[place] = key;
  __syncthreads();
  return n < kWaveDrawCap ? n : kWaveDrawCap;
}

// Positions of the sorted candidates where a test holds, as the wave's two ballots: lo for positions
// 0..kWarpSize-1 (lane), hi for kWarpSize.. (lane + kWarpSize).
struct PositionBallot {
  uint64_t lo, hi;
  __device__ __forceinline__ int first(int none) const {
    return lo ? __ffsll((long long)lo) - 1 : hi ? kWarpSize + __ffsll((long long)hi) - 1 : none;
  }
  __device__ __forceinline__ int last(int none) const {
    return hi ? kWarpSize + 63 - __clzll((long long)hi) : lo ? 63 - __clzll((long long)lo) : none;
  }
};
__device__ __forceinline__ PositionBallot position_ballot(bool lo, bool hi) {
  return PositionBallot{wave_ballot(lo), wave_ballot(hi)};
}

// Every rule's position comes from the running fixed-point masses of draw_sorted_candidates (two lane-order
// scans, the second offset by the first's total), one broadcast, or a ballot, so that the wave's chain of
// shuffles stays short (against butterfly reductions for each total and position, measured on the H200:
// 0.98-0.99x the time of small-k calls at B = 1 and 32). The draw is that of draw_sorted_candidates on the
// same masses, so one wave and the block pick the same position.
__device__ inline void wave_draw(const RowScale& sc, const RowParams& p, float tmin, int n, float u, Shared& s) {
  const int lane = lane_id();
  uint64_t v[2], m[2];  // element e = lane + kWarpSize * h of the sorted candidates is v[h], its mass m[h]
  float t[2];
  bool in[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    in[h] = lane + kWarpSize * h < n;
    v[h] = in[h] ? s.cand[lane + kWarpSize * h] : 0;
    t[h] = in[h] ? sc.t(key_logit(v[h])) : -INFINITY;
    m[h] = in[h] ? fixed_mass(t[h]) : 0;
  }
  const uint64_t run0 = wave_inclusive_sum(m[0]);  // running mass through position lane
  const uint64_t run1 = wave_inclusive_sum(m[1]) + wave_broadcast(run0, kWarpSize - 1);  // lane + kWarpSize
  auto run_at = [&](int pos) { return wave_broadcast(pos < kWarpSize ? run0 : run1, pos % kWarpSize); };
  int keep = n < p.top_k ? n : p.top_k;  // top-k
  if (p.top_p < 1.0f) {                  // top-p on the top-k mass: the first position whose running mass reaches it
    const uint64_t target = top_p_target(p.top_p, run_at(keep - 1));
    const int first = position_ballot(in[0] && run0 >= target, in[1] && run1 >= target).first(n - 1);
    keep = keep < first + 1 ? keep : first + 1;
  }
  // min-p: the first candidate below the threshold ends the kept prefix
  const int out = position_ballot(in[0] && t[0] < tmin, in[1] && t[1] < tmin).first(n);
  keep = keep < out ? keep : out;
  // Inverse CDF in sort order: the first kept position whose running mass exceeds floor(u * kept mass).
  const uint64_t target = draw_target(u, run_at(keep - 1));
  const int pick =
      position_ballot(lane < keep && run0 > target, lane + kWarpSize < keep && run1 > target).first(keep - 1);
  if (lane == pick % kWarpSize) s.b64[1] = uint64_t(key_index(pick < kWarpSize ? v[0] : v[1]));
  if (lane == 0) s.b64[0] = uint64_t(pick);
}

}  // namespace dcukern::sampling_detail
