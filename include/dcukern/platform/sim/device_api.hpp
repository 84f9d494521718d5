// The device vocabulary of CUDA C++ for the simulated device (sim/engine.hpp), so that kernels written
// for the CUDA side of the platform layer compile with a plain C++ compiler: the qualifiers, the built-in
// index variables, barriers, wave shuffles and votes, atomics and the integer and float intrinsics the
// kernels use. Each follows the CUDA programming guide's definition, wave 32.
#pragma once
#include <math.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "dcukern/platform/sim/engine.hpp"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static  // one copy per kernel: the simulated blocks run one after another
#define __align__(n) __attribute__((aligned(n)))  // (alignas may not follow `static`)

using dcukern::sim::dim3;
using dcukern::sim::uint3;
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) ulonglong2 {
  unsigned long long x, y;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
#define threadIdx (::dcukern::sim::engine().thread_idx)
#define blockIdx (::dcukern::sim::engine().block_idx)
#define blockDim (::dcukern::sim::engine().block_dim)
#define gridDim (::dcukern::sim::engine().grid_dim)

namespace dcukern::sim {
inline unsigned lane() { return engine().current % kSimWarp; }
inline unsigned warp_first() { return engine().current - lane(); }

template <class T>
inline uint64_t to_word(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "shuffles move values of up to 8 bytes");
  uint64_t w = 0;
  std::memcpy(&w, &v, sizeof(T));
  return w;
}
template <class T>
inline T from_word(uint64_t w) {
  T v;
  std::memcpy(&v, &w, sizeof(T));
  return v;
}
// Lane src's value of v (src in [0, 32) of this wave), every lane of `mask` taking part. The values of
// consecutive wave operations alternate between two slots, so one wait suffices: a lane can write the
// next operation's slot only after every lane has left this one (the next operation's wait needs them all),
// and the one after that only once they have all read this slot.
template <class T>
inline T exchange(uint32_t mask, T v, unsigned src) {
  Engine& e = engine();
  if (!(mask >> lane() & 1u)) fail("a wave operation by a lane outside its mask");
  const unsigned slot = e.warp_round[e.current / kSimWarp] & 1u;
  e.word[slot][e.current] = to_word(v);
  yield_as(Wait::warp, mask);
  return from_word<T>(e.word[slot][warp_first() + src]);
}
// A block barrier at source line file:line (the call site's, which compiler copies of the code share).
inline int block_vote(int pred, const char* file, int line) {
  Engine& e = engine();
  e.vote[e.current] = pred;
  e.barrier_file[e.current] = file;
  e.barrier_line[e.current] = line;
  yield_as(Wait::block);
  return e.block_votes;
}
}  // namespace dcukern::sim

// The barriers take their call site as default arguments (GCC and Clang builtins).
#define DCUKERN_SIM_SITE const char *file = __builtin_FILE(), int line = __builtin_LINE()
inline void __syncthreads(DCUKERN_SIM_SITE) { (void)dcukern::sim::block_vote(0, file, line); }
inline int __syncthreads_or(int pred, DCUKERN_SIM_SITE) { return dcukern::sim::block_vote(pred != 0, file, line) != 0; }
inline int __syncthreads_and(int pred, DCUKERN_SIM_SITE) {
  return dcukern::sim::block_vote(pred != 0, file, line) == int(dcukern::sim::engine().threads);
}
inline int __syncthreads_count(int pred, DCUKERN_SIM_SITE) { return dcukern::sim::block_vote(pred != 0, file, line); }
#undef DCUKERN_SIM_SITE
inline void __syncwarp(unsigned mask = 0xffffffffu) { (void)dcukern::sim::exchange(mask, 0, 0); }
inline void __threadfence() {}
inline void __threadfence_block() {}
[[noreturn]] inline void __trap() { dcukern::sim::fail("__trap() in device code"); }

template <class T>
inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  const unsigned l = dcukern::sim::lane();
  return dcukern::sim::exchange(mask, v, (l & ~unsigned(width - 1)) + unsigned(src) % unsigned(width));
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  const unsigned l = dcukern::sim::lane(), src = l ^ unsigned(lane_mask);
  const bool inside = (src & ~unsigned(width - 1)) == (l & ~unsigned(width - 1));
  return dcukern::sim::exchange(mask, v, inside ? src : l);
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const unsigned l = dcukern::sim::lane();
  return dcukern::sim::exchange(mask, v, l % unsigned(width) >= delta ? l - delta : l);
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const unsigned l = dcukern::sim::lane();
  return dcukern::sim::exchange(mask, v, l % unsigned(width) + delta < unsigned(width) ? l + delta : l);
}
inline unsigned __ballot_sync(unsigned mask, int pred) {
  using namespace dcukern::sim;
  Engine& e = engine();
  const unsigned slot = e.warp_round[e.current / kSimWarp] & 1u;
  e.word[slot][e.current] = pred != 0;
  yield_as(Wait::warp, mask);
  unsigned bits = 0;
  for (unsigned l = 0; l < unsigned(kSimWarp) && warp_first() + l < e.threads; ++l)
    if ((mask >> l & 1u) && e.wait[warp_first() + l] != Wait::done && e.word[slot][warp_first() + l]) bits |= 1u << l;
  return bits;
}
inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
inline int __all_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) == __ballot_sync(mask, 1); }
inline unsigned __activemask() { return 0xffffffffu; }

// Atomics: plain read-modify-writes (the simulation runs one thread at a time). Each returns the old value.
namespace dcukern::sim {
template <class T, class Op>
inline T read_modify_write(T* p, Op op) {
  const T old = *p;
  *p = op(old);
  return old;
}
}  // namespace dcukern::sim
template <class T>
inline T atomicAdd(T* p, T v) { return dcukern::sim::read_modify_write(p, [v](T o) { return T(o + v); }); }
template <class T>
inline T atomicSub(T* p, T v) { return dcukern::sim::read_modify_write(p, [v](T o) { return T(o - v); }); }
template <class T>
inline T atomicMin(T* p, T v) { return dcukern::sim::read_modify_write(p, [v](T o) { return v < o ? v : o; }); }
template <class T>
inline T atomicMax(T* p, T v) { return dcukern::sim::read_modify_write(p, [v](T o) { return o < v ? v : o; }); }
template <class T>
inline T atomicOr(T* p, T v) { return dcukern::sim::read_modify_write(p, [v](T o) { return T(o | v); }); }
template <class T>
inline T atomicAnd(T* p, T v) { return dcukern::sim::read_modify_write(p, [v](T o) { return T(o & v); }); }
template <class T>
inline T atomicExch(T* p, T v) { return dcukern::sim::read_modify_write(p, [v](T) { return v; }); }
template <class T>
inline T atomicCAS(T* p, T expected, T v) {
  return dcukern::sim::read_modify_write(p, [=](T o) { return o == expected ? v : o; });
}

// Bit casts and integer intrinsics.
inline float __uint_as_float(unsigned u) { return __builtin_bit_cast(float, u); }
inline unsigned __float_as_uint(float f) { return __builtin_bit_cast(unsigned, f); }
inline float __int_as_float(int u) { return __builtin_bit_cast(float, u); }
inline int __float_as_int(float f) { return __builtin_bit_cast(int, f); }
inline double __longlong_as_double(long long u) { return __builtin_bit_cast(double, u); }
inline long long __double_as_longlong(double f) { return __builtin_bit_cast(long long, f); }
inline int __clz(unsigned x) { return x ? __builtin_clz(x) : 32; }
inline int __clzll(unsigned long long x) { return x ? __builtin_clzll(x) : 64; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(unsigned x) { return __builtin_ffs(int(x)); }
inline int __ffsll(unsigned long long x) { return __builtin_ffsll((long long)x); }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
inline unsigned __umulhi(unsigned a, unsigned b) { return unsigned((uint64_t(a) * b) >> 32); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)((unsigned __int128)a * b >> 64);
}
template <class T>
inline T __ldg(const T* p) {
  return *p;
}

// Float intrinsics: the IEEE functions (the device's fast forms differ in the last bits; the kernels'
// determinism does not depend on which).
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }

// min and max of mixed types, as CUDA's overloads resolve them (the usual arithmetic conversions; floats as
// fminf / fmaxf).
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<C>) return fmin(C(a), C(b));  // fminf: a NaN loses
  else return C(b) < C(a) ? C(b) : C(a);
}
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<C>) return fmax(C(a), C(b));
  else return C(a) < C(b) ? C(b) : C(a);
}
