// Row-transform row selection, host side: plain C++ (audit, explain, tests).
#pragma once
#include <iterator>

#include "capabilities/sampling_transform_rows.hpp"
#include "dcukern/registry/select.hpp"
#include "dcukern/sampling/transform_params.hpp"

namespace dcukern {

struct TransformOp
    : RowTable<capabilities::TransformRow, std::size(capabilities::kTransformRows), capabilities::kTransformRows> {
  static constexpr bool compiled_in(TransformKernel) { return true; }  // portable kernels
};

// Validate the call of transform `t` and choose its row for `target` (id == nullptr) or check the row
// `id`; *row is never null on success.
inline Status select_row_transform(RowTransform t, const RowTransformParams& p, const TargetInfo& target,
                                   const char* id, const capabilities::TransformRow** row,
                                   Explanation* why = nullptr) {
  auto validate = [t](const RowTransformParams& q, SamplingCall* call) { return validate_row_transform(t, q, call); };
  return validate_and_choose<TransformOp, SamplingCall>(row_transform_name(t), p, validate, target, id, row, why);
}

}  // namespace dcukern
