// GDN row selection, host side: plain C++, usable without a device compiler (audit, explain, tests).
// Two ops share the pattern of GemvOp: GdnOp (recurrent state update) and Conv1dOp (conv1d update).
#pragma once
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
// Validate, then choose a row (id == nullptr) or check that the row `id` can run the call.
template <class Op, class Params, class Call, class Validate>
Status choose(const char* op, const Params& p, Validate validate, const TargetInfo& target, const char* id,
              const typename Op::Row** row, Explanation* why) {
  Call call;
  if (Status s = validate(p, &call); !s.ok()) return s;
  return choose_row<Op>(op, call, target, id, row, why);
}
}  // namespace gdn_detail

inline const capabilities::GdnRow* find_gdn_row(const char* id) { return find_row<GdnOp>(id); }
inline const capabilities::Conv1dRow* find_conv1d_row(const char* id) { return find_row<Conv1dOp>(id); }

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
