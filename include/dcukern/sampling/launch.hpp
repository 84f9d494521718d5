// Launch of the kernel a sampling row names: one block per row; runtime dtype -> template dispatch,
// ending in an explicit error.
#pragma once
#include "dcukern/platform/device_context.hpp"
#include "dcukern/sampling/kernels/sample_block.hpp"
#include "dcukern/sampling/select.hpp"

namespace dcukern::sampling_detail {

template <bool kVec>
Status launch_block(DType dt, const SamplingArgs& a, unsigned grid, stream_t s) {
  switch (dt) {
    case DType::f32: sampling_block_kernel<DType::f32, kVec><<<grid, kThreads, 0, s>>>(a); return Status::success();
    case DType::bf16: sampling_block_kernel<DType::bf16, kVec><<<grid, kThreads, 0, s>>>(a); return Status::success();
    case DType::f16: sampling_block_kernel<DType::f16, kVec><<<grid, kThreads, 0, s>>>(a); return Status::success();
    default: break;
  }
  return Status::unsupported(std::string("sampling: unsupported logits dtype ") + dtype_name(dt));
}

inline Status launch(SamplingKernel kernel, DType dt, const SamplingArgs& a, int64_t batch, stream_t s) {
  const unsigned grid = static_cast<unsigned>(batch);
  switch (kernel) {
    case SamplingKernel::block: return launch_block<false>(dt, a, grid, s);
    case SamplingKernel::block_vec: return launch_block<true>(dt, a, grid, s);
  }
  return Status::unsupported("sampling: kernel not compiled into this build");
}

}  // namespace dcukern::sampling_detail
