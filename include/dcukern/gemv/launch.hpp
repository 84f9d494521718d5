// Launch of the kernel a GEMV row names: grid sizes and the runtime -> template dispatch (dtype, N
// bucket), each switch ending in an explicit error.
#pragma once
#include <algorithm>

#include "dcukern/gemv/kernels/generic.hpp"
#include "dcukern/gemv/kernels/mma.hpp"
#include "dcukern/gemv/kernels/rowwise.hpp"
#include "dcukern/gemv/kernels/splitk.hpp"
#include "dcukern/gemv/select.hpp"
#include "dcukern/platform/device_context.hpp"

namespace dcukern::gemv_detail {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline unsigned grid_size(int64_t blocks) { return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, 1 << 30)); }

template <template <DType> class Dot, DType DT>
Status launch_splitk(const GemvArgs& a, const DeviceContext& ctx, stream_t s) {
  const int64_t rows_per_tile = (kSplitkThreads / ctx.facts.wave_size) * kSplitkRows;
  const dim3 grid(grid_size(std::min<int64_t>(ceil_div(a.m, rows_per_tile), 4LL * ctx.facts.compute_units)));
  const auto kernel = a.n <= 1   ? gemv_splitk_kernel<Dot, DT, 1>
                      : a.n <= 2 ? gemv_splitk_kernel<Dot, DT, 2>
                      : a.n <= 4 ? gemv_splitk_kernel<Dot, DT, 4>
                      : a.n <= 8 ? gemv_splitk_kernel<Dot, DT, 8>
                                 : gemv_splitk_kernel<Dot, DT, 16>;
  return runtime_status(launch_plain(kernel, grid, dim3(kSplitkThreads), 0, s, a), "gemv launch");
}

// The rowwise and mma kernels start with begin_gemv(), so they launch as dependent launches where the
// device has them (launch_dependent_on); the others launch the ordinary way.
template <template <DType> class Dot, DType DT>
Status launch_rowwise(const GemvArgs& a, const DeviceContext& ctx, stream_t s) {
  const int64_t waves_per_block = kRowwiseThreads / ctx.facts.wave_size;
  return launch_dependent_on(ctx, "gemv launch", gemv_rowwise_kernel<Dot, DT>,
                             grid_size(ceil_div(a.m, waves_per_block)), kRowwiseThreads, s, a);
}

#if DCUKERN_PLATFORM_CUDA
// gemv.mma's configurations, chosen by bench/gemv_variants_bench on sm_90
// (capabilities/evidence/gemv-variants-sm_90.json): 4 warps a block, double-buffered groups of 3 (N <= 8)
// or 2 (N <= 16) k-steps, the next kernel launched after each block's last loads.
using MmaNarrowCfg = MmaConfig<4, 3, 1, false, true>;  // N <= 8 (128 registers on sm_90: 4 blocks an SM)
using MmaWideCfg = MmaConfig<4, 2, 1, false, true>;    // N <= 16 (138 registers on sm_90: 3 blocks an SM)
// The same with its registers bounded for 4 blocks an SM (128 on sm_90, 24 bytes spilled).
using MmaWideBoundedCfg = MmaConfig<4, 2, 1, false, true, kWPrefetchBytes, NextLaunch::after_loads, 1, 4>;

// Blocks of gemv_mma_kernel<DT, NT, Cfg> one SM of the context's device holds (0 where the runtime cannot say).
template <DType DT, int NT, class Cfg>
int mma_resident(const DeviceContext& ctx) {
  return resident_blocks(reinterpret_cast<const void*>(&gemv_mma_kernel<DT, NT, Cfg>), ctx.device, Cfg::kThreads);
}

// Whether an N > 8 call of m rows takes the bounded instance: where the unbounded one's blocks (one per 16
// rows) need more than one round of the device and the bounded one's fit in one. Such a second round
// is short of blocks: most SMs idle while a few finish. Measured on the H200 (bf16, one run): qkv (7168
// rows, 448 blocks: 396 a round unbounded, 528 bounded) 30.1 -> 22.9 us at N = 16; where both take
// one round or many, the bounded instance is the slower (o and down 1-2 %, gate_up 1 %, lm_head 5 %).
template <DType DT>
bool mma_wide_bounded(int64_t m, const DeviceContext& ctx) {
  static_assert(MmaWideCfg::kRows == MmaWideBoundedCfg::kRows, "the same blocks");
  const int64_t blocks = ceil_div(m, MmaWideCfg::kRows), cus = ctx.facts.compute_units;
  if (blocks <= cus) return false;  // one round either way (3 blocks or more an SM)
  return blocks > cus * mma_resident<DT, 2, MmaWideCfg>(ctx) &&
         blocks <= cus * mma_resident<DT, 2, MmaWideBoundedCfg>(ctx);
}

// gemv_mma_kernel<DT, NT, Cfg> over the call's rows (Cfg::kRows a block).
template <DType DT, int NT, class Cfg>
Status launch_mma(const GemvArgs& a, const DeviceContext& ctx, stream_t s) {
  return launch_dependent_on(ctx, "gemv launch", gemv_mma_kernel<DT, NT, Cfg>, grid_size(ceil_div(a.m, Cfg::kRows)),
                             Cfg::kThreads, s, a);
}
#endif

template <DType DT>
Status launch(GemvKernel kernel, const GemvArgs& a, const DeviceContext& ctx, stream_t s) {
  const int64_t waves_per_block = 256 / ctx.facts.wave_size;
  switch (kernel) {
    case GemvKernel::generic:
      return runtime_status(
          launch_plain(gemv_generic_kernel<DT>, dim3(grid_size(ceil_div(a.m, waves_per_block))), dim3(256), 0, s, a),
          "gemv launch");
    case GemvKernel::rowwise: return launch_rowwise<FmaDot, DT>(a, ctx, s);
    case GemvKernel::splitk: return launch_splitk<FmaDot, DT>(a, ctx, s);
#if DCUKERN_PLATFORM_HIP
    case GemvKernel::rowwise_fdot2:
    case GemvKernel::rowwise_dot2c:
    case GemvKernel::splitk_fdot2:
    case GemvKernel::splitk_dot2c:
      if constexpr (DT == DType::f16) {
        if (kernel == GemvKernel::rowwise_fdot2) return launch_rowwise<Fdot2Dot, DT>(a, ctx, s);
        if (kernel == GemvKernel::rowwise_dot2c) return launch_rowwise<Dot2cDot, DT>(a, ctx, s);
        if (kernel == GemvKernel::splitk_fdot2) return launch_splitk<Fdot2Dot, DT>(a, ctx, s);
        return launch_splitk<Dot2cDot, DT>(a, ctx, s);
      }
      return Status::unsupported("gemv: dot-product rows take fp16 only");
#endif
#if DCUKERN_PLATFORM_CUDA
    case GemvKernel::mma:
      if (a.n <= 8) return launch_mma<DT, 1, MmaNarrowCfg>(a, ctx, s);
      if (mma_wide_bounded<DT>(a.m, ctx)) return launch_mma<DT, 2, MmaWideBoundedCfg>(a, ctx, s);
      return launch_mma<DT, 2, MmaWideCfg>(a, ctx, s);
#endif
    default: break;
  }
  return Status::unsupported("gemv: kernel not compiled into this build");
}

}  // namespace dcukern::gemv_detail
