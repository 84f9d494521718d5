// sampling.split / sampling.split.vec: two kernels per call.
//   sampling_threshold_kernel (split_threshold.hpp): one block per row; for rows the fast path may serve
//   (but those of small top_k, whose tiles take their own cuts), a value-bin threshold from a sample of
//   the row.
//   sampling_split_kernel: one block per tile of split_tile(kItems) elements of a row (1-D grid of
//   B * tiles blocks, row-major). Every block scans its tile (split_scan.hpp); the row's last block to
//   arrive merges the tiles' headers into the row's plan and finishes the row:
//     invalid / greedy rows: the plan's answer;
//     fast rows: the candidates (each tile's elements at or above its cut, the threshold or its own: at
//       least top_k, at most kSplitCap) come from the tiles' lists when none overflowed, so the logits are
//       read once; else the block reads the row's tiles that hold candidates again; then the exact draw
//       among them;
//     fallback rows: the one-block algorithm (sample_row) over the row.
//   Launched in clusters of a row's tiles (split_clustered), the tiles hand their results to the row's
//   first block through its shared memory instead (split_scan.hpp), and that block finishes the row.
// With advance_offset the last row to finish adds 1 to the device offset.
// Determinism: the plan uses integer counts; the candidate set does not depend on timing and is sorted
// before the draw.
#pragma once
#include "dcukern/platform/trace.hpp"
#include "dcukern/sampling/kernels/split_scan.hpp"

namespace dcukern::sampling_detail {

// True when every tile of the row listed all its elements at or above the threshold; s.gather_n[t]: the
// number of list entries of tile t to read.
__device__ inline bool plan_gather(int tiles, SplitShared& s) {
  bool short_list = false;
  for (int t = threadIdx.x; t < tiles; t += kThreads) {
    const TileInfo ti = s.scan.tile[t];
    short_list = short_list || ti.count > ti.listed;
    s.gather_n[t] = uint16_t(ti.listed);
  }
  return !block_any(short_list);
}

// After a gather's appends: the number of candidates it stored (at most kCap), once every thread's are in.
__device__ inline int gathered(SplitShared& s) {
  __syncthreads();
  return int(s.n_gathered < uint32_t(kCap) ? s.n_gathered : uint32_t(kCap));
}

// The row's candidates (its tiles' list entries) -> s.draw.cand; returns their number.
// kBatch loads in flight per thread (the lists sit in L2): rows of up to kBatch * kThreads / kCapList
// tiles take one round. kCapList: split_list_cap of the kernel's tiles.
template <int kBatch, int kCapList>
__device__ inline int gather_lists(const SplitWorkspace& w, int64_t row, SplitShared& s) {
  static_assert(kBatch <= 32, "one mask bit per load");
  const int tiles = w.tiles, slots = tiles * kCapList;
  const uint64_t* list = w.list + row * slots;
  for (int e0 = 0; e0 < slots; e0 += kThreads * kBatch) {  // block-uniform: every lane reaches wave_reserve
    uint64_t c[kBatch];
    uint32_t mask = 0;
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      const int e = e0 + q * kThreads + int(threadIdx.x);
      c[q] = e < slots && e % kCapList < s.gather_n[e / kCapList] ? load_coherent(&list[e]) : 0;
    }
#pragma unroll
    for (int q = 0; q < kBatch; ++q)
      if (c[q] != 0) mask |= 1u << q;
    uint32_t slot = wave_reserve(&s.n_gathered, uint32_t(__popc(mask)));
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      if (!(mask >> q & 1u)) continue;
      if (slot < uint32_t(kCap)) s.draw.cand[slot] = c[q];
      ++slot;
    }
  }
  return gathered(s);
}

// The row's elements in value bins >= their tile's cut, from the logits of the tiles that hold any ->
// s.draw.cand; returns their number.
template <DType DT, bool kVec, int kItems>
__device__ inline int gather_row(const SamplingArgs& a, const SplitWorkspace& w, int64_t row, SplitShared& s) {
  const RowLoader<DT, kVec, kItems> L{row_start<DT>(a, row), a.vocab};
  for (int tile = 0; tile < w.tiles; ++tile) {
    if (s.gather_n[tile] == 0) continue;  // no element qualifies
    const int64_t base = int64_t(tile) * split_tile(kItems);
    TileRegs<DT, kVec, kItems> x;
    x.load(L, base);
    const uint32_t cut = load_coherent(&w.header[row * w.tiles + tile].cut);
    uint32_t* n = &s.n_gathered;
    if (base + split_tile(kItems) <= a.vocab) append_keys<true>(L, base, x, cut, n, s.draw.cand, uint32_t(kCap));
    else append_keys<false>(L, base, x, cut, n, s.draw.cand, uint32_t(kCap));
  }
  return gathered(s);
}

// Whether the row's last block may order few candidates by bucket (order_candidates' kOneLogitBins): bf16
// rows gathered from the tiles' lists, whose kernel zeroes s.few_count before the merge. Not cluster rows:
// there, on the H200, the bucket ordering compiled into the kernel made its rows of top_k 1000, which never
// take it, 1.03x slower, for 0.97-1.00x at top_k 50 (B = 1 and 32).
template <DType DT, bool kCluster>
inline constexpr bool kFewByBucket = DT == DType::bf16 && !kCluster;

// The row's last block, after the merge: the row's token. kListBatch: gather_lists' loads in flight.
// kCluster: the row's first block of a cluster row, whose candidates are already in s.draw.cand.
template <bool kVec, DType DT, int kItems, int kListBatch, bool kCluster>
__device__ inline void finish_row(const SamplingArgs& a, const SplitWorkspace& w, int64_t row, const RowParams& p,
                                  const SplitPlan& plan, SplitShared& s) {
  switch (plan.mode) {
    case SplitMode::invalid: return write_token(a, row, kSamplingInvalidToken, false);
    case SplitMode::greedy: return write_token(a, row, key_index(plan.max_key), true);
    case SplitMode::fast: {
      const float u = s.u;
      int n;
      if constexpr (kCluster) n = int(s.n_gathered);  // <= kSplitCap (the plan)
      else
        n = plan_gather(w.tiles, s) ? gather_lists<kListBatch, split_list_cap(kItems)>(w, row, s)
                                    : gather_row<DT, kVec, kItems>(a, w, row, s);
      // hold the row's top k
      const OrderedCandidates o =
          order_candidates<kFewByBucket<DT, kCluster>, DT != DType::bf16>(plan.max_key, p.top_k, n, s.draw);
      if (key_logit(s.draw.cand[0]) == -INFINITY) return write_token(a, row, kSamplingInvalidToken, false);
      return write_token(a, row, draw_ordered(p, o, u, s.draw), true);
    }
    case SplitMode::fallback: break;
  }
  sample_row(RowLoader<DT, kVec>{row_start<DT>(a, row), a.vocab}, a, row, s.draw);
}

// kMinBlocks blocks per SM on sm_90: 3 (at most 42 registers per thread) for fp32 and fp16 batches of
// kSplitLargeBatch rows or more, where the tile scan is latency-bound and occupancy pays (fp32 B = 512: 14 %
// faster than 2, measured before the threshold kernel; 4 spill and run slower); bf16 takes 2 with tiles
// of 64 elements a thread (split_items: from kSplitPairsBatch rows, or as clusters); 2 for smaller batches,
// whose time is the latency of a row's chain of blocks and its last block (B = 32, k = 1000: 48 vs 54 us;
// B = 1: 17.5 vs 18.1 us). Other targets ignore it. The scalar-load row takes 2 at every batch.
// Loads in flight in the gather from the lists. 16, a whole row's lists (up to 32 tiles of 256 keys, 16 of
// 512) in one round, where the row's chain is the time and the registers allow it: CUDA's 2-blocks-per-SM
// instances.
// 8 elsewhere: under the 3-blocks-per-SM bound, and on HIP, where no bound
// applies and 16 took the kernel from 63 to 85 VGPRs on gfx906 (4 -> 2 waves per SIMD).
#if DCUKERN_PLATFORM_HIP
template <int kMinBlocks>
inline constexpr int kSplitListBatch = 8;
#else
template <int kMinBlocks>
inline constexpr int kSplitListBatch = kMinBlocks <= 2 ? 16 : 8;
#endif
// Whether the instance serves rows that take their tiles' own cuts (split_local_top_k: batches below
// kSplitLargeBatch, the 2-blocks-per-SM instances on CUDA). The 3-blocks-per-SM instances leave that code
// out: under their 42 registers it cost every row (k = 1000, B = 128 / 512: 1.08-1.14x the time).
template <int kMinBlocks>
inline constexpr bool kSplitOwnCuts = kMinBlocks <= 2;
// kItems: elements per thread of a tile, w.items (split_layout). kCluster: launched in clusters of w.tiles
// blocks, one a row (split_clustered; sm_90 and later).
template <bool kVec, DType DT, int kMinBlocks, int kItems, bool kCluster = false>
__global__ void __launch_bounds__(kThreads, DCUKERN_CUDA_MIN_BLOCKS(kMinBlocks))
    sampling_split_kernel(SamplingArgs a, SplitWorkspace w) {
  __shared__ SplitShared s;
  // Trace points (platform/trace.hpp; empty unless DCUKERN_TRACE): 0 entry, 1 the tile scanned (the row's
  // finishing block: every tile arrived), 2 the row's plan, 3 its token written, 4 the block's end.
  DCUKERN_TRACE_BLOCK(TraceKind::sampling_split);
  const int64_t row = blockIdx.x / w.tiles;
  // false: not the row's last block (a cluster row: not its first)
  const bool finishes = scan_row_tile<kVec, DT, kItems, kSplitOwnCuts<kMinBlocks>, kCluster>(a, w, row, s);
  DCUKERN_TRACE_STAMP(1);
  if (!finishes) return;
  if constexpr (!kCluster)
    if (threadIdx.x == 0) w.sync[row].scanned = 0;  // every tile has arrived: zero for the next call
  const RowParams p = s.params;
  if constexpr (kFewByBucket<DT, kCluster>) zero_few_buckets(s.draw);  // before the merge's barrier
  const SplitPlan plan = kCluster ? merge_cluster_row(p, s, w.tiles) : merge_row<split_list_cap(kItems)>(w, row, p, s);
  DCUKERN_TRACE_STAMP(2);
  finish_row<kVec, DT, kItems, kSplitListBatch<kMinBlocks>, kCluster>(a, w, row, p, plan, s);
  DCUKERN_TRACE_STAMP(3);
  row_finished(a, w, s.flag);
  DCUKERN_TRACE_BLOCK_END(4);
}

}  // namespace dcukern::sampling_detail
