// Capability rows of the sampling row transforms (softmax with temperature, top_k_mask_logits,
// top_k_renorm_probs, top_p_renorm_probs). Same contract type as the sampling rows. Selection order as
// everywhere: forced, tuned, then the rows below; the scalar row accepts every valid call.
#pragma once
#include "capabilities/sampling_rows.hpp"

namespace dcukern::capabilities {

namespace transform_rows {
constexpr const char* kEvidence =
    "tests/host/sampling_transform_test.cpp; tests/device/sampling_transform_device_test.cu (sm_90, H200, at "
    "be56614, memcheck clean); AMD: compile only";
}  // namespace transform_rows

using TransformRow = CapabilityRow<SamplingContract, TransformKernel>;

inline constexpr TransformRow kTransformRows[] = {
    {"sampling.transform.block.vec", "one block per row, 16-byte loads; histogram cut (top-k / top-p) + write pass",
     0, nullptr, sampling_rows::vectorised(), {}, transform_rows::kEvidence, "sampling.transform.block",
     TransformKernel::block_vec,
     "sampling_transform_kernel<true,"},
    {"sampling.transform.block", "any valid call: one block per row, scalar loads", 0, nullptr,
     SamplingContract{sampling_rows::kAll}, {}, transform_rows::kEvidence, "none (accepts every valid call)",
     TransformKernel::block,
     "sampling_transform_kernel<false,"},
};

}  // namespace dcukern::capabilities
