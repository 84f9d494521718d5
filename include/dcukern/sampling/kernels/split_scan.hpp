// The scan of the split rows (sampling.split, sampling.split.vec): what each block of a row does with its
// tile of split_tile(kItems) elements (held in registers), and the merge its row's last block runs.
//   Each block: the tile's largest sort key and NaN flag -> header (written at the row's ticket). For rows the fast path serves
//   (split_fast_row: 2 <= top_k <= kSplitCap, top_k < V, T > 0) also:
//   - window: the counts of the value bins from the tile's top bin down to the bin of its k-th largest
//     element (at most kWindow bins, else the window is "truncated");
//   - list: the sort keys of the tile's elements in its top bins, down to the bin of its k-th largest
//     when those are at most kListCap elements, else as many whole bins as kListCap holds.
//   The last block of a row to arrive (ticket sync[r].scanned) merges the windows into the row's plan:
//   the bin cut_bin holding its k-th largest element and the count of elements in bins >= cut_bin.
// Why the windows suffice: the row's k-th largest is >= every tile's k-th largest, so no tile's bins
// below its stored range can matter; a truncated window is exact only down to top - kWindow + 1, and
// the plan checks that cut_bin lies there. Fast when the merge is exact and <= kSplitCap elements
// qualify; otherwise fallback.
// Determinism: integer counts only; which block merges does not change the plan; the gathered
// candidate set does not depend on timing (its order does, and it is sorted before the draw).
#pragma once
#include "dcukern/sampling/kernels/split_rows.hpp"

namespace dcukern::sampling_detail {

struct TileInfo {
  uint32_t top, stored, list_floor, list_n;
};

struct ScanShared {
  uint32_t count[kMergeBins];  // the tile's window (first kWindow bins), then the row's merged bins
  TileInfo tile[kMaxSplitTiles];  // the merge: the row's tiles
  uint32_t b32[4];
  uint32_t n_list;       // entries the tile's list holds (its appends count here)
  uint32_t first_index;  // lowest index of an element holding the tile's maximum (atomicMin)
  // per-wave partials of the block reductions and scans (kThreads / 32: enough for wave32 and wave64)
  uint32_t wave_word[kThreads / 32], wave_flag[kThreads / 32], wave_sum[kThreads / 32];
  uint64_t wave_best[kThreads / 32];
};

// The kernel's shared memory; the row's last block reuses the scan's part for the draw once the merge is done.
struct SplitShared {
  uint16_t gather_n[kMaxSplitTiles];  // list entries of each tile the gather reads (set after the merge)
  RowParams params;                   // the row's parameters, read once by thread 0
  uint32_t flag;
  uint32_t n_gathered;                // the gather's candidates (zeroed by the merge)
  union {
    ScanShared scan;
    Shared draw;
  };
};

// For targets t0 and t1 (>= 1): the first position o of count[0, n) where the running count reaches the
// target, and the count through o; {n, total} when it never does. n <= kThreads or a multiple of it.
// Two barriers (wave scans, one partial per wave; only the waves that hold counts scan, so a tile's
// window of kWindow bins takes half the block's waves); the caller synchronises the block before it calls
// again or reuses s.b32 / s.wave_sum.
struct Crossings {
  uint32_t o[2], through[2];
};
__device__ inline Crossings scan_crossings(const uint32_t* count, int n, uint32_t t0, uint32_t t1, ScanShared& s) {
  const int per = n > kThreads ? n / kThreads : 1, first = threadIdx.x * per;
  const int end = first + per < n ? first + per : n;
  const int waves = ((n < kThreads ? n : kThreads) + kWarpSize - 1) / kWarpSize;  // waves holding counts
  const int wave = int(threadIdx.x) / kWarpSize;
  uint32_t c = 0, inclusive = 0;
  if (wave < waves) {  // wave-uniform
    for (int q = first; q < end; ++q) c += count[q];
    inclusive = wave_inclusive_sum(c);
    if (lane_id() == kWarpSize - 1) s.wave_sum[wave] = inclusive;
  }
  if (threadIdx.x == 0) s.b32[0] = s.b32[2] = uint32_t(n);  // "never reached", unless a thread finds it
  __syncthreads();
  uint32_t run = inclusive - c, total = 0;
  for (int i = 0; i < waves; ++i) {
    const uint32_t t = s.wave_sum[i];
    run += i < wave ? t : 0u;
    total += t;
  }
  for (int q = first; q < end; ++q) {
    const uint32_t here = count[q];
    if (run < t0 && t0 <= run + here) {
      s.b32[0] = uint32_t(q);
      s.b32[1] = run + here;
    }
    if (run < t1 && t1 <= run + here) {
      s.b32[2] = uint32_t(q);
      s.b32[3] = run + here;
    }
    run += here;
  }
  __syncthreads();
  Crossings out;
  for (int i = 0; i < 2; ++i) {
    out.o[i] = s.b32[2 * i];
    out.through[i] = out.o[i] < uint32_t(n) ? s.b32[2 * i + 1] : total;
  }
  return out;
}

// The last block of a row: headers and windows of all its tiles -> the row's plan (every thread);
// s.scan.tile[] holds the tiles' extents.
__device__ inline SplitPlan merge_row(const SamplingArgs& a, const SplitWorkspace& w, int64_t row, const RowParams& p,
                                      SplitShared& s) {
  const int tiles = w.tiles;
  const SplitHeader* h = w.header + row * tiles;
  uint64_t best = 0;
  uint32_t lim1 = 0, nan = 0;  // lim1: 1 + the lowest bin every truncated window covers (0: none)
  uint32_t* count = s.scan.count;  // the tile's window is stored: free for the row's merged bins
  for (int b = threadIdx.x; b < kMergeBins; b += kThreads) count[b] = 0;
  if (threadIdx.x == 0) s.n_gathered = 0;  // for the gather after the merge
  for (int t = threadIdx.x; t < tiles; t += kThreads) {
    const uint64_t mk = load_coherent(&h[t].max_key);
    const uint32_t top = load_coherent(&h[t].top), flags = load_coherent(&h[t].flags);
    s.scan.tile[t] = TileInfo{top, flags & 0xffffu, load_coherent(&h[t].list_floor), load_coherent(&h[t].list_n)};
    best = mk > best ? mk : best;
    nan |= flags & kHeaderNaN;
    if ((flags & kHeaderTruncated) && top + 1 > lim1) lim1 = top + 1;
  }
  // The three maxima through one barrier: per-wave partials, then every thread combines them.
  best = wave_all_max(best);
  lim1 = wave_max_word(lim1);
  nan = wave_max_word(nan);
  const int wave = int(threadIdx.x) / kWarpSize;
  if (lane_id() == 0) {
    s.scan.wave_best[wave] = best;
    s.scan.wave_word[wave] = lim1;
    s.scan.wave_flag[wave] = nan;
  }
  __syncthreads();
  for (int i = 0; i < kThreads / kWarpSize; ++i) {
    best = s.scan.wave_best[i] > best ? s.scan.wave_best[i] : best;
    lim1 = s.scan.wave_word[i] > lim1 ? s.scan.wave_word[i] : lim1;
    nan |= s.scan.wave_flag[i];
  }
  const uint64_t max_key = best;
  const int64_t G = int64_t(max_key >> 48);  // the largest top bin of the tiles: the bin of the row's maximum
  const int64_t lowest_exact = int64_t(lim1) - kWindow;  // bins >= this are exact
  SplitPlan plan{max_key, SplitMode::invalid, 0};
  if (nan || !p.ok || key_logit(max_key) == -INFINITY) return plan;
  if (p.temperature == 0.0f || p.top_k == 1) {
    plan.mode = SplitMode::greedy;
    return plan;
  }
  plan.mode = SplitMode::fallback;
  if (!split_fast_row(p, a.vocab)) return plan;
  // The windows (in L2) as pairs of 16-bit counts, kBatch loads in flight per thread before their counts
  // are added: one round for rows of up to kBatch * kThreads * 2 / kWindow = 32 tiles.
  static_assert(kWindow % 2 == 0, "a pair of counts never spans two tiles");
  constexpr int kBatch = 8;
  const uint32_t* win = reinterpret_cast<const uint32_t*>(w.window + row * tiles * kWindow);
  const int pairs = tiles * kWindow / 2;
  for (int p0 = threadIdx.x; p0 < pairs; p0 += kThreads * kBatch) {
    uint32_t c[kBatch];
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      const int e = 2 * (p0 + q * kThreads);
      c[q] = e < 2 * pairs && uint32_t(e % kWindow) < s.scan.tile[e / kWindow].stored ? load_coherent(&win[e / 2]) : 0u;
    }
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      const int e = 2 * (p0 + q * kThreads), t = e / kWindow;
      if (c[q] == 0) continue;
      const TileInfo& ti = s.scan.tile[t];
#pragma unroll
      for (int h = 0; h < 2; ++h) {  // count e + h: the low half first (little-endian pairs)
        const uint32_t n = h == 0 ? c[q] & 0xFFFFu : (uint32_t(e % kWindow) + 1 < ti.stored ? c[q] >> 16 : 0u);
        const int64_t bin = int64_t(ti.top) - e % kWindow - h;
        if (n != 0 && bin >= 0 && G - bin < kMergeBins) atomicAdd(&count[G - bin], n);
      }
    }
  }
  __syncthreads();
  const Crossings cr = scan_crossings(count, kMergeBins, uint32_t(p.top_k), uint32_t(p.top_k), s.scan);
  const int64_t cut = G - int64_t(cr.o[0]);
  if (cr.o[0] < uint32_t(kMergeBins) && cr.through[0] <= uint32_t(kSplitCap) && cut >= lowest_exact) {
    plan.mode = SplitMode::fast;
    plan.cut_bin = uint32_t(cut);
  }
  return plan;
}

constexpr uint32_t kNaNWord = 0xFFFFFFFFu;  // above the order key of every non-NaN float

// The order key of the tile's largest element (every element -inf counts), or kNaNWord when the tile
// holds a NaN. Per element of a full tile one NaN-propagating max (per pair for packed bf16): the result
// is the maximum, or a NaN when the thread holds one; per element of the last tile a max and a test. Threads holding the maximum then search their
// elements for its first index and fold it into s.first_index (atomicMin, read after a later barrier).
// thread_word: the order key of this thread's largest element (0: it holds none).
template <bool kFull, class Loader, class Tile>
__device__ __forceinline__ uint32_t tile_max_word(const Loader& L, int64_t base, const Tile& x, uint32_t& thread_word,
                                                  ScanShared& s) {
  float m = -INFINITY;
  bool any = kFull, bad = false;
  if constexpr (kFull && Tile::kPairs) {  // two elements an instruction
    uint32_t m2 = x.w[0];
#pragma unroll
    for (int p = 1; p < Tile::kCount / 2; ++p) m2 = bf16x2_max_nan(m2, x.w[p]);
    m = fmax_nan(__uint_as_float(m2 << 16), __uint_as_float(m2 & 0xFFFF0000u));
    bad = m != m;
  } else if constexpr (kFull) {
    m = x[0];
#pragma unroll
    for (int u = 1; u < Tile::kCount; ++u) m = fmax_nan(m, x[u]);
    bad = m != m;
  } else {
#pragma unroll
    for (int u = 0; u < Tile::kCount; ++u) {
      if (!kFull && L.index(base, u) >= L.vocab) continue;
      m = fmaxf(m, x[u]);  // ignores NaN; the test below sees it
      bad = bad || x[u] != x[u];
      any = true;
    }
  }
  thread_word = !any ? 0u : bad ? kNaNWord : order_key(finite_logit(m));
  const uint32_t word = block_max_word(thread_word, s.wave_word);
  if (word != kNaNWord && thread_word == word) {
    uint32_t first = 0xFFFFFFFFu;
#pragma unroll
    for (int u = Tile::kCount - 1; u >= 0; --u)
      if ((kFull || L.index(base, u) < L.vocab) && order_key(finite_logit(x[u])) == word) first = uint32_t(L.index(base, u));
    atomicMin(&s.first_index, first);
  }
  return word;
}

// Counts of the value bins top, top - 1, .. top - kWindow + 1 (s.count[d] for bin top - d). Per element
// a bin and an increment in shared memory, without branches: elements outside the window increment a
// spare slot past it (slot kWindow + lane, or for a full tile min(d, kWindow + lane), which is a spare
// slot too when d lies just past the window; nothing reads them). When the window lies among positive floats
// (below FLT_MAX's bin, so no +inf is folded into it) or among negative ones, the bin is an add to the
// top 16 bits of the float; otherwise value_bin() (signed zeros, +inf).
static_assert(kWindow + 64 <= kMergeBins, "spare slots after the window");
enum class WindowSign { positive, negative, mixed };
template <WindowSign kSign, bool kFull, class Loader, class Tile>
__device__ __forceinline__ void count_window(const Loader& L, int64_t base, const Tile& x, uint32_t top, ScanShared& s) {
  const uint32_t spare = uint32_t(lane_id());
#pragma unroll
  for (int u = 0; u < Tile::kCount; ++u) {
    const uint32_t h = x.high16(u);
    uint32_t d;
    if constexpr (kSign == WindowSign::positive) d = top - 0x8000u - h;   // bin = h + 0x8000
    else if constexpr (kSign == WindowSign::negative) d = h - (0xFFFFu - top);  // bin = 0xFFFF - h
    else d = x[u] >= bin_floor(top >= uint32_t(kWindow - 1) ? top - uint32_t(kWindow - 1) : 0u) ? top - value_bin(x[u]) : ~0u;
    uint32_t slot;
    if constexpr (kFull) {
      slot = min(d, uint32_t(kWindow) + spare);
    } else {
      const bool in = d < uint32_t(kWindow) && L.index(base, u) < L.vocab;
      slot = in ? d : uint32_t(kWindow) + spare;
    }
    atomicAdd(&s.count[slot], 1u);  // unconditional: no branch per element
  }
}
template <bool kFull, class Loader, class Tile>
__device__ __forceinline__ void count_window(const Loader& L, int64_t base, const Tile& x, uint32_t top, ScanShared& s) {
  constexpr uint32_t kPlusZeroBin = 0x8000u, kMaxFiniteBin = 0xFF7Fu;
  if (top >= kPlusZeroBin + uint32_t(kWindow) && top < kMaxFiniteBin)
    count_window<WindowSign::positive, kFull>(L, base, x, top, s);
  else if (top < kPlusZeroBin)
    count_window<WindowSign::negative, kFull>(L, base, x, top, s);
  else
    count_window<WindowSign::mixed, kFull>(L, base, x, top, s);
}

// Window and list of a tile of a fast-path row (s.count[0, kWindow) and s.n_list zeroed before a
// barrier); returns its header without max_key and list_n, which thread 0 fills in at the ticket.
template <bool kFull, class Loader, class Tile>
__device__ inline SplitHeader scan_tile(const Loader& L, int64_t base, const Tile& x,
                                        uint32_t thread_word, uint32_t top, uint32_t k, uint64_t* list,
                                        uint16_t* window, ScanShared& s) {
  count_window<kFull>(L, base, x, top, s);
  __syncthreads();
  const int64_t left = L.vocab - base;
  const Crossings cr = scan_crossings(s.count, kWindow, uint32_t(left < int64_t(k) ? left : int64_t(k)),
                                      uint32_t(kListCap) + 1, s);
  const bool truncated = cr.o[0] >= uint32_t(kWindow);
  const uint32_t stored = truncated ? uint32_t(kWindow) : cr.o[0] + 1;
  if (threadIdx.x < stored) window[threadIdx.x] = uint16_t(s.count[threadIdx.x]);
  // The list: down to the k-th largest's bin when that fits, else the whole bins before the one where
  // the count passes kListCap (none when the top bin alone does). Appended straight to the workspace.
  const int64_t lowest_listed = !truncated && cr.through[0] <= uint32_t(kListCap) ? int64_t(cr.o[0]) : int64_t(cr.o[1]) - 1;
  const int64_t floor = int64_t(top) - lowest_listed;
  const uint32_t list_floor = uint32_t(floor > 0 ? floor : 0);
  if ((thread_word >> 16) >= list_floor)  // this thread holds an element of the listed bins
    append_keys<kFull>(L, base, x, list_floor, &s.n_list, list, uint32_t(kListCap));
  return SplitHeader{0, top, stored | (truncated ? kHeaderTruncated : 0u), list_floor, 0};
}

// One block's tile of row `row`: its header, and for fast-path rows its window and list; true in the
// row's last block to arrive (which then sees every tile's writes). s.params: the row's parameters.
template <bool kVec, DType DT, int kItems>
__device__ inline bool scan_row_tile(const SamplingArgs& a, const SplitWorkspace& w, int64_t row, SplitShared& s) {
  const int tiles = w.tiles;
  const int tile = int(blockIdx.x % tiles);
  const RowLoader<DT, kVec, kItems> L{row_start<DT>(a, row), a.vocab};
  const int64_t base = int64_t(tile) * split_tile(kItems);
  const bool full = base + split_tile(kItems) <= a.vocab;
  TileRegs<DT, kVec, kItems> x;
  x.load(L, base);
  // Set up before tile_max_word's barrier: the row's parameters, the window, the list and index slots.
  if (threadIdx.x < kWindow) s.scan.count[threadIdx.x] = 0;  // thread t < kWindow owns bin top - t
  if (threadIdx.x == 0) {
    s.params = row_params(a, row);
    s.scan.n_list = 0;
    s.scan.first_index = 0xFFFFFFFFu;
  }
  uint32_t thread_word;
  const uint32_t word = full ? tile_max_word<true>(L, base, x, thread_word, s.scan)
                             : tile_max_word<false>(L, base, x, thread_word, s.scan);
  const bool nan = word == kNaNWord;
  const uint32_t top = nan ? 0u : word >> 16;
  const RowParams p = s.params;
  SplitHeader header{0, top, nan ? kHeaderNaN : 0u, top + 1, 0};
  const int64_t at = row * tiles + tile;
  if (!nan && split_fast_row(p, a.vocab)) {
    uint64_t* list = w.list + at * kListCap;
    uint16_t* window = w.window + at * kWindow;
    header = full ? scan_tile<true>(L, base, x, thread_word, top, uint32_t(p.top_k), list, window, s.scan)
                  : scan_tile<false>(L, base, x, thread_word, top, uint32_t(p.top_k), list, window, s.scan);
  }
  // Thread 0 completes the header after the ticket's barrier (every append and atomicMin is done).
  return arrive_last(&w.sync[row].scanned, tiles, s.flag, [&] {
    header.max_key = nan ? 0 : (uint64_t(word) << 32) | uint64_t(0xFFFFFFFFu - s.scan.first_index);
    header.list_n = s.scan.n_list < uint32_t(kListCap) ? s.scan.n_list : uint32_t(kListCap);
    w.header[at] = header;
  });
}

}  // namespace dcukern::sampling_detail
