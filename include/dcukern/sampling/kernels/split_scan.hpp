// The scan of the split rows (sampling.split, sampling.split.vec): what each block of a row does with its
// tile of split_tile(kItems) elements (held in registers), and the merge its row's last block runs.
//   Rows with a cut: each block lists the sort keys of its elements in value bins >= the cut (its first
//   split_list_cap(kItems) of them), counts them, and notes a NaN. The cut is the row's threshold
//   (split_threshold.hpp: fast rows whose sample gave one; no block-wide step before the row's ticket),
//   or for fast rows of small top_k (split_local_row) the tile's own (tile_cut: four barriers).
//   Other rows: each block finds its tile's largest sort key (lowest index among equal ones) and NaN.
//   The last block of a row to arrive (ticket sync[r].scanned) merges the headers into the row's plan:
//   invalid (NaN, parameters), greedy (the largest key), fast (the tiles' counts add up to
//   [top_k, kSplitCap]: those elements hold the row's top k) or fallback.
//   Cluster rows (kCluster: the row's tiles are one thread-block cluster, split_clustered): no header,
//   list or ticket. Each tile appends its keys straight into the shared memory of the row's first block
//   (draw.cand, counted in n_gathered), sets row_nan there for a NaN or stores its largest key in its own
//   slot of tile_best (no 64-bit atomics, which shared memory emulates with a load and a compare-and-swap
//   loop), and arrives at the cluster barrier; the first block waits there and finishes the row
//   (merge_cluster_row).
// Determinism: integer counts only; which block merges does not change the plan; the gathered
// candidate set does not depend on timing (its order does, and it is sorted before the draw).
#pragma once
#include "dcukern/platform/cluster.hpp"
#include "dcukern/platform/dependent_launch.hpp"
#include "dcukern/sampling/kernels/split_rows.hpp"

namespace dcukern::sampling_detail {

struct TileInfo {
  uint32_t count, listed;  // elements at or above the threshold; those in the tile's list
};

struct ScanShared {
  uint32_t count[kWindow + kWarpSize];  // a window of value bins, then spare slots (count_sample)
  TileInfo tile[kMaxSplitTiles];   // the merge: the row's tiles
  uint32_t b32[4];
  uint32_t n_list;       // entries the tile's list holds (its appends count here)
  uint32_t first_index;  // lowest index of an element holding the tile's maximum (atomicMin)
  uint32_t nan;          // a thread of the block saw a NaN
  uint32_t threshold;    // the row's threshold bin (kNoThreshold: none)
  // per-wave partials of the block reductions and scans (kThreads / 32: enough for wave32 and wave64)
  uint32_t wave_word[kThreads / 32], wave_flag[kThreads / 32], wave_sum[kThreads / 32];
  uint64_t wave_best[kThreads / 32];
};

// The kernel's shared memory; the row's last block reuses the scan's part for the draw once the merge is done.
struct SplitShared {
  uint16_t gather_n[kMaxSplitTiles];  // list entries of each tile the gather reads (set after the merge)
  RowParams params;                   // the row's parameters, read once by thread 0
  float u;                            // the row's uniform (row_uniform), by thread 0 while the tile loads
  uint32_t flag;
  uint32_t n_gathered;                // the gather's candidates (zeroed by the merge); cluster rows: the
                                      // row's elements at or above the cuts (the first kCap in draw.cand)
  uint32_t row_nan;                   // cluster rows: a tile of the row holds a NaN
  uint64_t tile_best[kSplitClusterMax];  // cluster rows without a cut: each tile's largest sort key
  union {
    ScanShared scan;
    Shared draw;
  };
};

// The tiles append their candidates to draw.cand while the scan's part is in use (the threshold estimate,
// the tile cuts): that part lies within draw.bin_count, before draw.cand.
static_assert(sizeof(ScanShared) <= sizeof(uint32_t) * kBins, "the scan's shared memory lies before s.draw.cand");

// For targets t0 and t1 (>= 1): the first position o of count[0, n) where the running count reaches the
// target, and the count through o; {n, total} when it never does. A block of kBlock threads; n <= kBlock
// or a multiple of it; s: shared memory with b32[4] and wave_sum[kBlock / 32].
// Two barriers (wave scans, one partial per wave; only the waves that hold counts scan); the caller
// synchronises the block before it calls again or reuses s.b32 / s.wave_sum.
struct Crossings {
  uint32_t o[2], through[2];
};
template <int kBlock = kThreads, class Scratch>
__device__ inline Crossings scan_crossings(const uint32_t* count, int n, uint32_t t0, uint32_t t1, Scratch& s) {
  const int per = n > kBlock ? n / kBlock : 1, first = threadIdx.x * per;
  const int end = first + per < n ? first + per : n;
  const int waves = ((n < kBlock ? n : kBlock) + kWarpSize - 1) / kWarpSize;  // waves holding counts
  const int wave = int(threadIdx.x) / kWarpSize;
  uint32_t c = 0, inclusive = 0;
  if (wave < waves) {  // wave-uniform
    for (int q = first; q < end; ++q) c += count[q];
    inclusive = wave_inclusive_sum(c);
    if (lane_id() == kWarpSize - 1) s.wave_sum[wave] = inclusive;
  }
  if (threadIdx.x == 0) s.b32[0] = s.b32[2] = uint32_t(n);  // "never reached", unless a thread finds it
  __syncthreads();
  // The waves' totals across the lanes (lane i holds wave i's): their running sum gives each wave its start.
  static_assert(kBlock / kWarpSize <= kWarpSize, "one wave total per lane");
  const uint32_t through = wave_inclusive_sum(lane_id() < waves ? s.wave_sum[lane_id()] : 0u);
  const uint32_t total = shfl_word(through, kWarpSize - 1);
  const uint32_t before = shfl_word(through, wave > 0 ? wave - 1 : 0);
  uint32_t run = inclusive - c + (wave > 0 && wave <= waves ? before : 0u);
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

// s.scan.threshold of rows whose tiles take their own cuts (split_local_row).
constexpr uint32_t kTileCuts = 0xFFFFFFFEu;

// The row's plan from its tiles' combined results: a NaN, the count at or above the cut (rows with one)
// or the largest key (rows without).
__device__ inline SplitPlan plan_row(const RowParams& p, bool nan, uint32_t threshold, uint32_t total, uint64_t best) {
  SplitPlan plan{best, SplitMode::invalid};
  if (nan || !p.ok) return plan;
  if (threshold != kNoThreshold) {
    plan.mode = total >= uint32_t(p.top_k) && total <= uint32_t(kSplitCap) ? SplitMode::fast : SplitMode::fallback;
    return plan;
  }
  if (key_logit(best) == -INFINITY) return plan;
  plan.mode = p.temperature == 0.0f || p.top_k == 1 ? SplitMode::greedy : SplitMode::fallback;
  return plan;
}

// The last block of a row: the headers of all its tiles -> the row's plan (every thread). For rows with
// cuts s.scan.tile[] then holds the tiles' counts, and the plan's max_key is not known yet (the gather
// finds it).
// kCapList: split_list_cap of the kernel's tiles.
template <int kCapList>
__device__ inline SplitPlan merge_row(const SplitWorkspace& w, int64_t row, const RowParams& p, SplitShared& s) {
  const int tiles = w.tiles;
  const SplitHeader* h = w.header + row * tiles;
  const uint32_t threshold = s.scan.threshold;
  uint64_t best = 0;
  uint32_t total = 0, nan = 0;
  if (threadIdx.x == 0) s.n_gathered = 0;  // for the gather after the merge
  for (int t = threadIdx.x; t < tiles; t += kThreads) {
    const uint32_t flags = load_coherent(&h[t].flags);
    nan |= flags & kHeaderNaN;
    if (threshold != kNoThreshold) {
      const uint32_t c = load_coherent(&h[t].count);
      s.scan.tile[t] = TileInfo{c, c < uint32_t(kCapList) ? c : uint32_t(kCapList)};
      // Each tile counts at most kSplitCap + 1: the sum cannot overflow and still passes the cap.
      total += c < uint32_t(kSplitCap) ? c : uint32_t(kSplitCap) + 1;
    } else {
      const uint64_t mk = load_coherent(&h[t].max_key);
      best = mk > best ? mk : best;
    }
  }
  // The three reductions through one barrier: per-wave partials, then every thread combines them.
  best = wave_all_max(best);
  total = wave_all_sum(total);
  nan = wave_max_word(nan);
  const int wave = int(threadIdx.x) / kWarpSize;
  if (lane_id() == 0) {
    s.scan.wave_best[wave] = best;
    s.scan.wave_word[wave] = total;
    s.scan.wave_flag[wave] = nan;
  }
  __syncthreads();
  total = 0;
  for (int i = 0; i < kThreads / kWarpSize; ++i) {
    best = s.scan.wave_best[i] > best ? s.scan.wave_best[i] : best;
    total += s.scan.wave_word[i];
    nan |= s.scan.wave_flag[i];
  }
  return plan_row(p, nan != 0, threshold, total, best);
}

// A cluster row's first block, after the cluster barrier: the row's plan from its own shared memory
// (every thread; the fast path's candidates are already in s.draw.cand, rows without a cut have every
// tile's largest key in s.tile_best).
__device__ inline SplitPlan merge_cluster_row(const RowParams& p, const SplitShared& s, int tiles) {
  uint64_t best = 0;
  if (s.scan.threshold == kNoThreshold)
    for (int t = 0; t < tiles; ++t) best = s.tile_best[t] > best ? s.tile_best[t] : best;
  return plan_row(p, s.row_nan != 0, s.scan.threshold, s.n_gathered, best);
}

// This thread's largest element, or a NaN when it holds one (elements past the row's end: -inf, or 0 for
// packed pairs, which only makes a thread look further into its elements).
template <class Tile>
__device__ __forceinline__ float thread_max(const Tile& x) {
  if constexpr (Tile::kPairs) {  // two elements an instruction
    uint32_t m2 = x.w[0];
#pragma unroll
    for (int p = 1; p < Tile::kCount / 2; ++p) m2 = bf16x2_max_nan(m2, x.w[p]);
    return fmax_nan(__uint_as_float(m2 << 16), __uint_as_float(m2 & 0xFFFF0000u));
  } else {
    float m = x[0];
#pragma unroll
    for (int u = 1; u < Tile::kCount; ++u) m = fmax_nan(m, x[u]);
    return m;
  }
}

constexpr uint32_t kNaNWord = 0xFFFFFFFFu;  // above the order key of every non-NaN float

// This thread's largest element of the row's last tile `base`, or a NaN when it holds one (-inf when it holds
// none): the elements of its vectors inside the row. A vector loader's row ends with a whole vector (V is a
// multiple of its width: the row's contract), so one test a vector, not an element (on that tile's block,
// which the row's chain waits for, about kCount fewer 64-bit compares a thread); the scalar loader's
// vectors are its elements.
template <class Loader, class Tile>
__device__ __forceinline__ float thread_max_in_row(const Loader& L, int64_t base, const Tile& x) {
  constexpr int kW = Loader::kW, kVectors = Tile::kCount / kW;
  static_assert(Tile::kCount % kW == 0 && (!Tile::kPairs || kW % 2 == 0), "whole vectors");
  if constexpr (Tile::kPairs) {
    uint32_t m2 = 0xFF80FF80u;  // -inf in both halves
#pragma unroll
    for (int g = 0; g < kVectors; ++g)
      if (L.index(base, g * kW) < L.vocab)
#pragma unroll
        for (int q = 0; q < kW / 2; ++q) m2 = bf16x2_max_nan(m2, x.w[g * kW / 2 + q]);
    return fmax_nan(__uint_as_float(m2 << 16), __uint_as_float(m2 & 0xFFFF0000u));
  } else {
    float m = -INFINITY;
#pragma unroll
    for (int g = 0; g < kVectors; ++g)
      if (L.index(base, g * kW) < L.vocab)
#pragma unroll
        for (int q = 0; q < kW; ++q) m = fmax_nan(m, x[g * kW + q]);
    return m;
  }
}

// This thread's largest element of tile `base` inside the row; any: it holds one; bad: it holds a NaN (the
// value returned is then not to be used). A full tile takes thread_max, the last tile thread_max_in_row.
template <bool kFull, class Loader, class Tile>
__device__ __forceinline__ float thread_tile_max(const Loader& L, int64_t base, const Tile& x, bool& any, bool& bad) {
  const float m = kFull ? thread_max(x) : thread_max_in_row(L, base, x);
  any = kFull || L.index(base, 0) < L.vocab;
  bad = m != m;
  return m;
}

// The order key of the tile's largest element (every element -inf counts), or kNaNWord when the tile
// holds a NaN (thread_tile_max per thread). Threads holding the maximum then search their elements for its
// first index and fold it into s.first_index (atomicMin, read after a later barrier).
// thread_word: the order key of this thread's largest element (0: it holds none).
template <bool kFull, class Loader, class Tile>
__device__ __forceinline__ uint32_t tile_max_word(const Loader& L, int64_t base, const Tile& x, uint32_t& thread_word,
                                                  ScanShared& s) {
  bool bad, any;
  const float m = thread_tile_max<kFull>(L, base, x, any, bad);
  thread_word = !any ? 0u : bad ? kNaNWord : order_key(finite_logit(m));
  const uint32_t word = block_max_word(thread_word, s.wave_word);
  if (word != kNaNWord && thread_word == word) {
    uint32_t first = 0xFFFFFFFFu;
#pragma unroll
    for (int u = Tile::kCount - 1; u >= 0; --u)
      if ((kFull || L.index(base, u) < L.vocab) && order_key(finite_logit(x[u])) == word)
        first = uint32_t(L.index(base, u));
    atomicMin(&s.first_index, first);
  }
  return word;
}

// For rows whose tiles take their own cuts (split_local_row): a value bin at or below that of the tile's
// k-th largest element, so that its list holds its top k (and the row's lists the row's top k). From the
// threads' largest elements, k of which are k distinct elements of the tile: the bin where their count
// from the tile's largest reaches k, over the kWindow bins below it. Where it is not reached, or the
// tile holds a NaN (the row is invalid), kAllFinite: every element above -inf. Four barriers.
// tile_max: thread_max(x), this thread's largest element inside the row where the tile is full.
constexpr uint32_t kAllFinite = 0x81u;  // bin_floor(0x81) lies just above -FLT_MAX's bin: past -inf, exact
template <bool kFull, class Loader, class Tile>
__device__ inline uint32_t tile_cut(const Loader& L, int64_t base, const Tile& x, float tile_max, int32_t k,
                                    ScanShared& s) {
  // This thread's largest element inside the row, or a NaN when it holds one (past the row's end, packed
  // pairs read as 0).
  const float m = kFull ? tile_max : thread_max_in_row(L, base, x);
  for (int b = threadIdx.x; b < kWindow + kWarpSize; b += kThreads) s.count[b] = 0;
  const uint32_t word = block_max_word(m != m ? kNaNWord : order_key(finite_logit(m)), s.wave_word);
  if (word == kNaNWord) return kAllFinite;  // the same in every thread
  const uint32_t top = word >> 16;
  if (m > -INFINITY) atomicAdd(&s.count[min(top - value_bin(m), uint32_t(kWindow + lane_id()))], 1u);
  __syncthreads();
  const Crossings cr = scan_crossings(s.count, kWindow, uint32_t(k), uint32_t(k), s);
  if (cr.o[0] >= uint32_t(kWindow)) return kAllFinite;
  // Bins at or below 0x80 start at -inf (bin_floor): 0 there, every element, keeps append_keys' mask exact.
  return top > cr.o[0] + 0x80u ? top - cr.o[0] : 0u;
}

// A cluster row's tile, after its writes into the first block: arrives at the cluster barrier (releasing
// them); the first block (tile 0) waits for every tile and returns true; the others return false and
// exit, since no block reads their shared memory.
__device__ inline bool cluster_arrived(int tile) {
  cluster_arrive_release();
  if (tile != 0) return false;
  cluster_wait_acquire();
  return true;
}

// One block's tile of row `row`: for rows with a cut its list and count, else its largest key; true in
// the row's last block to arrive (which then sees every tile's writes). s.params: the row's parameters;
// s.scan.threshold: its threshold (kTileCuts: the tiles' own cuts).
// Where the threshold kernel ran (w.thresholds), the tile's loads are issued before
// grid_dependency_wait(): the logits are not written by the threshold kernel this kernel depends on, and
// that kernel lets this one start only after its own wait (so the kernel that wrote the logits has
// finished). Else this kernel is the call's first: it asks L2 for its tile (prefetch_tile) and waits
// before it loads (measured on the H200 in graph replay, top_k 20 and 50: 0.97-1.00x the time at B = 1
// and 32, capabilities/evidence/sampling-sm_90.json). Everything in the workspace is read or written after
// the wait.
// kOwnCuts: the instance serves batches where rows may take their tiles' own cuts (split_local_top_k);
// without it, none do and the threshold kernel always ran.
// kCluster: the row's tiles are one cluster (tile = rank in it); true in the row's first block, after
// every tile has arrived (cluster_arrived).
template <bool kVec, DType DT, int kItems, bool kOwnCuts, bool kCluster>
__device__ inline bool scan_row_tile(const SamplingArgs& a, const SplitWorkspace& w, int64_t row, SplitShared& s) {
  const int tiles = w.tiles;
  const int tile = int(blockIdx.x % tiles);
  const RowLoader<DT, kVec, kItems> L{row_start<DT>(a, row), a.vocab};
  const int64_t base = int64_t(tile) * split_tile(kItems);
  const bool full = base + split_tile(kItems) <= a.vocab;
  TileRegs<DT, kVec, kItems> x;
  if constexpr (kCluster) {
    // The first block's counters for the tiles' results, set before any load of this thread is in flight
    // (so the fence waits for nothing), and every thread's arrival without a memory order: the matching
    // wait, before a tile first touches the first block's shared memory, overlaps the tile's loads and scan.
    // (A releasing arrival here waited for the thread's tile loads: Nsight Compute put 13 % of the cluster
    // kernel's stall samples on that wait and 9 % on the barrier after it, bf16 B = 32 top_k 50 on an H100.)
    if (tile == 0 && threadIdx.x == 0) {
      s.n_gathered = 0, s.row_nan = 0;
      cluster_fence_release();
    }
    cluster_arrive_relaxed();
  }
  if (kOwnCuts && !w.thresholds) {  // the call's first kernel: the logits' writer may run
    prefetch_tile<DT, kItems>(a, row, base);
    grid_dependency_wait();
  }
  x.load(L, base);
  begin_dependent_kernel();
  if (threadIdx.x == 0) {
    s.params = row_params(a, row);
    s.u = row_uniform(a, row);  // off the row's chain: the finishing block's draw needs it last
    const bool own_cuts = kOwnCuts && split_local_row(s.params, a.vocab, w);
    const bool threshold_ran = !kOwnCuts || w.thresholds;
    s.scan.threshold = own_cuts ? kTileCuts : threshold_ran ? load_coherent(&w.threshold[row]) : kNoThreshold;
    s.scan.n_list = 0;
    s.scan.nan = 0;
    s.scan.first_index = 0xFFFFFFFFu;
  }
  __syncthreads();
  // Cluster rows: where the tiles put their results (the first block's shared memory).
  SplitShared* first = nullptr;
  if constexpr (kCluster) first = cluster_shared(&s, 0);
  const int64_t at = row * tiles + tile;
  const uint32_t threshold = s.scan.threshold;
  if (threshold != kNoThreshold) {
    const float m = thread_max(x);
    if (m != m) s.scan.nan = 1;  // a NaN is never marked: the row is invalid anyway
    uint32_t cut = threshold;
    if constexpr (kOwnCuts)
      if (threshold == kTileCuts)
        cut = full ? tile_cut<true>(L, base, x, m, s.params.top_k, s.scan)
                   : tile_cut<false>(L, base, x, m, s.params.top_k, s.scan);
    if constexpr (kCluster) cluster_wait_acquire();  // every tile has started; the first block's counters are set
    if (wave_max_word(m >= bin_floor(cut) ? 1u : 0u) != 0) {  // wave-uniform (append_keys' reservation)
      constexpr int kCapList = kCluster ? kCap : split_list_cap(kItems);
      uint32_t* counter = kCluster ? &first->n_gathered : &s.scan.n_list;
      uint64_t* list = kCluster ? first->draw.cand : w.list + at * kCapList;
      if (full) append_keys<true>(L, base, x, cut, counter, list, uint32_t(kCapList));
      else append_keys<false>(L, base, x, cut, counter, list, uint32_t(kCapList));
    }
    if constexpr (kCluster) {
      __syncthreads();  // every thread's NaN test is in
      if (threadIdx.x == 0 && s.scan.nan) atomicOr(&first->row_nan, 1u);
      return cluster_arrived(tile);
    }
    return arrive_last(&w.sync[row].scanned, tiles, s.flag, [&] {
      w.header[at] = SplitHeader{0, s.scan.n_list, uint16_t(cut), s.scan.nan ? kHeaderNaN : uint16_t(0)};
    });
  }
  uint32_t thread_word;
  const uint32_t word = full ? tile_max_word<true>(L, base, x, thread_word, s.scan)
                             : tile_max_word<false>(L, base, x, thread_word, s.scan);
  const bool nan = word == kNaNWord;
  if constexpr (kCluster) {
    cluster_wait_acquire();  // every tile has started; the first block's counters are set
    __syncthreads();  // every atomicMin of s.scan.first_index is done
    if (threadIdx.x == 0) {
      if (nan) atomicOr(&first->row_nan, 1u);
      first->tile_best[tile] = nan ? 0 : (uint64_t(word) << 32) | uint64_t(0xFFFFFFFFu - s.scan.first_index);
    }
    return cluster_arrived(tile);
  }
  // Thread 0 completes the header after the ticket's barrier (every atomicMin is done).
  return arrive_last(&w.sync[row].scanned, tiles, s.flag, [&] {
    const uint64_t key = nan ? 0 : (uint64_t(word) << 32) | uint64_t(0xFFFFFFFFu - s.scan.first_index);
    w.header[at] = SplitHeader{key, 0, 0, nan ? kHeaderNaN : uint16_t(0)};
  });
}

}  // namespace dcukern::sampling_detail
