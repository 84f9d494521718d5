// Thread-block clusters (CUDA, sm_90 and later): the blocks of a cluster run at the same time on one GPU
// processing cluster and may read, write and update each other's shared memory. Device side only; a
// cluster launch is launch_dependent's `cluster` argument (runtime.hpp), which the host issues only where
// DeviceFacts::clusters holds and the kernel's code was built for sm_90 (kernel_built_for_sm90).
// Elsewhere (HIP, CUDA before sm_90) the functions below compile to traps: no cluster launch reaches them.
//   cluster_rank():            this block's rank in its cluster (0 .. cluster size - 1).
//   cluster_shared(p, rank):   the address of the same shared-memory object in block `rank` of the cluster,
//                              for ordinary loads, stores and atomics.
//   cluster_arrive_release():  a cluster barrier's first half: this thread's earlier writes are visible to
//                              the threads that return from cluster_wait_acquire(). A block that only writes to
//                              other blocks' shared memory may arrive and exit without waiting.
//   cluster_wait_acquire():    its second half: returns once every thread of the cluster that has not exited
//                              has arrived.
//   cluster_arrive_relaxed():  a first half that orders no memory operation: the thread does not wait for its
//                              loads in flight. With cluster_fence_release() before it (in the threads whose
//                              writes others read), the writes before the fence are visible to the threads
//                              that return from cluster_wait_acquire().
//   cluster_fence_release():   this thread's earlier memory operations, ordered at cluster scope before its
//                              later ones (it waits for its loads in flight: issue it before them).
#pragma once
#include <cstdint>

#include "dcukern/platform/warp.hpp"

namespace dcukern {

#if DCUKERN_PLATFORM_CUDA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define DCUKERN_DEVICE_HAS_CLUSTERS 1
#else
#define DCUKERN_DEVICE_HAS_CLUSTERS 0
#endif

__device__ __forceinline__ uint32_t cluster_rank() {
#if DCUKERN_DEVICE_HAS_CLUSTERS
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
#else
  return 0;
#endif
}

template <class T>
__device__ __forceinline__ T* cluster_shared(T* p, uint32_t rank) {
#if DCUKERN_DEVICE_HAS_CLUSTERS
  uint64_t out;
  asm volatile("mapa.u64 %0, %1, %2;" : "=l"(out) : "l"(reinterpret_cast<uint64_t>(p)), "r"(rank));
  return reinterpret_cast<T*>(out);
#else
  (void)rank;
  unreachable_on_this_target();
  return p;
#endif
}

__device__ __forceinline__ void cluster_arrive_release() {
#if DCUKERN_DEVICE_HAS_CLUSTERS
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
#else
  unreachable_on_this_target();
#endif
}

__device__ __forceinline__ void cluster_arrive_relaxed() {
#if DCUKERN_DEVICE_HAS_CLUSTERS
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
#else
  unreachable_on_this_target();
#endif
}

__device__ __forceinline__ void cluster_fence_release() {
#if DCUKERN_DEVICE_HAS_CLUSTERS
  asm volatile("fence.acq_rel.cluster;" ::: "memory");
#else
  unreachable_on_this_target();
#endif
}

__device__ __forceinline__ void cluster_wait_acquire() {
#if DCUKERN_DEVICE_HAS_CLUSTERS
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#else
  unreachable_on_this_target();
#endif
}

}  // namespace dcukern
