// Public GEMV / skinny GEMM API. Include with hipcc or nvcc. Host-only code (selection, explain, the
// capability tables) is in dcukern/gemv/select.hpp.
//
//   dcukern::GemvParams p{x, w, bias, y};
//   dcukern::Status s = dcukern::gemv(p, stream);         // picks a row for the current device
//   dcukern::Explanation why; dcukern::gemv(p, stream, {nullptr, &why});   // ... and says why
//
// No device allocation, no host synchronisation: capturable in a HIP/CUDA graph. The first call on a device
// queries its properties, and a kernel instance's first launch its runtime attributes, once (cached:
// README, "Using it"). On any error nothing is launched and y is untouched.
#pragma once
#include "dcukern/gemv/launch.hpp"

namespace dcukern {

using GemvOptions = RowOptions;

// GEMV needs no scratch space; the query exists so that every op is used the same way.
inline size_t gemv_workspace_bytes(const GemvParams&) { return 0; }

inline Status gemv(const GemvParams& p, stream_t stream, const GemvOptions& opt = {}) {
  const DeviceContext* ctx = nullptr;
  if (Status s = current_device_context(&ctx); !s.ok()) return s;
  const capabilities::GemvRow* row = nullptr;
  Status s = opt.row ? check_gemv_row(p, *ctx->target.info, opt.row, &row)
                     : select_gemv(p, *ctx->target.info, &row, opt.explain);
  if (!s.ok()) return s;
  const gemv_detail::GemvArgs a{static_cast<const uint16_t*>(p.x.data), static_cast<const uint16_t*>(p.w.data),
                                static_cast<const uint16_t*>(p.bias.data), static_cast<uint16_t*>(p.y.data),
                                static_cast<int>(p.x.rows), p.w.rows, p.x.cols,
                                p.x.row_stride, p.w.row_stride, p.y.row_stride};
  s = p.x.dtype == DType::f16 ? gemv_detail::launch<DType::f16>(row->kernel, a, *ctx, stream)
                              : gemv_detail::launch<DType::bf16>(row->kernel, a, *ctx, stream);
  return s;
}

}  // namespace dcukern
