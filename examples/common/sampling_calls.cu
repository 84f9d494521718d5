// The one unit of dcukern-audit, the sampling device tests and benchmark that includes dcukern/sampling.hpp.
#include "common/sampling_calls.hpp"

#include "dcukern/sampling.hpp"

namespace dcukern::calls {

Status sample(const SamplingParams& p, stream_t stream, const SamplingOptions& opt) {
  return dcukern::sample(p, stream, opt);
}
Status sample(const SamplingParams& p, void* workspace, size_t workspace_bytes, stream_t stream,
              const SamplingOptions& opt) {
  return dcukern::sample(p, workspace, workspace_bytes, stream, opt);
}
Status sampling_workspace_init(void* workspace, size_t workspace_bytes, stream_t stream) {
  return dcukern::sampling_workspace_init(workspace, workspace_bytes, stream);
}

}  // namespace dcukern::calls
