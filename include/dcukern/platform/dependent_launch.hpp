// Device side of a programmatic dependent launch (runtime.hpp, launch_dependent): a kernel so launched
// calls grid_dependency_wait() before its first access to memory that an earlier kernel on the stream may
// use (it returns once that kernel has finished and its writes are visible), and may call
// grid_dependents_launch() once the kernel after it may start (its blocks then wait in their own
// grid_dependency_wait()). No-ops where the platform has no such launch (HIP, CUDA before sm_90), and for
// a kernel launched the ordinary way.
#pragma once
#include "dcukern/platform/runtime.hpp"

namespace dcukern {

#if DCUKERN_PLATFORM_CUDA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define DCUKERN_DEPENDENT_LAUNCH 1
#else
#define DCUKERN_DEPENDENT_LAUNCH 0
#endif

__device__ __forceinline__ void grid_dependency_wait() {
#if DCUKERN_DEPENDENT_LAUNCH
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void grid_dependents_launch() {
#if DCUKERN_DEPENDENT_LAUNCH
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}
// A hint to fetch the line holding p into L2. L2 is where every writer's stores meet, so a line fetched
// before grid_dependency_wait() still shows what the kernel before writes: a dependent launch may prefetch
// what it will read while that kernel finishes. Only where there are dependent launches (else a no-op).
__device__ __forceinline__ void prefetch_l2(const void* p) {
#if DCUKERN_DEPENDENT_LAUNCH
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}
// The same for `bytes` contiguous bytes from p in one instruction (the copy engine's bulk prefetch): p
// 16-byte aligned, bytes a multiple of 16.
__device__ __forceinline__ void prefetch_l2_bulk(const void* p, uint32_t bytes) {
#if DCUKERN_DEPENDENT_LAUNCH
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#else
  (void)p, (void)bytes;
#endif
}
// Both, first thing in a kernel: wait for the kernel before, then let the next one's blocks start (they
// launch once every block of this kernel has got here, and wait for it to finish in their own
// grid_dependency_wait()). Measured on the H200 against letting them launch at the end of each block
// (GDN, B = 1, graph replay, before the L2 prefetches): 3.6-4.2 against 3.6-4.6 us.
__device__ __forceinline__ void begin_dependent_kernel() {
  grid_dependency_wait();
  grid_dependents_launch();
}

}  // namespace dcukern
