// Sampling row selection, host side: plain C++, usable without a device compiler (audit, explain, tests).
#pragma once
#include <cstring>
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

inline const capabilities::SamplingRow* find_sampling_row(const char* id) {
  for (const auto& r : SamplingOp::rows())
    if (std::strcmp(r.id, id) == 0) return &r;
  return nullptr;
}

// Validate the call and choose its row for `target`; *row is never null on success.
inline Status select_sampling(const SamplingParams& p, const TargetInfo& target,
                              const capabilities::SamplingRow** row, Explanation* why = nullptr) {
  SamplingCall call;
  if (Status s = validate_sampling(p, &call); !s.ok()) return s;
  *row = select_row<SamplingOp>(target, call, why);
  if (!*row) return Status::unsupported(std::string("sampling: no row accepts this call on ") + target.name);
  return Status::success();
}

// Validate the call and check that the row `id` can run it on `target` (used to pin a row).
inline Status check_sampling_row(const SamplingParams& p, const TargetInfo& target, const char* id,
                                 const capabilities::SamplingRow** row) {
  SamplingCall call;
  if (Status s = validate_sampling(p, &call); !s.ok()) return s;
  *row = find_sampling_row(id);
  if (!*row) return Status::invalid(std::string("sampling: no row named '") + id + "'");
  std::string why = row_unavailable_reason(**row, target, SamplingOp::compiled_in((*row)->kernel));
  if (why.empty())
    if (const char* reason = (*row)->contract.check(call)) why = reason;
  if (!why.empty()) return Status::unsupported(std::string("sampling: row ") + id + " cannot run this call: " + why);
  return Status::success();
}

}  // namespace dcukern
