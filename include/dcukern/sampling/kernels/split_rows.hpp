// Building blocks of the split rows' kernel (sampling.split, sampling.split.vec): the per-row plan,
// the ticket that finds a row's last block, appending a tile's elements of high value bins as sort
// keys, the draw among a row's gathered candidates, and the count of finished rows that advances the
// device offset.
#pragma once
#include <type_traits>

#include "dcukern/platform/atomic.hpp"
#include "dcukern/platform/dependent_launch.hpp"
#include "dcukern/sampling/kernels/bucket_order.hpp"
#include "dcukern/sampling/kernels/sorted_draw.hpp"
#include "dcukern/sampling/kernels/wave_draw.hpp"
#include "dcukern/sampling/workspace.hpp"

namespace dcukern::sampling_detail {

static_assert(kSplitThreads == kThreads && kSplitCap == kCap && kWindow % kThreads == 0, "split layout");
constexpr int kMaxSplitTiles = split_tiles(kSamplingMaxVocab);  // of 16 items: the most

// Loads of data that other blocks of the same grid wrote (volatile: not served from a stale L1).
template <class T>
__device__ __forceinline__ T load_coherent(const T* p) {
  return *static_cast<const volatile T*>(p);
}

// Every block of a group calls this once, after its writes; true in the last block to arrive, which
// then sees the writes of all of them. One acquire-release ticket per block (platform/atomic.hpp): the
// barrier orders the block's writes before thread 0's ticket, and the barrier after it orders the last
// block's reads after that ticket. `write` runs in thread 0 after the barrier and before the ticket (a
// result that needs the whole block's work).
struct NoWrite {
  __device__ void operator()() const {}
};
template <class Write = NoWrite>
__device__ inline bool arrive_last(uint32_t* counter, int blocks, uint32_t& flag, Write write = Write()) {
  __syncthreads();
  if (threadIdx.x == 0) {
    write();
    flag = ticket_add(counter, 1u) == uint32_t(blocks - 1) ? 1u : 0u;
  }
  __syncthreads();
  return flag != 0;
}

// Lines of a row into L2 before grid_dependency_wait(), by the call's first kernel (prefetch_l2, a hint):
// they stream in while the kernel before it finishes, and since that kernel's stores land in L2 the
// loads after the wait still see them. prefetch_tile: the block's tile, its 128-byte lines round the threads.
// prefetch_sample: the threshold kernel's sample (the first kSampleRunBytes of every kSampleStrideBytes).
constexpr int kLineBytes = 128;
template <DType DT, int kItems>
__device__ __forceinline__ void prefetch_tile(const SamplingArgs& a, int64_t row, int64_t base) {
  constexpr int kElt = DT == DType::f32 ? 4 : 2, kLines = int(split_tile(kItems)) * kElt / kLineBytes;
  if constexpr (kLines <= kThreads) {  // one line a thread
    const int64_t at = base * kElt + int64_t(threadIdx.x) * kLineBytes;
    if (int(threadIdx.x) < kLines && at < a.vocab * kElt)
      prefetch_l2(static_cast<const char*>(row_start<DT>(a, row)) + at);
  } else {
    for (int l = int(threadIdx.x); l < kLines; l += kThreads) {
      const int64_t at = base * kElt + int64_t(l) * kLineBytes;
      if (at < a.vocab * kElt) prefetch_l2(static_cast<const char*>(row_start<DT>(a, row)) + at);
    }
  }
}
template <DType DT, int kBlock>
__device__ __forceinline__ void prefetch_sample(const SamplingArgs& a, int64_t row) {
  constexpr int kElt = DT == DType::f32 ? 4 : 2, kRunLines = kSampleRunBytes / kLineBytes;
  const int64_t bytes = a.vocab * kElt, lines = (bytes + kSampleStrideBytes - 1) / kSampleStrideBytes * kRunLines;
  const char* start = static_cast<const char*>(row_start<DT>(a, row));
  for (int64_t l = threadIdx.x; l < lines; l += kBlock) {
    const int64_t at = l / kRunLines * kSampleStrideBytes + l % kRunLines * kLineBytes;
    if (at < bytes) prefetch_l2(start + at);
  }
}

enum class SplitMode : uint32_t {
  invalid,   // NaN row, all -inf, or an out-of-range device parameter
  greedy,    // temperature 0 or top_k 1: the largest sort key
  fast,      // candidates = the elements in value bins >= their tile's cut: top_k to kSplitCap of them
  fallback,  // anything else: the row's last block runs the one-block algorithm (sample_row)
};
struct SplitPlan {
  uint64_t max_key;  // the row's largest sort key; fast rows: 0 where not known yet (the draw finds it
                     // among the candidates), or from the stream (its logit only)
  SplitMode mode;
};

__device__ __forceinline__ bool split_fast_row(const RowParams& p, int64_t vocab) {
  return p.ok && p.temperature > 0.0f && p.top_k >= 2 && p.top_k <= kSplitCap && int64_t(p.top_k) < vocab;
}
// Fast rows whose tiles take their own cuts (split_local_top_k): the threshold kernel leaves them alone.
__device__ __forceinline__ bool split_local_row(const RowParams& p, int64_t vocab, const SplitWorkspace& w) {
  return split_fast_row(p, vocab) && split_local_top_k(w.rows, p.top_k, w.tiles);
}

// Appends the sort keys of this thread's tile elements in value bins >= floor_bin to out[] (slots from
// *counter; at most cap are stored, *counter counts them all). One compare per element (per pair of
// bf16s) against the bin's lowest float, into a mask without branches; one slot reservation per wave
// (wave_reserve: every lane of the wave calls this); then a loop over the (few) elements it marks, which
// reads each one again (from L1 or L2: the tile was just loaded) instead of indexing the registers. The
// mask is exact (x >= bin_floor(b) exactly when value_bin(x) >= b) for floor_bin 0 or above 0x80, the
// bins a cut takes (sampling_threshold_kernel, tile_cut). kFull: the whole tile lies inside the row.
template <bool kFull, class Loader, class Tile>
__device__ __forceinline__ void append_keys(const Loader& L, int64_t base, const Tile& x, uint32_t floor_bin,
                                            uint32_t* counter, uint64_t* out, uint32_t cap) {
  static_assert(Tile::kCount <= 64 && (!Tile::kPairs || Tile::kCount <= 32 || Tile::kCount % 32 == 0),
                "one mask bit per element");
  using Mask = std::conditional_t<(Tile::kCount > 32), uint64_t, uint32_t>;
  const float lowest = bin_floor(floor_bin);  // a bf16 too: its low 16 bits are 0
  // Bit u: element u; for pairs, in each group of 16 words (32 elements) from element 32c, bit 32c + p:
  // element 32c + 2p, bit 32c + 16 + p: element 32c + 2p + 1.
  Mask marked = 0;
  if constexpr (Tile::kPairs) {
    const uint32_t lowest2 = (__float_as_uint(lowest) >> 16) * 0x10001u;
#pragma unroll
    for (int p = 0; p < Tile::kCount / 2; ++p)
      marked |= Mask(bf16x2_at_least(x.w[p], lowest2) << p % 16) << (p / 16 * 32);
  } else {
#pragma unroll
    for (int u = 0; u < Tile::kCount; ++u)
      if (x[u] >= lowest) marked |= Mask(1) << u;
  }
  auto element = [](int b) {
    const int r = b % 32;
    return !Tile::kPairs ? b : b - r + (r < 16 ? 2 * r : 2 * (r - 16) + 1);
  };
  auto lowest_bit = [](Mask m) { return sizeof(Mask) == 8 ? __ffsll((long long)m) - 1 : __ffs(int(m)) - 1; };
  if constexpr (!kFull)  // the row's last tile: drop the elements past its end
    for (Mask m = marked; m != 0; m &= m - 1) {
      const int b = lowest_bit(m);
      if (L.index(base, element(b)) >= L.vocab) marked &= ~(Mask(1) << b);
    }
  uint32_t slot = wave_reserve(counter, uint32_t(sizeof(Mask) == 8 ? __popcll((unsigned long long)marked)
                                                                     : __popc(uint32_t(marked))));
  for (; marked != 0; marked &= marked - 1, ++slot) {
    const int64_t i = L.index(base, element(lowest_bit(marked)));
    if (slot < cap) out[slot] = sort_key(finite_logit(L.scalar(i)), i);
  }
}

// The largest value bin (key >> 48) of s.cand[0, n), every thread (one barrier).
__device__ inline uint32_t largest_candidate_bin(int n, Shared& s) {
  uint32_t m = 0;
  for (int j = threadIdx.x; j < n; j += kThreads) m = max(m, uint32_t(s.cand[j] >> 48));
  return block_max_word(m, s.wave32[1]);
}

// The largest value bin of s.cand[0, n) and sort_top_by_bin's `fine` for them: the most extra key bits
// (up to 15) that keep every candidate's bucket below kBins, from the smallest bin; every thread (one
// barrier, the two reductions through it).
struct FineBins {
  uint32_t top_bin;
  int fine;
};
__device__ inline FineBins fine_candidate_bins(int n, Shared& s) {
  uint32_t top = 0, low = 0;  // low: the largest complement, so the smallest bin
  for (int j = threadIdx.x; j < n; j += kThreads) {
    const uint32_t b = uint32_t(s.cand[j] >> 48);
    top = max(top, b);
    low = max(low, 0xFFFFu - b);
  }
  top = wave_max_word(top);
  low = wave_max_word(low);
  if (lane_id() == 0) {
    s.wave32[0][threadIdx.x / kWarpSize] = top;
    s.wave32[1][threadIdx.x / kWarpSize] = low;
  }
  __syncthreads();
  top = waves_max_word(s.wave32[0]);
  const uint32_t span = top - (0xFFFFu - waves_max_word(s.wave32[1])) + 1u;  // bins from the smallest to top
  int fine = 0;
  while (fine < 15 && (span << (fine + 1)) <= uint32_t(kBins)) ++fine;
  return FineBins{top, fine};
}

// The row's candidates s.cand[0, n) (unsorted, unique; 1 <= n <= kCap), elements of the row that hold its
// top k (the draw's rules look at the first top_k of their sort order only) -> the largest m of them in
// descending order at s.cand[0, m) (or in bucket order: by_bucket). Where they are few, or top_k is at most
// kWaveDrawCap and they are at most 2 * kWaveDrawCap (small k: a few tiles' lists of a little over k each),
// place_top ranks them (two barriers, at most n / 2 compares a thread) and keeps the top kWaveDrawCap.
// Else those down to the k-th largest's value bin, from the bin of max_key (the largest candidate, or 0:
// not known yet, found here): where kOneLogitBins (bf16 rows: each value bin holds one logit) and they fit
// one a thread, order_few_by_bucket (the caller zeroes s.few_count ahead); else, or where it does not
// apply, sort_top_by_bin (place_top for at most 4 * kWaveDrawCap of top_k <= kWaveDrawCap where not
// kOneLogitBins). kFineBuckets (rows whose bins hold several logits: fp32, fp16), top_k above kWaveDrawCap:
// sort_top_by_bin with the finest buckets that hold the candidates' bins (fine_candidate_bins, whose barrier
// takes the place of largest_candidate_bin's; max_key unused), so that its ranks count within buckets of a
// few keys instead of a bin's tens (the same order: the keys' descending order down to the k-th, which is
// all the draw reads). On an H100, this with the threshold kernel's one-group sample took 0.92-0.95x the
// time at top_k 1000 and up to 1.01x at top_k 20, where the buckets near the top hold few keys anyway: small
// k keeps whole bins.
// order_few_by_bucket writes s.bin_count after a barrier and sort_top_by_bin zeroes it first,
// which the split kernel's scan part overlaps (SplitShared): there the merge leaves max_key 0, and
// largest_candidate_bin's barrier ends every thread's reads of the scan's part (s.scan.threshold) before
// it. A caller that passes a known max_key with such reads pending synchronises the block first.
template <bool kOneLogitBins, bool kFineBuckets = false>
__device__ inline OrderedCandidates order_candidates(uint64_t max_key, int top_k, int n, Shared& s) {
  auto placed = [](int m) { return OrderedCandidates{m, false, 0}; };
  auto top_bin = [&] { return max_key != 0 ? uint32_t(max_key >> 48) : largest_candidate_bin(n, s); };
  if (n <= kWaveDrawCap) return placed(place_top<kWaveDrawCap>(n, s));
  const bool small_k = top_k <= kWaveDrawCap;
  if (small_k && n <= 2 * kWaveDrawCap) return placed(place_top<2 * kWaveDrawCap>(n, s));
  if (kOneLogitBins && n <= kThreads) {
    OrderedCandidates o;
    const uint32_t top = top_bin();
    if (order_few_by_bucket(n, top_k, top, s, o)) return o;
    return sort_top_by_bin(n, top_k, top, s);
  }
  if constexpr (4 * kWaveDrawCap <= kThreads / 2)
    if (small_k && n <= 4 * kWaveDrawCap) return placed(place_top<4 * kWaveDrawCap>(n, s));
  if constexpr (kFineBuckets)
    if (!small_k) {
      const FineBins f = fine_candidate_bins(n, s);
      return sort_top_by_bin(n, top_k, f.top_bin, s, f.fine);
    }
  return sort_top_by_bin(n, top_k, top_bin(), s);
}

// Draw with uniform u among the row's ordered candidates (order_candidates; the first is of the row's
// largest logit, which scales the row): one wave decides the position where they are at most
// kWaveDrawCap (and, in bucket order, finds the key there itself), else the block; returns the row index
// of the key the sort order has there.
__device__ inline int64_t draw_ordered(const RowParams& p, const OrderedCandidates& o, float u, Shared& s) {
  const RowScale sc = row_scale(key_logit(s.cand[0]), p);
  if (o.n <= kWaveDrawCap) {
    if (int(threadIdx.x) < kWarpSize) {
      wave_draw(sc, p, row_tmin(p), o.n, u, s);
      if (o.by_bucket) {
        wave_sync();  // s.b64[0], the position, from lane 0
        key_in_bucket_order(o, int(s.b64[0]), lane_id(), kWarpSize, s);
      }
    }
    __syncthreads();
    return int64_t(s.b64[1]);
  }
  const int pos = draw_sorted_candidates(sc, p, row_tmin(p), o.n, u, s);
  if (!o.by_bucket) return key_index(s.cand[pos]);
  return token_in_bucket_order(o, pos, s);
}

// Called by the block that wrote a row's token, after the write: with advance_offset the last row to
// finish adds 1 to the device offset, after every row has read it, and zeroes the count for the next call.
__device__ inline void row_finished(const SamplingArgs& a, const SplitWorkspace& w, uint32_t& flag) {
  if (w.advance && arrive_last(&w.sync[-1].scanned, w.rows, flag) && threadIdx.x == 0) {
    w.sync[-1].scanned = 0;
    *const_cast<uint64_t*>(a.offset_ptr) += 1;
  }
}

}  // namespace dcukern::sampling_detail
