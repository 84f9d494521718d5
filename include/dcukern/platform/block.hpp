// Block-level primitives: rocPRIM on AMD, CUB on NVIDIA, behind one interface. As with both libraries,
// the caller owns the temporary storage (`storage_type`, placed in shared memory). Results of the
// reductions are valid in thread 0.
//
// The simulated device (platform/sim/) uses the shuffle forms below.
// Exception: rocPRIM 5.3 (Debian 12) emits DPP row broadcasts in its wave reductions for gfx11, where
// they are illegal; there the reductions and scans use wave shuffles and shared memory instead.
#pragma once
#include "dcukern/platform/runtime.hpp"
#include "dcukern/platform/warp.hpp"
#if DCUKERN_PLATFORM_HIP
#include <rocprim/block/block_reduce.hpp>
#include <rocprim/block/block_scan.hpp>
#elif DCUKERN_PLATFORM_SIM
#define DCUKERN_SHUFFLE_BLOCK_REDUCE 1  // the simulated device has neither library
#else
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#endif

#if defined(__HIP_DEVICE_COMPILE__) && (defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__) || \
                                        defined(__gfx1103__))
#define DCUKERN_DEVICE_GFX11_0 1  // device code for GFX11.0 (RDNA3 gfx1100-gfx1103)
#define DCUKERN_SHUFFLE_BLOCK_REDUCE 1
#else
#define DCUKERN_DEVICE_GFX11_0 0
#endif

namespace dcukern {

struct SumOp {
  template <class T>
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return a + b; }
};
struct MaxOp {
  template <class T>
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};

// Wave shuffles, then one value per wave through shared memory; kThreads a multiple of the wave size.
template <class T, int kThreads>
struct ShuffleBlockReduce {
  struct storage_type {
    T wave[kThreads / 32];  // enough for wave32 and wave64
  };
  template <class Op>
  __device__ static T reduce(T v, storage_type& s, Op op) {
#if DCUKERN_PLATFORM_HIP
#pragma unroll
    for (int mask = kWarpSize / 2; mask > 0; mask /= 2) v = op(v, __shfl_xor(v, mask, kWarpSize));
#else
#pragma unroll
    for (int mask = kWarpSize / 2; mask > 0; mask /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, mask, kWarpSize));
#endif
    const int wave = static_cast<int>(threadIdx.x) / kWarpSize;
    if (lane_id() == 0) s.wave[wave] = v;
    __syncthreads();
    if (threadIdx.x == 0)
      for (int w = 1; w < kThreads / kWarpSize; ++w) v = op(v, s.wave[w]);
    __syncthreads();  // storage may be reused by the caller
    return v;
  }
};

// Exclusive prefix sum by wave shuffles, wave totals through shared memory; the block total to all threads.
template <class T, int kThreads>
struct ShuffleBlockScan {
  struct storage_type {
    T wave[kThreads / 32];
  };
  __device__ static T exclusive_sum(T v, T& total, storage_type& s) {
    const int lane = lane_id(), wave = static_cast<int>(threadIdx.x) / kWarpSize;
    T inclusive = v;
#pragma unroll
    for (int d = 1; d < kWarpSize; d *= 2) {
#if DCUKERN_PLATFORM_HIP
      const T up = __shfl_up(inclusive, d, kWarpSize);
#else
      const T up = __shfl_up_sync(0xffffffffu, inclusive, d, kWarpSize);
#endif
      if (lane >= d) inclusive += up;
    }
    if (lane == kWarpSize - 1) s.wave[wave] = inclusive;
    __syncthreads();
    T before = T(0), sum = T(0);
    for (int w = 0; w < kThreads / kWarpSize; ++w) {
      if (w == wave) before = sum;
      sum += s.wave[w];
    }
    __syncthreads();
    total = sum;
    return before + inclusive - v;
  }
};

template <class T, int kThreads>
struct BlockReduce {
#if DCUKERN_SHUFFLE_BLOCK_REDUCE
  using impl = ShuffleBlockReduce<T, kThreads>;
  using storage_type = typename impl::storage_type;
  __device__ static T sum(T v, storage_type& s) { return impl::reduce(v, s, SumOp()); }
  __device__ static T max(T v, storage_type& s) { return impl::reduce(v, s, MaxOp()); }
#elif DCUKERN_PLATFORM_HIP
  using impl = rocprim::block_reduce<T, kThreads>;
  using storage_type = typename impl::storage_type;
  __device__ static T sum(T v, storage_type& s) {
    T out;
    impl().reduce(v, out, s, rocprim::plus<T>());
    return out;
  }
  __device__ static T max(T v, storage_type& s) {
    T out;
    impl().reduce(v, out, s, MaxOp());
    return out;
  }
#else
  using impl = cub::BlockReduce<T, kThreads>;
  using storage_type = typename impl::TempStorage;
  __device__ static T sum(T v, storage_type& s) { return impl(s).Sum(v); }
  __device__ static T max(T v, storage_type& s) { return impl(s).Reduce(v, MaxOp()); }
#endif
};

// Exclusive prefix sum over the block; `total` receives the block's sum in every thread.
template <class T, int kThreads>
struct BlockScan {
#if DCUKERN_SHUFFLE_BLOCK_REDUCE
  using impl = ShuffleBlockScan<T, kThreads>;
  using storage_type = typename impl::storage_type;
  __device__ static T exclusive_sum(T v, T& total, storage_type& s) { return impl::exclusive_sum(v, total, s); }
#elif DCUKERN_PLATFORM_HIP
  using impl = rocprim::block_scan<T, kThreads>;
  using storage_type = typename impl::storage_type;
  __device__ static T exclusive_sum(T v, T& total, storage_type& s) {
    T out;
    impl().exclusive_scan(v, out, T(0), total, s, rocprim::plus<T>());
    return out;
  }
#else
  using impl = cub::BlockScan<T, kThreads>;
  using storage_type = typename impl::TempStorage;
  __device__ static T exclusive_sum(T v, T& total, storage_type& s) {
    T out;
    impl(s).ExclusiveSum(v, out, total);
    return out;
  }
#endif
};

// Whether `p` holds in any thread of the (1-D) block; a barrier (every thread calls it). __syncthreads_or, but on
// GFX11.0: there ROCm's __syncthreads_or (the device library's __ockl_wgred_or_i32) compiles under clang 15 to a
// v_mad_u64_u32 whose destination overlaps a source, which that hardware computes wrongly (the ISA audit checks
// for it), so one shared word is cleared, set by the threads that hold `p`, and read between barriers.
#if DCUKERN_PLATFORM_SIM
inline bool block_any(bool p, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return __syncthreads_or(p, file, line);  // the barrier's site is the caller's
}
#else
__device__ inline bool block_any(bool p) {
#if DCUKERN_DEVICE_GFX11_0
  __shared__ int any;
  __syncthreads();  // the previous call's reads are done
  if (threadIdx.x == 0) any = 0;
  __syncthreads();
  if (p) any = 1;
  __syncthreads();
  return any != 0;
#else
  return __syncthreads_or(p);
#endif
}
#endif

}  // namespace dcukern
