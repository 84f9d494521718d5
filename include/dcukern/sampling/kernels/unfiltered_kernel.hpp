// sampling_unfiltered_kernel — sampling.unfiltered.vec: rows without a filter draw from softmax(x / T) over
// the whole row by inverse CDF, the logits read once (and one tile a row twice).
// Contract: calls whose top_k, top_p and min_p are host values that keep every token (SamplingContract::
// filters 0: engines' default parameters); temperature a host value or per row (0: greedy); 16-byte loads (aligned
// rows; V and the row stride multiples of 16 bytes); the split rows' workspace (its tickets and headers).
// Work split: one block of kThreads per tile of split_tile(kUnfilteredItems) elements (1-D grid of
// B * tiles blocks, row-major). Each block loads its tile once, finds its largest sort key (lowest index
// among equal ones) and a NaN, sums its weights exp2((x - m_tile) * log2(e) / T) (each thread its own in
// item order, the block's in a fixed tree order) and writes both to its header. The row's last block to
// arrive (ticket) merges the headers: invalid rows (NaN, all -inf, a bad per-row temperature) and greedy
// rows end there. Otherwise it scales each tile's sum to the row's maximum, picks the tile where the
// running mass (tile order) passes u * total, reads that tile again (unless it is its own) and picks the
// element the same way (thread, then item order; weights exp2((x - m_row) * log2(e) / T)). Both picks
// follow draw_kept's rule (row_passes.hpp): the last element of positive mass whose running mass before
// it is at or below the target, so float rounding between the two levels can never pick outside the row
// or a zero-mass element.
// Randomness: the row's uniform (row_uniform), as every row kind. Determinism: fixed-order float sums; no
// atomics but the ticket. With advance_offset the last row to finish adds 1 to the device offset.
// Two-kernel rows take this kernel first (kRole); their second kernel decides the rows left pending in the
// row's PendingRow record and advances the device offset:
//   top_p (sampling.top_p.vec, top_p_kernel.hpp): the row's last block draws kTopPProposals tokens as
//         above, one per word of the row's Philox stream 0, and records their sort keys (rows whose top_p
//         is 1: the token, as above);
//   min_p (sampling.min_p.vec, min_p_kernel.hpp): rows whose min_p is above 0 skip the weights and record
//         the row's largest sort key and uniform (rows whose min_p is 0: the token, as above).
// Greedy and invalid rows end here in every role.
#pragma once
#include "dcukern/platform/block.hpp"
#include "dcukern/sampling/kernels/sample_block.hpp"
#include "dcukern/sampling/kernels/split_rows.hpp"

namespace dcukern::sampling_detail {

// Elements per thread of a tile: the smallest split tile (8192 elements), so that a row has many blocks
// at B = 1; a row of kSamplingMaxVocab has 128 tiles, one a thread in the merge.
constexpr int kUnfilteredItems = 16;
static_assert(split_tiles(kSamplingMaxVocab, kUnfilteredItems) <= kThreads, "one tile a thread in the merge");

// A tile's header, in the split rows' header region (the same size: split_layout's count of 16-item tiles).
struct UnfilteredHeader {
  uint64_t max_key;  // the tile's largest sort key
  float mass;        // sum of exp2((x - max) * log2(e) / T) over the tile (0 for greedy and invalid rows)
  uint32_t nan;      // the tile holds a NaN
};
static_assert(sizeof(UnfilteredHeader) == sizeof(SplitHeader), "the split rows' header region");

// What the kernel's last block of a row does: draw (sampling.unfiltered.vec), or prepare a two-kernel row.
enum class UnfilteredRole : uint8_t { draw, top_p, min_p };

// sampling.top_p.vec: proposals a row draws from the whole softmax (the first inside the top-p set is the
// token): all of them miss with probability (1 - mass of the set)^4 <= (1 - top_p)^4.
constexpr int kTopPProposals = 4;
// A two-kernel row's record, at the start of its region of the workspace's lists (second_pass_region):
// written by this kernel's last block of the row, read by every block of the second kernel.
struct PendingRow {
  uint64_t top;                           // the row's largest sort key
  uint64_t proposal[kTopPProposals];      // top_p: sort keys of the proposals, in draw order
  float u;                                // min_p: the row's uniform (row_uniform)
  float fallback_u;                       // top_p: the uniform of the fallback's draw (stream 1, word 0)
  uint32_t pending;                       // 1: the second kernel decides the row; 0: the token is written
};
constexpr int kPendingRowWords = 8;       // 64-bit words before the second kernel's tile sums
static_assert(sizeof(PendingRow) <= kPendingRowWords * sizeof(uint64_t), "record size");
// A row's region of the lists (of split_list_keys(V, kUnfilteredItems) keys, at least kListCap a tile):
// the record, then the second kernel's sums of each tile.
__device__ inline uint64_t* second_pass_region(const SplitWorkspace& w, int64_t row, int64_t vocab) {
  return w.list + row * int64_t(split_list_keys(vocab, kUnfilteredItems));
}

struct UnfilteredShared {
  union {
    typename BlockReduce<uint64_t, kThreads>::storage_type r64;
    typename BlockReduce<float, kThreads>::storage_type rf;
    typename BlockScan<float, kThreads>::storage_type sf;
  } tmp;
  RowParams params;
  float u[kTopPProposals];  // the row's uniforms (stream 0's words; u[0] is row_uniform's)
  float fallback_u;         // top_p role: stream 1's word 0
  float rest;               // the target's part inside the chosen tile
  uint64_t b64[1];          // a block-wide result, broadcast (all_max)
  uint32_t flag;
};

// A tile of the row as this thread holds it: element u lies at offset(u) from the tile's start (the
// loader's vector order, RowLoader::index), inside the row where offset(u) < limit. 32-bit offsets.
template <class Loader>
struct UnfilteredTile {
  static constexpr int kW = Loader::kW;
  int limit;  // elements of the row from the tile's start (at most the tile)
  __device__ __forceinline__ UnfilteredTile(const Loader& L, int64_t base) {
    const int64_t left = L.vocab - base;
    limit = left < split_tile(kUnfilteredItems) ? int(left) : int(split_tile(kUnfilteredItems));
  }
  __device__ __forceinline__ static int offset(int u) { return ((u / kW) * kThreads + int(threadIdx.x)) * kW + u % kW; }
  __device__ __forceinline__ bool inside(int u) const { return offset(u) < limit; }
  // The weight exp2((x - m) * c) of element u (0 outside the row). The same expression each time (no
  // contraction applies), so recomputing it gives the same bits.
  __device__ __forceinline__ float weight(int u, float x, float m, float c) const {
    return inside(u) ? device_exp2((finite_logit(x) - m) * c) : 0.0f;
  }
  // This thread's weights weigh(*this, u, x[u]), summed in item order.
  template <class Weigh>
  __device__ __forceinline__ float thread_weight(const float (&x)[kUnfilteredItems], Weigh weigh) const {
    float sum = 0.0f;
#pragma unroll
    for (int u = 0; u < kUnfilteredItems; ++u) sum += weigh(*this, u, x[u]);
    return sum;
  }
};

// The block's tile of a row: one block per tile of split_tile(kUnfilteredItems) elements, a 1-D grid of
// B * tiles blocks, row-major (the kernels of the unfiltered, top-p and min-p rows), and the row's loader.
template <DType DT>
struct RowTileBlock {
  using Loader = RowLoader<DT, true, kUnfilteredItems>;
  using Tile = UnfilteredTile<Loader>;
  int tiles;
  int64_t row;
  int tile;
  int64_t base;  // the tile's first element
  Loader L;
  __device__ __forceinline__ RowTileBlock(const SamplingArgs& a, const SplitWorkspace& w)
      : tiles(w.tiles), row(blockIdx.x / w.tiles), tile(int(blockIdx.x % w.tiles)),
        base(int64_t(tile) * split_tile(kUnfilteredItems)), L{row_start<DT>(a, row), a.vocab} {}
};

// The row's last block draws by inverse CDF over the row's tiles, then inside one. Thread t holds tile t's
// weight (0 past the row's tiles), the running weight before it in tile order and the row's total (> 0);
// x holds the elements of tile `held`. The draw at uniform u takes the last tile of positive weight whose
// running weight before it is at or below u * total, reads it into x (unless held), and takes the element
// there the same way (thread, then item order; element weights weigh(tile, u, x), the same expression as
// the tiles' weights were summed from) — draw_kept's rule (row_passes.hpp), so float rounding between
// the two levels can never pick outside the row or a zero-weight element. Where the chosen tile holds no
// positive weight (exp2 underflow only) the draw takes `top`, the row's largest element's sort key.
// The element a draw took: its index in every thread; its sort key in the one thread that took it (`mine`;
// thread 0 where it is `top`), which stores it where needed: no barrier broadcasts it.
struct TileDraw {
  int64_t index;
  bool mine;
  uint64_t key;  // (where mine)
};
template <class Loader, class Weigh>
__device__ inline TileDraw draw_over_tiles(const Loader& L, float (&x)[kUnfilteredItems], int& held, float weight,
                                           float before, float total, float u, uint64_t top, Weigh weigh,
                                           UnfilteredShared& s) {
  using Tile = UnfilteredTile<Loader>;
  const int t = int(threadIdx.x);
  const float target = u * total;
  const bool candidate = weight > 0.0f && before <= target;
  const int chosen = int(all_max(candidate ? uint64_t(t) + 1 : 0, s)) - 1;  // >= 0: total > 0
  if (t == chosen) s.rest = target - before;
  __syncthreads();
  const float rest = s.rest;
  const int64_t chosen_base = int64_t(chosen) * split_tile(kUnfilteredItems);
  if (chosen != held) L.load(chosen_base, x), held = chosen;
  const Tile chosen_tile(L, chosen_base);
  float tile_total;
  float run = exclusive_sum(chosen_tile.thread_weight(x, weigh), tile_total, s);
  uint32_t pick = 0;  // position + 1 (thread, then item order) of the thread's pick
  int pick_u = 0;
  float pick_x = 0.0f;
#pragma unroll
  for (int q = 0; q < kUnfilteredItems; ++q) {
    const float e = weigh(chosen_tile, q, x[q]);
    if (e > 0.0f && run <= rest) pick = uint32_t(t * kUnfilteredItems + q + 1), pick_u = q, pick_x = x[q];
    run += e;
  }
  const uint64_t picked = all_max(pick == 0 ? 0 : uint64_t(pick) << 32 | uint32_t(Tile::offset(pick_u)), s);
  TileDraw d;
  d.index = picked == 0 ? key_index(top) : chosen_base + int64_t(uint32_t(picked));
  d.mine = picked == 0 ? t == 0 : pick == uint32_t(picked >> 32);
  d.key = picked == 0 ? top : sort_key(finite_logit(pick_x), d.index);
  return d;
}

// kUnfilteredMinBlocks blocks per SM on sm_90 (at most 64 registers a thread; CUDA 13's ptxas: 64, with 4
// bytes of spill, where the unbounded kernel takes 70-72, one block an SM): a tile is one round of loads,
// so the loads in flight per SM are the blocks it holds.
constexpr int kUnfilteredMinBlocks = 2;
template <DType DT, UnfilteredRole kRole = UnfilteredRole::draw>
__global__ void __launch_bounds__(kThreads, DCUKERN_CUDA_MIN_BLOCKS(kUnfilteredMinBlocks))
    sampling_unfiltered_kernel(SamplingArgs a, SplitWorkspace w) {
  __shared__ UnfilteredShared s;
  const RowTileBlock<DT> b(a, w);
  using Tile = typename RowTileBlock<DT>::Tile;
  prefetch_tile<DT, kUnfilteredItems>(a, b.row, b.base);  // the call's first kernel: the logits' writer may run
  grid_dependency_wait();
  float x[kUnfilteredItems];
  b.L.load(b.base, x);
  begin_dependent_kernel();
  if (threadIdx.x == 0) s.params = row_params(a, b.row);
  const Tile tile_of(b.L, b.base);
  uint32_t best_word = 0;  // order_key of this thread's largest element; 0: none (below every float's key)
  int best_u = 0;          // its item (the first among equal ones: items run in index order)
  bool nan = false;
#pragma unroll
  for (int u = 0; u < kUnfilteredItems; ++u) {
    if (!tile_of.inside(u)) continue;
    nan = nan || x[u] != x[u];
    const uint32_t k = order_key(finite_logit(x[u]));
    if (k > best_word) best_word = k, best_u = u;
  }
  nan = block_any(nan);  // (s.params is written before it)
  const RowParams p = s.params;
  uint64_t best = best_word == 0 ? 0 : sort_key(key_value(best_word), b.base + Tile::offset(best_u));
  best = all_max(best, s);
  // min_p role: rows whose min_p is above 0 go to the second kernel, which weighs the tiles itself.
  const bool second = kRole == UnfilteredRole::min_p && p.min_p > 0.0f;
  const bool draws = !nan && p.ok && p.temperature > 0.0f && key_logit(best) != -INFINITY && !second;
  const float c = fminf(kLog2e / p.temperature, FLT_MAX);
  const float tile_max = key_logit(best);
  const auto weigh = [&](const Tile& tl, int u, float xu) { return tl.weight(u, xu, tile_max, c); };
  float mass = 0.0f;
  if (draws) mass = BlockReduce<float, kThreads>::sum(tile_of.thread_weight(x, weigh), s.tmp.rf);
  UnfilteredHeader* header = reinterpret_cast<UnfilteredHeader*>(w.header) + b.row * b.tiles;
  if (!arrive_last(&w.sync[b.row].scanned, b.tiles, s.flag,
                   [&] { header[b.tile] = UnfilteredHeader{best, mass, nan ? 1u : 0u}; }))
    return;

  // The row's last block: merge the tiles' headers, one a thread.
  if (threadIdx.x == 0) w.sync[b.row].scanned = 0;  // every tile has arrived: zero for the next call
  const int t = int(threadIdx.x);
  if (t == 0) {  // (Philox: here, not beside a tile in registers)
    const Philox4x32 words = row_words(a, b.row, 0);
#pragma unroll
    for (int r = 0; r < kTopPProposals; ++r) s.u[r] = uniform_of_word(words.v[r]);
    if constexpr (kRole == UnfilteredRole::top_p) s.fallback_u = uniform_of_word(row_words(a, b.row, 1).v[0]);
  }
  const uint64_t tile_key = t < b.tiles ? load_coherent(&header[t].max_key) : 0;
  const float tile_mass = t < b.tiles ? load_coherent(&header[t].mass) : 0.0f;
  const bool row_nan = block_any(t < b.tiles && load_coherent(&header[t].nan) != 0);
  const uint64_t top = all_max(tile_key, s);
  const float m = key_logit(top);
  constexpr bool kTwoKernels = kRole != UnfilteredRole::draw;
  [[maybe_unused]] PendingRow* record =
      kTwoKernels ? reinterpret_cast<PendingRow*>(second_pass_region(w, b.row, a.vocab)) : nullptr;
  bool pending = false;
  if (row_nan || !p.ok || m == -INFINITY) {
    write_token(a, b.row, kSamplingInvalidToken, false);
  } else if (p.temperature == 0.0f) {
    write_token(a, b.row, key_index(top), true);
  } else if (second) {
    pending = true;
  } else {
    const float weight = tile_mass > 0.0f ? tile_mass * device_exp2((key_logit(tile_key) - m) * c) : 0.0f;
    float total;
    const float before = exclusive_sum(weight, total, s);
    int held = b.tile;  // the tile x holds
    const auto weigh_row = [&](const Tile& tl, int u, float xu) { return tl.weight(u, xu, m, c); };
    auto draw = [&](float u) { return draw_over_tiles(b.L, x, held, weight, before, total, u, top, weigh_row, s); };
    if (kRole == UnfilteredRole::top_p && p.top_p < 1.0f) {
      pending = true;
      for (int r = 0; r < kTopPProposals; ++r) {
        const TileDraw d = draw(s.u[r]);
        if (d.mine) record->proposal[r] = d.key;
      }
    } else {
      write_token(a, b.row, draw(s.u[0]).index, true);
    }
  }
  if constexpr (kTwoKernels) {
    if (t == 0) {
      record->top = top;
      if constexpr (kRole == UnfilteredRole::top_p) record->fallback_u = s.fallback_u;
      else record->u = s.u[0];
      record->pending = pending ? 1u : 0u;
    }
  } else {
    row_finished(a, w, s.flag);
  }
}

}  // namespace dcukern::sampling_detail
