// Shared pieces of the attention kernels: the argument block, KV element loads (f16, bf16, fp8 e4m3 with
// its per-tensor scale), the logit transform (scale, soft cap, ALiBi) in base-2 units, and the query
// row's key range. Device math only through platform/fastmath.hpp (exp2/log2 as hardware instructions).
#pragma once
#include <cstdint>

#include "dcukern/attention/params.hpp"
#include "dcukern/core/fast_divide.hpp"
#include "dcukern/platform/dependent_launch.hpp"
#include "dcukern/platform/fastmath.hpp"
#include "dcukern/platform/isa.hpp"
#include "dcukern/platform/numeric.hpp"
#include "dcukern/platform/trace.hpp"
#include "dcukern/platform/warp.hpp"

namespace dcukern::attn_detail {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;
constexpr int kAttnThreads = 128;   // threads per block of the row kernel (2 waves of 64, 4 warps of 32)
constexpr int kMergeThreads = 128;  // threads per block of the merge kernel
constexpr int kKeysPerStep = 4;     // keys a wave has in flight per step (loads issued before reductions)

// Kernel arguments, by value. Strides in elements, 64-bit.
struct AttnArgs {
  const uint16_t* q;
  uint16_t* o;
  const void* k;
  const void* v;
  int64_t q_bs, q_ts, q_hs, o_bs, o_ts, o_hs;
  int64_t page_stride, token_stride, head_stride;
  const int32_t* block_table;
  int64_t bt_stride;
  int64_t capacity;  // max_pages * page_size: contexts are clamped to it (never read past a table row)
  int page_size;
  const int32_t* context_lens;
  float* lse;  // [rows] natural log, or nullptr
  int tokens, hq, group, head_dim;
  float scale, soft_cap, k_scale, v_scale;
  int window_left;
  const float* alibi;  // [Hq] or nullptr
  const float* sinks;  // [Hq] or nullptr
  // split-KV
  float* part_o;    // [rows, num_chunks, D]
  float* part_lse;  // [rows, num_chunks], base 2
  int num_chunks;
  int64_t chunk_size;
  // query-tile kernels (grouped, mma)
  int num_kv_heads;
  int q_tiles;          // query tiles per (sequence, KV head): ceil(tokens * group / tile)
  FastDivide page_div;  // positions -> page index
  bool q_is_bf16;       // q and o dtype (else f16)
  bool kv_rows_16b;     // every K/V row starts 16-byte aligned and head_dim % 16 == 0 (wider copies)
  bool merge_starts_next;  // the merge lets the next kernel launch from its start (attention_merge_starts_next)
};

__device__ __forceinline__ float neg_inf() { return __int_as_float(static_cast<int>(0xff800000u)); }

// OCP fp8 e4m3fn -> fp32, exact (bit manipulation; same on every target).
__device__ __forceinline__ float fp8_e4m3_to_float(uint8_t b) {
  const uint32_t sign = uint32_t(b & 0x80u) << 24, exp = (b >> 3) & 0xfu, mant = b & 7u;
  if (exp == 0xfu && mant == 7u) return __uint_as_float(0x7fc00000u);
  if (exp == 0) {
    const float m = float(mant) * 0.001953125f;  // 2^-9
    return sign ? -m : m;
  }
  return __uint_as_float(sign | ((exp + 120u) << 23) | (mant << 20));
}

template <DType KVT>
__device__ __forceinline__ float load_kv(const void* pool, int64_t i) {
  if constexpr (KVT == DType::fp8_e4m3) return fp8_e4m3_to_float(static_cast<const uint8_t*>(pool)[i]);
  else return to_float<KVT>(static_cast<const uint16_t*>(pool)[i]);
}

// tanh from exp2 (no device math library): 1 - 2 / (e^{2|x|} + 1), sign restored.
__device__ __forceinline__ float tanh_exp2(float x) {
  const float ax = x < 0.f ? -x : x;
  const float r = 1.f - 2.f / (device_exp2(2.f * kLog2e * ax) + 1.f);
  return x < 0.f ? -r : r;
}

// Logit of key j for query position pos and head h, in base-2 units (multiply by ln 2 for natural).
__device__ __forceinline__ float logit2(const AttnArgs& a, float dot, int h, int64_t j, int64_t pos) {
  float x = dot * a.scale;
  if (a.soft_cap > 0.f) x = a.soft_cap * tanh_exp2(x / a.soft_cap);
  if (a.alibi) x += a.alibi[h] * static_cast<float>(j - pos);
  return x * kLog2e;
}

// Query row -> (b, t, h), and the keys [lo, hi) it attends to.
struct RowInfo {
  int b, t, h;
  int64_t pos, lo, hi;
};
__device__ __forceinline__ RowInfo row_info(const AttnArgs& a, int64_t row) {
  RowInfo r;
  r.h = static_cast<int>(row % a.hq);
  const int64_t bt = row / a.hq;
  r.t = static_cast<int>(bt % a.tokens);
  r.b = static_cast<int>(bt / a.tokens);
  int64_t ctx = a.context_lens[r.b];
  ctx = ctx < 0 ? 0 : ctx > a.capacity ? a.capacity : ctx;
  r.pos = ctx - a.tokens + r.t;
  r.hi = r.pos + 1;
  r.lo = a.window_left >= 0 && r.pos - a.window_left > 0 ? r.pos - a.window_left : 0;
  return r;
}

// Element offset of key/value position j of sequence b, KV head hk, in the pools.
__device__ __forceinline__ int64_t kv_offset(const AttnArgs& a, int b, int hk, int64_t j) {
  const int64_t page = a.block_table[b * a.bt_stride + j / a.page_size];
  return page * a.page_stride + (j % a.page_size) * a.token_stride + hk * a.head_stride;
}

// Position j (< 2^31) -> its entry of the sequence's block-table row and its row within that page (no
// integer division).
struct PageSlot {
  uint32_t entry;
  int in_page;
};
__device__ __forceinline__ PageSlot page_slot(const AttnArgs& a, int j) {
  const uint32_t entry = fast_divide_with(uint32_t(j), a.page_div, __umulhi(uint32_t(j), a.page_div.multiplier));
  return PageSlot{entry, j - static_cast<int>(entry) * a.page_size};
}
// Element offset in the pools of row `in_page` of pool page `page`, KV head hk.
__device__ __forceinline__ int64_t kv_page_offset(const AttnArgs& a, int64_t page, int in_page, int hk) {
  return page * a.page_stride + int64_t(in_page) * a.token_stride + int64_t(hk) * a.head_stride;
}
// Position j of sequence b, KV head hk -> element offset in the pools (j < 2^31; no integer division).
__device__ __forceinline__ int64_t kv_offset_fast(const AttnArgs& a, int b, int hk, int j) {
  const PageSlot s = page_slot(a, j);
  return kv_page_offset(a, a.block_table[b * a.bt_stride + s.entry], s.in_page, hk);
}

}  // namespace dcukern::attn_detail
