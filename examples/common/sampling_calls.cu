// The one unit of dcukern-audit, the sampling device tests and benchmark that includes dcukern/sampling.hpp
// (sampling_calls.hpp).
#include "common/sampling_calls.hpp"

#include "dcukern/sampling.hpp"

namespace dcukern::calls {

Status sample_call(const SamplingParams& p, stream_t stream, const SamplingOptions& opt) {
  return sample(p, stream, opt);
}
Status sample_call(const SamplingParams& p, void* workspace, size_t workspace_bytes, stream_t stream,
                   const SamplingOptions& opt) {
  return sample(p, workspace, workspace_bytes, stream, opt);
}
Status workspace_init_call(void* workspace, size_t workspace_bytes, stream_t stream) {
  return sampling_workspace_init(workspace, workspace_bytes, stream);
}

}  // namespace dcukern::calls
