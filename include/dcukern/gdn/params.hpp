// Gated-delta-net (GDN) decode: the recurrent state update and the causal conv1d update in front of it.
// This header holds the op-level parameters, their validation (every precondition of the op, not of a
// particular kernel) and the tensor contracts of the capability rows. Plain C++: no device compiler.
//
// Recurrent step, per sequence b, token t and value head hv (key head h = hv / (HV / H)), state S [K, V]:
//   S <- exp(g) * S;   u = beta * (v - S^T k);   S <- S + k u^T;   o = S^T (scale * q)
// with optional L2 normalisation of q and k (x * rsqrt(sum x^2 + 1e-6)) and optional in-kernel gating
// g = -exp(A_log[hv]) * softplus(a + dt_bias[hv]), beta = sigmoid(b), both in fp32.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "dcukern/core/overlap.hpp"
#include "dcukern/core/status.hpp"
#include "dcukern/core/tensor.hpp"

namespace dcukern {

constexpr int kGdnMaxHeadDim = 256;  // K and V
constexpr int kGdnMaxTokens = 64;    // T per sequence in one call (speculative decoding)
// B x HV per call: the kernels take a block per (sequence, value head, up to 16 columns), and the grid
// holds at most 2^30 blocks (2^24 pairs x 256 / 16 columns).
constexpr int64_t kGdnMaxSequenceHeads = int64_t(1) << 24;
constexpr int kConv1dMaxWidth = 4;
constexpr int64_t kConv1dMaxBatch = int64_t(1) << 24;  // sequences (x rows) per call
constexpr int64_t kConv1dMaxDim = 16384;

// How a state of one (slot, value head) is stored: [K, V] (row i = key index) or [V, K].
enum class GdnStateLayout : uint8_t { kv, vk };
constexpr const char* layout_name(GdnStateLayout l) { return l == GdnStateLayout::kv ? "kv" : "vk"; }

// Strided [batch, tokens, heads, dim] inputs and outputs (core/tensor.hpp).
using GdnInput = ConstHeadsTensor;
using GdnOutput = HeadsTensor;

// State pool [num_slots, HV, K, V] or [num_slots, HV, V, K], updated in place. Heads and elements are
// contiguous inside a slot; slots are slot_stride elements apart (>= HV*K*V).
struct GdnStatePool {
  void* data = nullptr;
  DType dtype = DType::f32;  // f32 or bf16
  GdnStateLayout layout = GdnStateLayout::kv;
  int64_t num_slots = 0;
  int64_t slot_stride = 0;
};

struct GdnParams {
  int batch = 0, tokens = 1;           // B sequences, T tokens each
  int num_k_heads = 0, num_v_heads = 0;  // H, HV = r * H
  int head_k_dim = 0, head_v_dim = 0;    // K, V
  GdnInput q, k;                       // [B, T, H, K]
  GdnInput v;                          // [B, T, HV, V]
  // Gating, one of two forms. In-kernel: a, b [B, T, HV] (dim 1; bf16, f16 or f32) with A_log, dt_bias
  // [HV] fp32. Precomputed: g, beta [B, T, HV] fp32. Exactly one form must be given.
  GdnInput a, b;
  const float* A_log = nullptr;
  const float* dt_bias = nullptr;
  GdnInput g, beta;
  bool l2norm_qk = false;  // normalise q and k in the kernel
  float scale = 0.f;       // applied to q; 0 means K^-1/2
  GdnStatePool state;
  // Slot of each sequence's state [B]; negative (or >= num_slots): padding, skipped, outputs zero.
  const int32_t* slots = nullptr;
  // Optional [B, T] (row stride token_slots_stride): the state after token t is also written to pool
  // slot token_slots[b, t] (negative: not written). Slots of different sequences must not overlap.
  const int32_t* token_slots = nullptr;
  int64_t token_slots_stride = 0;
  GdnOutput o;  // [B, T, HV, V], dtype of q/k/v
};

// Causal conv1d update, per sequence b and channel c with a state of the last width-1 inputs:
//   y = act(bias[c] + sum_{j<width-1} w[c, j] * state[c, j] + w[c, width-1] * x[c]), then the state
//   shifts left by one and takes x. act is SiLU or the identity.
struct Conv1dStatePool {
  void* data = nullptr;  // [num_slots, dim, width-1], contiguous inside a slot
  DType dtype = DType::bf16;  // the activation dtype or f32
  int64_t num_slots = 0;
  int64_t slot_stride = 0;  // elements between slots, >= dim * (width-1)
};

struct Conv1dParams {
  ConstMatrix x;       // [B, dim]
  ConstMatrix weight;  // [dim, width]
  ConstVector bias;    // [dim] or data == nullptr
  Conv1dStatePool state;
  const int32_t* slots = nullptr;  // [B]; negative (or >= num_slots): padding, skipped, outputs zero
  bool silu = true;
  // [B, dim]; overlaps no other view (core/overlap.hpp), but x when both are the same view: in place, as
  // engines that write the update's output over its input do (each kernel reads an element of x before it
  // writes y there, in the same thread).
  Matrix y;
};

// ---- the facts of one call that contracts look at ----
struct GdnCall {
  DType act_dtype, state_dtype;
  GdnStateLayout layout;
  int k, v, tokens;
  int state_align;  // byte alignment of the pool base and of the slot stride
  int batch;
};

struct Conv1dCall {
  DType dtype, state_dtype;
  int width;
  int64_t dim;
  bool contiguous_weight;  // weight row stride == width
  int min_align;           // smallest byte alignment of x, y, weight, bias, state base and strides
  bool strides_aligned;    // x, y row strides multiples of 8 elements
};

namespace detail {
inline bool is_act_dtype(DType t) { return t == DType::bf16 || t == DType::f16; }
inline int stride_alignment(int64_t stride_elems, DType t) {
  const int64_t bytes = stride_elems * dtype_bytes(t);
  int align = 1;
  while (align < 256 && bytes % (2 * align) == 0) align *= 2;
  return align;
}
inline std::string num(int64_t v) { return std::to_string(v); }
}  // namespace detail

// Checks every precondition of the recurrent step. On success fills *call.
inline Status validate_gdn(const GdnParams& p, GdnCall* call) {
  using detail::num;
  auto bad = [](const std::string& m) { return Status::invalid("gdn: " + m); };
  if (!p.q.data || !p.k.data || !p.v.data || !p.o.data || !p.state.data || !p.slots)
    return bad(std::string("null pointer for ") + (!p.q.data       ? "q"
                                                   : !p.k.data     ? "k"
                                                   : !p.v.data     ? "v"
                                                   : !p.o.data     ? "o"
                                                   : !p.state.data ? "state"
                                                                   : "slots"));
  const bool raw = p.a.data || p.b.data || p.A_log || p.dt_bias;
  const bool given = p.g.data || p.beta.data;
  if (raw && given) return bad("gating given twice: pass either a, b, A_log, dt_bias or g, beta");
  if (raw && !(p.a.data && p.b.data && p.A_log && p.dt_bias))
    return bad("in-kernel gating needs all of a, b, A_log and dt_bias");
  if (!raw && !(p.g.data && p.beta.data)) return bad("gating missing: pass a, b, A_log, dt_bias or g, beta");
  if (p.batch < 1) return bad("batch = " + num(p.batch) + ", expected >= 1");
  if (p.tokens < 1 || p.tokens > kGdnMaxTokens)
    return bad("tokens = " + num(p.tokens) + " out of range 1.." + num(kGdnMaxTokens));
  if (p.num_k_heads < 1 || p.num_v_heads < p.num_k_heads || p.num_v_heads % p.num_k_heads)
    return bad("value heads (" + num(p.num_v_heads) + ") must be a positive multiple of key heads (" +
               num(p.num_k_heads) + ")");
  if (p.head_k_dim < 1 || p.head_k_dim > kGdnMaxHeadDim || p.head_v_dim < 1 || p.head_v_dim > kGdnMaxHeadDim)
    return bad("head dims K = " + num(p.head_k_dim) + ", V = " + num(p.head_v_dim) + " out of range 1.." +
               num(kGdnMaxHeadDim));
  if (int64_t(p.batch) * p.num_v_heads > kGdnMaxSequenceHeads)
    return bad("batch x value heads = " + num(int64_t(p.batch) * p.num_v_heads) + " above " +
               num(kGdnMaxSequenceHeads) + " per call");
  const DType act = p.q.dtype;
  if (!detail::is_act_dtype(act))
    return Status::unsupported(std::string("gdn: q dtype ") + dtype_name(act) + " (supported: bf16, f16)");
  if (p.k.dtype != act || p.v.dtype != act || p.o.dtype != act)
    return bad(std::string("dtype mismatch: q ") + dtype_name(act) + ", k " + dtype_name(p.k.dtype) + ", v " +
               dtype_name(p.v.dtype) + ", o " + dtype_name(p.o.dtype));
  if (raw && (p.a.dtype != p.b.dtype || (p.a.dtype != act && p.a.dtype != DType::f32)))
    return bad(std::string("a and b must share a dtype, that of q or f32 (a ") + dtype_name(p.a.dtype) + ", b " +
               dtype_name(p.b.dtype) + ")");
  if (given && (p.g.dtype != DType::f32 || p.beta.dtype != DType::f32))
    return bad(std::string("g and beta must be f32 (g ") + dtype_name(p.g.dtype) + ", beta " +
               dtype_name(p.beta.dtype) + ")");
  if (p.state.dtype != DType::f32 && p.state.dtype != DType::bf16)
    return Status::unsupported(std::string("gdn: state dtype ") + dtype_name(p.state.dtype) +
                               " (supported: f32, bf16)");
  if (p.state.layout != GdnStateLayout::kv && p.state.layout != GdnStateLayout::vk) return bad("unknown state layout");
  const int64_t head_elems = int64_t(p.head_k_dim) * p.head_v_dim;
  if (p.state.num_slots < 1) return bad("state pool has " + num(p.state.num_slots) + " slots");
  if (p.state.slot_stride < p.num_v_heads * head_elems)
    return bad("state slot stride " + num(p.state.slot_stride) + " below HV*K*V = " + num(p.num_v_heads * head_elems));
  const int eb = dtype_bytes(act), ab = dtype_bytes(p.a.dtype);
  if (const char* name = first_misaligned(
          {{"q", p.q.data, eb}, {"k", p.k.data, eb}, {"v", p.v.data, eb}, {"o", p.o.data, eb},
           {"a", p.a.data, ab}, {"b", p.b.data, ab}, {"g", p.g.data, 4}, {"beta", p.beta.data, 4},
           {"A_log", p.A_log, 4}, {"dt_bias", p.dt_bias, 4}, {"state", p.state.data, dtype_bytes(p.state.dtype)},
           {"slots", p.slots, 4}, {"token_slots", p.token_slots, 4}}))
    return bad(std::string(name) + " is not aligned to its element size");
  if (!std::isfinite(p.scale)) return bad("scale is not finite");
  if (p.token_slots && p.token_slots_stride < p.tokens)
    return bad("token_slots row stride " + num(p.token_slots_stride) + " below tokens = " + num(p.tokens));
  struct Named { const char* name; const GdnInput* in; int heads, dim; };
  const Named inputs[] = {{"q", &p.q, p.num_k_heads, p.head_k_dim}, {"k", &p.k, p.num_k_heads, p.head_k_dim},
                          {"v", &p.v, p.num_v_heads, p.head_v_dim}, {"a", &p.a, p.num_v_heads, 1},
                          {"b", &p.b, p.num_v_heads, 1},         {"g", &p.g, p.num_v_heads, 1},
                          {"beta", &p.beta, p.num_v_heads, 1}};
  for (const Named& n : inputs) {
    if (!n.in->data) continue;
    if (const char* why = heads_strides_problem(*n.in, p.batch, p.tokens, n.heads, n.dim, false))
      return bad(std::string(n.name) + ": " + why);
  }
  if (const char* why = heads_strides_problem(p.o, p.batch, p.tokens, p.num_v_heads, p.head_v_dim, true))
    return bad(std::string("o: ") + why);
  const auto heads = [&](const GdnInput& t, int h, int d) { return span_of(t, p.batch, p.tokens, h, d); };
  const int64_t slot_elems = p.num_v_heads * head_elems;
  if (const std::string o = first_overlap(
          {{"o", span_of(p.o, p.batch, p.tokens, p.num_v_heads, p.head_v_dim), true},
           {"state", strided_span(p.state.data, dtype_bytes(p.state.dtype), slot_elems,
                                  {{p.state.num_slots, p.state.slot_stride}}), true},
           {"q", heads(p.q, p.num_k_heads, p.head_k_dim)}, {"k", heads(p.k, p.num_k_heads, p.head_k_dim)},
           {"v", heads(p.v, p.num_v_heads, p.head_v_dim)}, {"a", heads(p.a, p.num_v_heads, 1)},
           {"b", heads(p.b, p.num_v_heads, 1)}, {"g", heads(p.g, p.num_v_heads, 1)},
           {"beta", heads(p.beta, p.num_v_heads, 1)}, {"A_log", array_span(p.A_log, p.num_v_heads)},
           {"dt_bias", array_span(p.dt_bias, p.num_v_heads)}, {"slots", array_span(p.slots, p.batch)},
           {"token_slots", strided_span(p.token_slots, 4, p.tokens, {{p.batch, p.token_slots_stride}})}});
      !o.empty())
    return bad(o);
  const int align =
      std::min(address_alignment(p.state.data), detail::stride_alignment(p.state.slot_stride, p.state.dtype));
  *call = GdnCall{act, p.state.dtype, p.state.layout, p.head_k_dim, p.head_v_dim, p.tokens, align, p.batch};
  return Status::success();
}

// Checks every precondition of the conv1d update. On success fills *call.
inline Status validate_conv1d(const Conv1dParams& p, Conv1dCall* call) {
  using detail::num;
  auto bad = [](const std::string& m) { return Status::invalid("conv1d: " + m); };
  if (!p.x.data || !p.weight.data || !p.y.data || !p.state.data || !p.slots)
    return bad(std::string("null pointer for ") +
               (!p.x.data ? "x" : !p.weight.data ? "weight" : !p.y.data ? "y" : !p.state.data ? "state" : "slots"));
  const DType dt = p.x.dtype;
  if (!detail::is_act_dtype(dt))
    return Status::unsupported(std::string("conv1d: dtype ") + dtype_name(dt) + " (supported: bf16, f16)");
  if (p.weight.dtype != dt || p.y.dtype != dt || (p.bias.data && p.bias.dtype != dt))
    return bad(std::string("dtype mismatch: x ") + dtype_name(dt) + ", weight " + dtype_name(p.weight.dtype) +
               ", y " + dtype_name(p.y.dtype) + (p.bias.data ? std::string(", bias ") + dtype_name(p.bias.dtype) : ""));
  if (p.state.dtype != dt && p.state.dtype != DType::f32)
    return bad(std::string("state dtype ") + dtype_name(p.state.dtype) + " must be that of x or f32");
  const int64_t batch = p.x.rows, dim = p.x.cols, width = p.weight.cols;
  if (batch < 1 || batch > kConv1dMaxBatch)
    return bad("batch = " + num(batch) + " out of range 1.." + num(kConv1dMaxBatch));
  if (dim < 1 || dim > kConv1dMaxDim) return bad("dim = " + num(dim) + " out of range 1.." + num(kConv1dMaxDim));
  if (width < 2 || width > kConv1dMaxWidth)
    return bad("width = " + num(width) + " out of range 2.." + num(kConv1dMaxWidth));
  if (p.weight.rows != dim) return bad("weight has " + num(p.weight.rows) + " rows, expected dim = " + num(dim));
  if (p.bias.data && p.bias.size != dim) return bad("bias has " + num(p.bias.size) + " elements, expected " + num(dim));
  if (p.y.rows != batch || p.y.cols != dim)
    return bad("y is [" + num(p.y.rows) + ", " + num(p.y.cols) + "], expected [" + num(batch) + ", " + num(dim) + "]");
  const int eb = dtype_bytes(dt), sb = dtype_bytes(p.state.dtype);
  if (const char* name = first_misaligned({{"x", p.x.data, eb}, {"weight", p.weight.data, eb}, {"y", p.y.data, eb},
                                           {"bias", p.bias.data, eb}, {"state", p.state.data, sb},
                                           {"slots", p.slots, 4}}))
    return bad(std::string(name) + " is not aligned to its element size");
  if (p.x.row_stride < dim || p.y.row_stride < dim || p.weight.row_stride < width)
    return bad("row stride below row width (x " + num(p.x.row_stride) + ", y " + num(p.y.row_stride) + ", weight " +
               num(p.weight.row_stride) + ")");
  if (p.state.num_slots < 1) return bad("state pool has " + num(p.state.num_slots) + " slots");
  if (p.state.slot_stride < dim * (width - 1))
    return bad("state slot stride " + num(p.state.slot_stride) + " below dim*(width-1) = " + num(dim * (width - 1)));
  if (const std::string o = first_overlap(
          {{"y", span_of(p.y), true},
           {"state", strided_span(p.state.data, sb, dim * (width - 1), {{p.state.num_slots, p.state.slot_stride}}),
            true},
           {"x", same_view(p.y, p.x) ? ByteSpan{} : span_of(p.x)}, {"weight", span_of(p.weight)},
           {"bias", span_of(p.bias)},
           {"slots", array_span(p.slots, batch)}});
      !o.empty())
    return bad(o + (p.y.data == p.x.data ? " (in place: y and x must be the same view)" : ""));
  int align = std::min({address_alignment(p.x.data), address_alignment(p.y.data), address_alignment(p.weight.data),
                        address_alignment(p.state.data), detail::stride_alignment(p.state.slot_stride, p.state.dtype)});
  if (p.bias.data) align = std::min(align, address_alignment(p.bias.data));
  *call = Conv1dCall{dt, p.state.dtype, static_cast<int>(width), dim, p.weight.row_stride == width, align,
                     p.x.row_stride % 8 == 0 && p.y.row_stride % 8 == 0};
  return Status::success();
}

// ---- tensor contracts of the rows. check() returns nullptr when the call is accepted, else why not ----
struct GdnContract {
  DTypeMask state_dtypes = dtypes(DType::f32, DType::bf16);
  uint8_t layouts = 0b11;      // bit 0: kv, bit 1: vk
  uint32_t k_values = 0;       // bit n: K = 2^n accepted; 0: any K
  int v_multiple = 1;          // V must be a multiple of this
  int state_align_bytes = 1;   // pool base and slot stride
  int max_batch = 0;           // B must not exceed this; 0: any B

  constexpr const char* check(const GdnCall& c) const {
    if (!state_dtypes.has(c.state_dtype)) return "state dtype not covered by this row";
    if (!((layouts >> static_cast<unsigned>(c.layout)) & 1u)) return "state layout not covered by this row";
    if (k_values && !(c.k > 0 && (c.k & (c.k - 1)) == 0 && ((k_values >> log2(c.k)) & 1u)))
      return "K not among this row's head sizes";
    if (c.v % v_multiple) return "V is not a multiple of this row's column block";
    if (c.state_align < state_align_bytes) return "state pool or slot stride not aligned for this row's vector loads";
    if (max_batch && c.batch > max_batch) return "batch above this row's largest B";
    return nullptr;
  }
  static constexpr int log2(int x) { return x <= 1 ? 0 : 1 + log2(x / 2); }

  // One line for capability reports: "state f32,bf16 layout kv,vk K=64/128/256 V%32 align16 B<=1".
  std::string describe() const {
    std::string s = "state " + dtype_list(state_dtypes) + " layout";
    s += (layouts & 1u) ? " kv" : "";
    s += (layouts & 2u) ? ((layouts & 1u) ? ",vk" : " vk") : "";
    if (k_values) {
      s += " K=";
      bool first = true;
      for (int b = 0; b < 32; ++b)
        if ((k_values >> b) & 1u) s += (first ? "" : "/") + std::to_string(1 << b), first = false;
    }
    if (v_multiple > 1) s += " V%" + std::to_string(v_multiple);
    if (state_align_bytes > 1) s += " align" + std::to_string(state_align_bytes);
    if (max_batch) s += " B<=" + std::to_string(max_batch);
    return s;
  }
};

struct Conv1dContract {
  DTypeMask dtypes_ = dtypes(DType::bf16, DType::f16);
  DTypeMask state_dtypes = dtypes(DType::f32, DType::bf16, DType::f16);
  int dim_multiple = 1;     // dim must be a multiple of this
  int align_bytes = 1;      // every base address and the state slot stride
  bool needs_contiguous = false;  // weight row stride == width, x / y row strides multiples of 8

  constexpr const char* check(const Conv1dCall& c) const {
    if (!dtypes_.has(c.dtype)) return "dtype not covered by this row";
    if (!state_dtypes.has(c.state_dtype)) return "state dtype not covered by this row";
    if (c.dim % dim_multiple) return "dim is not a multiple of this row's channel vector";
    if (c.min_align < align_bytes)
      return "a pointer or the state slot stride is not aligned for this row's vector loads";
    if (needs_contiguous && !(c.contiguous_weight && c.strides_aligned))
      return "weight rows not contiguous or x / y row strides not multiples of 8";
    return nullptr;
  }

  // One line for capability reports: "bf16,f16 dim%8 align16 contiguous".
  std::string describe() const {
    std::string s = dtype_list(dtypes_);
    if (state_dtypes.bits != dtypes(DType::f32, DType::bf16, DType::f16).bits)
      s += " state " + dtype_list(state_dtypes);
    if (dim_multiple > 1) s += " dim%" + std::to_string(dim_multiple);
    if (align_bytes > 1) s += " align" + std::to_string(align_bytes);
    if (needs_contiguous) s += " contiguous";
    return s;
  }
};

}  // namespace dcukern
