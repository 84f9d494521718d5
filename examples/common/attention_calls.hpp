// The attention API's entry points as non-inline functions, compiled in one unit (attention_calls.cu) that
// dcukern-audit, the attention device tests and the attention benchmark link (dcukern_link_calls, top
// CMakeLists.txt): dcukern/attention.hpp compiles every attention kernel into each unit that includes it. The
// callers include the host side only (dcukern/attention/select.hpp and call_plan.hpp: parameters, the split
// plan, row selection; the table check's small kernel, attention/table_check.hpp, where they use it).
#pragma once
#include <cstddef>

#include "dcukern/attention/call_plan.hpp"
#include "dcukern/attention/select.hpp"
#include "dcukern/platform/runtime.hpp"

namespace dcukern::calls {

size_t attention_workspace_bytes(const AttentionParams& p, const AttentionPlanOptions& plan = {});
Status attention_call_plan(const AttentionParams& p, bool with_workspace, AttentionCallPlan* out,
                           const AttentionOptions& opt = {});
Status attention(const AttentionParams& p, void* workspace, size_t workspace_bytes, stream_t stream,
                 const AttentionOptions& opt = {});

}  // namespace dcukern::calls
