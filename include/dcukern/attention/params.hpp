// Paged-KV decode attention: op-level parameters, their validation (every precondition of the op, not of
// a particular kernel) and the tensor contract of the capability rows. Plain C++: no device compiler.
//
// For each sequence b, query token t (T = q_tokens, 1..8) and query head h (KV head h / (Hq / Hkv)):
//   ctx = context_lens[b] (KV tokens in the cache, the T new tokens included: they are the last T),
//   pos = ctx - T + t (the query's own position), keys j in [lo, pos] with
//   lo = window_left >= 0 ? max(0, pos - window_left) : 0 (causal within the T tokens), and
//   s_j = scale * <q, k_j>;  s_j = cap * tanh(s_j / cap) if soft_cap > 0;  s_j += alibi[h] * (j - pos)
//   o = sum_j softmax(s)_j v_j, where a per-head sink adds exp(sink[h]) to the softmax denominator
//   (a virtual key with value zero), and lse = log(sum_j exp(s_j) [+ exp(sink[h])]) (natural log).
// A query row with no key (ctx == 0, or pos < 0 when ctx < T) gives o = 0 and lse = -inf, sink or not.
// Key j lives at page block_table[b, j / page_size], slot j % page_size. K and V pools share one
// geometry given by element strides (64-bit): [num_pages, page_size, Hkv, D] ("NHD") is
//   page_stride = page_size*Hkv*D, token_stride = Hkv*D, head_stride = D,
// and [num_pages, Hkv, page_size, D] ("HND") is page_stride = Hkv*page_size*D, head_stride = page_size*D,
// token_stride = D; padded strides are allowed. The last dim is contiguous.
// KV dtype f16, bf16 or fp8_e4m3 (OCP e4m3fn: bias 7, max 448, 0x7f/0xff NaN, no inf), dequantised as
// float(byte) * k_scale (v_scale). q and o share f16 or bf16.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include "dcukern/core/overlap.hpp"
#include "dcukern/core/status.hpp"
#include "dcukern/core/tensor.hpp"

namespace dcukern {

constexpr int kAttnMaxHeadDim = 256;
constexpr int kAttnMaxQueryTokens = 8;
constexpr int kAttnMaxHeads = 1 << 16;  // query heads per call (tiles count T * Hq / Hkv rows in an int)
constexpr int64_t kAttnMaxContext = (int64_t(1) << 31) - 1;  // positions are 32-bit
constexpr int64_t kAttnMaxQueryRows = (int64_t(1) << 31) - 1;  // B * T * Hq: the kernels' grids count them

// One [B, T, H, D] tensor (q or o): strides in elements, last dim contiguous (core/tensor.hpp).
using AttnQueryView = ConstHeadsTensor;
using AttnOutputView = HeadsTensor;

// K and V page pools: same dtype, geometry and strides (elements).
struct PagedKvCache {
  const void* k = nullptr;
  const void* v = nullptr;
  DType dtype = DType::bf16;  // f16, bf16, fp8_e4m3
  int64_t num_pages = 0;
  int page_size = 0;          // any value >= 1
  int64_t page_stride = 0, token_stride = 0, head_stride = 0;
  float k_scale = 1.f, v_scale = 1.f;  // fp8 only: per-tensor dequantisation scales
};

struct AttentionParams {
  int batch = 0;             // B
  int q_tokens = 1;          // T: query tokens per sequence (speculative verification), causal within them
  int num_q_heads = 0;       // Hq, a multiple of Hkv
  int num_kv_heads = 0;      // Hkv
  int head_dim = 0;          // D, 1..256
  AttnQueryView q;           // [B, T, Hq, D]
  AttnOutputView o;          // [B, T, Hq, D], dtype of q; overlaps no other view (core/overlap.hpp)
  PagedKvCache kv;
  const int32_t* block_table = nullptr;  // [B, max_pages], row stride block_table_stride
  int max_pages = 0;
  int64_t block_table_stride = 0;
  const int32_t* context_lens = nullptr;  // [B], each in 0..max_pages*page_size (device memory)
  // Host-known upper bound of every context length (0: max_pages * page_size). Sizes the split-KV plan
  // and its workspace without reading context_lens; a longer context is still computed correctly (its
  // last chunk takes the rest), only slower.
  int64_t max_context_len = 0;
  float* lse = nullptr;      // optional [B, T, Hq] fp32, contiguous; natural log; overlaps no other view
  float scale = 0.f;         // softmax scale; 0 means D^-1/2
  float soft_cap = 0.f;      // logits soft cap (tanh); 0: off
  int window_left = -1;      // sliding window: keys pos - window_left .. pos; -1: off
  const float* alibi_slopes = nullptr;  // optional [Hq] fp32
  const float* sinks = nullptr;         // optional [Hq] fp32 sink logits
};

// The facts of one call that contracts look at (derived once per call by validate_attention).
struct AttentionCall {
  DType q_dtype, kv_dtype;
  int head_dim, group, q_tokens, page_size;
  int batch, num_q_heads, num_kv_heads;
  int64_t max_context;  // the plan's bound (max_context_len or max_pages * page_size)
  bool has_workspace;   // filled by the entry point: a workspace pointer was given
  bool kv_vec8;         // pools and their strides aligned to 8 elements (vector loads of 8 elements)
};

namespace attn_detail {
inline std::string num(int64_t v) { return std::to_string(v); }
inline bool is_half(DType t) { return t == DType::f16 || t == DType::bf16; }

// The three pool dims (pages, tokens in a page, KV heads) with their strides must nest around the
// contiguous head_dim: sorted by stride, each dim of extent > 1 starts after the previous one ends.
inline const char* pool_strides_problem(const PagedKvCache& kv, int heads, int dim) {
  if (kv.page_stride < 0 || kv.token_stride < 0 || kv.head_stride < 0) return "negative pool stride";
  struct Dim { int64_t stride, extent; };
  Dim d[3] = {{kv.page_stride, kv.num_pages}, {kv.token_stride, kv.page_size}, {kv.head_stride, heads}};
  std::sort(d, d + 3, [](const Dim& a, const Dim& b) { return a.stride < b.stride; });
  int64_t end = dim;  // elements covered by the dims nested so far
  for (const Dim& x : d) {
    if (x.extent <= 1) continue;
    if (x.stride < end) return "pool strides overlap (page, token and head strides must nest around head_dim)";
    end = x.stride * (x.extent - 1) + end;
  }
  return nullptr;
}

// Vector loads of 8 elements: both pools' base addresses and all three strides on 8-element boundaries.
inline bool kv_vec8_aligned(const PagedKvCache& kv) {
  const uintptr_t bytes = static_cast<uintptr_t>(8 * dtype_bytes(kv.dtype));
  return reinterpret_cast<uintptr_t>(kv.k) % bytes == 0 && reinterpret_cast<uintptr_t>(kv.v) % bytes == 0 &&
         kv.page_stride % 8 == 0 && kv.token_stride % 8 == 0 && kv.head_stride % 8 == 0;
}
}  // namespace attn_detail

// The views of a call with the bytes each spans, the written ones first (o, lse), for the aliasing checks
// of validate_attention and of the workspace (attention()). Call after the shapes and strides are checked.
inline std::array<NamedSpan, 9> attention_views(const AttentionParams& p) {
  const int64_t rows = int64_t(p.batch) * p.q_tokens * p.num_q_heads;
  const auto pool = [&](const void* data) {
    return strided_span(data, dtype_bytes(p.kv.dtype), p.head_dim,
                        {{p.kv.num_pages, p.kv.page_stride}, {p.kv.page_size, p.kv.token_stride},
                         {p.num_kv_heads, p.kv.head_stride}});
  };
  return {{{"o", span_of(p.o, p.batch, p.q_tokens, p.num_q_heads, p.head_dim), true},
           {"lse", array_span(p.lse, rows), true},
           {"q", span_of(p.q, p.batch, p.q_tokens, p.num_q_heads, p.head_dim)},
           {"k pool", pool(p.kv.k)},
           {"v pool", pool(p.kv.v)},
           {"block_table", strided_span(p.block_table, 4, p.max_pages, {{p.batch, p.block_table_stride}})},
           {"context_lens", array_span(p.context_lens, p.batch)},
           {"alibi_slopes", array_span(p.alibi_slopes, p.num_q_heads)},
           {"sinks", array_span(p.sinks, p.num_q_heads)}}};
}

// Checks every precondition of the op. On success fills *call (has_workspace false).
inline Status validate_attention(const AttentionParams& p, AttentionCall* call) {
  using attn_detail::num;
  auto bad = [](const std::string& m) { return Status::invalid("attention: " + m); };
  if (!p.q.data || !p.o.data || !p.kv.k || !p.kv.v || !p.block_table || !p.context_lens)
    return bad(std::string("null pointer for ") +
               (!p.q.data ? "q" : !p.o.data ? "o" : !p.kv.k ? "k pool" : !p.kv.v ? "v pool" : !p.block_table
                                                                                                ? "block_table"
                                                                                                : "context_lens"));
  if (p.batch < 1) return bad("batch = " + num(p.batch) + ", expected >= 1");
  if (p.q_tokens < 1 || p.q_tokens > kAttnMaxQueryTokens)
    return bad("q_tokens = " + num(p.q_tokens) + " out of range 1.." + num(kAttnMaxQueryTokens));
  if (p.num_q_heads > kAttnMaxHeads)
    return bad("query heads = " + num(p.num_q_heads) + " above " + num(kAttnMaxHeads));
  if (p.num_kv_heads < 1 || p.num_q_heads < p.num_kv_heads || p.num_q_heads % p.num_kv_heads)
    return bad("query heads (" + num(p.num_q_heads) + ") must be a positive multiple of KV heads (" +
               num(p.num_kv_heads) + ")");
  if (int64_t(p.batch) * p.q_tokens * p.num_q_heads > kAttnMaxQueryRows)
    return Status::unsupported("attention: B * q_tokens * query heads = " +
                               num(int64_t(p.batch) * p.q_tokens * p.num_q_heads) + " above 2^31 - 1 query rows");
  if (p.head_dim < 1 || p.head_dim > kAttnMaxHeadDim)
    return Status::unsupported("attention: head_dim " + num(p.head_dim) + " (supported: 1.." +
                               num(kAttnMaxHeadDim) + ")");
  if (!attn_detail::is_half(p.q.dtype))
    return Status::unsupported(std::string("attention: q dtype ") + dtype_name(p.q.dtype) + " (supported: f16, bf16)");
  if (p.o.dtype != p.q.dtype)
    return bad(std::string("dtype mismatch: q ") + dtype_name(p.q.dtype) + ", o " + dtype_name(p.o.dtype));
  if (!attn_detail::is_half(p.kv.dtype) && p.kv.dtype != DType::fp8_e4m3)
    return Status::unsupported(std::string("attention: KV dtype ") + dtype_name(p.kv.dtype) +
                               " (supported: f16, bf16, fp8_e4m3)");
  if (p.kv.dtype == DType::fp8_e4m3 && (!std::isfinite(p.kv.k_scale) || !std::isfinite(p.kv.v_scale) ||
                                        p.kv.k_scale <= 0.f || p.kv.v_scale <= 0.f))
    return bad("fp8 KV needs finite positive k_scale and v_scale");
  const int act = dtype_bytes(p.q.dtype), kv = dtype_bytes(p.kv.dtype);
  if (const char* name = first_misaligned({{"q", p.q.data, act}, {"o", p.o.data, act}, {"k pool", p.kv.k, kv},
                                           {"v pool", p.kv.v, kv}, {"block_table", p.block_table, 4},
                                           {"context_lens", p.context_lens, 4}, {"lse", p.lse, 4},
                                           {"alibi_slopes", p.alibi_slopes, 4}, {"sinks", p.sinks, 4}}))
    return bad(std::string(name) + " is not aligned to its element size");
  if (p.kv.page_size < 1) return bad("page_size = " + num(p.kv.page_size) + ", expected >= 1");
  if (p.kv.num_pages < 1) return bad("KV pool has " + num(p.kv.num_pages) + " pages");
  if (p.max_pages < 1) return bad("max_pages = " + num(p.max_pages) + ", expected >= 1");
  if (p.block_table_stride < p.max_pages)
    return bad("block_table row stride " + num(p.block_table_stride) + " below max_pages = " + num(p.max_pages));
  const int64_t capacity = int64_t(p.max_pages) * p.kv.page_size;
  if (capacity > kAttnMaxContext)
    return bad("max_pages * page_size = " + num(capacity) + " exceeds 2^31 - 1 positions");
  if (p.max_context_len < 0 || p.max_context_len > capacity)
    return bad("max_context_len = " + num(p.max_context_len) + " out of range 0..max_pages*page_size = " +
               num(capacity));
  if (const char* why = attn_detail::pool_strides_problem(p.kv, p.num_kv_heads, p.head_dim))
    return bad(why);
  if (const char* why = heads_strides_problem(p.q, p.batch, p.q_tokens, p.num_q_heads, p.head_dim, false))
    return bad(std::string("q: ") + why);
  if (const char* why = heads_strides_problem(p.o, p.batch, p.q_tokens, p.num_q_heads, p.head_dim, true))
    return bad(std::string("o: ") + why);
  if (const std::string o = first_overlap(attention_views(p)); !o.empty()) return bad(o);
  if (!std::isfinite(p.scale) || p.scale < 0.f) return bad("scale must be finite and >= 0 (0: head_dim^-1/2)");
  if (!std::isfinite(p.soft_cap) || p.soft_cap < 0.f) return bad("soft_cap must be finite and >= 0 (0: off)");
  if (p.window_left < -1) return bad("window_left = " + num(p.window_left) + ", expected >= 0 or -1 (off)");
  *call = AttentionCall{p.q.dtype,     p.kv.dtype,     p.head_dim,     p.num_q_heads / p.num_kv_heads,
                        p.q_tokens,    p.kv.page_size, p.batch,        p.num_q_heads,
                        p.num_kv_heads, p.max_context_len ? p.max_context_len : capacity, false,
                        attn_detail::kv_vec8_aligned(p.kv)};
  return Status::success();
}

// Opt-in validation mode (debug): every context length in 0..max_pages*page_size and every block-table
// entry a sequence uses in 0..num_pages-1. Reports the first bad entry. `table` is [B, block_table_stride],
// `lens` [B], both host memory. The same checks on the device, where the tables live (graph-safe, no host
// synchronisation): attention_check_tables (attention/table_check.hpp).
inline Status validate_attention_tables(const AttentionParams& p, const int32_t* table, const int32_t* lens) {
  using attn_detail::num;
  const int64_t capacity = int64_t(p.max_pages) * p.kv.page_size;
  for (int b = 0; b < p.batch; ++b) {
    if (lens[b] < 0 || lens[b] > capacity)
      return Status::invalid("attention: context_lens[" + num(b) + "] = " + num(lens[b]) + " out of range 0.." +
                             num(capacity));
    const int64_t used = (int64_t(lens[b]) + p.kv.page_size - 1) / p.kv.page_size;
    for (int64_t i = 0; i < used; ++i) {
      const int32_t page = table[b * p.block_table_stride + i];
      if (page < 0 || page >= p.kv.num_pages)
        return Status::invalid("attention: block_table[" + num(b) + ", " + num(i) + "] = " + num(page) +
                               " outside the pool (0.." + num(p.kv.num_pages - 1) + ")");
    }
  }
  return Status::success();
}

// The word attention_check_tables (attention/table_check.hpp) leaves on the device: kAttnTablesOk, or the
// first bad entry, (b << 32) for context_lens[b] and (b << 32) | (i + 1) for block_table[b, i].
constexpr uint64_t kAttnTablesOk = ~uint64_t(0);
// That word as a Status (host): success, or which entry is bad.
inline Status attention_table_verdict(const AttentionParams& p, uint64_t word) {
  using attn_detail::num;
  if (word == kAttnTablesOk) return Status::success();
  const int64_t b = static_cast<int64_t>(word >> 32), slot = static_cast<int64_t>(word & 0xFFFFFFFFu);
  if (slot == 0)
    return Status::invalid("attention: context_lens[" + num(b) + "] out of range 0.." +
                           num(int64_t(p.max_pages) * p.kv.page_size));
  return Status::invalid("attention: block_table[" + num(b) + ", " + num(slot - 1) + "] outside the pool (0.." +
                         num(p.kv.num_pages - 1) + ")");
}

// The tensor contract of one attention row. check() returns nullptr when the call is accepted, else why not.
struct AttentionContract {
  DTypeMask q_dtypes;
  DTypeMask kv_dtypes;
  int head_dim_max = kAttnMaxHeadDim;
  int q_tokens_max = kAttnMaxQueryTokens;
  bool needs_workspace = false;  // split-KV rows: partials go to the caller's workspace
  bool needs_vec8 = false;       // head_dim a multiple of 8, pools and strides aligned to 8 elements

  constexpr const char* check(const AttentionCall& c) const {
    if (!q_dtypes.has(c.q_dtype)) return "q dtype not covered by this row";
    if (!kv_dtypes.has(c.kv_dtype)) return "KV dtype not covered by this row";
    if (c.head_dim > head_dim_max) return "head_dim above this row's maximum";
    if (c.q_tokens > q_tokens_max) return "more query tokens than this row takes";
    if (needs_vec8 && c.head_dim % 8) return "head_dim not a multiple of 8";
    if (needs_vec8 && !c.kv_vec8) return "KV pools or strides not aligned to 8 elements";
    if (needs_workspace && !c.has_workspace)
      return "row needs a workspace (attention_workspace_bytes) and none was given";
    return nullptr;
  }

  // One line for capability reports: "q f16,bf16 kv f16,bf16,fp8_e4m3 D<=256 T<=8 workspace".
  std::string describe() const {
    std::string s = "q " + dtype_list(q_dtypes) + " kv " + dtype_list(kv_dtypes);
    s += " D<=" + std::to_string(head_dim_max) + " T<=" + std::to_string(q_tokens_max);
    s += " any page size, any GQA";
    if (needs_vec8) s += " D%8=0 KV aligned to 8";
    if (needs_workspace) s += " workspace";
    return s;
  }
};

}  // namespace dcukern
