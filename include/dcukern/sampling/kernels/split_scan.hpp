// sampling.split / sampling.split.vec, pass 1 (scan): one block per tile of kSplitTile elements of one
// row (1-D grid of B * tiles blocks, row-major), the tile held in registers.
//   Each block: the tile's largest sort key and NaN flag -> header; for rows the fast path serves
//   (split_fast_row: 2 <= top_k <= kSplitCap, top_k < V, T > 0) the counts of the value bins from the
//   tile's top bin down to the bin of its k-th largest element (at most kWindow bins, else the window
//   is "truncated") -> window.
//   The last block of a row to arrive (ticket sync[r].scanned) merges the windows into plan[r]: the bin
//   cut_bin holding the row's k-th largest element and the count of elements in bins >= cut_bin.
// Why the windows suffice: the row's k-th largest is >= every tile's k-th largest, so no tile's bins
// below its stored range can matter; a truncated window is exact only down to top - kWindow + 1, and
// the plan checks that cut_bin lies there. Fast when the merge is exact and <= kSplitCap elements
// qualify; otherwise fallback (pass 2 runs the one-block algorithm on that row).
// Determinism: integer counts only; which block merges does not change the plan.
#pragma once
#include "dcukern/platform/dependent_launch.hpp"
#include "dcukern/sampling/kernels/sample_block.hpp"
#include "dcukern/sampling/workspace.hpp"

namespace dcukern::sampling_detail {

static_assert(kSplitThreads == kThreads && kSplitCap == kCap && kWindow <= kThreads && kMergeBins % kThreads == 0,
              "split layout");
constexpr int kMaxSplitTiles = split_tiles(kSamplingMaxVocab);

// Loads of data that other blocks of the same grid wrote (volatile: not served from a stale L1).
template <class T>
__device__ __forceinline__ T load_coherent(const T* p) {
  return *static_cast<const volatile T*>(p);
}

// Every block of a row calls this once, after its writes; true in the last block to arrive, which then
// sees the writes of all of them.
__device__ inline bool arrive_last(uint32_t* counter, int blocks, uint32_t& flag) {
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) flag = atomicAdd(counter, 1u) == uint32_t(blocks - 1) ? 1u : 0u;
  __syncthreads();
  const bool last = flag != 0;
  if (last) __threadfence();
  return last;
}

__device__ __forceinline__ bool split_fast_row(const RowParams& p, int64_t vocab) {
  return p.ok && p.temperature > 0.0f && p.top_k >= 2 && p.top_k <= kSplitCap && int64_t(p.top_k) < vocab;
}

struct ScanShared {
  uint32_t count[kMergeBins];  // the tile's window (first kWindow bins), then the row's merged bins
  uint32_t top[kMaxSplitTiles], stored[kMaxSplitTiles];
  union {
    typename BlockReduce<uint64_t, kThreads>::storage_type r64;
    typename BlockScan<uint32_t, kThreads>::storage_type s32;
  } tmp;
  uint64_t b64;
  uint32_t b32[2];
  uint32_t flag;
};

__device__ inline uint64_t scan_all_max(uint64_t v, ScanShared& s) {
  v = BlockReduce<uint64_t, kThreads>::max(v, s.tmp.r64);
  if (threadIdx.x == 0) s.b64 = v;
  __syncthreads();
  const uint64_t out = s.b64;
  __syncthreads();
  return out;
}

// First position o of count[0, n) where the running count reaches target (>= 1): {o, count through o};
// {n, 0} when it never does. n <= kThreads or a multiple of it.
__device__ inline void scan_crossing(const uint32_t* count, int n, uint32_t target, ScanShared& s, uint32_t* o_out,
                                     uint32_t* through) {
  const int per = n > kThreads ? n / kThreads : 1, first = threadIdx.x * per;
  const int end = first + per < n ? first + per : n;
  uint32_t c = 0;
  for (int q = first; q < end; ++q) c += count[q];
  uint32_t total;
  uint32_t run = BlockScan<uint32_t, kThreads>::exclusive_sum(c, total, s.tmp.s32);
  if (threadIdx.x == 0) {
    s.b32[0] = uint32_t(n);
    s.b32[1] = 0;
  }
  __syncthreads();
  for (int q = first; q < end; ++q) {
    const uint32_t here = count[q];
    if (run < target && target <= run + here) {
      s.b32[0] = uint32_t(q);
      s.b32[1] = run + here;
    }
    run += here;
  }
  __syncthreads();
  *o_out = s.b32[0];
  *through = s.b32[1];
  __syncthreads();
}

// The last block of a row: headers and windows of all its tiles -> plan[row].
__device__ inline void merge_row(const SamplingArgs& a, const SplitWorkspace& w, int64_t row, const RowParams& p,
                                 ScanShared& s) {
  const int tiles = w.tiles;
  const SplitHeader* h = w.header + row * tiles;
  uint64_t best = 0, g = 0, lim1 = 0;  // lim1: 1 + the lowest bin every truncated window covers (0: none)
  bool nan = false;
  for (int t = threadIdx.x; t < tiles; t += kThreads) {
    const uint64_t mk = load_coherent(&h[t].max_key), pk = load_coherent(&h[t].packed);
    const uint32_t top = uint32_t(pk);
    s.top[t] = top;
    s.stored[t] = uint32_t(pk >> 32) & 0xffffu;
    best = mk > best ? mk : best;
    g = top > g ? top : g;
    nan = nan || ((pk >> 48) & 1u);
    if ((pk >> 49) & 1u) {
      const uint64_t l = uint64_t(top) + 1;
      lim1 = l > lim1 ? l : lim1;
    }
  }
  nan = __syncthreads_or(nan);
  const uint64_t max_key = scan_all_max(best, s);
  const int64_t G = int64_t(scan_all_max(g, s));
  const int64_t lowest_exact = int64_t(scan_all_max(lim1, s)) - kWindow;  // bins >= this are exact
  SplitPlan plan{max_key, uint32_t(SplitMode::invalid), 0, 0, 0};
  if (nan || !p.ok || key_logit(max_key) == -INFINITY) {
    plan.mode = uint32_t(SplitMode::invalid);
  } else if (p.temperature == 0.0f || p.top_k == 1) {
    plan.mode = uint32_t(SplitMode::greedy);
  } else if (!split_fast_row(p, a.vocab)) {
    plan.mode = uint32_t(SplitMode::fallback);
  } else {
    for (int b = threadIdx.x; b < kMergeBins; b += kThreads) s.count[b] = 0;
    __syncthreads();
    // kBatch loads in flight per thread before their counts are added (the windows sit in L2).
    constexpr int kBatch = 8;
    const uint16_t* win = w.window + row * tiles * kWindow;
    const int entries = tiles * kWindow;
    for (int e0 = threadIdx.x; e0 < entries; e0 += kThreads * kBatch) {
      uint32_t c[kBatch];
#pragma unroll
      for (int q = 0; q < kBatch; ++q) {
        const int e = e0 + q * kThreads;
        c[q] = e < entries && uint32_t(e % kWindow) < s.stored[e / kWindow] ? load_coherent(&win[e]) : 0u;
      }
#pragma unroll
      for (int q = 0; q < kBatch; ++q) {
        const int e = e0 + q * kThreads, t = e / kWindow;
        const int64_t bin = int64_t(s.top[t < tiles ? t : 0]) - e % kWindow;
        if (c[q] != 0 && bin >= 0 && G - bin < kMergeBins) atomicAdd(&s.count[G - bin], c[q]);
      }
    }
    __syncthreads();
    uint32_t o, n;
    scan_crossing(s.count, kMergeBins, uint32_t(p.top_k), s, &o, &n);
    const int64_t cut = G - int64_t(o);
    const bool fast = o < uint32_t(kMergeBins) && n <= uint32_t(kSplitCap) && cut >= lowest_exact;
    plan.mode = uint32_t(fast ? SplitMode::fast : SplitMode::fallback);
    plan.cut_bin = fast ? uint32_t(cut) : 0;
    plan.n_cand = fast ? n : 0;
  }
  if (threadIdx.x == 0) w.plan[row] = plan;
}

// This thread's largest element of the tile as a sort key (0 when it holds none), and whether it saw a
// NaN. Per element: one min, one compare and two selects (kFull: the whole tile lies inside the row).
template <bool kFull, class Loader>
__device__ __forceinline__ uint64_t thread_best(const Loader& L, int64_t base, const float (&x)[kSplitItems],
                                                bool& nan) {
  float best = -INFINITY;
  int at = -1;  // u of the first element holding `best` (index order = u order)
#pragma unroll
  for (int u = 0; u < kSplitItems; ++u) {
    const bool in = kFull || L.index(base, u) < L.vocab;
    nan = nan || (in && x[u] != x[u]);
    const float y = in ? finite_logit(x[u]) : -INFINITY;
    if (y > best) {
      best = y;
      at = u;
    }
  }
  if (at < 0 && L.index(base, 0) < L.vocab) at = 0;  // every element -inf: the first one
  return at < 0 ? 0 : sort_key(best, L.index(base, at));
}

// Counts of the value bins top, top - 1, .. (thread d < kWindow owns s.count[d]). One compare per
// element against the window's lowest float; only elements inside the window compute their bin.
template <bool kFull, class Loader>
__device__ __forceinline__ void count_window(const Loader& L, int64_t base, const float (&x)[kSplitItems],
                                             uint32_t top, ScanShared& s) {
  const float lowest = bin_floor(top >= uint32_t(kWindow - 1) ? top - uint32_t(kWindow - 1) : 0u);
#pragma unroll
  for (int u = 0; u < kSplitItems; ++u) {
    if (!(x[u] >= lowest) || (!kFull && L.index(base, u) >= L.vocab)) continue;
    const uint32_t d = top - value_bin(x[u]);
    if (d < uint32_t(kWindow)) atomicAdd(&s.count[d], 1u);
  }
}

template <bool kVec, DType DT>
__device__ inline void split_scan(const SamplingArgs& a, const SplitWorkspace& w) {
  __shared__ ScanShared s;
  allow_dependent_launch();  // pass 2 may start loading its tiles; it waits for this grid before its plan
  const int tiles = w.tiles;
  const int64_t row = blockIdx.x / tiles;
  const int tile = int(blockIdx.x % tiles);
  const RowLoader<DT, kVec, kSplitItems> L{row_start<DT>(a, row), a.vocab};
  const int64_t base = int64_t(tile) * kSplitTile;
  const bool full = base + kSplitTile <= a.vocab;
  float x[kSplitItems];
  L.load(base, x);
  bool nan = false;
  const uint64_t best = full ? thread_best<true>(L, base, x, nan) : thread_best<false>(L, base, x, nan);
  nan = __syncthreads_or(nan);
  const uint64_t max_key = scan_all_max(best, s);
  const uint32_t top = value_bin(key_logit(max_key));
  const RowParams p = row_params(a, row);
  uint32_t stored = 0;
  bool truncated = false;
  if (!nan && split_fast_row(p, a.vocab)) {
    if (threadIdx.x < kWindow) s.count[threadIdx.x] = 0;  // thread t < kWindow owns bin top - t
    __syncthreads();
    if (full) count_window<true>(L, base, x, top, s);
    else count_window<false>(L, base, x, top, s);
    __syncthreads();
    const int64_t left = a.vocab - base;
    const uint32_t target = uint32_t(left < int64_t(p.top_k) ? left : int64_t(p.top_k));
    uint32_t o, through;
    scan_crossing(s.count, kWindow, target, s, &o, &through);
    truncated = o >= uint32_t(kWindow);
    stored = truncated ? uint32_t(kWindow) : o + 1;
    if (threadIdx.x < stored) w.window[(row * tiles + tile) * kWindow + threadIdx.x] = uint16_t(s.count[threadIdx.x]);
    __syncthreads();  // s.count is reused by the merge
  }
  if (threadIdx.x == 0)
    w.header[row * tiles + tile] =
        SplitHeader{max_key, uint64_t(top) | uint64_t(stored) << 32 | uint64_t(nan) << 48 | uint64_t(truncated) << 49};
  if (!arrive_last(&w.sync[row].scanned, tiles, s.flag)) return;
  merge_row(a, w, row, p, s);
}

}  // namespace dcukern::sampling_detail
