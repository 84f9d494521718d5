// GDN row selection, host side: plain C++, usable without a device compiler (audit, explain, tests).
// Two ops share the pattern of GemvOp: GdnOp (recurrent state update) and Conv1dOp (conv1d update).
#pragma once
#include <cstring>
#include <iterator>
#include <string>

#include "capabilities/gdn_rows.hpp"
#include "dcukern/gdn/params.hpp"
#include "dcukern/platform/detect.hpp"
#include "dcukern/registry/select.hpp"

namespace dcukern {

struct GdnOp {
  using Row = capabilities::GdnRow;
  static constexpr std::size_t kRowCount = std::size(capabilities::kGdnRows);
  static constexpr const Row (&rows())[kRowCount] { return capabilities::kGdnRows; }
  // Every GDN kernel is portable HIP/CUDA: compiled into every build.
  static constexpr bool compiled_in(GdnKernel) { return true; }
};

struct Conv1dOp {
  using Row = capabilities::Conv1dRow;
  static constexpr std::size_t kRowCount = std::size(capabilities::kConv1dRows);
  static constexpr const Row (&rows())[kRowCount] { return capabilities::kConv1dRows; }
  static constexpr bool compiled_in(Conv1dKernel) { return true; }
};

namespace gdn_detail {
template <class Op>
const typename Op::Row* find_row(const char* id) {
  for (const auto& r : Op::rows())
    if (std::strcmp(r.id, id) == 0) return &r;
  return nullptr;
}

// Validate, then choose a row (id == nullptr) or check that the row `id` can run the call.
template <class Op, class Params, class Call, class Validate>
Status choose(const char* op, const Params& p, Validate validate, const TargetInfo& target, const char* id,
              const typename Op::Row** row, Explanation* why) {
  Call call;
  if (Status s = validate(p, &call); !s.ok()) return s;
  if (!id) {
    *row = select_row<Op>(target, call, why);
    if (!*row) return Status::unsupported(std::string(op) + ": no row accepts this call on " + target.name);
    return Status::success();
  }
  *row = find_row<Op>(id);
  if (!*row) return Status::invalid(std::string(op) + ": no row named '" + id + "'");
  std::string reason = row_unavailable_reason(**row, target, Op::compiled_in((*row)->kernel));
  if (reason.empty())
    if (const char* r = (*row)->contract.check(call)) reason = r;
  if (!reason.empty())
    return Status::unsupported(std::string(op) + ": row " + id + " cannot run this call: " + reason);
  return Status::success();
}
}  // namespace gdn_detail

inline const capabilities::GdnRow* find_gdn_row(const char* id) { return gdn_detail::find_row<GdnOp>(id); }
inline const capabilities::Conv1dRow* find_conv1d_row(const char* id) { return gdn_detail::find_row<Conv1dOp>(id); }

// Validate the call and choose its row for `target`; *row is never null on success.
inline Status select_gdn(const GdnParams& p, const TargetInfo& target, const capabilities::GdnRow** row,
                         Explanation* why = nullptr) {
  return gdn_detail::choose<GdnOp, GdnParams, GdnCall>("gdn", p, validate_gdn, target, nullptr, row, why);
}
// Validate the call and check that the row `id` can run it on `target` (used to pin a row).
inline Status check_gdn_row(const GdnParams& p, const TargetInfo& target, const char* id,
                            const capabilities::GdnRow** row) {
  return gdn_detail::choose<GdnOp, GdnParams, GdnCall>("gdn", p, validate_gdn, target, id, row, nullptr);
}
inline Status select_conv1d(const Conv1dParams& p, const TargetInfo& target, const capabilities::Conv1dRow** row,
                            Explanation* why = nullptr) {
  return gdn_detail::choose<Conv1dOp, Conv1dParams, Conv1dCall>("conv1d", p, validate_conv1d, target, nullptr, row, why);
}
inline Status check_conv1d_row(const Conv1dParams& p, const TargetInfo& target, const char* id,
                               const capabilities::Conv1dRow** row) {
  return gdn_detail::choose<Conv1dOp, Conv1dParams, Conv1dCall>("conv1d", p, validate_conv1d, target, id, row, nullptr);
}

}  // namespace dcukern
