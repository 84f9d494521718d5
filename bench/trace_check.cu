// Compile check of the phase trace (platform/trace.hpp), CUDA: one instance of every traced kernel (the
// attention tensor-core and merge kernels, the sampling split and threshold kernels) and the harness's
// trace code (graph_time_us's traced replay, write_trace), built with DCUKERN_TRACE=1 (the target
// trace_check, bench/CMakeLists.txt; DCUKERN_TEST_TRACE=1 tools/test.sh builds it): cheaper than the traced
// benchmarks, which hold many more instances; those: cmake -DDCUKERN_TRACE=ON -DDCUKERN_BUILD_BENCH=ON.
#include "dcukern/attention.hpp"
#include "dcukern/sampling.hpp"
#include "harness.hpp"

static_assert(DCUKERN_TRACE_ON, "build with DCUKERN_TRACE=1");

namespace dcukern {
namespace attn_detail {
template __global__ void attention_mma_kernel<DType::bf16, 128, MmaVariant::smem_pipeline>(AttnArgs);
template __global__ void attention_merge_kernel<DType::bf16>(AttnArgs);
template __global__ void attention_merge_sliced_kernel<DType::bf16>(AttnArgs);
}  // namespace attn_detail
namespace sampling_detail {
template __global__ void sampling_split_kernel<true, DType::bf16, 2, 64>(SamplingArgs, SplitWorkspace);
template __global__ void sampling_threshold_kernel<true, DType::bf16, kThresholdThreads>(SamplingArgs,
                                                                                        SplitWorkspace);
}  // namespace sampling_detail

// The harness's traced paths, instantiated (never called).
void trace_check_harness() {
  const double us = bench::graph_time_us(1, [](stream_t, int) {});
  bench::write_trace("trace_check", us);
}
}  // namespace dcukern
