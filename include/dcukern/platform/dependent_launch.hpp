// Programmatic dependent launch (NVIDIA sm_90+): a kernel launched with launch_after_programmatic may
// start before the kernel ahead of it on the stream has finished, once every block of that kernel has
// called allow_dependent_launch() or exited; it must call grid_dependency_wait() before it reads that
// kernel's results (the wait returns when the kernel ahead has completed and its writes are visible).
// Captured into a CUDA graph, the pair becomes a programmatic edge. Elsewhere (HIP, NVIDIA before sm_90)
// the launch is an ordinary stream-ordered one and both device calls do nothing.
#pragma once
#include <utility>

#include "dcukern/platform/runtime.hpp"

namespace dcukern {

__device__ __forceinline__ void grid_dependency_wait() {
#if DCUKERN_PLATFORM_CUDA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void allow_dependent_launch() {
#if DCUKERN_PLATFORM_CUDA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Launches kernel<<<grid, block, shared_bytes, s>>>(args...) as a programmatic dependent of the work ahead
// of it on `s` (CUDA), or as an ordinary launch (HIP).
template <class... Params, class... Args>
runtime_error_t launch_after_programmatic(void (*kernel)(Params...), unsigned grid, unsigned block,
                                          size_t shared_bytes, stream_t s, Args&&... args) {
#if DCUKERN_PLATFORM_CUDA
  cudaLaunchAttribute attr[1] = {};
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(block);
  config.dynamicSmemBytes = shared_bytes;
  config.stream = s;
  config.attrs = attr;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
#else
  hipLaunchKernelGGL(kernel, dim3(grid), dim3(block), shared_bytes, s, std::forward<Args>(args)...);
  return runtime_last_error();
#endif
}

}  // namespace dcukern
