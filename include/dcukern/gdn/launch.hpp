// Launch of the kernel a GDN / conv1d row names: grid sizes and the runtime -> template dispatch
// (activation dtype, state dtype, K, width), each switch ending in an explicit error.
#pragma once
#include <algorithm>
#include <string>

#include "dcukern/gdn/kernels/conv1d_generic.hpp"
#include "dcukern/gdn/kernels/conv1d_lanes.hpp"
#include "dcukern/gdn/kernels/conv1d_staged.hpp"
#include "dcukern/gdn/kernels/conv1d_vec8.hpp"
#include "dcukern/gdn/kernels/recurrent_generic.hpp"
#include "dcukern/gdn/kernels/recurrent_tiled.hpp"
#include "dcukern/gdn/select.hpp"
#include "dcukern/platform/device_context.hpp"

namespace dcukern::gdn_detail {

inline unsigned grid_size(int64_t blocks) { return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, 1 << 30)); }

// Every GDN kernel starts with begin_dependent_kernel(), so each launches as a dependent launch where the
// device has one (launch_dependent_on).

template <template <int, int, DType> class Tile, int Cols, DType DT, DType SDT>
Status launch_tiled(GdnArgs a, const DeviceContext& ctx, stream_t s) {
  a.col_div = make_fast_divide(static_cast<uint32_t>(a.vdim / Cols));
  const unsigned grid = grid_size(int64_t(a.batch) * a.hv * (a.vdim / Cols));
  auto launch = [&](auto kernel) {
    return launch_dependent_on(ctx, "gdn: tiled launch", kernel, dim3(grid), dim3(kTiledThreads), s, a);
  };
  switch (a.kdim) {
    case 64: return launch(gdn_tiled_kernel<Tile<Cols, 64, SDT>, DT>);
    case 128: return launch(gdn_tiled_kernel<Tile<Cols, 128, SDT>, DT>);
    case 256: return launch(gdn_tiled_kernel<Tile<Cols, 256, SDT>, DT>);
    default: return Status::unsupported("gdn: tiled kernels take K in {64, 128, 256}, not " + std::to_string(a.kdim));
  }
}

template <DType DT, DType SDT>
Status launch_gdn(GdnKernel kernel, const GdnArgs& a, const DeviceContext& ctx, stream_t s) {
  switch (kernel) {
    case GdnKernel::generic:
      return launch_dependent_on(ctx, "gdn: generic launch", gdn_generic_kernel<DT, SDT>,
                                 dim3(grid_size(int64_t(a.batch) * a.hv)), dim3(kGenericThreads), s, a);
    case GdnKernel::tiled_kv: return launch_tiled<KvTile, 32, DT, SDT>(a, ctx, s);
    case GdnKernel::tiled_vk: return launch_tiled<VkTile, 32, DT, SDT>(a, ctx, s);
    case GdnKernel::tiled_kv16: return launch_tiled<KvTile, 16, DT, SDT>(a, ctx, s);
    case GdnKernel::tiled_vk16: return launch_tiled<VkTile, 16, DT, SDT>(a, ctx, s);
  }
  return Status::unsupported("gdn: unknown kernel");
}

template <DType DT>
Status launch_gdn(GdnKernel kernel, DType state, const GdnArgs& a, const DeviceContext& ctx, stream_t s) {
  if (state == DType::f32) return launch_gdn<DT, DType::f32>(kernel, a, ctx, s);
  if (state == DType::bf16) return launch_gdn<DT, DType::bf16>(kernel, a, ctx, s);
  return Status::unsupported(std::string("gdn: state dtype ") + dtype_name(state));
}

// The kernels with a compile-time width: lanes (a block per kLanesSeqs sequences x kLanesChannels
// channels), vec8 (grid-stride over (sequence, 8 channels)) or vec8_staged (one block per kStagedSeqs
// sequences x kStagedChannels channels).
template <int W, DType DT, DType SDT>
Status launch_conv1d_width(Conv1dKernel kernel, const Conv1dArgs& a, const DeviceContext& ctx, stream_t s) {
  if (kernel == Conv1dKernel::lanes) {
    const dim3 grid(static_cast<unsigned>(a.dim / kLanesChannels),
                    static_cast<unsigned>(std::min(conv1d_lanes_groups(a.batch), kLanesMaxGridY)));
    return launch_dependent_on(ctx, "conv1d: lanes launch", conv1d_lanes_kernel<W, DT, SDT>, grid,
                               dim3(kLanesTeam * kLanesSeqs), s, a);
  }
  if (kernel == Conv1dKernel::vec8_staged) {
    const dim3 grid(grid_size((int64_t(a.batch) + kStagedSeqs<SDT> - 1) / kStagedSeqs<SDT>),
                    static_cast<unsigned>((a.dim + kStagedChannels - 1) / kStagedChannels));
    return launch_dependent_on(ctx, "conv1d: staged launch", conv1d_staged_kernel<W, DT, SDT>, grid,
                               dim3(kConvThreads), s, a);
  }
  const int64_t threads = int64_t(a.batch) * (a.dim / 8);
  const int64_t blocks = std::min<int64_t>((threads + kConvThreads - 1) / kConvThreads, 64LL * ctx.facts.compute_units);
  return launch_dependent_on(ctx, "conv1d: vec8 launch", conv1d_vec8_kernel<W, DT, SDT>, dim3(grid_size(blocks)),
                             dim3(kConvThreads), s, a);
}

template <DType DT, DType SDT>
Status launch_conv1d(Conv1dKernel kernel, const Conv1dArgs& a, const DeviceContext& ctx, stream_t s) {
  switch (kernel) {
    case Conv1dKernel::generic: {
      const int64_t threads = int64_t(a.batch) * a.dim;
      const int64_t blocks =
          std::min<int64_t>((threads + kConvThreads - 1) / kConvThreads, 64LL * ctx.facts.compute_units);
      return launch_dependent_on(ctx, "conv1d: generic launch", conv1d_generic_kernel<DT, SDT>,
                                 dim3(grid_size(blocks)), dim3(kConvThreads), s, a);
    }
    case Conv1dKernel::lanes:
    case Conv1dKernel::vec8:
    case Conv1dKernel::vec8_staged:
      switch (a.width) {
        case 2: return launch_conv1d_width<2, DT, SDT>(kernel, a, ctx, s);
        case 3: return launch_conv1d_width<3, DT, SDT>(kernel, a, ctx, s);
        case 4: return launch_conv1d_width<4, DT, SDT>(kernel, a, ctx, s);
        default: return Status::unsupported("conv1d: width " + std::to_string(a.width) + " (supported: 2..4)");
      }
  }
  return Status::unsupported("conv1d: unknown kernel");
}

template <DType DT>
Status launch_conv1d(Conv1dKernel kernel, DType state, const Conv1dArgs& a, const DeviceContext& ctx, stream_t s) {
  if (state == DType::f32) return launch_conv1d<DT, DType::f32>(kernel, a, ctx, s);
  if (state == DT) return launch_conv1d<DT, DT>(kernel, a, ctx, s);
  return Status::unsupported(std::string("conv1d: state dtype ") + dtype_name(state));
}

inline Strided strided(const GdnInput& in) { return {in.data, in.batch_stride, in.token_stride, in.head_stride}; }

inline GdnArgs make_args(const GdnParams& p) {
  GdnArgs a{};
  a.q = strided(p.q);
  a.k = strided(p.k);
  a.v = strided(p.v);
  a.a = strided(p.a);
  a.b = strided(p.b);
  a.g = strided(p.g);
  a.beta = strided(p.beta);
  a.ab_dtype = p.a.dtype;
  a.A_log = p.A_log;
  a.dt_bias = p.dt_bias;
  a.raw_gating = p.a.data != nullptr;
  a.l2norm = p.l2norm_qk;
  a.kv_layout = p.state.layout == GdnStateLayout::kv;
  a.scale = p.scale != 0.f ? p.scale : 1.0f / std::sqrt(static_cast<float>(p.head_k_dim));
  a.state = p.state.data;
  a.num_slots = p.state.num_slots;
  a.slot_stride = p.state.slot_stride;
  a.slots = p.slots;
  a.token_slots = p.token_slots;
  a.token_slots_stride = p.token_slots_stride;
  a.o = p.o.data;
  a.o_bs = p.o.batch_stride;
  a.o_ts = p.o.token_stride;
  a.o_hs = p.o.head_stride;
  a.batch = p.batch;
  a.tokens = p.tokens;
  a.hk = p.num_k_heads;
  a.hv = p.num_v_heads;
  a.kdim = p.head_k_dim;
  a.vdim = p.head_v_dim;
  a.group = p.num_v_heads / p.num_k_heads;
  a.hv_div = make_fast_divide(static_cast<uint32_t>(a.hv));
  a.group_div = make_fast_divide(static_cast<uint32_t>(a.group));
  return a;
}

inline Conv1dArgs make_args(const Conv1dParams& p) {
  return Conv1dArgs{p.x.data, p.weight.data, p.bias.data, p.state.data, p.y.data, p.slots,
                    p.x.row_stride, p.weight.row_stride, p.y.row_stride, p.state.num_slots, p.state.slot_stride,
                    p.x.cols, static_cast<int>(p.x.rows), static_cast<int>(p.weight.cols), p.silu};
}

}  // namespace dcukern::gdn_detail
