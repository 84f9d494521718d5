// Public row transforms of logits / probabilities [B, V]: softmax with temperature, top_k_mask_logits,
// top_k_renorm_probs, top_p_renorm_probs (rules: dcukern/sampling/transform_params.hpp). Include with
// hipcc or nvcc.
//
//   dcukern::RowTransformParams p;
//   p.in = {logits, DType::bf16, B, V, V};  p.out = {probs, DType::f32, B, V, V};
//   p.temperature.value = 0.7f;
//   dcukern::Status s = dcukern::softmax(p, stream);
//
// No workspace, no allocation, no host synchronisation: capturable in a graph. Deterministic. On any
// error nothing is launched and nothing is written.
#pragma once
#include "dcukern/platform/device_context.hpp"
#include "dcukern/sampling/transform_launch.hpp"

namespace dcukern {

inline Status row_transform(RowTransform t, const RowTransformParams& p, stream_t stream, const RowOptions& opt = {}) {
  const DeviceContext* ctx = nullptr;
  if (Status s = current_device_context(&ctx); !s.ok()) return s;
  const capabilities::TransformRow* row = nullptr;
  Status s = select_row_transform(t, p, *ctx->target.info, opt.row, &row, opt.explain);
  if (!s.ok()) return s;
  const sampling_detail::TransformArgs a{p.in.data,           p.in.row_stride,    p.in.cols,       p.out.data,
                                         p.out.row_stride,    p.valid,            p.temperature.value,
                                         p.temperature.device, p.top_k.value,     p.top_k.device,  p.top_p.value,
                                         p.top_p.device};
  return sampling_detail::launch_transform(row->kernel, t, p.in.dtype, a, p.in.rows, stream);
}

inline Status softmax(const RowTransformParams& p, stream_t s, const RowOptions& o = {}) {
  return row_transform(RowTransform::softmax, p, s, o);
}
inline Status top_k_mask_logits(const RowTransformParams& p, stream_t s, const RowOptions& o = {}) {
  return row_transform(RowTransform::top_k_mask_logits, p, s, o);
}
inline Status top_k_renorm_probs(const RowTransformParams& p, stream_t s, const RowOptions& o = {}) {
  return row_transform(RowTransform::top_k_renorm_probs, p, s, o);
}
inline Status top_p_renorm_probs(const RowTransformParams& p, stream_t s, const RowOptions& o = {}) {
  return row_transform(RowTransform::top_p_renorm_probs, p, s, o);
}

}  // namespace dcukern
