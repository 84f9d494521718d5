// Pieces shared by the kernels that give one block a tile of query rows sharing a KV head (grouped, mma):
// the block's coordinates, the tile's rows with their key ranges, the logit transform, and the epilogue
// that merges the block's partial softmax states (one per slot: a key slot or a warp) in a fixed order
// and writes the final rows (unsplit) or the chunk's partials (split-KV).
#pragma once
#include "dcukern/attention/kernels/common.hpp"

namespace dcukern::attn_detail {

// Block -> (query tile, KV head, chunk, sequence); tile fastest so a KV head's tiles run together (L2).
struct TileBlock {
  int tile, hk, chunk, b;
};
__device__ __forceinline__ TileBlock tile_block(const AttnArgs& a) {
  uint32_t blk = blockIdx.x;  // (grids stay below 2^31 blocks: 32-bit unsigned divisions)
  TileBlock t;
  t.tile = static_cast<int>(blk % uint32_t(a.q_tiles));
  blk /= uint32_t(a.q_tiles);
  t.hk = static_cast<int>(blk % uint32_t(a.num_kv_heads));
  blk /= uint32_t(a.num_kv_heads);
  t.chunk = static_cast<int>(blk % uint32_t(a.num_chunks));
  t.b = static_cast<int>(blk / uint32_t(a.num_chunks));
  return t;
}

// One query row of a tile: its key range in this chunk, position, ALiBi slope (x log2 e), token and head.
struct TileRow {
  int lo, hi, pos, t, h;
  float alibi;
};

// Query rows of one tile: row i of a (sequence, KV head) is token i / group, query head hk * group + i % group.
// Two steps, so that a kernel can issue its other loads before it waits for the context length: the rows
// (no memory reads), then set_keys with the sequence's context length (the key ranges). The two-argument
// constructor does both.
template <int kTile>
struct QueryTile {
  int rows;                  // rows of the tile that exist (<= kTile)
  int t[kTile], h[kTile];    // token and query head of each row
  int lo[kTile], hi[kTile];  // keys [lo, hi) each row attends to within this block's chunk (empty: 0, 0)
  int pos[kTile];            // the row's own position (ALiBi distance)
  float alibi[kTile];        // slope * log2(e), or 0
  int blk_lo, blk_hi;        // union of the rows' ranges: the keys this block reads

  struct RowsOnly {};
  __device__ __forceinline__ QueryTile(const AttnArgs& a, const TileBlock& tb, RowsOnly) {
    const int per_head = a.tokens * a.group;
    rows = per_head - tb.tile * kTile < kTile ? per_head - tb.tile * kTile : kTile;
    // Row i = tile * kTile + g: one division for the first, then (token, head) steps through the group
    // (rows past `rows` repeat the first).
    int tok = tb.tile * kTile / a.group, in_group = tb.tile * kTile - tok * a.group;
#pragma unroll
    for (int g = 0; g < kTile; ++g) {
      t[g] = g < rows ? tok : t[0], h[g] = g < rows ? tb.hk * a.group + in_group : h[0];
      if (++in_group == a.group) in_group = 0, ++tok;
    }
  }
  __device__ __forceinline__ QueryTile(const AttnArgs& a, const TileBlock& tb) : QueryTile(a, tb, RowsOnly{}) {
    set_keys(a, tb, a.context_lens[tb.b]);
  }
  // context_len: the sequence's entry of context_lens, as read (clamped here to [0, capacity]).
  __device__ __forceinline__ void set_keys(const AttnArgs& a, const TileBlock& tb, int64_t context_len) {
    const int64_t ctx = context_len < 0 ? 0 : context_len > a.capacity ? a.capacity : context_len;
    const int64_t c_lo = first_key(a, tb);
    const int64_t c_hi = tb.chunk == a.num_chunks - 1 ? ctx : c_lo + a.chunk_size;
    blk_lo = 0x7fffffff, blk_hi = 0;
#pragma unroll
    for (int g = 0; g < kTile; ++g) {
      const int64_t p = ctx - a.tokens + t[g];
      int64_t l = a.window_left >= 0 && p - a.window_left > 0 ? p - a.window_left : 0, e = p + 1;
      l = l > c_lo ? l : c_lo;
      e = e < c_hi ? e : c_hi;
      if (g >= rows || e <= l) l = e = 0;
      lo[g] = static_cast<int>(l), hi[g] = static_cast<int>(e);
      pos[g] = static_cast<int>(p);
      alibi[g] = a.alibi && g < rows ? a.alibi[h[g]] * kLog2e : 0.f;
      if (e > l) {
        blk_lo = lo[g] < blk_lo ? lo[g] : blk_lo;
        blk_hi = hi[g] > blk_hi ? hi[g] : blk_hi;
      }
    }
    if (blk_hi == 0) blk_lo = 0;  // no row has a key here (empty chunk, context 0): an empty range
  }
  // The chunk's first position: blk_lo whenever the block has keys and no sliding window cuts them.
  __device__ __forceinline__ static int64_t first_key(const AttnArgs& a, const TileBlock& tb) {
    return int64_t(tb.chunk) * a.chunk_size;
  }
  // Token and query head of row g (compile-time or not; valid from the first step).
  __device__ __forceinline__ void token_head(int g, int& tok, int& head) const {
    tok = t[0], head = h[0];
#pragma unroll
    for (int i = 1; i < kTile; ++i)
      if (i == g) tok = t[i], head = h[i];
  }
  // Row g (compile-time or not) without indexing the arrays dynamically (they stay in registers).
  __device__ __forceinline__ TileRow row(int g) const {
    TileRow r{0, 0, 0, 0, 0, 0.f};
#pragma unroll
    for (int i = 0; i < kTile; ++i)
      if (i == g) r = TileRow{lo[i], hi[i], pos[i], t[i], h[i], alibi[i]};
    return r;
  }
};

// Sequence b's q row of token t, head h.
__device__ __forceinline__ const uint16_t* tile_q_row(const AttnArgs& a, int b, int t, int h) {
  return a.q + int64_t(b) * a.q_bs + int64_t(t) * a.q_ts + int64_t(h) * a.q_hs;
}
// The bits of q element d of token t, head h (a kernel that loads several issues them all before it
// converts any: q_value).
__device__ __forceinline__ uint16_t tile_q_bits(const AttnArgs& a, int b, int t, int h, int d) {
  return tile_q_row(a, b, t, h)[d];
}
__device__ __forceinline__ float q_value(const AttnArgs& a, uint16_t bits) {
  return a.q_is_bf16 ? bf16_to_float(bits) : f16_to_float(bits);
}
// q element d of token t, head h, as a float.
__device__ __forceinline__ float tile_q(const AttnArgs& a, int b, int t, int h, int d) {
  return q_value(a, tile_q_bits(a, b, t, h, d));
}

// Before a dependent launch's wait (the kernel before may still run): asks L2 for the lines a tile kernel's
// prologue reads first, so that its loads after the wait hit L2: the sequence's context length, the
// block-table entries of the chunk's first `keys` positions and the tile's q rows. A hint
// (prefetch_l2): a line fetched before the wait still shows what the kernel before writes. Every address
// lies in its array (steps of a line from the first byte, the last clamped to the last byte); one line a
// thread. kThreads: the block's threads.
template <int kTile, int kThreads>
__device__ __forceinline__ void prefetch_prologue_lines(const AttnArgs& a, const TileBlock& tb,
                                                        const QueryTile<kTile>& qt, int64_t keys) {
  constexpr int kLine = 128;
  const int tid = static_cast<int>(threadIdx.x);
  // Lines [0, n) of the `bytes` bytes from p: job i < n.
  auto lines = [](int64_t bytes) { return static_cast<int>((bytes - 1) / kLine) + 1; };
  auto line_of = [](const void* p, int64_t bytes, int i) {
    const int64_t at = int64_t(i) * kLine < bytes - 1 ? int64_t(i) * kLine : bytes - 1;
    return static_cast<const char*>(p) + at;
  };
  if (tid == 0) prefetch_l2(a.context_lens + tb.b);
  const int64_t first = QueryTile<kTile>::first_key(a, tb);
  if (first < a.capacity) {
    const int64_t last = (first + keys < a.capacity ? first + keys : a.capacity) - 1;
    const uint32_t e0 = page_slot(a, static_cast<int>(first)).entry, e1 = page_slot(a, static_cast<int>(last)).entry;
    const int32_t* entry = a.block_table + tb.b * a.bt_stride + e0;
    const int64_t bytes = int64_t(e1 - e0 + 1) * sizeof(int32_t);
    for (int i = tid; i < lines(bytes); i += kThreads) prefetch_l2(line_of(entry, bytes, i));
  }
  const int64_t row_bytes = int64_t(a.head_dim) * sizeof(uint16_t);
  const int row_lines = lines(row_bytes);
  for (int i = tid; i < qt.rows * row_lines; i += kThreads) {
    int t, h;
    qt.token_head(i / row_lines, t, h);
    prefetch_l2(line_of(tile_q_row(a, tb.b, t, h), row_bytes, i % row_lines));
  }
}

// What q is multiplied by before the dot products: the dot is then the logit in base-2 units (no soft
// cap) or the pre-cap logit in natural units. k_scale: the fp8 K scale times kFp8Rescale, or 1.
__device__ __forceinline__ float q_prescale(const AttnArgs& a, float k_scale) {
  return a.scale * k_scale * (a.soft_cap > 0.f ? 1.f : kLog2e);
}

// A dot (prescaled q) under the soft cap (a.soft_cap > 0), in base-2 units.
__device__ __forceinline__ float capped_logit(const AttnArgs& a, float dot) {
  return a.soft_cap * kLog2e * tanh_exp2(dot / a.soft_cap);
}
// A base-2 logit of key j (capped where there is a cap) for a row: ALiBi added, -inf outside the row's range.
__device__ __forceinline__ float placed_logit(const TileRow& r, float x, int j) {
  x += r.alibi * static_cast<float>(j - r.pos);
  return j >= r.lo && j < r.hi ? x : neg_inf();
}
// Dot (prescaled q) of key j for a row -> base-2 logit, -inf outside the row's range.
__device__ __forceinline__ float tile_logit(const AttnArgs& a, const TileRow& r, float dot, int j) {
  return placed_logit(r, a.soft_cap > 0.f ? capped_logit(a, dot) : dot, j);
}

// Epilogue. s_acc[slot][row][d] holds each slot's unnormalised output, s_m / s_l its base-2 max and the sum
// of the weights it applied; s_le the exact sum of those weights, for the LSE (a kernel that rounds its
// weights before applying them normalises by the rounded sum, so the rounding cancels in o, but reports
// the LSE of the unrounded ones; other kernels pass s_l twice). The slots merge in slot order; `v_scale`
// multiplies the result (fp8 V scale, 1 otherwise). Two steps: thread g merges row g's slot states once
// (the slots' weights, v_scale / L folded in; the LSE; where the row's output goes), then the block
// combines the slots' outputs, four elements a thread (s_acc 16-byte aligned). The caller has synchronised
// after writing s_acc.
// kThreads: the block's threads.
template <int kTile, int kSlots, int kDim, int kThreads = kAttnThreads>
__device__ __forceinline__ void finish_tile(const AttnArgs& a, const TileBlock& tb, const QueryTile<kTile>& qt,
                                            const float (&s_acc)[kSlots][kTile][kDim],
                                            const float (&s_m)[kTile][kSlots], const float (&s_l)[kTile][kSlots],
                                            const float (&s_le)[kTile][kSlots], float v_scale) {
  static_assert(kTile <= kAttnThreads, "one thread per row");
  __shared__ float s_w[kTile][kSlots];  // the slots' weights in the row's output
  __shared__ int64_t s_out[kTile];      // the row's first output element (part_o or o)
  __shared__ bool s_empty[kTile];       // no key: zeros
  const bool split = a.part_o != nullptr;
  const int D = a.head_dim, tid = static_cast<int>(threadIdx.x);
  if (tid < qt.rows) {
    const int g = tid;
    float M = neg_inf();
    for (int sl = 0; sl < kSlots; ++sl) M = s_m[g][sl] > M ? s_m[g][sl] : M;
    const bool empty = !(M > neg_inf());
    float L = 0.f, Le = 0.f;
    if (!empty)
      for (int sl = 0; sl < kSlots; ++sl) {
        const float w = device_exp2(s_m[g][sl] - M);
        L += s_l[g][sl] * w;
        Le += s_le[g][sl] * w;
        s_w[g][sl] = w;
      }
    const TileRow r = qt.row(g);
    const int64_t row = (int64_t(tb.b) * a.tokens + r.t) * a.hq + r.h;
    if (!split && !empty && a.sinks) {
      const float sink = device_exp2(a.sinks[r.h] * kLog2e - M);
      L += sink, Le += sink;
    }
    if (!empty) {
      const float f = v_scale / L;
      for (int sl = 0; sl < kSlots; ++sl) s_w[g][sl] *= f;
    }
    s_empty[g] = empty;
    const float lse = empty ? neg_inf() : M + device_log2(Le);
    if (split) {
      s_out[g] = (row * a.num_chunks + tb.chunk) * D;
      a.part_lse[row * a.num_chunks + tb.chunk] = lse;
    } else {
      s_out[g] = int64_t(tb.b) * a.o_bs + int64_t(r.t) * a.o_ts + int64_t(r.h) * a.o_hs;
      if (a.lse) a.lse[row] = empty ? neg_inf() : lse * kLn2;
    }
  }
  __syncthreads();
  // Four consecutive elements a thread (16-byte shared-memory reads; head_dim is a multiple of 8): a
  // quarter of the instructions of one element a thread, which this single-warp-per-scheduler code is
  // bound by. Each element's sum is the same as one at a time (slot order).
  static_assert(kDim % 4 == 0, "whole quads of head elements");
  constexpr int kQuads = kDim / 4;
  for (int idx = tid; idx < qt.rows * kQuads; idx += kThreads) {
    const int g = idx / kQuads, d = idx % kQuads * 4;
    if (d >= D) continue;
    float o[4] = {0.f, 0.f, 0.f, 0.f};
    if (!s_empty[g])
#pragma unroll
      for (int sl = 0; sl < kSlots; ++sl) {
        const float4 x = *reinterpret_cast<const float4*>(&s_acc[sl][g][d]);
        const float w = s_w[g][sl];
        o[0] += x.x * w, o[1] += x.y * w, o[2] += x.z * w, o[3] += x.w * w;
      }
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (split) a.part_o[s_out[g] + d + e] = o[e];
      else a.o[s_out[g] + d + e] = a.q_is_bf16 ? float_to_bf16(o[e]) : float_to_f16(o[e]);
    }
  }
}

}  // namespace dcukern::attn_detail
