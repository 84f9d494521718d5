// Device-scope atomics with explicit memory order, for tickets between the blocks of one grid.
//   ticket_add: fetch-and-add with acquire-release order at device (agent / gpu) scope. One thread's
//   ticket after a block barrier publishes the writes of the whole block (the barrier orders them
//   before the ticket) and, in the block that takes the last ticket, orders what it reads after its next
//   barrier after every earlier block's writes. It replaces a sequentially consistent fence and a
//   relaxed atomic (on sm_90 MEMBAR.SC plus an L1 invalidation, issued by every block).
#pragma once
#include <cstdint>

#include "dcukern/platform/runtime.hpp"

namespace dcukern {

__device__ __forceinline__ uint32_t ticket_add(uint32_t* counter, uint32_t v) {
#if DCUKERN_PLATFORM_HIP
  return __hip_atomic_fetch_add(counter, v, __ATOMIC_ACQ_REL, __HIP_MEMORY_SCOPE_AGENT);
#elif DCUKERN_PLATFORM_SIM
  return atomicAdd(counter, v);
#else
  uint32_t old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(counter), "r"(v) : "memory");
  return old;
#endif
}

}  // namespace dcukern
