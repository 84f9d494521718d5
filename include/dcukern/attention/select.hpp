// Attention row selection, host side: plain C++, usable without a device compiler (audit, explain, tests).
#pragma once
#include <cstring>
#include <iterator>
#include <string>

#include "capabilities/attention_rows.hpp"
#include "dcukern/attention/params.hpp"
#include "dcukern/attention/plan.hpp"
#include "dcukern/platform/detect.hpp"
#include "dcukern/registry/select.hpp"

namespace dcukern {

struct AttentionOp {
  using Row = capabilities::AttentionRow;
  static constexpr std::size_t kRowCount = std::size(capabilities::kAttentionRows);
  static constexpr const Row (&rows())[kRowCount] { return capabilities::kAttentionRows; }
  // Every attention kernel is portable HIP/CUDA: compiled into every build.
  static constexpr bool compiled_in(AttentionKernel) { return true; }
};

inline const capabilities::AttentionRow* find_attention_row(const char* id) {
  for (const auto& r : AttentionOp::rows())
    if (std::strcmp(r.id, id) == 0) return &r;
  return nullptr;
}

// Validate, then choose a row (id == nullptr) or check that the row `id` can run the call. `has_workspace`:
// the caller passes a workspace (split rows need one). On success *call holds the call's facts.
inline Status select_attention(const AttentionParams& p, bool has_workspace, const TargetInfo& target,
                               const char* id, const capabilities::AttentionRow** row, AttentionCall* call,
                               Explanation* why = nullptr) {
  if (Status s = validate_attention(p, call); !s.ok()) return s;
  call->has_workspace = has_workspace;
  if (!id) {
    *row = select_row<AttentionOp>(target, *call, why);
    if (!*row) return Status::unsupported(std::string("attention: no row accepts this call on ") + target.name +
                                          " (rows without device evidence run only when forced)");
    return Status::success();
  }
  *row = find_attention_row(id);
  if (!*row) return Status::invalid(std::string("attention: no row named '") + id + "'");
  std::string reason = row_unavailable_reason(**row, target, AttentionOp::compiled_in((*row)->kernel));
  if (reason.empty())
    if (const char* r = (*row)->contract.check(*call)) reason = r;
  if (!reason.empty()) return Status::unsupported(std::string("attention: row ") + id + " cannot run this call: " + reason);
  return Status::success();
}

}  // namespace dcukern
