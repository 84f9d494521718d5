// Row transforms of logits and probabilities [B, V] (the pieces of a sampler exposed on their own):
//   softmax             logits (f32, bf16, f16) -> probs f32: softmax(logits / T); T == 0: one-hot at the
//                       argmax (lowest index on ties)
//   top_k_mask_logits   logits -> logits (same dtype): the k largest kept, the rest -inf; k = 0 or >= V: copy
//   top_k_renorm_probs  probs f32 -> probs f32: the k largest kept and renormalised, the rest 0
//   top_p_renorm_probs  probs f32 -> probs f32: the smallest prefix (largest first) with mass >= top_p x
//                       (row mass) kept and renormalised, the rest 0; top_p = 1 keeps every non-zero entry
// Order and ties as in sampling: value descending, index ascending. Per-row parameters: one value or a
// device array [B] (PerRow). Invalid rows -- a NaN, logits all -inf, a negative probability, a
// probability row summing to 0, or an out-of-range device parameter -- write 0 (probability outputs)
// or -inf (masked logits) everywhere and valid[row] = 0; other rows write valid = 1.
#pragma once
#include <string>

#include "dcukern/sampling/params.hpp"

namespace dcukern {

enum class RowTransform : uint8_t { softmax, top_k_mask_logits, top_k_renorm_probs, top_p_renorm_probs };

inline const char* row_transform_name(RowTransform t) {
  switch (t) {
    case RowTransform::softmax: return "softmax";
    case RowTransform::top_k_mask_logits: return "top_k_mask_logits";
    case RowTransform::top_k_renorm_probs: return "top_k_renorm_probs";
    case RowTransform::top_p_renorm_probs: return "top_p_renorm_probs";
  }
  return "?";
}

struct RowTransformParams {
  ConstMatrix in;                   // [B, V]
  Matrix out;                       // [B, V]; overlaps no other view, but `in` when both are identical (in place)
  uint8_t* valid = nullptr;         // [B] or nullptr
  PerRow<float> temperature{1.0f};  // softmax
  PerRow<int32_t> top_k{0};         // top_k_mask_logits, top_k_renorm_probs
  PerRow<float> top_p{1.0f};        // top_p_renorm_probs
};

// The dtypes each transform reads and writes.
inline bool row_transform_dtypes_ok(RowTransform t, DType in, DType out) {
  const bool logits = in == DType::f32 || in == DType::bf16 || in == DType::f16;
  switch (t) {
    case RowTransform::softmax: return logits && out == DType::f32;
    case RowTransform::top_k_mask_logits: return logits && out == in;
    default: return in == DType::f32 && out == DType::f32;
  }
}

inline Status validate_row_transform(RowTransform t, const RowTransformParams& p, SamplingCall* call) {
  const std::string op = row_transform_name(t);
  const ConstMatrix& in = p.in;
  if (!in.data) return Status::invalid(op + ": null pointer for the input");
  if (!p.out.data) return Status::invalid(op + ": null pointer for the output");
  if (!row_transform_dtypes_ok(t, in.dtype, p.out.dtype))
    return Status::unsupported(op + ": input " + dtype_name(in.dtype) + ", output " + dtype_name(p.out.dtype) +
                               " (supported: softmax f32/bf16/f16 -> f32, top_k_mask_logits same dtype in and out, "
                               "renorm f32 -> f32)");
  if (const char* name = first_misaligned({{"the input", in.data, dtype_bytes(in.dtype)},
                                           {"the output", p.out.data, dtype_bytes(p.out.dtype)},
                                           {"temperature", p.temperature.device, 4}, {"top_k", p.top_k.device, 4},
                                           {"top_p", p.top_p.device, 4}}))
    return Status::invalid(op + ": " + name + " is not aligned to its element size");
  if (Status shape = sampling_shape_status(op, in.rows, in.cols); !shape.ok()) return shape;
  if (p.out.rows != in.rows || p.out.cols != in.cols)
    return Status::invalid(op + ": output is " + std::to_string(p.out.rows) + " x " + std::to_string(p.out.cols) +
                           ", expected " + std::to_string(in.rows) + " x " + std::to_string(in.cols));
  if (in.row_stride < in.cols || p.out.row_stride < p.out.cols)
    return Status::invalid(op + ": row stride below V");
  const int64_t rows = in.rows;
  if (const std::string o = first_overlap({{"the output", span_of(p.out), true},
                                           {"valid", array_span(p.valid, rows), true},
                                           {"the input", same_view(p.out, in) ? ByteSpan{} : span_of(in)},
                                           {"temperature", array_span(p.temperature.device, rows)},
                                           {"top_k", array_span(p.top_k.device, rows)},
                                           {"top_p", array_span(p.top_p.device, rows)}});
      !o.empty())
    return Status::invalid(op + ": " + o + (p.out.data == in.data ? " (in place: the views must be identical)" : ""));
  using R = SamplingRowRule;
  if (!p.temperature.device && !R::temperature_ok(p.temperature.value))
    return Status::invalid(op + ": temperature " + std::to_string(p.temperature.value) + " (must be in [0, 1e30])");
  if (!p.top_k.device && !R::top_k_ok(p.top_k.value))
    return Status::invalid(op + ": top_k " + std::to_string(p.top_k.value) + " (must be >= 0)");
  if (!p.top_p.device && !R::top_p_ok(p.top_p.value))
    return Status::invalid(op + ": top_p " + std::to_string(p.top_p.value) + " (must be in (0, 1])");
  *call = SamplingCall{in.dtype, in.rows, in.cols, in.row_stride, address_alignment(in.data), false, kFiltersAll};
  return Status::success();
}

}  // namespace dcukern
