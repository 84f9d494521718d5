// sampling_stream_kernel — sampling.stream.vec: one block per row reads its whole row as a stream of
// tiles and draws, so a row's chain holds no second kernel, ticket, header, list or gather through L2.
// Contract: 16-byte loads (aligned rows; V and the row stride multiples of 16 bytes); the workspace only
// for the rows-finished count (advance_offset: row_finished).
// Work split: one block of kThreads per row; the row's tiles of split_tile(kItems) elements pass through
// two register buffers, so a tile loads while the one before it is scanned. Fast rows (split_fast_row)
// first take the threshold kernel's estimate over their own sample (sample_threshold, split_threshold.hpp)
// while the first two tiles load; each tile then lists its elements in value bins >= that threshold into
// the block's candidates (append_keys into s.draw.cand, counted in s.n_gathered) and notes a NaN. Other
// rows keep each thread's largest element (the lowest index among equal ones) and NaN. Then the row's plan
// (plan_row) and finish_row as a cluster row's first block runs it: the exact draw among the candidates,
// greedy, invalid, or the one-block algorithm over the row (sample_row) where the count misses
// [top_k, kSplitCap].
// Determinism: the candidate set depends on the logits only (its order on timing; the draw sorts it).
#pragma once
#include "dcukern/sampling/kernels/split_kernel.hpp"
#include "dcukern/sampling/kernels/split_threshold.hpp"

namespace dcukern::sampling_detail {

// Elements per thread of a streamed tile: 32 registers a buffer (bf16 as packed pairs) on CUDA, 16 on HIP,
// whose 512-thread blocks of wave64 leave a thread 128 VGPRs on gfx906 / gfx908, where 32 spilled up to 416
// bytes (ISA audit; not measured on AMD hardware).
#if DCUKERN_PLATFORM_HIP
inline constexpr int kStreamRegWords = 16;
#else
inline constexpr int kStreamRegWords = 32;
#endif
template <DType DT>
inline constexpr int kStreamItems = DT == DType::bf16 ? 2 * kStreamRegWords : kStreamRegWords;

// A thread's largest element of tile `base` and the lowest index holding it, folded into (word, index):
// tiles come in index order, so an equal element of a later tile never replaces an earlier one. NaN: the
// tile holds one (word and index then stay as they were).
template <bool kFull, class Loader, class Tile>
__device__ __forceinline__ void fold_thread_best(const Loader& L, int64_t base, const Tile& x, uint32_t& word,
                                                 uint32_t& index, bool& nan) {
  bool bad, any;
  const float m = thread_tile_max<kFull>(L, base, x, any, bad);
  nan = nan || bad;
  if (!any || bad) return;
  const uint32_t w = order_key(finite_logit(m));
  if (w <= word) return;
  word = w;
#pragma unroll
  for (int u = Tile::kCount - 1; u >= 0; --u)
    if ((kFull || L.index(base, u) < L.vocab) && order_key(finite_logit(x[u])) == w) index = uint32_t(L.index(base, u));
}

template <DType DT, int kItems>
__global__ void __launch_bounds__(kThreads, 1) sampling_stream_kernel(SamplingArgs a, SplitWorkspace w) {
  __shared__ SplitShared s;
  using Tile = TileRegs<DT, true, kItems>;
  constexpr int64_t kTileElems = split_tile(kItems);
  const int64_t row = blockIdx.x;
  const RowLoader<DT, true, kItems> L{row_start<DT>(a, row), a.vocab};
  const int tiles = int((a.vocab + kTileElems - 1) / kTileElems);
  // The first tile and the sample into L2 while the kernel before (which may write the logits) finishes.
  prefetch_tile<DT, kItems>(a, row, 0);
  prefetch_sample<DT, kThreads>(a, row);
  begin_dependent_kernel();
  Tile x0, x1;
  x0.load(L, 0);
  if (tiles > 1) x1.load(L, kTileElems);
  const RowParams p = row_params(a, row);
  if (threadIdx.x == 0) {
    s.n_gathered = 0;
    s.u = row_uniform(a, row);
  }
  const uint32_t cut =
      split_fast_row(p, a.vocab) ? sample_threshold<true, DT, kThreads>(a, row, p.top_k, s.scan) : kNoThreshold;
  __syncthreads();  // n_gathered is zero before any append

  bool nan = false;
  float top = -INFINITY;                             // rows with a threshold: the thread's largest element
  uint32_t best_word = 0, best_index = 0xFFFFFFFFu;  // rows without one
  auto scan = [&](const Tile& x, int t) {
    const int64_t base = int64_t(t) * kTileElems;
    const bool full = base + kTileElems <= a.vocab;
    if (cut == kNoThreshold) {  // block-uniform
      if (full) fold_thread_best<true>(L, base, x, best_word, best_index, nan);
      else fold_thread_best<false>(L, base, x, best_word, best_index, nan);
      return;
    }
    const float m = thread_max(x);
    nan = nan || m != m;  // a NaN is never listed: the row is invalid anyway
    top = fmaxf(top, m);  // (the last tile's 0s past the row's end too)
    if (wave_max_word(m >= bin_floor(cut) ? 1u : 0u) == 0) return;  // wave-uniform (append_keys' reservation)
    if (full) append_keys<true>(L, base, x, cut, &s.n_gathered, s.draw.cand, uint32_t(kCap));
    else append_keys<false>(L, base, x, cut, &s.n_gathered, s.draw.cand, uint32_t(kCap));
  };
  for (int t = 0; t < tiles; t += 2) {
    scan(x0, t);
    if (t + 2 < tiles) x0.load(L, int64_t(t + 2) * kTileElems);
    if (t + 1 == tiles) break;
    scan(x1, t + 1);
    if (t + 3 < tiles) x1.load(L, int64_t(t + 3) * kTileElems);
  }

  // A NaN, else the largest value the threads saw (rows with a threshold), in one reduction (its barrier:
  // every append is in). Of a fast row that is its largest candidate's value, all the draw needs of it (its
  // bin and logit), where it is surely an element's: the loads read 0 past the row's end, so where the last
  // tile is partial only a value above 0. Else the draw finds it among the candidates (max_key 0).
  const uint32_t word = block_max_word(nan ? kNaNWord : order_key(finite_logit(top)), s.scan.wave_word);
  const bool row_nan = word == kNaNWord;
  __syncthreads();  // every read of s.scan is done: the draw's shared memory overlaps it
  const bool top_known = !row_nan && (a.vocab % kTileElems == 0 || key_value(word) > 0.0f);
  uint64_t best = top_known ? uint64_t(word) << 32 | 0xFFFFFFFFu : 0;
  if (cut == kNoThreshold)
    best = all_max(best_word == 0 ? 0 : (uint64_t(best_word) << 32) | uint64_t(0xFFFFFFFFu - best_index), s.draw);
  const SplitPlan plan = plan_row(p, row_nan, cut, s.n_gathered, best);
  finish_row<true, DT, kItems, kSplitListBatch<1>, true>(a, w, row, p, plan, s);
  row_finished(a, w, s.flag);
}

}  // namespace dcukern::sampling_detail
