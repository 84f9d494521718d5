// sampling_top_p_kernel — the check kernel of sampling.top_p.vec: rows whose only filter is top-p draw by
// rejection. The proposals' kernel (sampling_unfiltered_kernel, UnfilteredRole::top_p) drew kTopPProposals
// tokens from the whole softmax, independently; this kernel takes the first of them that lies in the top-p
// set. The first accepted proposal of independent draws from softmax is distributed exactly as the softmax
// renormalised over the set; where all miss (probability <= (1 - top_p)^4), the row's last block runs the
// one-block algorithm (sample_row_with) at the fallback's own uniform, exact too, so the row's token follows
// the filtered distribution whatever happens.
// Contract: sampling.top_p.vec's (SamplingContract::filters kFilterTopP: top_k and min_p off as host values;
// top_p a host value or per row); 16-byte loads; the split rows' workspace.
// Work split: one block of kThreads per tile of split_tile(kUnfilteredItems) elements (the proposals'
// kernel's tiles). Each block sums, in fixed-point masses (fixed_mass of t = (x - max) * log2(e) / T, as
// the one-block algorithm's cuts), its tile's mass and, for each proposal, the mass of its elements that
// come before the proposal in the sort order (logit descending, index ascending). The row's last block to
// arrive (ticket: sync[row].pad) adds the tiles' sums: proposal r lies in the top-p set iff the mass
// before it is below top_p_target(top_p, total), the one-block algorithm's target.
// Determinism: integer sums; no atomics but the ticket. With advance_offset the last row to finish adds 1
// to the device offset (after the proposals' kernel read it).
#pragma once
#include "dcukern/sampling/kernels/unfiltered_kernel.hpp"

namespace dcukern::sampling_detail {

constexpr int kTopPSums = kTopPProposals + 1;  // a tile's sums: before each proposal, then the whole tile
static_assert(kPendingRowWords + kTopPSums <= kListCap, "a row's region holds the record and its tiles' sums");

template <DType DT>
__global__ void __launch_bounds__(kThreads, DCUKERN_CUDA_MIN_BLOCKS(2))
    sampling_top_p_kernel(SamplingArgs a, SplitWorkspace w) {
  __shared__ Shared s;
  __shared__ uint32_t flag;
  const RowTileBlock<DT> b(a, w);
  const int tiles = b.tiles, tile = b.tile;
  const int64_t row = b.row, base = b.base;
  using Tile = typename RowTileBlock<DT>::Tile;
  grid_dependency_wait();  // the proposals' kernel has written the record
  uint64_t* region = second_pass_region(w, row, a.vocab);
  const PendingRow record = *reinterpret_cast<const PendingRow*>(region);
  if (!record.pending) {  // the proposals' kernel wrote the token
    if (tile == 0) row_finished(a, w, flag);
    return;
  }
  float x[kUnfilteredItems];
  b.L.load(base, x);
  begin_dependent_kernel();
  const RowParams p = row_params(a, row);
  const RowScale sc = row_scale(key_logit(record.top), p);
  const Tile tile_of(b.L, base);
  uint64_t sums[kTopPSums] = {};
#pragma unroll
  for (int u = 0; u < kUnfilteredItems; ++u) {
    if (!tile_of.inside(u)) continue;
    const float v = finite_logit(x[u]);
    const uint64_t mass = fixed_mass(sc.t(v));
    const uint64_t key = sort_key(v, base + Tile::offset(u));
#pragma unroll
    for (int r = 0; r < kTopPProposals; ++r) sums[r] += key > record.proposal[r] ? mass : 0;
    sums[kTopPProposals] += mass;
  }
#pragma unroll
  for (int j = 0; j < kTopPSums; ++j) sums[j] = all_sum(sums[j], s);
  uint64_t* tile_sums = region + kPendingRowWords;
  if (!arrive_last(&w.sync[row].pad, tiles, flag, [&] {
        for (int j = 0; j < kTopPSums; ++j) tile_sums[tile * kTopPSums + j] = sums[j];
      }))
    return;

  // The row's last block: the row's sums, one tile a thread.
  if (threadIdx.x == 0) w.sync[row].pad = 0;  // every tile has arrived: zero for the next call
  const int t = int(threadIdx.x);
#pragma unroll
  for (int j = 0; j < kTopPSums; ++j)
    sums[j] = all_sum(t < tiles ? load_coherent(&tile_sums[t * kTopPSums + j]) : uint64_t(0), s);
  const uint64_t target = top_p_target(p.top_p, sums[kTopPProposals]);
  int64_t token = -1;  // the first proposal inside the set
#pragma unroll
  for (int r = kTopPProposals - 1; r >= 0; --r)
    if (sums[r] < target) token = key_index(record.proposal[r]);
  if (token >= 0) write_token(a, row, token, true);
  else  // every proposal missed: the one-block algorithm at the fallback's uniform
    sample_row_with(RowLoader<DT, true>{row_start<DT>(a, row), a.vocab}, a, row, [&] { return record.fallback_u; }, s);
  row_finished(a, w, flag);
}

}  // namespace dcukern::sampling_detail
