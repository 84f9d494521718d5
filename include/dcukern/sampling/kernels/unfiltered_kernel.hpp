// sampling_unfiltered_kernel — sampling.unfiltered.vec: rows without a filter draw from softmax(x / T) over
// the whole row by inverse CDF, the logits read once.
// Contract: calls whose top_k, top_p and min_p are host values that keep every token (sampling_unfiltered:
// engines' default parameters); temperature a host value or per row (0: greedy); 16-byte loads (aligned
// rows; V and the row stride multiples of 16 bytes); the split rows' workspace (tickets, headers, and the
// list region for the blocks' per-thread sums).
// Work split: a row's tiles of split_tile(kUnfilteredItems) elements are cut into w.tiles groups of
// w.group consecutive tiles (unfiltered_layout: one tile a block at B = 1, up to a whole row at large B),
// one block of kThreads a group (1-D grid of B * w.tiles blocks, row-major). Each thread streams its
// elements of the group's tiles keeping its largest sort key and a running maximum and sum of weights
// exp2((x - m) * log2(e) / T) (each tile rescales the sum once, to the tile's new maximum), so the loop
// has no barrier. Then one block maximum (the group's largest key, a NaN), each thread's sum scaled to the
// group's maximum goes to the workspace, and one block sum to the group's header. The row's last block to
// arrive (ticket) merges the headers: invalid rows (NaN, all -inf, a bad per-row temperature) and greedy
// rows end there. Otherwise it picks, by inverse CDF with the row's uniform, the group (over the headers'
// sums scaled to the row's maximum), then a thread of that group (over its stored sums), then an element
// of that thread (each block thread loads one of its at most w.group * kUnfilteredItems elements). Every
// pick takes draw_kept's rule (row_passes.hpp): the last position of positive mass whose running mass
// before it is at or below the target, so float rounding between the levels never picks outside the row
// or a zero-mass element.
// Determinism: fixed-order float sums; no atomics but the ticket. With advance_offset the last row to
// finish adds 1 to the device offset.
#pragma once
#include "dcukern/platform/block.hpp"
#include "dcukern/sampling/kernels/sample_block.hpp"
#include "dcukern/sampling/kernels/split_rows.hpp"

namespace dcukern::sampling_detail {

static_assert(split_tiles(kSamplingMaxVocab, kUnfilteredItems) <= kThreads, "one group a thread in the merge");
static_assert(kUnfilteredMaxGroup * kUnfilteredItems <= kThreads, "a thread's elements of a group: one a thread");

// A group's header, in the split rows' header region (the same size; at most split_tiles(V) a row).
struct UnfilteredHeader {
  uint64_t max_key;  // the group's largest sort key
  float mass;        // sum of exp2((x - max) * log2(e) / T) over the group (0 for greedy and invalid rows)
  uint32_t nan;      // the group holds a NaN
};
static_assert(sizeof(UnfilteredHeader) == sizeof(SplitHeader), "the split rows' header region");

struct UnfilteredShared {
  union {
    typename BlockReduce<uint64_t, kThreads>::storage_type r64;
    typename BlockReduce<float, kThreads>::storage_type rf;
    typename BlockScan<float, kThreads>::storage_type sf;
  } tmp;
  RowParams params;
  float u;       // the row's uniform
  float rest;    // the target's part inside the position picked last
  uint64_t key;  // a block-wide result, broadcast
  uint32_t flag;
};

__device__ inline uint64_t unfiltered_all_max(uint64_t v, UnfilteredShared& s) {
  const uint64_t r = BlockReduce<uint64_t, kThreads>::max(v, s.tmp.r64);
  if (threadIdx.x == 0) s.key = r;
  __syncthreads();
  const uint64_t out = s.key;
  __syncthreads();
  return out;
}

// One level of the draw: the position p (thread order) holding weight `mass` (0 for none) where the running
// mass passes the target (`target`, or that fraction of the total where `fraction`); returns it in every
// thread (-1: no position of positive mass) and leaves the target's part inside it in s.rest.
__device__ inline int pick_position(float mass, float target, bool fraction, UnfilteredShared& s) {
  float total;
  const float before = BlockScan<float, kThreads>::exclusive_sum(mass, total, s.tmp.sf);
  __syncthreads();
  if (fraction) target *= total;
  const int t = int(threadIdx.x);
  const int picked = int(unfiltered_all_max(mass > 0.0f && before <= target ? uint64_t(t) + 1 : 0, s)) - 1;
  if (t == picked) s.rest = target - before;
  __syncthreads();
  return picked;
}

// Offset of this thread's element u within a tile (RowLoader::index's vector order).
template <int kW>
__device__ __forceinline__ int unfiltered_offset(int thread, int u) {
  return ((u / kW) * kThreads + thread) * kW + u % kW;
}

// A thread's running state over its elements: largest order key (its first element in index order), and
// the sum of weights relative to the running maximum m (-inf: nothing yet).
struct RunningMass {
  uint32_t best_word = 0;  // 0: none (below every float's key)
  int64_t best_index = 0;
  float m = -INFINITY, sum = 0.0f;
  bool nan = false;

  // Elements x of tile `base` (offsets from unfiltered_offset; inside the row below `limit`).
  template <int kW>
  __device__ __forceinline__ void add_tile(const float (&x)[kUnfilteredItems], int64_t base, int limit, float c) {
    float tile_max = -INFINITY;
#pragma unroll
    for (int u = 0; u < kUnfilteredItems; ++u) {
      if (unfiltered_offset<kW>(int(threadIdx.x), u) >= limit) continue;
      nan = nan || x[u] != x[u];
      const float xv = finite_logit(x[u]);
      const uint32_t k = order_key(xv);
      if (k > best_word) best_word = k, best_index = base + unfiltered_offset<kW>(int(threadIdx.x), u);
      tile_max = fmaxf(tile_max, xv);
    }
    if (tile_max == -INFINITY) return;  // nothing of positive weight in this tile
    if (tile_max > m) {
      sum = m == -INFINITY ? 0.0f : sum * device_exp2((m - tile_max) * c);
      m = tile_max;
    }
#pragma unroll
    for (int u = 0; u < kUnfilteredItems; ++u)
      if (unfiltered_offset<kW>(int(threadIdx.x), u) < limit) sum += device_exp2((finite_logit(x[u]) - m) * c);
  }
};

// kUnfilteredMinBlocks blocks per SM on sm_90 (at most 64 registers a thread).
constexpr int kUnfilteredMinBlocks = 2;
template <DType DT>
__global__ void __launch_bounds__(kThreads, DCUKERN_CUDA_MIN_BLOCKS(kUnfilteredMinBlocks))
    sampling_unfiltered_kernel(SamplingArgs a, SplitWorkspace w) {
  __shared__ UnfilteredShared s;
  using Loader = RowLoader<DT, true, kUnfilteredItems>;
  constexpr int64_t kTileSize = split_tile(kUnfilteredItems);
  const int groups = w.tiles, group = w.group;
  const int64_t row = blockIdx.x / groups;
  const int g = int(blockIdx.x % groups);
  const Loader L{row_start<DT>(a, row), a.vocab};
  const int64_t first = int64_t(g) * group * kTileSize;
  const int64_t end = first + group * kTileSize < a.vocab ? first + group * kTileSize : a.vocab;
  prefetch_tile<DT, kUnfilteredItems>(a, row, first);  // the call's only kernel: the logits' writer may run
  grid_dependency_wait();
  if (threadIdx.x == 0) s.params = row_params(a, row);
  __syncthreads();
  const RowParams p = s.params;
  const float c = fminf(kLog2e / p.temperature, FLT_MAX);  // (temperature 0: greedy, the sums unused)
  RunningMass r;
  float x[kUnfilteredItems];
#pragma unroll 1
  for (int64_t base = first; base < end; base += kTileSize) {
    L.load(base, x);
    if (base == first) begin_dependent_kernel();
    const int64_t left = a.vocab - base;
    r.add_tile<Loader::kW>(x, base, left < kTileSize ? int(left) : int(kTileSize), c);
  }
  const bool nan = __syncthreads_or(r.nan);
  const uint64_t best = unfiltered_all_max(r.best_word == 0 ? 0 : sort_key(key_value(r.best_word), r.best_index), s);
  const float m_group = key_logit(best);
  // This thread's sum scaled to the group's maximum (0 where it holds nothing finite, or the row is invalid).
  const float mine = nan || r.m == -INFINITY ? 0.0f : r.sum * device_exp2((r.m - m_group) * c);
  float* partial = reinterpret_cast<float*>(w.list) + (row * groups + g) * int64_t(kThreads);
  partial[threadIdx.x] = mine;
  const float mass = BlockReduce<float, kThreads>::sum(mine, s.tmp.rf);
  UnfilteredHeader* header = reinterpret_cast<UnfilteredHeader*>(w.header) + row * groups;
  if (!arrive_last(&w.sync[row].scanned, groups, s.flag,
                   [&] { header[g] = UnfilteredHeader{best, mass, nan ? 1u : 0u}; }))
    return;

  // The row's last block: merge the groups' headers, one a thread.
  if (threadIdx.x == 0) w.sync[row].scanned = 0;  // every group has arrived: zero for the next call
  const int t = int(threadIdx.x);
  if (t == 0) s.u = row_uniform(a, row);
  const uint64_t group_key = t < groups ? load_coherent(&header[t].max_key) : 0;
  const float group_mass = t < groups ? load_coherent(&header[t].mass) : 0.0f;
  const bool row_nan = __syncthreads_or(t < groups && load_coherent(&header[t].nan) != 0);
  const uint64_t top = unfiltered_all_max(group_key, s);
  const float m = key_logit(top);
  if (row_nan || !p.ok || m == -INFINITY) {
    write_token(a, row, kSamplingInvalidToken, false);
  } else if (p.temperature == 0.0f) {
    write_token(a, row, key_index(top), true);
  } else {
    // The group: its sum scaled to the row's maximum. The row's total is at least 1 (its maximum's weight).
    const float scaled = group_mass > 0.0f ? group_mass * device_exp2((key_logit(group_key) - m) * c) : 0.0f;
    const int gp = pick_position(scaled, s.u, true, s);
    // The thread of that group: its stored sums, scaled from the group's maximum to the row's.
    const float f = device_exp2((key_logit(load_coherent(&header[gp].max_key)) - m) * c);
    const float* chosen = reinterpret_cast<const float*>(w.list) + (row * groups + gp) * int64_t(kThreads);
    const int tp = pick_position(load_coherent(&chosen[t]) * f, s.rest, false, s);
    // The element of that thread: position t of its sequence (tile t / kUnfilteredItems of the group, item
    // t % kUnfilteredItems), one a thread, weights relative to the row's maximum.
    const int64_t base = (int64_t(gp) * group + t / kUnfilteredItems) * kTileSize;
    const int64_t i = base + unfiltered_offset<Loader::kW>(tp, t % kUnfilteredItems);
    const bool inside = tp >= 0 && t < group * kUnfilteredItems && i < a.vocab;
    const float e = inside ? device_exp2((finite_logit(L.scalar(i)) - m) * c) : 0.0f;
    const int ep = pick_position(e, s.rest, false, s);
    if (t == ep) s.key = uint64_t(i);
    __syncthreads();
    // ep < 0 only where exp2 underflows every weight left: the row's largest element then.
    write_token(a, row, ep >= 0 ? int64_t(s.key) : key_index(top), true);
  }
  row_finished(a, w, s.flag);
}

}  // namespace dcukern::sampling_detail
