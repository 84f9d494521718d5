// attention_grouped_kernel — paged decode attention for a tile of query rows that share one KV head: the
// tile reads each key and value once (GQA: up to kTile query heads x tokens per KV read). Unsplit, or one
// KV chunk per block for split-KV (then attention_merge_kernel finishes).
// Contract (the grouped rows): head_dim a multiple of 8 and <= kDim; the pools' base pointers and page,
// token and head strides aligned to 8 elements (one 16-byte load per lane for f16/bf16, 8 bytes for fp8);
// any page size (positions -> pages through a FastDivide), any GQA ratio, q/o f16 or bf16 (runtime).
// Work split: block = (query tile, KV head, chunk, sequence), tile fastest so the tiles of a KV head run
// together and share L2. A key is held by kDim/8 lanes, 8 elements each; the block's threads form kSlots
// key slots that walk the block's keys side by side, kUnroll keys per slot per step with all K and V loads
// issued before any math. Each slot keeps an online softmax (base 2) per query row of the tile; a step's
// scores are reduced across the key's lanes and the step rescales once. The slots' states merge through
// shared memory in slot order (fixed: same inputs, same bits). Output as attention_row_kernel: final
// (sink, LSE) unsplit, or normalised fp32 partial + base-2 LSE per chunk.
#pragma once
#include "dcukern/attention/kernels/common.hpp"
#include "dcukern/attention/kernels/kv_vec.hpp"

namespace dcukern::attn_detail {

// Query rows of one tile: row i of the (sequence, KV head) is token i / group, query head hk * group + i % group.
template <int kTile>
struct QueryTile {
  int rows;                  // rows of the tile that exist (<= kTile)
  int lo[kTile], hi[kTile];  // keys [lo, hi) each row attends to within this block's chunk
  int64_t pos[kTile];        // the row's own position (ALiBi distance)
  float alibi[kTile];        // slope * log2(e), or 0
};

__device__ __forceinline__ float load_q(const AttnArgs& a, const uint16_t* q, int d) {
  return a.q_is_bf16 ? bf16_to_float(q[d]) : f16_to_float(q[d]);
}

template <DType KVT, int kDim, int kTile>
__global__ void __launch_bounds__(kAttnThreads) attention_grouped_kernel(AttnArgs a) {
  constexpr int kLanesPerKey = kDim / 8;
  constexpr int kSlots = kAttnThreads / kLanesPerKey;
  constexpr int kUnroll = kTile >= 8 ? 2 : 4;
  constexpr bool kFp8 = KVT == DType::fp8_e4m3;
  static_assert(kLanesPerKey <= kWarpSize && kAttnThreads % kLanesPerKey == 0, "a key's lanes sit in one wave");
  __shared__ float s_acc[kSlots][kTile][kDim];
  __shared__ float s_m[kTile][kSlots], s_l[kTile][kSlots];

  int64_t blk = blockIdx.x;
  const int tile = static_cast<int>(blk % a.q_tiles);
  blk /= a.q_tiles;
  const int hk = static_cast<int>(blk % a.num_kv_heads);
  blk /= a.num_kv_heads;
  const int chunk = static_cast<int>(blk % a.num_chunks);
  const int b = static_cast<int>(blk / a.num_chunks);
  const bool split = a.part_o != nullptr;

  const int slot = static_cast<int>(threadIdx.x) / kLanesPerKey;
  const int d0 = (static_cast<int>(threadIdx.x) % kLanesPerKey) * 8;
  const bool lane_active = d0 < a.head_dim;

  // The tile's rows, their key ranges clipped to the chunk, and the block's key range (their union).
  int64_t ctx = a.context_lens[b];
  ctx = ctx < 0 ? 0 : ctx > a.capacity ? a.capacity : ctx;
  const int64_t c_lo = int64_t(chunk) * a.chunk_size;
  const int64_t c_hi = chunk == a.num_chunks - 1 ? ctx : c_lo + a.chunk_size;
  const int rows_per_head = a.tokens * a.group;
  QueryTile<kTile> qt;
  qt.rows = rows_per_head - tile * kTile < kTile ? rows_per_head - tile * kTile : kTile;
  const bool capped = a.soft_cap > 0.f;
  const float ks = a.scale * (kFp8 ? a.k_scale * kFp8Rescale : 1.f) * (capped ? 1.f : kLog2e);
  float q[kTile][8];
  int blk_lo = 0x7fffffff, blk_hi = 0;
#pragma unroll
  for (int g = 0; g < kTile; ++g) {
    const int i = tile * kTile + g;
    const int t = i / a.group, h = hk * a.group + i % a.group;
    const int64_t pos = ctx - a.tokens + t;
    int64_t lo = a.window_left >= 0 && pos - a.window_left > 0 ? pos - a.window_left : 0, hi = pos + 1;
    lo = lo > c_lo ? lo : c_lo;
    hi = hi < c_hi ? hi : c_hi;
    if (g >= qt.rows || hi < lo) lo = hi = 0;
    qt.lo[g] = static_cast<int>(lo), qt.hi[g] = static_cast<int>(hi);
    qt.pos[g] = pos;
    qt.alibi[g] = a.alibi && g < qt.rows ? a.alibi[h] * kLog2e : 0.f;
    if (hi > lo) {
      blk_lo = qt.lo[g] < blk_lo ? qt.lo[g] : blk_lo;
      blk_hi = qt.hi[g] > blk_hi ? qt.hi[g] : blk_hi;
    }
    const uint16_t* qp = a.q + int64_t(b) * a.q_bs + int64_t(t) * a.q_ts + int64_t(h) * a.q_hs;
#pragma unroll
    for (int e = 0; e < 8; ++e)
      q[g][e] = g < qt.rows && lane_active && d0 + e < a.head_dim ? load_q(a, qp, d0 + e) * ks : 0.f;
  }
  const float cap_l2 = a.soft_cap * kLog2e, inv_cap = capped ? 1.f / a.soft_cap : 0.f;

  float m[kTile], l[kTile], acc[kTile][8];
#pragma unroll
  for (int g = 0; g < kTile; ++g) {
    m[g] = neg_inf(), l[g] = 0.f;
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[g][e] = 0.f;
  }

  for (int base = blk_lo; base < blk_hi; base += kSlots * kUnroll) {
    KvVec<KVT> kr[kUnroll], vr[kUnroll];
    int j[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      j[u] = base + u * kSlots + slot;
      if (j[u] < blk_hi && lane_active) {
        const int64_t off = kv_offset_fast(a, b, hk, j[u]) + d0;
        kr[u].load(a.k, off);
        vr[u].load(a.v, off);
      } else {
        kr[u].zero();
        vr[u].zero();
      }
    }
    float s[kTile][kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      float kf[8];
      kr[u].to_float(kf);
#pragma unroll
      for (int g = 0; g < kTile; ++g) {
        float dot = 0.f;
#pragma unroll
        for (int e = 0; e < 8; ++e) dot += q[g][e] * kf[e];
        s[g][u] = dot;
      }
    }
#pragma unroll
    for (int g = 0; g < kTile; ++g)
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
#pragma unroll
        for (int mask = kLanesPerKey / 2; mask > 0; mask /= 2) s[g][u] += shfl_xor(s[g][u], mask);
    // Scores -> probabilities (in place), one rescale of the state per row and step.
#pragma unroll
    for (int g = 0; g < kTile; ++g) {
      float mx = m[g];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        float x = capped ? cap_l2 * tanh_exp2(s[g][u] * inv_cap) : s[g][u];
        x += qt.alibi[g] * static_cast<float>(j[u] - qt.pos[g]);
        s[g][u] = j[u] >= qt.lo[g] && j[u] < qt.hi[g] ? x : neg_inf();
        mx = s[g][u] > mx ? s[g][u] : mx;
      }
      const float ref = mx > neg_inf() ? mx : 0.f;  // no key yet: keep everything at zero, no NaN
      const float corr = device_exp2(m[g] - ref);
      m[g] = mx;
      l[g] *= corr;
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[g][e] *= corr;
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        s[g][u] = device_exp2(s[g][u] - ref);
        l[g] += s[g][u];
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      float vf[8];
      vr[u].to_float(vf);
#pragma unroll
      for (int g = 0; g < kTile; ++g)
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[g][e] += s[g][u] * vf[e];
    }
  }

  // Merge the slots in slot order.
#pragma unroll
  for (int g = 0; g < kTile; ++g) {
    if (lane_active)
#pragma unroll
      for (int e = 0; e < 8; ++e) s_acc[slot][g][d0 + e] = acc[g][e];
    if (d0 == 0) s_m[g][slot] = m[g], s_l[g][slot] = l[g];
  }
  __syncthreads();
  const float vs = kFp8 ? a.v_scale * kFp8Rescale : 1.f;
  const int D = a.head_dim;
  for (int idx = static_cast<int>(threadIdx.x); idx < qt.rows * D; idx += kAttnThreads) {
    const int g = idx / D, d = idx % D;
    float M = neg_inf();
    for (int sl = 0; sl < kSlots; ++sl) M = s_m[g][sl] > M ? s_m[g][sl] : M;
    const bool empty = !(M > neg_inf());
    float L = 0.f, o = 0.f;
    if (!empty) {
      for (int sl = 0; sl < kSlots; ++sl) {
        const float w = device_exp2(s_m[g][sl] - M);
        L += s_l[g][sl] * w;
        o += s_acc[sl][g][d] * w;
      }
    }
    const int i = tile * kTile + g, t = i / a.group, h = hk * a.group + i % a.group;
    const int64_t out_row = (int64_t(b) * a.tokens + t) * a.hq + h;
    if (!split && !empty && a.sinks) L += device_exp2(a.sinks[h] * kLog2e - M);
    o = empty ? 0.f : o * vs / L;
    if (split) {
      a.part_o[(out_row * a.num_chunks + chunk) * D + d] = o;
      if (d == 0) a.part_lse[out_row * a.num_chunks + chunk] = empty ? neg_inf() : M + device_log2(L);
    } else {
      uint16_t* op = a.o + int64_t(b) * a.o_bs + int64_t(t) * a.o_ts + int64_t(h) * a.o_hs;
      op[d] = a.q_is_bf16 ? float_to_bf16(o) : float_to_f16(o);
      if (d == 0 && a.lse) a.lse[out_row] = empty ? neg_inf() : (M + device_log2(L)) * kLn2;
    }
  }
}

}  // namespace dcukern::attn_detail
