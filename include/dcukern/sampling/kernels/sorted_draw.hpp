// The draw among a row's sorted candidates by the whole block, in five barriers: every thread takes
// kCapItems consecutive candidates, and one block scan of their fixed-point masses in sort order
// decides top-k, top-p and min-p (all prefixes of the order) and the inverse-CDF draw. The split rows
// use it when their candidates are more than one wave draws (wave_draw.hpp).
// Contract: s.cand[0, n) sorted descending (1 <= n <= kCap), or in bucket order (sort_top_by_bin's
// by_bucket: each position has the logit, so the mass, of the sort order's), elements of the row that hold
// its top k (top_k >= 2); called by every thread of the block; returns the drawn position (every thread);
// uses s.b64, s.wave64, s.wave32.
// Rules: those of draw_sorted, with the draw's weights in the same fixed point as top-p's masses:
// keep = min(k, the first position whose running mass reaches top_p of the top-k mass, the first
// candidate below min-p); then the first kept position whose running mass exceeds floor(u * kept mass).
// A candidate whose mass rounds to 0 (below 2^-40 of the largest) is never drawn.
// Determinism: integer masses; the scan runs in a fixed order.
#pragma once
#include "dcukern/sampling/kernels/sample_block.hpp"

namespace dcukern::sampling_detail {

// The thread that holds position j publishes its running mass through *out (read after a barrier).
__device__ __forceinline__ void publish_run(int j, const uint64_t (&run)[kCapItems], uint64_t* out) {
  const int first = int(threadIdx.x) * kCapItems;
  if (j >= first && j < first + kCapItems) *out = run[j - first];
}

__device__ inline int draw_sorted_candidates(const RowScale& sc, const RowParams& p, float tmin, int n, float u,
                                                 Shared& s) {
  const int first = int(threadIdx.x) * kCapItems, wave = int(threadIdx.x) / kWarpSize;
  // Masses in sort order; the first candidate below min-p (min-p keeps a prefix).
  static_assert(kCapItems % 2 == 0, "two keys a load");
  uint64_t key[kCapItems], run[kCapItems], mine = 0;
#pragma unroll
  for (int q = 0; q < kCapItems; q += 2) {  // 16-byte loads: half the shared-memory requests
    const ulonglong2 two = *reinterpret_cast<const ulonglong2*>(&s.cand[first + q]);
    key[q] = two.x, key[q + 1] = two.y;
  }
  int out = n;
#pragma unroll
  for (int q = 0; q < kCapItems; ++q) {
    const int j = first + q;
    const float t = j < n ? sc.t(key_logit(key[q])) : -INFINITY;
    if (j < n && t < tmin && out == n) out = j;
    mine += j < n ? fixed_mass(t) : 0;
    run[q] = mine;  // this thread's running mass, completed below
  }
  const uint64_t through = wave_inclusive_sum(mine);
  out = wave_all_min(out);
  if (lane_id() == kWarpSize - 1) {
    s.wave64[wave] = through;
    s.wave32[0][wave] = uint32_t(out);
  }
  __syncthreads();
  const uint64_t before = through - mine + waves_before(s.wave64);
  out = int(waves_min_word(s.wave32[0]));
#pragma unroll
  for (int q = 0; q < kCapItems; ++q) run[q] += before;  // running mass through position first + q

  const int top_k = n < p.top_k ? n : p.top_k;
  int keep = out < top_k ? out : top_k;  // >= 1: the largest candidate is never below min-p
  if (p.top_p < 1.0f) {
    publish_run(top_k - 1, run, &s.b64[0]);  // the top-k set's mass
    __syncthreads();
    const uint64_t target = top_p_target(p.top_p, s.b64[0]);
    int reach = n - 1;  // the first position whose running mass reaches the target
#pragma unroll
    for (int q = kCapItems - 1; q >= 0; --q)
      if (first + q < n && run[q] >= target) reach = first + q;
    reach = int(block_min_word(uint32_t(reach), s.wave32[1]));  // positions are >= 0
    keep = reach + 1 < keep ? reach + 1 : keep;
  }
  publish_run(keep - 1, run, &s.b64[1]);  // the kept mass
  __syncthreads();
  const uint64_t target = draw_target(u, s.b64[1]);
  int pick = keep - 1;
#pragma unroll
  for (int q = kCapItems - 1; q >= 0; --q)
    if (first + q < keep && run[q] > target) pick = first + q;
  return int(block_min_word(uint32_t(pick), s.wave32[0]));
}

}  // namespace dcukern::sampling_detail
