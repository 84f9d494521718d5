// Public gated-delta-net decode API: the recurrent state update and the causal conv1d update. Include
// with hipcc or nvcc. Host-only code (selection, explain, the capability tables) is in
// dcukern/gdn/select.hpp; the double-precision host reference in dcukern/ref/gdn.hpp.
//
//   dcukern::Status s = dcukern::gdn_recurrent(p, stream);                 // row for the current device
//   dcukern::Explanation why; dcukern::gdn_recurrent(p, stream, {nullptr, &why});   // ... and says why
//   dcukern::conv1d_update(c, stream);
//
// Both update their state pools in place. No device allocation, no host synchronisation: capturable in a
// HIP/CUDA graph. On any error nothing is launched: outputs and pools are untouched.
#pragma once
#include "dcukern/gdn/launch.hpp"

namespace dcukern {

// Neither op needs scratch space; the queries exist so that every op is used the same way.
inline size_t gdn_workspace_bytes(const GdnParams&) { return 0; }
inline size_t conv1d_workspace_bytes(const Conv1dParams&) { return 0; }

inline Status gdn_recurrent(const GdnParams& p, stream_t stream, const GdnOptions& opt = {}) {
  const DeviceContext* ctx = nullptr;
  if (Status s = current_device_context(&ctx); !s.ok()) return s;
  const capabilities::GdnRow* row = nullptr;
  Status s = opt.row ? check_gdn_row(p, *ctx->target.info, opt.row, &row)
                     : select_gdn(p, *ctx->target.info, &row, opt.explain);
  if (!s.ok()) return s;
  const gdn_detail::GdnArgs a = gdn_detail::make_args(p);
  s = p.q.dtype == DType::bf16 ? gdn_detail::launch_gdn<DType::bf16>(row->kernel, p.state.dtype, a, *ctx, stream)
                               : gdn_detail::launch_gdn<DType::f16>(row->kernel, p.state.dtype, a, *ctx, stream);
  return s;
}

inline Status conv1d_update(const Conv1dParams& p, stream_t stream, const GdnOptions& opt = {}) {
  const DeviceContext* ctx = nullptr;
  if (Status s = current_device_context(&ctx); !s.ok()) return s;
  const capabilities::Conv1dRow* row = nullptr;
  Status s = opt.row ? check_conv1d_row(p, *ctx->target.info, opt.row, &row)
                     : select_conv1d(p, *ctx->target.info, &row, opt.explain);
  if (!s.ok()) return s;
  const gdn_detail::Conv1dArgs a = gdn_detail::make_args(p);
  s = p.x.dtype == DType::bf16
          ? gdn_detail::launch_conv1d<DType::bf16>(row->kernel, p.state.dtype, a, *ctx, stream)
          : gdn_detail::launch_conv1d<DType::f16>(row->kernel, p.state.dtype, a, *ctx, stream);
  return s;
}

}  // namespace dcukern
