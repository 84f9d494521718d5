// 16- and 8-byte vector loads: streaming (read once: weights, KV) and cached (re-read: activations).
#pragma once
#include <cstdint>

#include "dcukern/platform/runtime.hpp"

namespace dcukern {

#if DCUKERN_PLATFORM_HIP
typedef uint32_t vec16_t __attribute__((ext_vector_type(4)));  // .x .y .z .w: four 32-bit words
typedef uint32_t vec8_t __attribute__((ext_vector_type(2)));  // .x .y: two 32-bit words
#else
using vec16_t = uint4;
using vec8_t = uint2;
#endif

__device__ __forceinline__ vec16_t vec16_zero() {
  vec16_t v;
  v.x = v.y = v.z = v.w = 0u;
  return v;
}

__device__ __forceinline__ uint32_t vec16_word(const vec16_t& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// Read-once data: bypass L1 (non-temporal). p must be 16-byte aligned.
__device__ __forceinline__ vec16_t load_stream16(const void* p) {
#if DCUKERN_PLATFORM_HIP
  return __builtin_nontemporal_load(static_cast<const vec16_t*>(p));
#elif DCUKERN_PLATFORM_SIM
  return *static_cast<const vec16_t*>(p);
#else
  vec16_t v;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
#endif
}

// Read-once data, 8 bytes: bypass L1 (non-temporal). p must be 8-byte aligned.
__device__ __forceinline__ vec8_t load_stream8(const void* p) {
#if DCUKERN_PLATFORM_HIP
  return __builtin_nontemporal_load(static_cast<const vec8_t*>(p));
#elif DCUKERN_PLATFORM_SIM
  return *static_cast<const vec8_t*>(p);
#else
  vec8_t v;
  asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
  return v;
#endif
}

// Data re-read by other waves (activations): normal cached load. p must be 16-byte aligned.
__device__ __forceinline__ vec16_t load16(const void* p) { return *static_cast<const vec16_t*>(p); }

}  // namespace dcukern
