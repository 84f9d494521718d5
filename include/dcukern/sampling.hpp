// Public sampling API: one token per row of logits [B, V] after temperature, top-k, top-p and min-p.
// Include with hipcc or nvcc. Host-only code (selection, explain, the capability table) is in
// dcukern/sampling/select.hpp; the exact rules are in dcukern/sampling/params.hpp.
//
//   dcukern::SamplingParams p;
//   p.logits = {logits, DType::bf16, B, V, V};  p.tokens = {tokens, DType::i32, B};
//   p.top_k.value = 50;  p.top_p.value = 0.95f;  p.seed_ptr = seed;  p.offset_ptr = offset;
//   p.advance_offset = true;
//   dcukern::Status s = dcukern::sample(p, stream);
//
// No allocation, no host synchronisation, no scratch space: capturable in a HIP/CUDA graph. Same inputs,
// parameters, seed and offset: the same tokens, bit for bit. On any error nothing is launched and
// nothing is written.
#pragma once
#include "dcukern/sampling/launch.hpp"

namespace dcukern {

using SamplingOptions = RowOptions;

// Sampling needs no scratch space; the query exists so that every op is used the same way.
inline size_t sampling_workspace_bytes(const SamplingParams&) { return 0; }

inline Status sample(const SamplingParams& p, stream_t stream, const SamplingOptions& opt = {}) {
  const DeviceContext* ctx = nullptr;
  if (Status s = current_device_context(&ctx); !s.ok()) return s;
  const capabilities::SamplingRow* row = nullptr;
  Status s = opt.row ? check_sampling_row(p, *ctx->target.info, opt.row, &row)
                     : select_sampling(p, *ctx->target.info, &row, opt.explain);
  if (!s.ok()) return s;
  const sampling_detail::SamplingArgs a{p.logits.data,
                                        p.logits.row_stride,
                                        p.logits.cols,
                                        p.tokens.data,
                                        p.tokens.dtype == DType::i64,
                                        p.valid,
                                        p.temperature.value,
                                        p.temperature.device,
                                        p.top_k.value,
                                        p.top_k.device,
                                        p.top_p.value,
                                        p.top_p.device,
                                        p.min_p.value,
                                        p.min_p.device,
                                        p.seed,
                                        p.offset,
                                        p.seed_ptr,
                                        p.offset_ptr};
  s = sampling_detail::launch(row->kernel, p.logits.dtype, a, p.logits.rows, stream);
  if (!s.ok()) return s;
  if (p.advance_offset) sampling_detail::sampling_advance_offset_kernel<<<1, 1, 0, stream>>>(p.offset_ptr);
  return runtime_status(runtime_last_error(), "sampling launch");
}

}  // namespace dcukern
