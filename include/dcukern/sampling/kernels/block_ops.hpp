// Block-wide building blocks of the sampling kernel, over one row's shared memory: broadcast reductions,
// the crossing search over a histogram (which bin holds the element where a running count or mass first
// reaches a target), the candidate gather + bitonic sort (descending sort keys), and selection among the
// sorted candidates. Every sum is integer or in a fixed order, so results do not depend on timing.
#pragma once
#include "dcukern/platform/block.hpp"
#include "dcukern/sampling/kernels/common.hpp"

namespace dcukern::sampling_detail {

struct Crossing {
  int bin;                    // bin holding the target element (-1: target above the total)
  uint64_t before_count;      // elements in bins before it (in walk order)
  uint64_t before_mass;       // their fixed-point mass
  uint64_t total_count, total_mass;
};

// Buckets of order_few_by_bucket (a lane's eight counts are two 16-byte loads); the last is open.
constexpr int kFewBuckets = 8 * kWarpSize;

struct Shared {
  alignas(16) uint32_t bin_count[kBins];  // 16-byte aligned: read and written four words a thread
  union {
    alignas(16) uint64_t bin_mass[kBins];  // (sort_top_by_bin: its grouped keys, two a load)
    alignas(16) uint32_t few_count[kFewBuckets];  // order_few_by_bucket's counts: zeroed ahead by its caller
  };
  alignas(16) uint64_t cand[kCap];        // two keys a load (draw_sorted_candidates)
  union {  // refinement digits (find_cut) and tile masses (draw_kept) are never live together
    struct {
      uint64_t digit_mass[kDigits];
      uint32_t digit_count[kDigits];
    };
    float tile_sum[kMaxTiles];
  };
  union {
    typename BlockReduce<uint64_t, kThreads>::storage_type r64;
    typename BlockReduce<float, kThreads>::storage_type rf;
    typename BlockScan<uint64_t, kThreads>::storage_type s64;
    typename BlockScan<float, kThreads>::storage_type sf;
  } tmp;
  uint64_t b64[2];
  uint64_t wave64[kThreads / 32];       // per-wave partials (enough for wave32 and wave64)
  uint32_t wave32[2][kThreads / 32];
  float bf;
  uint32_t n_cand;
  uint32_t mixed_bins;  // sort_top_by_bin: a candidate's value bin holds more than one logit
  Crossing crossing;
};

// all_max and the float exclusive_sum take any block storage S with the members they use (Shared here,
// UnfilteredShared of the unfiltered tiles' kernels): s.tmp.r64 and s.b64[0], s.tmp.sf.
template <class S>
__device__ __forceinline__ uint64_t all_max(uint64_t v, S& s) {
  const uint64_t r = BlockReduce<uint64_t, kThreads>::max(v, s.tmp.r64);
  if (threadIdx.x == 0) s.b64[0] = r;
  __syncthreads();
  const uint64_t out = s.b64[0];
  __syncthreads();
  return out;
}
__device__ __forceinline__ uint64_t all_sum(uint64_t v, Shared& s) {
  const uint64_t r = BlockReduce<uint64_t, kThreads>::sum(v, s.tmp.r64);
  if (threadIdx.x == 0) s.b64[0] = r;
  __syncthreads();
  const uint64_t out = s.b64[0];
  __syncthreads();
  return out;
}
__device__ __forceinline__ float all_sum(float v, Shared& s) {
  const float r = BlockReduce<float, kThreads>::sum(v, s.tmp.rf);
  if (threadIdx.x == 0) s.bf = r;
  __syncthreads();
  const float out = s.bf;
  __syncthreads();
  return out;
}
// Smallest value over the block (values < 2^63).
__device__ __forceinline__ uint64_t all_min(uint64_t v, Shared& s) { return ~all_max(~v, s); }
__device__ __forceinline__ uint64_t exclusive_sum(uint64_t v, uint64_t& total, Shared& s) {
  const uint64_t r = BlockScan<uint64_t, kThreads>::exclusive_sum(v, total, s.tmp.s64);
  __syncthreads();
  return r;
}
template <class S>
__device__ __forceinline__ float exclusive_sum(float v, float& total, S& s) {
  const float r = BlockScan<float, kThreads>::exclusive_sum(v, total, s.tmp.sf);
  __syncthreads();
  return r;
}

// Largest of a 32-bit word over the block of kBlock threads, every thread (one barrier; `wave` is not
// reused before the caller's next barrier).
// The waves' partials are combined across the lanes (lane i reads wave i's), not in a loop per thread.
template <int kBlock = kThreads>
__device__ __forceinline__ uint32_t block_max_word(uint32_t v, uint32_t* wave) {
  static_assert(kBlock / kWarpSize <= kWarpSize, "one partial per lane");
  v = wave_max_word(v);
  if (lane_id() == 0) wave[threadIdx.x / kWarpSize] = v;
  __syncthreads();
  return wave_max_word(lane_id() < kBlock / kWarpSize ? wave[lane_id()] : 0u);
}
// Smallest, the same way.
__device__ __forceinline__ uint32_t block_min_word(uint32_t v, uint32_t* wave) { return ~block_max_word(~v, wave); }

// After the barrier that published the block's per-wave partials (partial[w]: wave w's), every thread:
// the sum of those of the waves before its own, and the largest word. Lane l reads wave l's partial and
// the lanes combine them with shuffles: one shared-memory load a wave, where a loop over the partials in
// every thread has each wave load all of them, and the block's loads queue on the SM's shared memory
// (on the H200, sixteen waves' loops took ~900 cycles of sort_top_by_bin's ~6,800 at top_k 1000).
template <class T>
__device__ __forceinline__ T waves_before(const T* partial) {
  constexpr int kWaves = kThreads / kWarpSize;
  static_assert(kWaves <= kWarpSize, "one partial per lane");
  const int lane = lane_id(), wave = int(threadIdx.x) / kWarpSize;
  const T through = wave_inclusive_sum(lane < kWaves ? partial[lane] : T(0));
  const T before = wave_broadcast(through, wave > 0 ? wave - 1 : 0);
  return wave > 0 ? before : T(0);
}
__device__ __forceinline__ uint32_t waves_max_word(const uint32_t* partial) {
  return wave_max_word(lane_id() < kThreads / kWarpSize ? partial[lane_id()] : 0u);
}
__device__ __forceinline__ uint32_t waves_min_word(const uint32_t* partial) {
  return ~wave_max_word(lane_id() < kThreads / kWarpSize ? ~partial[lane_id()] : 0u);
}

// Walk `nb` bins in order o = 0.. (bin o, or nb-1-o when `reversed`) and find where the running count
// (or mass) first reaches `target` (>= 1).
__device__ inline Crossing find_crossing(const uint32_t* count, const uint64_t* mass, int nb, bool reversed,
                                         bool by_mass, uint64_t target, Shared& s) {
  const int per = (nb + kThreads - 1) / kThreads;
  const int first = threadIdx.x * per;
  uint64_t c = 0, m = 0;
  for (int o = first; o < first + per && o < nb; ++o) {
    const int b = reversed ? nb - 1 - o : o;
    c += count[b];
    m += mass[b];
  }
  if (threadIdx.x == 0) s.crossing = Crossing{-1, 0, 0, 0, 0};
  uint64_t total_c, total_m;
  uint64_t bc = exclusive_sum(c, total_c, s);
  uint64_t bm = exclusive_sum(m, total_m, s);
  for (int o = first; o < first + per && o < nb; ++o) {
    const int b = reversed ? nb - 1 - o : o;
    const uint64_t before = by_mass ? bm : bc;
    const uint64_t here = by_mass ? mass[b] : count[b];
    if (before < target && target <= before + here) s.crossing = Crossing{b, bc, bm, 0, 0};
    bc += count[b];
    bm += mass[b];
  }
  __syncthreads();
  Crossing out = s.crossing;
  __syncthreads();
  out.total_count = total_c;
  out.total_mass = total_m;
  return out;
}

// Bitonic sort of s.cand[0, n) into descending order (padding with 0, below every real key).
__device__ inline void sort_candidates(int n, Shared& s) {
  int np = 1;
  while (np < n) np <<= 1;
  for (int i = n + threadIdx.x; i < np; i += kThreads) s.cand[i] = 0;
  __syncthreads();
  for (int k = 2; k <= np; k <<= 1) {
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int i = threadIdx.x; i < np; i += kThreads) {
        const int l = i ^ j;
        if (l > i) {
          const uint64_t a = s.cand[i], b = s.cand[l];
          const bool descending = (i & k) == 0;
          if (descending ? a < b : a > b) {
            s.cand[i] = b;
            s.cand[l] = a;
          }
        }
      }
      __syncthreads();
    }
  }
}

// Gather the elements `keep(t, bin, key)` accepts into s.cand and sort them; returns their number.
template <class Loader, class Keep>
__device__ inline int gather_candidates(const Loader& L, const RowScale& sc, Keep keep, Shared& s) {
  if (threadIdx.x == 0) s.n_cand = 0;
  __syncthreads();
  for_each_element(L, [&](float x, int64_t i) {
    const float xv = finite_logit(x);
    const float t = sc.t(xv);
    const uint64_t key = sort_key(xv, i);
    if (keep(t, bin_of(t), key)) {
      const uint32_t slot = atomicAdd(&s.n_cand, 1u);
      if (slot < kCap) s.cand[slot] = key;
    }
  });
  __syncthreads();
  const int n = s.n_cand < kCap ? int(s.n_cand) : kCap;
  __syncthreads();
  sort_candidates(n, s);
  return n;
}

struct Selected {
  int j;                  // position among the sorted candidates
  uint64_t mass_through;  // fixed mass of candidates [0, j]
};

// Among the first n sorted candidates, the first position where the running count (j + 1) or running
// fixed mass reaches `target`; n - 1 if it never does.
__device__ inline Selected select_candidate(int n, bool by_mass, uint64_t target, const RowScale& sc, Shared& s) {
  uint64_t fm[kCapItems];
  uint64_t mine = 0;
  const int first = threadIdx.x * kCapItems;
#pragma unroll
  for (int q = 0; q < kCapItems; ++q) {
    const int j = first + q;
    fm[q] = j < n ? fixed_mass(sc.t(key_logit(s.cand[j]))) : 0;
    mine += fm[q];
  }
  uint64_t total;
  uint64_t run = exclusive_sum(mine, total, s);
  uint64_t pos = uint64_t(n > 0 ? n - 1 : 0);
#pragma unroll
  for (int q = 0; q < kCapItems; ++q) {
    const int j = first + q;
    run += fm[q];
    if (j < n && (by_mass ? run >= target : uint64_t(j) + 1 >= target)) pos = pos < uint64_t(j) ? pos : uint64_t(j);
  }
  const int j = int(all_min(pos, s));
  // Mass through j: the owner of j recomputes its running sum.
  if (threadIdx.x == j / kCapItems) {
    uint64_t r = run - mine;  // back to this thread's exclusive prefix
    for (int q = 0; q <= j - first; ++q) r += fm[q];
    s.b64[1] = r;
  }
  __syncthreads();
  const Selected out{j, s.b64[1]};
  __syncthreads();
  return out;
}

}  // namespace dcukern::sampling_detail
