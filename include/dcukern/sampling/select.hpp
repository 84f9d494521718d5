// Sampling row selection, host side: plain C++, usable without a device compiler (audit, explain, tests).
#pragma once
#include <iterator>

#include "capabilities/sampling_rows.hpp"
#include "dcukern/platform/detect.hpp"
#include "dcukern/registry/select.hpp"
#include "dcukern/sampling/params.hpp"

namespace dcukern {

struct SamplingOp {
  using Row = capabilities::SamplingRow;
  static constexpr std::size_t kRowCount = std::size(capabilities::kSamplingRows);
  static constexpr const Row (&rows())[kRowCount] { return capabilities::kSamplingRows; }
  // Both kernels are portable: every device build holds them.
  static constexpr bool compiled_in(SamplingKernel) { return true; }
};

inline const capabilities::SamplingRow* find_sampling_row(const char* id) { return find_row<SamplingOp>(id); }

// Validate the call and choose its row for `target`; *row is never null on success.
inline Status select_sampling(const SamplingParams& p, const TargetInfo& target,
                              const capabilities::SamplingRow** row, Explanation* why = nullptr) {
  SamplingCall call;
  if (Status s = validate_sampling(p, &call); !s.ok()) return s;
  return choose_row<SamplingOp>("sampling", call, target, nullptr, row, why);
}

// Validate the call and check that the row `id` can run it on `target` (used to pin a row).
inline Status check_sampling_row(const SamplingParams& p, const TargetInfo& target, const char* id,
                                 const capabilities::SamplingRow** row) {
  SamplingCall call;
  if (Status s = validate_sampling(p, &call); !s.ok()) return s;
  return choose_row<SamplingOp>("sampling", call, target, id, row, nullptr);
}

}  // namespace dcukern
