// sampling.split / sampling.split.vec, pass 2 (draw): same grid as pass 1 (one block per tile of a row).
//   Fast rows: each block appends the sort keys of its tile's elements in value bins >= cut_bin to
//   cand[r] (slots from one counter per row: their order varies from run to run, the set does not).
//   The last block of a row to arrive (ticket sync[r].drawn) finishes the row: fast rows sort their
//   candidates (a prefix of the row's sort order that holds its top k) and draw among them exactly
//   (at most kWaveDrawCap candidates: wave_draw by the first wave; else draw_sorted, as the one-block
//   kernel does); greedy and invalid rows write the plan's answer;
//   fallback rows run the whole one-block algorithm (sample_row) over the row. With advance_offset the
//   last row to finish (ticket done) adds 1 to the device offset, after every row has read it.
//   Launched as a programmatic dependent of pass 1 (sm_90; elsewhere an ordinary launch): each block of
//   a row the fast path may serve loads its tile before it waits for pass 1, so that the loads overlap
//   pass 1's tail; a tile whose top bin lies below cut_bin then holds no candidate and is skipped.
// Determinism: the sorted candidate set and every sum over it are independent of timing.
#pragma once
#include "dcukern/platform/dependent_launch.hpp"
#include "dcukern/sampling/kernels/split_scan.hpp"
#include "dcukern/sampling/kernels/wave_draw.hpp"

namespace dcukern::sampling_detail {

static_assert(kMergeBins <= kBins, "a fast row's candidates fit the buckets of sort_candidates_by_bin");

// Appends the keys of this thread's tile elements in value bins >= cut_bin to s.cand. One compare per
// element against the bin's lowest float; only elements above it compute their bin and key.
template <bool kFull, class Loader>
__device__ __forceinline__ void collect_tile(const Loader& L, int64_t base, const float (&x)[kSplitItems],
                                             uint32_t cut_bin, Shared& s) {
  const float lowest = bin_floor(cut_bin);
#pragma unroll
  for (int u = 0; u < kSplitItems; ++u) {
    if (!(x[u] >= lowest)) continue;
    const int64_t i = L.index(base, u);
    if ((!kFull && i >= L.vocab) || value_bin(x[u]) < cut_bin) continue;
    const uint32_t slot = atomicAdd(&s.n_cand, 1u);
    if (slot < uint32_t(kCap)) s.cand[slot] = sort_key(finite_logit(x[u]), i);
  }
}

// Appends this tile's candidates (x: the tile, loaded before the plan was known) to cand[row].
template <DType DT, bool kVec>
__device__ inline void gather_tile(const SamplingArgs& a, const SplitWorkspace& w, int64_t row, int tile,
                                   const float (&x)[kSplitItems], uint32_t cut_bin, Shared& s) {
  const RowLoader<DT, kVec, kSplitItems> L{row_start<DT>(a, row), a.vocab};
  const int64_t base = int64_t(tile) * kSplitTile;
  if (threadIdx.x == 0) s.n_cand = 0;
  __syncthreads();
  if (base + kSplitTile <= a.vocab) collect_tile<true>(L, base, x, cut_bin, s);
  else collect_tile<false>(L, base, x, cut_bin, s);
  __syncthreads();
  const uint32_t n = s.n_cand < uint32_t(kCap) ? s.n_cand : uint32_t(kCap);
  if (n == 0) return;
  if (threadIdx.x == 0) s.b64[0] = atomicAdd(&w.sync[row].n_cand, n);
  __syncthreads();
  const uint64_t at = s.b64[0];
  for (uint32_t i = threadIdx.x; i < n && at + i < uint64_t(kSplitCap); i += kThreads)
    w.cand[row * kSplitCap + at + i] = s.cand[i];
}

// The last block of a fast row: sort the gathered candidates and draw.
__device__ inline int64_t draw_fast_row(const SamplingArgs& a, const SplitWorkspace& w, int64_t row,
                                        const SplitPlan& plan, const RowParams& p, Shared& s) {
  const uint32_t gathered = load_coherent(&w.sync[row].n_cand);
  const int n = int(gathered < uint32_t(kSplitCap) ? gathered : uint32_t(kSplitCap));
  static_assert(kSplitCap == kCapItems * kThreads, "one load per candidate slot and thread");
  uint64_t c[kCapItems];
#pragma unroll
  for (int q = 0; q < kCapItems; ++q) {  // all loads in flight before the stores
    const int i = q * kThreads + threadIdx.x;
    c[q] = i < n ? load_coherent(&w.cand[row * kSplitCap + i]) : 0;
  }
#pragma unroll
  for (int q = 0; q < kCapItems; ++q)
    if (q * kThreads + int(threadIdx.x) < n) s.cand[q * kThreads + threadIdx.x] = c[q];
  __syncthreads();
  const RowScale sc = row_scale(key_logit(plan.max_key), p);
  if (n <= kWaveDrawCap) {  // few candidates (small k): one wave decides, without block barriers
    if (int(threadIdx.x) < kWarpSize) wave_draw(sc, p, row_tmin(p), n, row_uniform(a, row), s);
    __syncthreads();
    return int64_t(s.b64[1]);
  }
  sort_candidates_by_bin(n, uint32_t(plan.max_key >> 48), s);  // every candidate is within kMergeBins of the top
  return draw_sorted(sc, p, true, p.top_p < 1.0f, row_tmin(p), n, uint64_t(n), 0, 0, 0, row_uniform(a, row), s);
}

template <bool kVec, DType DT>
__device__ inline void finish_row(const SamplingArgs& a, const SplitWorkspace& w, int64_t row, const SplitPlan& plan,
                                  Shared& s) {
  const RowParams p = row_params(a, row);
  switch (SplitMode(plan.mode)) {
    case SplitMode::invalid: return write_token(a, row, kSamplingInvalidToken, false);
    case SplitMode::greedy: return write_token(a, row, key_index(plan.max_key), true);
    case SplitMode::fast: return write_token(a, row, draw_fast_row(a, w, row, plan, p, s), true);
    case SplitMode::fallback: break;
  }
  sample_row(RowLoader<DT, kVec>{row_start<DT>(a, row), a.vocab}, a, row, s);
}

template <bool kVec, DType DT>
__device__ inline void split_draw(const SamplingArgs& a, const SplitWorkspace& w) {
  __shared__ Shared s;
  const int tiles = w.tiles;
  const int64_t row = blockIdx.x / tiles;
  const int tile = int(blockIdx.x % tiles);
  // The tile's loads go out before the wait for pass 1 (the logits are an input, not its output), so
  // that they overlap its tail; only rows its fast path may serve read the tile here.
  const bool may_gather = split_fast_row(row_params(a, row), a.vocab);
  float x[kSplitItems];
  if (may_gather) RowLoader<DT, kVec, kSplitItems>{row_start<DT>(a, row), a.vocab}.load(int64_t(tile) * kSplitTile, x);
  grid_dependency_wait();
  const SplitPlan plan = w.plan[row];
  if (may_gather && plan.mode == uint32_t(SplitMode::fast) &&
      uint32_t(w.header[row * tiles + tile].packed) >= plan.cut_bin)
    gather_tile<DT, kVec>(a, w, row, tile, x, plan.cut_bin, s);
  if (!arrive_last(&w.sync[row].drawn, tiles, s.flag)) return;
  finish_row<kVec, DT>(a, w, row, plan, s);
  if (w.advance && arrive_last(&w.sync[-1].scanned, w.rows, s.flag) && threadIdx.x == 0)
    *const_cast<uint64_t*>(a.offset_ptr) += 1;
}

// The two passes of the split rows, one kernel template so that a row's kernel_symbol
// ("sampling_split_kernel<true," / "<false,") names both passes of its variant.
template <bool kVec, int kPass, DType DT>
__global__ void __launch_bounds__(kThreads, DCUKERN_CUDA_MIN_BLOCKS(2)) sampling_split_kernel(SamplingArgs a, SplitWorkspace w) {
  if constexpr (kPass == 0) split_scan<kVec, DT>(a, w);
  else split_draw<kVec, DT>(a, w);
}

}  // namespace dcukern::sampling_detail
