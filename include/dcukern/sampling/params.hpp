// Sampling from logits: parameters, validation and the tensor contract of a row.
//
// logits [B, V] (f32, bf16 or f16; rows contiguous, row_stride >= V) -> tokens [B] (i32 or i64), and an
// optional validity flag per row. Per-row parameters are one value for the batch, or a device array [B]
// that overrides it:
//   temperature  T > 0 samples softmax(logits / T); T == 0 is greedy (argmax, lowest index on ties);
//                T <= kSamplingMaxTemperature (1e30: log2(e) / T stays a normal float, so -inf logits keep
//                weight 0)
//   top_k        0 (or >= V) is off; else keep the k largest logits
//   top_p        1 is off; else keep the smallest prefix (largest first) with mass >= top_p
//   min_p        0 is off; else keep tokens with probability >= min_p * (largest probability)
// Order: the sort order is logit descending, index ascending on ties; top-k, then top-p (on the
// renormalised top-k set), then min-p; the token is drawn from the renormalised set that remains.
// A row holding a NaN, a row whose entries are all -inf, or a row whose device-array parameter is out of
// range writes token kSamplingInvalidToken (0) and valid[row] = 0; every other row writes valid = 1.
// +inf logits count as the largest finite float (mass shared equally among them).
// Random numbers: Philox 4x32-10, key = seed, counter = (offset, row, stream) (philox.hpp: every row kind
// draws from word 0 of stream 0; the top-p row's proposals take stream 0's other words too, and its
// fallback stream 1); (seed, offset) as host values or device pointers. With advance_offset, the op adds 1
// to *offset_ptr after the draw (on the stream), so that a replayed graph draws new numbers.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "dcukern/core/overlap.hpp"
#include "dcukern/core/status.hpp"
#include "dcukern/core/tensor.hpp"
#include "dcukern/platform/detect.hpp"

namespace dcukern {

constexpr int64_t kSamplingMaxVocab = int64_t(1) << 20;
constexpr int64_t kSamplingMaxBatch = int64_t(1) << 20;
constexpr float kSamplingMaxTemperature = 1e30f;  // (the parameter comment above says why)
constexpr int64_t kSamplingInvalidToken = 0;

// One value for the whole batch, or (device != nullptr) a device array [B] that replaces it.
template <class T>
struct PerRow {
  T value;
  const T* device = nullptr;
};

struct SamplingParams {
  ConstMatrix logits;                  // [B, V]
  Vector tokens;                       // [B], i32 or i64 (outputs overlap no other view: core/overlap.hpp)
  uint8_t* valid = nullptr;            // [B] or nullptr
  PerRow<float> temperature{1.0f};
  PerRow<int32_t> top_k{0};
  PerRow<float> top_p{1.0f};
  PerRow<float> min_p{0.0f};
  uint64_t seed = 0;
  uint64_t offset = 0;
  const uint64_t* seed_ptr = nullptr;  // device; overrides seed
  uint64_t* offset_ptr = nullptr;      // device; overrides offset
  bool advance_offset = false;         // *offset_ptr += 1 after the draw (needs offset_ptr)
};

// The filters of sampling: a bit each, in a mask (SamplingCall::filters, SamplingContract::filters).
enum SamplingFilter : uint8_t {
  kFilterTopK = 1,
  kFilterTopP = 2,
  kFilterMinP = 4,
  kFiltersAll = kFilterTopK | kFilterTopP | kFilterMinP,
};

// The filters that may remove a token from some row of the call: each one whose value is a device array,
// or a host value that filters (top_k in 1..V-1, top_p < 1, min_p > 0).
inline uint8_t sampling_filters(const SamplingParams& p) {
  uint8_t f = 0;
  if (p.top_k.device || (p.top_k.value != 0 && int64_t(p.top_k.value) < p.logits.cols)) f |= kFilterTopK;
  if (p.top_p.device || p.top_p.value < 1.0f) f |= kFilterTopP;
  if (p.min_p.device || p.min_p.value != 0.0f) f |= kFilterMinP;
  return f;
}

// The facts of one call that contracts look at.
struct SamplingCall {
  DType dtype;
  int64_t batch, vocab, row_stride;
  int align;           // byte alignment of the logits base pointer
  bool has_workspace;  // filled by the entry point: a workspace was given
  uint8_t filters;     // SamplingFilter bits that may be on (sampling_filters; row transforms: kFiltersAll)
};

// Per-row parameter checks shared by host validation and (for device arrays) the kernel.
struct SamplingRowRule {
  DCUKERN_HD static constexpr bool temperature_ok(float t) {  // false for NaN and +inf
    return t >= 0.0f && t <= kSamplingMaxTemperature;
  }
  DCUKERN_HD static constexpr bool top_k_ok(int32_t k) { return k >= 0; }
  DCUKERN_HD static constexpr bool top_p_ok(float p) { return p > 0.0f && p <= 1.0f; }
  DCUKERN_HD static constexpr bool min_p_ok(float p) { return p >= 0.0f && p <= 1.0f; }
};

// A [B, V] logits shape against the bounds every sampling op shares (op names the caller in the message).
inline Status sampling_shape_status(const std::string& op, int64_t rows, int64_t cols) {
  if (rows < 1 || rows > kSamplingMaxBatch)
    return Status::invalid(op + ": batch B = " + std::to_string(rows) + " out of range 1.." +
                           std::to_string(kSamplingMaxBatch));
  if (cols < 1 || cols > kSamplingMaxVocab)
    return Status::invalid(op + ": vocabulary V = " + std::to_string(cols) + " out of range 1.." +
                           std::to_string(kSamplingMaxVocab));
  return Status::success();
}

// The views of a call with the bytes each spans, the written ones first (tokens, valid, and the offset
// counter when the call advances it), for the aliasing checks of validate_sampling and of the workspace
// (sample()). Call after the shapes are checked.
inline std::array<NamedSpan, 9> sampling_views(const SamplingParams& p) {
  const int64_t rows = p.logits.rows;
  return {{{"tokens", span_of(p.tokens), true},
           {"valid", array_span(p.valid, rows), true},
           {"offset_ptr", array_span(p.offset_ptr, 1), p.advance_offset},
           {"logits", span_of(p.logits)},
           {"temperature", array_span(p.temperature.device, rows)},
           {"top_k", array_span(p.top_k.device, rows)},
           {"top_p", array_span(p.top_p.device, rows)},
           {"min_p", array_span(p.min_p.device, rows)},
           {"seed_ptr", array_span(p.seed_ptr, 1)}}};
}

inline Status validate_sampling(const SamplingParams& p, SamplingCall* call) {
  const ConstMatrix& l = p.logits;
  if (!l.data) return Status::invalid("sampling: null pointer for logits");
  if (!p.tokens.data) return Status::invalid("sampling: null pointer for tokens");
  if (l.dtype != DType::f32 && l.dtype != DType::bf16 && l.dtype != DType::f16)
    return Status::unsupported(std::string("sampling: logits dtype ") + dtype_name(l.dtype) +
                               " (supported: f32, bf16, f16)");
  if (p.tokens.dtype != DType::i32 && p.tokens.dtype != DType::i64)
    return Status::unsupported(std::string("sampling: tokens dtype ") + dtype_name(p.tokens.dtype) +
                               " (supported: i32, i64)");
  if (Status shape = sampling_shape_status("sampling", l.rows, l.cols); !shape.ok()) return shape;
  if (l.row_stride < l.cols)
    return Status::invalid("sampling: logits row stride " + std::to_string(l.row_stride) + " < V = " +
                           std::to_string(l.cols));
  if (p.tokens.size != l.rows)
    return Status::invalid("sampling: tokens has " + std::to_string(p.tokens.size) + " elements, expected B = " +
                           std::to_string(l.rows));
  if (const char* name = first_misaligned({{"logits", l.data, dtype_bytes(l.dtype)},
                                           {"tokens", p.tokens.data, dtype_bytes(p.tokens.dtype)},
                                           {"temperature", p.temperature.device, 4}, {"top_k", p.top_k.device, 4},
                                           {"top_p", p.top_p.device, 4}, {"min_p", p.min_p.device, 4},
                                           {"seed_ptr", p.seed_ptr, 8}, {"offset_ptr", p.offset_ptr, 8}}))
    return Status::invalid(std::string("sampling: ") + name + " is not aligned to its element size");
  if (p.tokens.dtype == DType::i32 && l.cols > INT32_MAX)
    return Status::invalid("sampling: i32 tokens cannot hold V");
  using R = SamplingRowRule;
  if (!p.temperature.device && !R::temperature_ok(p.temperature.value))
    return Status::invalid("sampling: temperature " + std::to_string(p.temperature.value) + " (must be in [0, 1e30])");
  if (!p.top_k.device && !R::top_k_ok(p.top_k.value))
    return Status::invalid("sampling: top_k " + std::to_string(p.top_k.value) + " (must be >= 0)");
  if (!p.top_p.device && !R::top_p_ok(p.top_p.value))
    return Status::invalid("sampling: top_p " + std::to_string(p.top_p.value) + " (must be in (0, 1])");
  if (!p.min_p.device && !R::min_p_ok(p.min_p.value))
    return Status::invalid("sampling: min_p " + std::to_string(p.min_p.value) + " (must be in [0, 1])");
  if (p.advance_offset && !p.offset_ptr)
    return Status::invalid("sampling: advance_offset needs offset_ptr (a device counter)");
  if (const std::string o = first_overlap(sampling_views(p)); !o.empty()) return Status::invalid("sampling: " + o);
  *call = SamplingCall{l.dtype, l.rows, l.cols, l.row_stride, address_alignment(l.data), false,
                       sampling_filters(p)};
  return Status::success();
}

// The tensor contract of one sampling row. check() returns nullptr when the call is accepted.
struct SamplingContract {
  DTypeMask dtypes;
  int align_bytes = 1;     // logits base address
  int vector_bytes = 1;    // V and the row stride, in bytes, must be multiples of this
  int64_t vocab_max = kSamplingMaxVocab;
  int64_t batch_min = 1;         // smaller batches take a row further down (where this one is slower)
  bool needs_workspace = false;  // split rows: per-tile partials go to the caller's workspace
  uint8_t filters = kFiltersAll;  // the filters the row applies: calls with any other on go elsewhere

  constexpr const char* check(const SamplingCall& c) const {
    if (!dtypes.has(c.dtype)) return "dtype not covered by this row";
    if (c.filters & ~filters) return filters_reason();
    if (needs_workspace && !c.has_workspace)
      return "row needs a workspace (sampling_workspace_bytes) and none was given";
    if (c.vocab > vocab_max) return "V above this row's range";
    if (c.batch < batch_min) return "B below this row's range";
    if (c.align < align_bytes) return "logits are not aligned for this row's vector loads";
    const int64_t elt = dtype_bytes(c.dtype);
    if ((c.vocab * elt) % vector_bytes || (c.row_stride * elt) % vector_bytes)
      return "V or the row stride is not a multiple of the row's vector width";
    return nullptr;
  }

  // One line for capability reports: "f32,f16,bf16 V<=262144 B>=64 align16 vec16B".
  std::string describe() const {
    std::string s = dtype_list(dtypes) + " V<=" + std::to_string(vocab_max);
    if (batch_min > 1) s += " B>=" + std::to_string(batch_min);
    if (align_bytes > 1) s += " align" + std::to_string(align_bytes);
    if (vector_bytes > 1) s += " vec" + std::to_string(vector_bytes) + "B";
    if (needs_workspace) s += " workspace";
    if (filters != kFiltersAll) s += " filters:" + filter_list(filters);
    return s;
  }

  // Why a call with a filter outside `filters` goes elsewhere.
  constexpr const char* filters_reason() const {
    switch (filters) {
      case 0: return "row draws without filters: top_k, top_p and min_p must be off, as host values";
      case kFilterTopP: return "row filters by top-p alone: top_k and min_p must be off, as host values";
      case kFilterMinP: return "row filters by min-p alone: top_k and top_p must be off, as host values";
      default: return "a filter this row does not apply is on (a device array, or a host value that filters)";
    }
  }
  // "none", "top_p", "top_k,min_p".
  static std::string filter_list(uint8_t f) {
    std::string s;
    for (const auto& [bit, name] : {std::pair{kFilterTopK, "top_k"}, {kFilterTopP, "top_p"}, {kFilterMinP, "min_p"}})
      if (f & bit) s += (s.empty() ? "" : ",") + std::string(name);
    return s.empty() ? "none" : s;
  }
};

}  // namespace dcukern
