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

struct Shared {
  alignas(16) uint32_t bin_count[kBins];  // 16-byte aligned: read and written four words a thread
  alignas(16) uint64_t bin_mass[kBins];  // (sort_top_by_bin: its grouped keys, two a load)
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

__device__ __forceinline__ uint64_t all_max(uint64_t v, Shared& s) {
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
__device__ __forceinline__ float exclusive_sum(float v, float& total, Shared& s) {
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

// The number of keys of grouped[first, end) larger than g (grouped 16-byte aligned), two keys a load. On the
// H200 sort_top_by_bin's ranks took as long this way as with one key a load or with eight loads in flight
// (bench/sampling_draw_cycles.cu): the bytes the block's loads move, not their latency, set their time.
__device__ __forceinline__ int rank_in_bucket(const uint64_t* grouped, int first, int end, uint64_t g) {
  int rank = 0, i = first;
  if (i % 2 != 0 && i < end) rank += grouped[i++] > g ? 1 : 0;
  for (; i + 2 <= end; i += 2) {
    const ulonglong2 two = *reinterpret_cast<const ulonglong2*>(grouped + i);
    rank += (two.x > g ? 1 : 0) + (two.y > g ? 1 : 0);
  }
  if (i < end) rank += grouped[i] > g ? 1 : 0;
  return rank;
}

// True when every logit of value bin key >> 48 has the key's top 32 bits: the bin's low 16 bits are
// zero in its floats (bf16 values among them), so the bin holds one logit (+inf, taken as FLT_MAX, does not).
__device__ __forceinline__ bool one_logit_bin(uint64_t key) {
  const uint32_t low = uint32_t(key >> 32) & 0xFFFFu;
  return low == (key >> 63 ? 0u : 0xFFFFu);  // order_key: positive floats keep their bits, negative invert
}

// The order of s.cand[0, n) after sort_top_by_bin (or another ordering: by_bucket false).
struct OrderedCandidates {
  int n;           // s.cand[0, n): every key down to the k-th largest's value bin
  bool by_bucket;  // in descending order of value bin only: each bin holds one logit, its keys in no order
  uint32_t top_bin;  // by_bucket: the first bin (s.bin_count[top_bin - bin]: count << 16 | start)
};

// The top of the candidates s.cand[0, n) (unique keys, n <= kCap) into descending order in s.cand[0, m):
// every key in a value bin (key >> 48) at or above that of the k-th largest (1 <= k <= n), so the top k and
// the keys that share the k-th's bin. Bins lie in (top_bin - kBins, top_bin]. Six barriers (against ten for
// a narrowing pass followed by a sort): a counting pass by bin (bucket b = top_bin - bin; a key's place
// among its bucket's arrivals from one atomic); a scan of the bucket counts that gives each bucket's start
// and m, the start of the first bucket past the k-th key; the kept keys (those of buckets that start below
// k) to their bucket's start plus arrival; then each to its bucket's start plus its rank there (the number
// of larger keys in the bucket, counted in grouped order). Keys are unique, so the result is exact and
// independent of the order the atomics ran in.
// Where every candidate's bin holds one logit (one_logit_bin: bf16 rows), the kept keys go to their
// bucket's start plus arrival in s.cand and stay there (by_bucket, five barriers): every running mass of
// the sort order is the same at each position, so the draws give the same positions, and
// token_in_bucket_order finds the key the sort would have put at the drawn one (bench/sampling_draw_cycles.cu
// on the H200, bf16 V = 151936 top_k 1000, ~40 keys a bucket: the ranks took ~2,600 of the ~6,000 cycles;
// order_candidates now ~2,800, the draw 3,200 -> 3,500 with the lookup).
// A key outside the buckets (not expected), or a bucket of more than kRankBucket keys (near-flat rows,
// where ranking would cost more than sorting): the bitonic sort of all n instead (m = n). Uses
// s.bin_count, s.bin_mass, s.wave32, s.n_cand and s.mixed_bins: the caller must not need them;
// by_bucket leaves s.bin_count's words for token_in_bucket_order.
constexpr int kRankBucket = 256;
__device__ inline OrderedCandidates sort_top_by_bin(int n, int k, uint32_t top_bin, Shared& s) {
  static_assert(kCap == kCapItems * kThreads && kCap <= 0xFFFF && kBins % kThreads == 0 && kBins >= kCap,
                "bucket layout");
  constexpr int kPer = kBins / kThreads;
  uint32_t* word = s.bin_count;    // per bucket: its count, then count << 16 | start
  uint64_t* grouped = s.bin_mass;  // the kept keys grouped by bucket (by_bucket: s.cand)
  const int tid = int(threadIdx.x), wave = tid / kWarpSize;
  const OrderedCandidates sorted_all{n, false, top_bin};
  k = k < n ? k : n;
  static_assert(kPer == 4, "a thread's bucket words are one 16-byte access");
  uint4* my_words = reinterpret_cast<uint4*>(word) + tid;  // buckets tid * kPer ..
  *my_words = make_uint4(0, 0, 0, 0);
  if (tid == 0) s.mixed_bins = 0;
  uint64_t key[kCapItems];
  uint32_t bucket[kCapItems], arrival[kCapItems];  // bucket kBins: no key in this slot
  bool outside = false, mixed = false;
#pragma unroll
  for (int q = 0; q < kCapItems; ++q) {
    const int j = q * kThreads + tid;
    key[q] = j < n ? s.cand[j] : 0;
    const uint32_t b = top_bin - uint32_t(key[q] >> 48);
    bucket[q] = j < n && b < uint32_t(kBins) ? b : uint32_t(kBins);
    outside = outside || (j < n && b >= uint32_t(kBins));
    mixed = mixed || (j < n && !one_logit_bin(key[q]));
  }
  if (__syncthreads_or(outside)) return sort_candidates(n, s), sorted_all;  // (every key is in registers)
  if (mixed) s.mixed_bins = 1;
#pragma unroll
  for (int q = 0; q < kCapItems; ++q)
    if (bucket[q] < uint32_t(kBins)) arrival[q] = atomicAdd(&word[bucket[q]], 1u);
  __syncthreads();
  const bool by_bucket = s.mixed_bins == 0;
  if (by_bucket) grouped = s.cand;
  // Bucket starts: thread t owns buckets t * kPer ..; wave scans, then the waves' totals and maxima.
  const uint4 counts = *my_words;
  const uint32_t c[kPer] = {counts.x, counts.y, counts.z, counts.w};
  uint32_t mine = 0, largest = 0;
#pragma unroll
  for (int q = 0; q < kPer; ++q) {
    mine += c[q];
    largest = c[q] > largest ? c[q] : largest;
  }
  const uint32_t through = wave_inclusive_sum(mine);
  largest = wave_max_word(largest);
  if (lane_id() == kWarpSize - 1) {
    s.wave32[0][wave] = through;
    s.wave32[1][wave] = largest;
  }
  __syncthreads();
  uint32_t start = through - mine + waves_before(s.wave32[0]);
  largest = waves_max_word(s.wave32[1]);
  if (largest > uint32_t(kRankBucket)) return sort_candidates(n, s), sorted_all;  // the same in every thread
  uint32_t placed[kPer];
#pragma unroll
  for (int q = 0; q < kPer; ++q) {
    placed[q] = c[q] << 16 | start;
    if (start < uint32_t(k) && uint32_t(k) <= start + c[q]) s.n_cand = start + c[q];  // the k-th key's bucket
    start += c[q];
  }
  *my_words = make_uint4(placed[0], placed[1], placed[2], placed[3]);
  __syncthreads();
  const int m = int(s.n_cand);
#pragma unroll
  for (int q = 0; q < kCapItems; ++q)
    if (bucket[q] < uint32_t(kBins)) {
      const uint32_t w = word[bucket[q]];
      if ((w & 0xFFFFu) < uint32_t(k)) grouped[(w & 0xFFFFu) + arrival[q]] = key[q];
    }
  __syncthreads();
  if (by_bucket) return OrderedCandidates{m, true, top_bin};
  // Ranks in grouped order: the lanes of a wave mostly share a bucket, so they loop alike and read the
  // same keys (broadcasts).
#pragma unroll
  for (int q = 0; q < kCapItems; ++q) {
    const int j = q * kThreads + tid;
    if (j >= m) continue;
    const uint64_t g = grouped[j];
    const uint32_t w = word[top_bin - uint32_t(g >> 48)];
    const int first = int(w & 0xFFFFu), end = first + int(w >> 16);
    s.cand[first + rank_in_bucket(grouped, first, end, g)] = g;
  }
  __syncthreads();
  return OrderedCandidates{m, false, top_bin};
}

// The row index of the key the sort order has at position pos, where sort_top_by_bin left the candidates
// in bucket order (o.by_bucket; every thread, pos the same in all): the key of rank pos - start among its
// bucket's (at most kRankBucket keys). One barrier; writes s.b64[1].
__device__ inline int64_t token_in_bucket_order(const OrderedCandidates& o, int pos, Shared& s) {
  const uint32_t w = s.bin_count[o.top_bin - uint32_t(s.cand[pos] >> 48)];
  const int first = int(w & 0xFFFFu), end = first + int(w >> 16);
  for (int j = first + int(threadIdx.x); j < end; j += kThreads) {
    const uint64_t g = s.cand[j];
    if (first + rank_in_bucket(s.cand, first, end, g) == pos) s.b64[1] = uint64_t(key_index(g));
  }
  __syncthreads();
  return int64_t(s.b64[1]);
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
