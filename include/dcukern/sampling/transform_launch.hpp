// Launch of a row-transform kernel: one block per row; runtime dtype -> template dispatch (the renorm
// transforms read f32 only), ending in an explicit error.
#pragma once
#include "dcukern/sampling/kernels/transform_block.hpp"
#include "dcukern/sampling/transform_select.hpp"

namespace dcukern::sampling_detail {

// One block of kThreads a row.
template <class Kernel>
Status launch_status(Kernel kernel, unsigned grid, stream_t s, const TransformArgs& a) {
  return runtime_status(launch_plain(kernel, dim3(grid), dim3(kThreads), 0, s, a), "row transform launch");
}

template <bool kVec, RowTransform kOp>
Status launch_transform_op(DType dt, const TransformArgs& a, int64_t batch, stream_t s) {
  const unsigned grid = unsigned(batch);
  constexpr bool kLogits = kOp == RowTransform::softmax || kOp == RowTransform::top_k_mask_logits;
  if (dt == DType::f32) return launch_status(sampling_transform_kernel<kVec, DType::f32, kOp>, grid, s, a);
  if constexpr (kLogits) {
    if (dt == DType::bf16) return launch_status(sampling_transform_kernel<kVec, DType::bf16, kOp>, grid, s, a);
    if (dt == DType::f16) return launch_status(sampling_transform_kernel<kVec, DType::f16, kOp>, grid, s, a);
  }
  return Status::unsupported(std::string(row_transform_name(kOp)) + ": unsupported dtype " + dtype_name(dt));
}

template <bool kVec>
Status launch_transform_vec(RowTransform t, DType dt, const TransformArgs& a, int64_t batch, stream_t s) {
  switch (t) {
    case RowTransform::softmax: return launch_transform_op<kVec, RowTransform::softmax>(dt, a, batch, s);
    case RowTransform::top_k_mask_logits:
      return launch_transform_op<kVec, RowTransform::top_k_mask_logits>(dt, a, batch, s);
    case RowTransform::top_k_renorm_probs:
      return launch_transform_op<kVec, RowTransform::top_k_renorm_probs>(dt, a, batch, s);
    case RowTransform::top_p_renorm_probs:
      return launch_transform_op<kVec, RowTransform::top_p_renorm_probs>(dt, a, batch, s);
  }
  return Status::unsupported("row transform: unknown transform");
}

inline Status launch_transform(TransformKernel k, RowTransform t, DType dt, const TransformArgs& a, int64_t batch,
                               stream_t s) {
  switch (k) {
    case TransformKernel::block: return launch_transform_vec<false>(t, dt, a, batch, s);
    case TransformKernel::block_vec: return launch_transform_vec<true>(t, dt, a, batch, s);
  }
  return Status::unsupported("row transform: kernel not compiled into this build");
}

}  // namespace dcukern::sampling_detail
