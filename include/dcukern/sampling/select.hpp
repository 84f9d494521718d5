// Sampling row selection, host side: plain C++, usable without a device compiler (audit, explain, tests).
#pragma once
#include <iterator>

#include "capabilities/sampling_rows.hpp"
#include "dcukern/platform/detect.hpp"
#include "dcukern/registry/select.hpp"
#include "dcukern/sampling/params.hpp"
#include "dcukern/sampling/workspace.hpp"

namespace dcukern {

using SamplingOptions = RowOptions;  // sample()'s options: the row to pin, an explanation of the choice

struct SamplingOp
    : RowTable<capabilities::SamplingRow, std::size(capabilities::kSamplingRows), capabilities::kSamplingRows> {
  // Both kernels are portable: every device build holds them.
  static constexpr bool compiled_in(SamplingKernel) { return true; }
};

inline const capabilities::SamplingRow* find_sampling_row(const char* id) { return find_row<SamplingOp>(id); }

// Validate the call and choose its row for `target`; *row is never null on success. `has_workspace`:
// the caller passes a workspace (the split rows need one).
inline Status select_sampling(const SamplingParams& p, const TargetInfo& target,
                              const capabilities::SamplingRow** row, Explanation* why = nullptr,
                              bool has_workspace = false) {
  return validate_and_choose<SamplingOp, SamplingCall>("sampling", p, validate_sampling, target, nullptr, row, why,
                                                       [&](SamplingCall& c) { c.has_workspace = has_workspace; });
}

// Validate the call and check that the row `id` can run it on `target` (used to pin a row).
inline Status check_sampling_row(const SamplingParams& p, const TargetInfo& target, const char* id,
                                 const capabilities::SamplingRow** row, bool has_workspace = false) {
  return validate_and_choose<SamplingOp, SamplingCall>("sampling", p, validate_sampling, target, id, row, nullptr,
                                                       [&](SamplingCall& c) { c.has_workspace = has_workspace; });
}

// Bytes of workspace the split rows need for a call of p's shape (B = logits.rows, V = logits.cols); only the
// shape is read (pointers and parameters may be unset), 0 where it is out of range.
inline size_t sampling_workspace_bytes(const SamplingParams& p) {
  if (!sampling_shape_status("sampling", p.logits.rows, p.logits.cols).ok()) return 0;
  return sampling_detail::split_workspace_bytes(p.logits.rows, p.logits.cols);
}

}  // namespace dcukern
