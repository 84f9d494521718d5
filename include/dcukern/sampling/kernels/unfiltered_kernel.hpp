// sampling_unfiltered_kernel — sampling.unfiltered.vec: rows without a filter draw from softmax(x / T) over
// the whole row by inverse CDF, the logits read once (and one tile a row twice).
// Contract: calls whose top_k, top_p and min_p are host values that keep every token (sampling_unfiltered:
// engines' default parameters); temperature a host value or per row (0: greedy); 16-byte loads (aligned
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
// kTopP (the first kernel of sampling.top_p.vec, top_p_kernel.hpp): the row's last block draws
// kTopPProposals tokens that way, one per word of the row's Philox stream 0, and leaves their sort keys in
// the row's TopPRecord for the check kernel (rows whose top_p is 1, greedy and invalid rows: the token, as
// above); the check kernel advances the device offset.
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

// sampling.top_p.vec: proposals a row draws from the whole softmax (the first inside the top-p set is the
// token): all of them miss with probability (1 - mass of the set)^4 <= (1 - top_p)^4.
constexpr int kTopPProposals = 4;
// A top-p row's record, at the start of its region of the workspace's lists (top_p_region): written by
// the proposals' kernel, read by the check kernel.
struct TopPRecord {
  uint64_t top;                           // the row's largest sort key
  uint64_t proposal[kTopPProposals];      // sort keys of the proposals, in draw order
  float fallback_u;                       // the uniform of the fallback's draw (stream 1, word 0)
  uint32_t pending;                       // 1: the check kernel decides the row; 0: the token is written
};
constexpr int kTopPRecordWords = 8;       // 64-bit words before the check kernel's tile sums
static_assert(sizeof(TopPRecord) <= kTopPRecordWords * sizeof(uint64_t), "record size");
// A row's region of the lists (of split_list_keys(V, kUnfilteredItems) keys, at least kListCap a tile):
// the record, then kTopPProposals + 1 sums a tile.
__device__ inline uint64_t* top_p_region(const SplitWorkspace& w, int64_t row, int64_t vocab) {
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
  float fallback_u;         // kTopP: stream 1's word 0
  float rest;               // the target's part inside the chosen tile
  uint64_t key;             // a block-wide result, broadcast
  uint64_t drawn;           // kTopP: the sort key of the element a draw took
  uint32_t flag;
};

// The largest of v over the block, in every thread.
__device__ inline uint64_t unfiltered_all_max(uint64_t v, UnfilteredShared& s) {
  const uint64_t r = BlockReduce<uint64_t, kThreads>::max(v, s.tmp.r64);
  if (threadIdx.x == 0) s.key = r;
  __syncthreads();
  const uint64_t out = s.key;
  __syncthreads();
  return out;
}

// Exclusive running sum in thread order, and the total, in every thread.
__device__ inline float unfiltered_exclusive_sum(float v, float& total, UnfilteredShared& s) {
  const float r = BlockScan<float, kThreads>::exclusive_sum(v, total, s.tmp.sf);
  __syncthreads();
  return r;
}

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
  // This thread's weights, summed in item order.
  __device__ __forceinline__ float thread_weight(const float (&x)[kUnfilteredItems], float m, float c) const {
    float sum = 0.0f;
#pragma unroll
    for (int u = 0; u < kUnfilteredItems; ++u) sum += weight(u, x[u], m, c);
    return sum;
  }
};

// kUnfilteredMinBlocks blocks per SM on sm_90 (at most 64 registers a thread; CUDA 13's ptxas: 64, with 4
// bytes of spill, where the unbounded kernel takes 70-72, one block an SM): a tile is one round of loads,
// so the loads in flight per SM are the blocks it holds.
constexpr int kUnfilteredMinBlocks = 2;
template <DType DT, bool kTopP = false>
__global__ void __launch_bounds__(kThreads, DCUKERN_CUDA_MIN_BLOCKS(kUnfilteredMinBlocks))
    sampling_unfiltered_kernel(SamplingArgs a, SplitWorkspace w) {
  __shared__ UnfilteredShared s;
  const int tiles = w.tiles;
  const int64_t row = blockIdx.x / tiles;
  const int tile = int(blockIdx.x % tiles);
  const RowLoader<DT, true, kUnfilteredItems> L{row_start<DT>(a, row), a.vocab};
  using Tile = UnfilteredTile<decltype(L)>;
  const int64_t base = int64_t(tile) * split_tile(kUnfilteredItems);
  prefetch_tile<DT, kUnfilteredItems>(a, row, base);  // the call's first kernel: the logits' writer may run
  grid_dependency_wait();
  float x[kUnfilteredItems];
  L.load(base, x);
  begin_dependent_kernel();
  if (threadIdx.x == 0) s.params = row_params(a, row);
  const Tile tile_of(L, base);
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
  nan = __syncthreads_or(nan);  // (s.params is written before it)
  const RowParams p = s.params;
  uint64_t best = best_word == 0 ? 0 : sort_key(key_value(best_word), base + Tile::offset(best_u));
  best = unfiltered_all_max(best, s);
  const bool draws = !nan && p.ok && p.temperature > 0.0f && key_logit(best) != -INFINITY;
  const float c = fminf(kLog2e / p.temperature, FLT_MAX);
  float mass = 0.0f;
  if (draws) mass = BlockReduce<float, kThreads>::sum(tile_of.thread_weight(x, key_logit(best), c), s.tmp.rf);
  UnfilteredHeader* header = reinterpret_cast<UnfilteredHeader*>(w.header) + row * tiles;
  if (!arrive_last(&w.sync[row].scanned, tiles, s.flag,
                   [&] { header[tile] = UnfilteredHeader{best, mass, nan ? 1u : 0u}; }))
    return;

  // The row's last block: merge the tiles' headers, one a thread.
  if (threadIdx.x == 0) w.sync[row].scanned = 0;  // every tile has arrived: zero for the next call
  const int t = int(threadIdx.x);
  if (t == 0) {  // (Philox: here, not beside a tile in registers)
    const Philox4x32 words = row_words(a, row, 0);
#pragma unroll
    for (int r = 0; r < kTopPProposals; ++r) s.u[r] = uniform_of_word(words.v[r]);
    if constexpr (kTopP) s.fallback_u = uniform_of_word(row_words(a, row, 1).v[0]);
  }
  const uint64_t tile_key = t < tiles ? load_coherent(&header[t].max_key) : 0;
  const float tile_mass = t < tiles ? load_coherent(&header[t].mass) : 0.0f;
  const bool row_nan = __syncthreads_or(t < tiles && load_coherent(&header[t].nan) != 0);
  const uint64_t top = unfiltered_all_max(tile_key, s);
  const float m = key_logit(top);
  [[maybe_unused]] TopPRecord* record = kTopP ? reinterpret_cast<TopPRecord*>(top_p_region(w, row, a.vocab)) : nullptr;
  bool pending = false;
  if (row_nan || !p.ok || m == -INFINITY) {
    write_token(a, row, kSamplingInvalidToken, false);
  } else if (p.temperature == 0.0f) {
    write_token(a, row, key_index(top), true);
  } else {
    const float weight = tile_mass > 0.0f ? tile_mass * device_exp2((key_logit(tile_key) - m) * c) : 0.0f;
    float total;
    const float before = unfiltered_exclusive_sum(weight, total, s);
    // The element the draw at uniform u takes (its index; kTopP: its sort key in s.drawn too): the tile
    // where the running mass passes u * total, then the element inside it (read again unless x holds it).
    int held = tile;  // the tile x holds
    auto draw = [&](float u) -> int64_t {
      const float target = u * total;
      const bool candidate = weight > 0.0f && before <= target;
      const int chosen = int(unfiltered_all_max(candidate ? uint64_t(t) + 1 : 0, s)) - 1;  // >= 0: total > 0
      if (t == chosen) s.rest = target - before;
      __syncthreads();
      const float rest = s.rest;
      const int64_t chosen_base = int64_t(chosen) * split_tile(kUnfilteredItems);
      if (chosen != held) L.load(chosen_base, x), held = chosen;
      const Tile chosen_tile(L, chosen_base);
      float tile_total;  // (not `total`: the row's, which the next draw needs)
      float run = unfiltered_exclusive_sum(chosen_tile.thread_weight(x, m, c), tile_total, s);
      uint32_t pick = 0;  // position + 1 (thread, then item order) of the thread's pick
      int pick_u = 0;
      float pick_x = 0.0f;
#pragma unroll
      for (int u = 0; u < kUnfilteredItems; ++u) {
        const float e = chosen_tile.weight(u, x[u], m, c);
        if (e > 0.0f && run <= rest) pick = uint32_t(t * kUnfilteredItems + u + 1), pick_u = u, pick_x = x[u];
        run += e;
      }
      const uint64_t picked =
          unfiltered_all_max(pick == 0 ? 0 : uint64_t(pick) << 32 | uint32_t(Tile::offset(pick_u)), s);
      // No positive weight left in the tile (only where exp2 underflows): the row's largest element.
      const int64_t index = picked != 0 ? chosen_base + int64_t(uint32_t(picked)) : key_index(top);
      if constexpr (kTopP) {
        if (picked == 0 ? t == 0 : pick == uint32_t(picked >> 32))
          s.drawn = picked == 0 ? top : sort_key(finite_logit(pick_x), index);
        __syncthreads();
      }
      return index;
    };
    if constexpr (kTopP) {
      if (p.top_p >= 1.0f) {  // (a per-row top_p of 1)
        write_token(a, row, draw(s.u[0]), true);
      } else {
        pending = true;
        for (int r = 0; r < kTopPProposals; ++r) {
          draw(s.u[r]);
          if (t == 0) record->proposal[r] = s.drawn;
          __syncthreads();  // (s.drawn: the next draw writes it)
        }
      }
    } else {
      write_token(a, row, draw(s.u[0]), true);
    }
  }
  if constexpr (kTopP) {
    if (t == 0) {
      record->top = top;
      record->fallback_u = s.fallback_u;
      record->pending = pending ? 1u : 0u;
    }
  } else {
    row_finished(a, w, s.flag);
  }
}

}  // namespace dcukern::sampling_detail
