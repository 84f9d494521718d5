// The one unit of dcukern-audit, the attention device tests and benchmark that includes dcukern/attention.hpp.
#include "common/attention_calls.hpp"

#include "dcukern/attention.hpp"

namespace dcukern::calls {

size_t attention_workspace_bytes(const AttentionParams& p, const AttentionPlanOptions& plan) {
  return dcukern::attention_workspace_bytes(p, plan);
}
Status attention_call_plan(const AttentionParams& p, bool with_workspace, AttentionCallPlan* out,
                           const AttentionOptions& opt) {
  return dcukern::attention_call_plan(p, with_workspace, out, opt);
}
Status attention(const AttentionParams& p, void* workspace, size_t workspace_bytes, stream_t stream,
                 const AttentionOptions& opt) {
  return dcukern::attention(p, workspace, workspace_bytes, stream, opt);
}

}  // namespace dcukern::calls
