// Launch of the kernel a sampling row names: block rows one block per row; split rows one block per tile
// of each row (their kernel leaves the workspace's counters zero for the next call; batches of more than
// kSyncRows rows zero them first).
// Runtime dtype -> template dispatch, ending in an explicit error.
#pragma once
#include "dcukern/platform/device_context.hpp"
#include "dcukern/sampling/kernels/sample_block.hpp"
#include "dcukern/sampling/kernels/split_kernel.hpp"
#include "dcukern/sampling/select.hpp"

namespace dcukern::sampling_detail {

template <bool kVec, DType DT>
Status launch_kernels(const SamplingArgs& a, const SplitWorkspace* w, int64_t batch, stream_t s) {
  if (!w) {
    sampling_block_kernel<kVec, DT><<<unsigned(batch), kThreads, 0, s>>>(a);
    return Status::success();
  }
  const unsigned grid = unsigned(batch * w->tiles);
  if constexpr (DT != DType::f32) {
    if (w->items == 32) {  // 16-bit logits, large batches (split_items)
      sampling_split_kernel<kVec, DT, 2, 32><<<grid, kThreads, 0, s>>>(a, *w);
      return Status::success();
    }
  }
#if DCUKERN_PLATFORM_CUDA  // the occupancy variants differ on CUDA only (DCUKERN_CUDA_MIN_BLOCKS)
  if (batch >= kSplitLargeBatch) {
    sampling_split_kernel<kVec, DT, 3, 16><<<grid, kThreads, 0, s>>>(a, *w);
    return Status::success();
  }
#endif
  sampling_split_kernel<kVec, DT, 2, 16><<<grid, kThreads, 0, s>>>(a, *w);
  return Status::success();
}

template <bool kVec>
Status launch_dtype(DType dt, const SamplingArgs& a, const SplitWorkspace* w, int64_t batch, stream_t s) {
  switch (dt) {
    case DType::f32: return launch_kernels<kVec, DType::f32>(a, w, batch, s);
    case DType::bf16: return launch_kernels<kVec, DType::bf16>(a, w, batch, s);
    case DType::f16: return launch_kernels<kVec, DType::f16>(a, w, batch, s);
    default: break;
  }
  return Status::unsupported(std::string("sampling: unsupported logits dtype ") + dtype_name(dt));
}

inline bool is_split(SamplingKernel k) { return k == SamplingKernel::split || k == SamplingKernel::split_vec; }

// `workspace`: the caller's workspace, at least split_workspace_bytes(batch, V) (split rows only); the
// split kernels advance the device offset themselves when `advance`.
inline Status launch(SamplingKernel kernel, DType dt, const SamplingArgs& a, int64_t batch, void* workspace,
                     bool advance, stream_t s) {
  SplitWorkspace w{};
  if (is_split(kernel)) {  // the workspace's counters are zero (sampling_workspace_init, then every call)
    w = split_layout(workspace, batch, a.vocab, dtype_bytes(dt));
    w.advance = advance;
    if (batch > kSyncRows)  // other shapes' regions may overlap these counters (workspace.hpp)
      if (Status e = runtime_status(runtime_memset_async(workspace, 0, split_sync_bytes(batch), s), "sampling workspace");
          !e.ok())
        return e;
  }
  switch (kernel) {
    case SamplingKernel::block: return launch_dtype<false>(dt, a, nullptr, batch, s);
    case SamplingKernel::block_vec: return launch_dtype<true>(dt, a, nullptr, batch, s);
    case SamplingKernel::split: return launch_dtype<false>(dt, a, &w, batch, s);
    case SamplingKernel::split_vec: return launch_dtype<true>(dt, a, &w, batch, s);
  }
  return Status::unsupported("sampling: kernel not compiled into this build");
}

}  // namespace dcukern::sampling_detail
