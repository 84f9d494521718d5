// The passes of the block sampler over one row (each reads the row once):
//   row_max          max logit (as the largest sort key: lowest index on ties) and whether a NaN occurs
//   build_histogram  level-1 bins over t: counts, and fixed-point masses when top-p needs them
//   find_cut         the sort key of the element where a running count or mass reaches a target:
//                    level-1 bin, then 8-bit digits of the sort key within it, until the bucket fits
//                    in shared memory (one gather + sort)
//   draw_kept        inverse-CDF draw over {key >= cut, t >= tmin}: per-tile masses, then one tile again
#pragma once
#include "dcukern/sampling/kernels/block_ops.hpp"

namespace dcukern::sampling_detail {

struct RowMax {
  uint64_t key;  // sort key of the first maximal element
  bool nan;
};

template <class Loader>
__device__ inline RowMax row_max(const Loader& L, Shared& s) {
  uint64_t best = 0;
  bool nan = false;
  for_each_element(L, [&](float x, int64_t i) {
    if (x != x) nan = true;
    const uint64_t k = sort_key(finite_logit(x), i);
    best = k > best ? k : best;
  });
  nan = block_any(nan);
  return RowMax{all_max(best, s), nan};
}

template <class Loader>
__device__ inline void build_histogram(const Loader& L, const RowScale& sc, bool with_mass, Shared& s) {
  for (int b = threadIdx.x; b < kBins; b += kThreads) {
    s.bin_count[b] = 0;
    s.bin_mass[b] = 0;
  }
  __syncthreads();
  uint64_t in_last = 0;  // the open last bin (mass < 2^-63.97 p_max: fixed mass 0) is only counted
  for_each_element(L, [&](float x, int64_t) {
    const float t = sc.t(finite_logit(x));
    const int b = bin_of(t);
    if (b == kBins - 1) {
      ++in_last;
      return;
    }
    atomicAdd(&s.bin_count[b], 1u);
    if (with_mass) atomicAdd(reinterpret_cast<unsigned long long*>(&s.bin_mass[b]), (unsigned long long)fixed_mass(t));
  });
  in_last = all_sum(in_last, s);
  if (threadIdx.x == 0) s.bin_count[kBins - 1] = uint32_t(in_last);
  __syncthreads();
}

// ceil(p * mass), at least 1: the fixed-point mass the top-p prefix must reach.
__device__ __forceinline__ uint64_t top_p_target(float p, uint64_t mass) {
  const double t = ceil(double(p) * double(mass));
  return t < 1.0 ? 1 : uint64_t(t);
}
// floor(u * kept), below kept for u < 1: the inverse-CDF draw takes the first kept position whose running
// mass exceeds it (draw_sorted_candidates and wave_draw, which must pick the same position).
__device__ __forceinline__ uint64_t draw_target(float u, uint64_t kept) { return uint64_t(double(u) * double(kept)); }

struct Cut {
  uint64_t key;           // sort key of the cut element: the kept prefix is {key >= cut}
  uint64_t mass_through;  // fixed mass of that prefix
};

// Needs the level-1 histogram in s (kept intact). target >= 1, at most the row's count / mass.
template <class Loader>
__device__ inline Cut find_cut(const Loader& L, const RowScale& sc, bool by_mass, uint64_t target, Shared& s) {
  const Crossing cr = find_crossing(s.bin_count, s.bin_mass, kBins, false, by_mass, target, s);
  const int bin = cr.bin < 0 ? kBins - 1 : cr.bin;
  uint64_t r = target - (by_mass ? cr.before_mass : cr.before_count);
  uint64_t mass_before = cr.before_mass;
  uint64_t count = s.bin_count[bin];
  int shift = 64;  // bits of the sort key below the fixed prefix
  uint64_t prefix = 0;
  auto in_bucket = [&](int b, uint64_t key) { return b == bin && (shift == 64 || (key >> shift) == prefix); };
  while (true) {
    if (count <= kCap) {
      const int n = gather_candidates(L, sc, [&](float, int b, uint64_t key) { return in_bucket(b, key); }, s);
      const Selected sel = select_candidate(n, by_mass, r, sc, s);
      return Cut{s.cand[sel.j], mass_before + sel.mass_through};
    }
    const int digit_shift = shift - kDigitBits;
    for (int d = threadIdx.x; d < kDigits; d += kThreads) {
      s.digit_count[d] = 0;
      s.digit_mass[d] = 0;
    }
    __syncthreads();
    for_each_element(L, [&](float x, int64_t i) {
      const float xv = finite_logit(x);
      const float t = sc.t(xv);
      const uint64_t key = sort_key(xv, i);
      if (!in_bucket(bin_of(t), key)) return;
      const int d = int((key >> digit_shift) & (kDigits - 1));
      atomicAdd(&s.digit_count[d], 1u);
      atomicAdd(reinterpret_cast<unsigned long long*>(&s.digit_mass[d]), (unsigned long long)fixed_mass(t));
    });
    __syncthreads();
    const Crossing dc = find_crossing(s.digit_count, s.digit_mass, kDigits, true, by_mass, r, s);
    const int d = dc.bin < 0 ? 0 : dc.bin;
    r -= by_mass ? dc.before_mass : dc.before_count;
    mass_before += dc.before_mass;
    prefix = (shift == 64 ? 0 : prefix << kDigitBits) | uint64_t(d);
    shift = digit_shift;
    count = s.digit_count[d];
    const uint64_t digit_mass = s.digit_mass[d];
    __syncthreads();
    if (shift == 0) return Cut{prefix, mass_before + digit_mass};
  }
}

// Inverse-CDF draw from the kept elements in a fixed order (tile, thread, item); returns the index.
template <class Loader>
__device__ inline int64_t draw_kept(const Loader& L, const RowScale& sc, uint64_t cut, float tmin, float u,
                                    Shared& s) {
  auto masses = [&](int64_t base, float (&e)[kItems]) {
    float x[kItems];
    L.load(base, x);
    float sum = 0.0f;
#pragma unroll
    for (int q = 0; q < kItems; ++q) {
      const int64_t i = L.index(base, q);
      const float xv = finite_logit(x[q]);
      const float t = sc.t(xv);
      e[q] = (i < L.vocab && t >= tmin && sort_key(xv, i) >= cut) ? device_exp2(t) : 0.0f;
      sum += e[q];
    }
    return sum;
  };
  const int tiles = int((L.vocab + kTile - 1) / kTile);
  for (int tile = 0; tile < tiles; ++tile) {
    float e[kItems];
    const float total = all_sum(masses(tile * kTile, e), s);
    if (threadIdx.x == 0) s.tile_sum[tile] = total;
  }
  if (threadIdx.x == 0) {
    float all = 0.0f;
    for (int tile = 0; tile < tiles; ++tile) all += s.tile_sum[tile];
    const float target = u * all;
    float before = 0.0f;
    int chosen = 0;
    float chosen_before = 0.0f;
    for (int tile = 0; tile < tiles; ++tile) {
      if (before <= target && s.tile_sum[tile] > 0.0f) {
        chosen = tile;
        chosen_before = before;
      }
      before += s.tile_sum[tile];
    }
    s.b64[1] = uint64_t(chosen);
    s.bf = target - chosen_before;
  }
  __syncthreads();
  const int64_t base = int64_t(s.b64[1]) * kTile;
  const float target = s.bf;
  __syncthreads();
  float e[kItems];
  const float mine = masses(base, e);
  float tile_total;
  float run = exclusive_sum(mine, tile_total, s);
  uint64_t pick = 0;  // (position + 1) << 32 | index; the last positive element at or below the target
#pragma unroll
  for (int q = 0; q < kItems; ++q) {
    if (e[q] > 0.0f && run <= target)
      pick = (uint64_t(threadIdx.x * kItems + q + 1) << 32) | uint64_t(L.index(base, q));
    run += e[q];
  }
  return int64_t(uint32_t(all_max(pick, s)));
}

}  // namespace dcukern::sampling_detail
