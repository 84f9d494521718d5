// Attention row selection, host side: plain C++, usable without a device compiler (audit, explain, tests).
#pragma once
#include <iterator>
#include <string>

#include "capabilities/attention_rows.hpp"
#include "dcukern/attention/params.hpp"
#include "dcukern/attention/plan.hpp"
#include "dcukern/platform/detect.hpp"
#include "dcukern/registry/select.hpp"

namespace dcukern {

// A call's options: RowOptions (pin a row by id, ask why a row was chosen) and the split-KV plan's.
struct AttentionOptions : RowOptions {
  AttentionPlanOptions plan;  // split-KV plan: fixed chunk size, forced split
};

struct AttentionOp
    : RowTable<capabilities::AttentionRow, std::size(capabilities::kAttentionRows), capabilities::kAttentionRows> {
  // Whether this build holds the kernel: the mma kernels only in CUDA builds (a host-only build answers for
  // a device build of the target; the simulated device runs no tensor-core PTX).
  static constexpr bool compiled_in(AttentionKernel k) {
#if DCUKERN_PLATFORM_HIP || DCUKERN_PLATFORM_SIM
    return attention_kernel_isa(k) == 0;
#else
    (void)k;
    return true;
#endif
  }
};

inline const capabilities::AttentionRow* find_attention_row(const char* id) { return find_row<AttentionOp>(id); }

// Validate, then choose a row (id == nullptr) or check that the row `id` can run the call. `has_workspace`:
// the caller passes a workspace (split rows need one). On success *call holds the call's facts. Rows
// without device evidence are chosen only when forced; explain() says so for each.
inline Status select_attention(const AttentionParams& p, bool has_workspace, const TargetInfo& target,
                               const char* id, const capabilities::AttentionRow** row, AttentionCall* call,
                               Explanation* why = nullptr) {
  return validate_and_choose<AttentionOp, AttentionCall>(
      "attention", p, validate_attention, target, id, row, why,
      [&](AttentionCall& c) { c.has_workspace = has_workspace; }, call);
}

}  // namespace dcukern
