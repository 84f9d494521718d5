// sampling_min_p_kernel — the second kernel of sampling.min_p.vec: rows whose only filter is min-p draw from
// softmax(x / T) renormalised over {p >= min_p * p_max}, by inverse CDF over the row's tiles, as the
// unfiltered row draws over the whole row. The first kernel (sampling_unfiltered_kernel, UnfilteredRole::
// min_p) found the row's largest sort key and left it, with the row's uniform, in the row's PendingRow
// record (greedy, invalid and min_p = 0 rows: the token is written there).
// Contract: sampling.min_p.vec's (SamplingContract::filters kFilterMinP: top_k and top_p off as host values;
// min_p a host value or per row; temperature too); 16-byte loads; the split rows' workspace.
// Work split: one block of kThreads per tile of split_tile(kUnfilteredItems) elements (the first kernel's
// tiles). Each block sums its tile's kept weights, exp2(t) for t = (x - m) * log2(e) / T >= log2(min_p)
// (m the row's largest logit: the one-block algorithm's draw_kept rule and expression), each thread in item
// order, the block in a fixed tree order, and leaves the sum after the record. The row's last block to
// arrive (ticket: sync[row].pad) draws over the tiles' sums and then inside one tile (draw_over_tiles, the
// tile read again unless it is its own).
// Randomness: the row's uniform (row_uniform), as every row kind, read by the first kernel. Determinism:
// fixed-order float sums; no atomics but the ticket. With advance_offset the last row to finish adds 1 to
// the device offset (after the first kernel read it).
#pragma once
#include "dcukern/sampling/kernels/unfiltered_kernel.hpp"

namespace dcukern::sampling_detail {

static_assert(kPendingRowWords + 1 <= kListCap, "a row's region holds the record and its tiles' sums");

template <DType DT>
__global__ void __launch_bounds__(kThreads, DCUKERN_CUDA_MIN_BLOCKS(kUnfilteredMinBlocks))
    sampling_min_p_kernel(SamplingArgs a, SplitWorkspace w) {
  __shared__ UnfilteredShared s;
  const RowTileBlock<DT> b(a, w);
  using Tile = typename RowTileBlock<DT>::Tile;
  grid_dependency_wait();  // the first kernel has written the record
  uint64_t* region = second_pass_region(w, b.row, a.vocab);
  const PendingRow record = *reinterpret_cast<const PendingRow*>(region);
  if (!record.pending) {  // the first kernel wrote the token
    if (b.tile == 0) row_finished(a, w, s.flag);
    return;
  }
  float x[kUnfilteredItems];
  b.L.load(b.base, x);
  begin_dependent_kernel();
  const RowParams p = row_params(a, b.row);
  const RowScale sc = row_scale(key_logit(record.top), p);
  const float tmin = row_tmin(p);
  // The kept weight of element u: exp2(t) where t >= tmin (the largest element: t = 0, so kept), else 0.
  const auto kept = [&](const Tile& tl, int u, float xu) {
    const float t = sc.t(finite_logit(xu));
    return tl.inside(u) && t >= tmin ? device_exp2(t) : 0.0f;
  };
  const float mass = BlockReduce<float, kThreads>::sum(Tile(b.L, b.base).thread_weight(x, kept), s.tmp.rf);
  float* tile_mass = reinterpret_cast<float*>(region + kPendingRowWords);
  if (!arrive_last(&w.sync[b.row].pad, b.tiles, s.flag, [&] { tile_mass[b.tile] = mass; })) return;

  // The row's last block: the tiles' kept weights, one a thread (the largest element's tile: >= 1).
  if (threadIdx.x == 0) w.sync[b.row].pad = 0;  // every tile has arrived: zero for the next call
  const int t = int(threadIdx.x);
  const float weight = t < b.tiles ? load_coherent(&tile_mass[t]) : 0.0f;
  float total;
  const float before = exclusive_sum(weight, total, s);
  int held = b.tile;  // the tile x holds
  write_token(a, b.row, draw_over_tiles(b.L, x, held, weight, before, total, record.u, record.top, kept, s).index,
              true);
  row_finished(a, w, s.flag);
}

}  // namespace dcukern::sampling_detail
