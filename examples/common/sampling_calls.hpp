// The sampling API's entry points as non-inline functions, compiled in one unit (sampling_calls.cu) that
// dcukern-audit, the sampling device tests and the sampling benchmark link (dcukern_link_calls, top
// CMakeLists.txt): dcukern/sampling.hpp compiles every sampling kernel into each unit that includes it. The
// callers include the host side only (dcukern/sampling/select.hpp: parameters, row selection, workspace size).
#pragma once
#include <cstddef>

#include "dcukern/platform/runtime.hpp"
#include "dcukern/sampling/select.hpp"

namespace dcukern::calls {

Status sample(const SamplingParams& p, stream_t stream, const SamplingOptions& opt = {});
Status sample(const SamplingParams& p, void* workspace, size_t workspace_bytes, stream_t stream,
              const SamplingOptions& opt = {});
Status sampling_workspace_init(void* workspace, size_t workspace_bytes, stream_t stream);

}  // namespace dcukern::calls
