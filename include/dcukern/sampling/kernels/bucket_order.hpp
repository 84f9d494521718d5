// The split rows' ordering of a row's candidates by value bin (bucket), ahead of the draw: the keys down
// to the k-th largest's bin, placed by bucket start plus arrival (one shared-memory atomic a key), then
// within each bucket by rank (sort_top_by_bin) or, where every bin holds one logit (bf16 rows), left in
// bucket order: each position then has the logit, so the mass, that the sort would put there, and the
// drawn position's key is found afterwards (key_in_bucket_order). order_few_by_bucket: the same for at most
// one candidate a thread in two barriers.
// Determinism: keys are unique, so each result is exact and independent of the order the atomics ran in.
#pragma once
#include "dcukern/sampling/kernels/block_ops.hpp"

namespace dcukern::sampling_detail {

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

// A bucket's word in s.bin_count once its start is known: count << 16 | start (key_in_bucket_order reads it).
__device__ __forceinline__ uint32_t bucket_word(uint32_t count, uint32_t start) { return count << 16 | start; }
// Whether the bucket of `count` keys from position `start` holds the k-th largest key (k >= 1).
__device__ __forceinline__ bool holds_kth_key(uint32_t start, uint32_t count, int k) {
  return start < uint32_t(k) && uint32_t(k) <= start + count;
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
// fine (0..15): each bin split into 2^fine buckets by the key's next fine bits (bucket = top_bin's last
// bucket minus key >> (48 - fine)), so that rows whose bins hold several logits (fp32, fp16) rank within
// smaller buckets: the caller takes the most that keep the candidates' bins inside kBins buckets
// (order_candidates). With fine > 0 the keys are always ranked (no by_bucket result).
// A key outside the buckets (not expected), or a bucket of more than kRankBucket keys (near-flat rows,
// where ranking would cost more than sorting): the bitonic sort of all n instead (m = n). Uses
// s.bin_count, s.bin_mass, s.wave32, s.n_cand and s.mixed_bins: the caller must not need them;
// by_bucket leaves s.bin_count's words for token_in_bucket_order.
constexpr int kRankBucket = 256;
__device__ inline OrderedCandidates sort_top_by_bin(int n, int k, uint32_t top_bin, Shared& s, int fine = 0) {
  static_assert(kCap == kCapItems * kThreads && kCap <= 0xFFFF && kBins % kThreads == 0 && kBins >= kCap,
                "bucket layout");
  constexpr int kPer = kBins / kThreads;
  uint32_t* word = s.bin_count;    // per bucket: its count, then count << 16 | start
  uint64_t* grouped = s.bin_mass;  // the kept keys grouped by bucket (by_bucket: s.cand)
  const int tid = int(threadIdx.x), wave = tid / kWarpSize;
  const OrderedCandidates sorted_all{n, false, top_bin};
  k = k < n ? k : n;
  const int shift = 48 - fine;
  const uint32_t top_bucket_key = top_bin << fine | ((1u << fine) - 1u);  // the last key >> shift of top_bin
  auto bucket_of = [&](uint64_t g) { return top_bucket_key - uint32_t(g >> shift); };
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
    const uint32_t b = bucket_of(key[q]);
    bucket[q] = j < n && b < uint32_t(kBins) ? b : uint32_t(kBins);
    outside = outside || (j < n && b >= uint32_t(kBins));
    mixed = mixed || (j < n && (fine > 0 || !one_logit_bin(key[q])));
  }
  if (block_any(outside)) return sort_candidates(n, s), sorted_all;  // (every key is in registers)
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
    placed[q] = bucket_word(c[q], start);
    if (holds_kth_key(start, c[q], k)) s.n_cand = start + c[q];
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
    const uint32_t w = word[bucket_of(g)];
    const int first = int(w & 0xFFFFu), end = first + int(w >> 16);
    s.cand[first + rank_in_bucket(grouped, first, end, g)] = g;
  }
  __syncthreads();
  return OrderedCandidates{m, false, top_bin};
}

// Few candidates (1 <= n <= kThreads, one a thread) whose value bins each hold one logit, in bucket order:
// sort_top_by_bin's by_bucket result in two barriers. Bucket b = top_bin - bin (top_bin: that of the
// largest candidate, exact), the last bucket open. A key's place among its bucket's arrivals comes from
// one atomic on s.few_count (zeroed by the caller before a barrier that precedes this call); after the
// barrier every wave scans the kFewBuckets counts itself (eight a lane), so no barrier hands the bucket
// starts around; the keys of buckets that start below k go to start + arrival, and wave 0 writes the
// buckets' words (count << 16 | start) to s.bin_count for token_in_bucket_order. Returns false, with
// s.cand untouched, where a candidate's bin holds more than one logit, the k-th largest lies in the open
// bucket, or a bucket holds more than kRankBucket keys (the caller falls back to sort_top_by_bin). Every
// thread's reads of s.bin_count's earlier contents end at the first barrier.
__device__ inline bool order_few_by_bucket(int n, int k, uint32_t top_bin, Shared& s, OrderedCandidates& out) {
  constexpr int kOpen = kFewBuckets - 1;
  const int tid = int(threadIdx.x), lane = lane_id();
  k = k < n ? k : n;
  const bool has = tid < n;
  const uint64_t key = has ? s.cand[tid] : 0;
  const uint32_t distance = top_bin - uint32_t(key >> 48);
  const uint32_t bucket = distance < uint32_t(kOpen) ? distance : uint32_t(kOpen);
  const uint32_t arrival = has ? atomicAdd(&s.few_count[bucket], 1u) : 0u;
  if (block_any(has && !one_logit_bin(key))) return false;
  // Every wave: lane l's buckets 8l .. 8l + 7, their running counts, and the k-th key's bucket.
  const uint4* groups = reinterpret_cast<const uint4*>(s.few_count);
  const uint4 lo = groups[2 * lane], hi = groups[2 * lane + 1];
  const uint32_t c[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  uint32_t mine = 0;
#pragma unroll
  for (int q = 0; q < 8; ++q) mine += c[q];
  const uint32_t lane_start = wave_inclusive_sum(mine) - mine;
  uint32_t largest = 0;
#pragma unroll
  for (int q = 0; q < 8; ++q) largest = c[q] > largest ? c[q] : largest;
  if (wave_max_word(largest) > uint32_t(kRankBucket)) return false;  // the same in every wave
  uint32_t run = lane_start, through_kth = 0, kth_bucket = 0, words[8];  // words: wave 0 stores them
  bool holds_kth = false;
#pragma unroll
  for (int q = 0; q < 8; ++q) {
    words[q] = bucket_word(c[q], run);
    if (holds_kth_key(run, c[q], k)) {
      holds_kth = true;
      kth_bucket = uint32_t(8 * lane + q);
      through_kth = run + c[q];
    }
    run += c[q];
  }
  const uint64_t ballot = wave_ballot(holds_kth);  // one lane: the counts add up to n >= k
  const int src = __ffsll((long long)ballot) - 1;
  if (shfl_word(kth_bucket, src) == uint32_t(kOpen)) return false;  // the same in every wave
  const uint32_t m = shfl_word(through_kth, src);
  // This key's bucket start: its group's start plus the counts before it in the group.
  const uint32_t g = bucket / 8, r = bucket % 8;
  const uint4 glo = groups[2 * g], ghi = groups[2 * g + 1];
  const uint32_t gc[8] = {glo.x, glo.y, glo.z, glo.w, ghi.x, ghi.y, ghi.z, ghi.w};
  uint32_t start = shfl_word(lane_start, int(g));
#pragma unroll
  for (int q = 0; q < 7; ++q) start += uint32_t(q) < r ? gc[q] : 0u;
  if (has && start < uint32_t(k)) s.cand[start + arrival] = key;
  if (tid < kWarpSize) {
    uint4* bucket_words = reinterpret_cast<uint4*>(s.bin_count);
    bucket_words[2 * lane] = make_uint4(words[0], words[1], words[2], words[3]);
    bucket_words[2 * lane + 1] = make_uint4(words[4], words[5], words[6], words[7]);
  }
  __syncthreads();
  out = OrderedCandidates{int(m), true, top_bin};
  return true;
}

// s.few_count to zeros, by the block (order_few_by_bucket's callers, before a barrier that precedes it).
__device__ __forceinline__ void zero_few_buckets(Shared& s) {
  for (int b = int(threadIdx.x); b < kFewBuckets; b += kThreads) s.few_count[b] = 0;
}

// The row index of the key the sort order has at position pos, where the candidates are in bucket order
// (o.by_bucket): the key of rank pos - start among its bucket's (at most kRankBucket keys), found by the
// threads first, first + stride, .. of those that call it (pos the same in all) and written to s.b64[1].
__device__ inline void key_in_bucket_order(const OrderedCandidates& o, int pos, int first_thread, int stride,
                                           Shared& s) {
  const uint32_t w = s.bin_count[o.top_bin - uint32_t(s.cand[pos] >> 48)];
  const int first = int(w & 0xFFFFu), end = first + int(w >> 16);
  for (int j = first + first_thread; j < end; j += stride) {
    const uint64_t g = s.cand[j];
    if (first + rank_in_bucket(s.cand, first, end, g) == pos) s.b64[1] = uint64_t(key_index(g));
  }
}
// The same by the whole block (every thread): one barrier; returns the row index.
__device__ inline int64_t token_in_bucket_order(const OrderedCandidates& o, int pos, Shared& s) {
  key_in_bucket_order(o, pos, int(threadIdx.x), kThreads, s);
  __syncthreads();
  return int64_t(s.b64[1]);
}

}  // namespace dcukern::sampling_detail
