// Asynchronous global -> shared memory copies (NVIDIA cp.async, sm_80+), compiled where the device pass
// has them (the passes that have mma.sync: DCUKERN_DEVICE_HAS_NV_MMA_F16); elsewhere empty bodies that
// the registry never reaches (rows using them need Feature::nv_mma_f16).
#pragma once
#include <cstddef>
#include <cstdint>

#include "dcukern/platform/isa.hpp"

namespace dcukern {

// Copies kBytes (8 or 16; src and dst aligned to it) from global `src` to shared `dst`: the first
// `src_bytes` are read, the rest zero-filled (0: dst zeroed, nothing read). Completes at cp_async_wait.
template <int kBytes>
__device__ __forceinline__ void cp_async_zfill(void* dst, const void* src, int src_bytes) {
  static_assert(kBytes == 8 || kBytes == 16, "cp.async copies 8 or 16 bytes here");
#if DCUKERN_DEVICE_HAS_NV_MMA_F16
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  const size_t g = __cvta_generic_to_global(src);
  if constexpr (kBytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(s), "l"(g), "r"(src_bytes) : "memory");
  else  // .cg takes 16 bytes only; fp8 rows are aligned to 8 bytes
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(s), "l"(g), "r"(src_bytes) : "memory");
#endif
}

// Closes the thread's copies issued since the last commit into one group.
__device__ __forceinline__ void cp_async_commit() {
#if DCUKERN_DEVICE_HAS_NV_MMA_F16
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

// Waits until at most kPending of the thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
#if DCUKERN_DEVICE_HAS_NV_MMA_F16
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
#endif
}

}  // namespace dcukern
