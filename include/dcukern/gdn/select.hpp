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

// A call's options: RowOptions (pin a row by id, ask why a row was chosen).
using GdnOptions = RowOptions;

struct GdnOp : RowTable<capabilities::GdnRow, std::size(capabilities::kGdnRows), capabilities::kGdnRows> {
  // Every GDN kernel is portable HIP/CUDA: compiled into every build.
  static constexpr bool compiled_in(GdnKernel) { return true; }
};

struct Conv1dOp : RowTable<capabilities::Conv1dRow, std::size(capabilities::kConv1dRows), capabilities::kConv1dRows> {
  static constexpr bool compiled_in(Conv1dKernel) { return true; }
};

inline const capabilities::GdnRow* find_gdn_row(const char* id) { return find_row<GdnOp>(id); }
inline const capabilities::Conv1dRow* find_conv1d_row(const char* id) { return find_row<Conv1dOp>(id); }

// Validate the call and choose its row for `target`; *row is never null on success.
inline Status select_gdn(const GdnParams& p, const TargetInfo& target, const capabilities::GdnRow** row,
                         Explanation* why = nullptr) {
  return validate_and_choose<GdnOp, GdnCall>("gdn", p, validate_gdn, target, nullptr, row, why);
}
// Validate the call and check that the row `id` can run it on `target` (used to pin a row).
inline Status check_gdn_row(const GdnParams& p, const TargetInfo& target, const char* id,
                            const capabilities::GdnRow** row) {
  return validate_and_choose<GdnOp, GdnCall>("gdn", p, validate_gdn, target, id, row, nullptr);
}
inline Status select_conv1d(const Conv1dParams& p, const TargetInfo& target, const capabilities::Conv1dRow** row,
                            Explanation* why = nullptr) {
  return validate_and_choose<Conv1dOp, Conv1dCall>("conv1d", p, validate_conv1d, target, nullptr, row, why);
}
inline Status check_conv1d_row(const Conv1dParams& p, const TargetInfo& target, const char* id,
                               const capabilities::Conv1dRow** row) {
  return validate_and_choose<Conv1dOp, Conv1dCall>("conv1d", p, validate_conv1d, target, id, row, nullptr);
}

}  // namespace dcukern
