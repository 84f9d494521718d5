// Public sampling API: one token per row of logits [B, V] after temperature, top-k, top-p and min-p.
// Include with hipcc or nvcc. Host-only code (selection, explain, the capability table) is in
// dcukern/sampling/select.hpp; the exact rules are in dcukern/sampling/params.hpp.
//
//   dcukern::SamplingParams p;
//   p.logits = {logits, DType::bf16, B, V, V};  p.tokens = {tokens, DType::i32, B};
//   p.top_k.value = 50;  p.top_p.value = 0.95f;  p.seed_ptr = seed;  p.offset_ptr = offset;
//   p.advance_offset = true;
//   size_t bytes = dcukern::sampling_workspace_bytes(p);   // once, for the largest B and V
//   dcukern::sampling_workspace_init(workspace, bytes, stream);   // once, after allocating it
//   dcukern::Status s = dcukern::sample(p, workspace, bytes, stream);
//
// With a workspace the split rows can run: one block per tile of a row (512 threads of 16 to 64 elements each, by
// dtype, batch and device: split_items in sampling/workspace.hpp), so that B = 1 is fast too (calls without a
// filter: sampling.unfiltered.vec, one kernel that reads the logits once; calls whose only filter is top-p:
// sampling.top_p.vec, two; min-p alone: sampling.min_p.vec, two); the workspace holds about 2 KB per 8192 elements
// of the batch (20 MB at B = 512, V = 151936; 68 MB at B = 1024, V = 262144). Without one (sample(p, stream)) only
// the one-block-per-row rows can. The workspace must be zeroed once before its first call (sampling_workspace_init,
// or any memset to 0); every call leaves it ready for the next, whatever its B and V, so a call of up to 1024 rows
// is one or two kernel launches (larger batches add a memset of their counters; a call that dies with a device fault
// leaves the workspace undefined: zero it again). No device allocation, no host synchronisation: capturable in a
// HIP/CUDA graph. A workspace serves one call at a time: calls that may overlap (other streams) need their own. Same
// inputs, parameters, seed and offset: the same tokens, bit for bit. A rejected call (validation, workspace)
// launches nothing and writes nothing. A launch the runtime refuses partway (the second kernel of a two-kernel row,
// or the first after the counters' memset above 1024 rows) returns its error and leaves what went out before it:
// tokens of the rows the first kernel finished, the workspace's counters, the offset not advanced.
#pragma once
#include "dcukern/sampling/launch.hpp"

namespace dcukern {

// Zeroes a newly allocated workspace on `stream` (once; see above).
inline Status sampling_workspace_init(void* workspace, size_t workspace_bytes, stream_t stream) {
  return runtime_status(runtime_memset_async(workspace, 0, workspace_bytes, stream), "sampling workspace");
}

inline Status sample(const SamplingParams& p, void* workspace, size_t workspace_bytes, stream_t stream,
                     const SamplingOptions& opt = {}) {
  const DeviceContext* ctx = nullptr;
  if (Status s = current_device_context(&ctx); !s.ok()) return s;
  const capabilities::SamplingRow* row = nullptr;
  const bool has_ws = workspace != nullptr;
  Status s = opt.row ? check_sampling_row(p, *ctx->target.info, opt.row, &row, has_ws)
                     : select_sampling(p, *ctx->target.info, &row, opt.explain, has_ws);
  if (!s.ok()) return s;
  if (row->contract.needs_workspace) {
    const size_t need = sampling_detail::split_workspace_bytes(p.logits.rows, p.logits.cols);  // shape validated
    if (workspace_bytes < need)
      return Status::invalid("sampling: workspace of " + std::to_string(workspace_bytes) + " bytes, the call needs " +
                             std::to_string(need) + " (sampling_workspace_bytes)");
    if (reinterpret_cast<uintptr_t>(workspace) % 256)
      return Status::invalid("sampling: workspace not 256-byte aligned");
    if (const char* v = first_overlapping(strided_span(workspace, 1, int64_t(need)), sampling_views(p)))
      return Status::invalid(std::string("sampling: workspace overlaps ") + v);
  }
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
  s = sampling_detail::launch(row->kernel, p.logits.dtype, a, p.logits.rows, workspace, p.advance_offset, *ctx,
                              stream);
  if (!s.ok()) return s;
  if (p.advance_offset && !sampling_detail::uses_workspace(row->kernel))
    return runtime_status(
        launch_plain(sampling_detail::sampling_advance_offset_kernel<>, dim3(1), dim3(1), 0, stream, p.offset_ptr),
        "sampling offset launch");
  return Status::success();
}

// Without a workspace: the one-block-per-row rows.
inline Status sample(const SamplingParams& p, stream_t stream, const SamplingOptions& opt = {}) {
  return sample(p, nullptr, 0, stream, opt);
}

}  // namespace dcukern
