// The sampling API's calls, compiled in one unit (sampling_calls.cu) that dcukern-audit, the sampling device
// tests and the sampling benchmark link. A unit that includes dcukern/sampling.hpp compiles every sampling kernel
// (its inline sample() instantiates them all: about 5 minutes of nvcc for sm_90), so those programs' other units
// include the host side only (dcukern/sampling/select.hpp: parameters, row selection, workspace size) and call
// these. The build compiles the unit once for each gfx list and programs with the same list share it
// (dcukern_link_sampling_calls in the top CMakeLists.txt).
#pragma once
#include <cstddef>

#include "dcukern/platform/runtime.hpp"
#include "dcukern/sampling/select.hpp"

namespace dcukern::calls {

Status sample_call(const SamplingParams& p, stream_t stream, const SamplingOptions& opt = {});
Status sample_call(const SamplingParams& p, void* workspace, size_t workspace_bytes, stream_t stream,
                   const SamplingOptions& opt = {});
Status workspace_init_call(void* workspace, size_t workspace_bytes, stream_t stream);

}  // namespace dcukern::calls
