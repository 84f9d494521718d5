// Block-level primitives: rocPRIM on AMD, CUB on NVIDIA, behind one interface. As with both libraries,
// the caller owns the temporary storage (`storage_type`, placed in shared memory).
#pragma once
#include "dcukern/platform/runtime.hpp"
#if DCUKERN_PLATFORM_HIP
#include <rocprim/block/block_reduce.hpp>
#include <rocprim/block/block_scan.hpp>
#else
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#endif

namespace dcukern {

struct MaxOp {
  template <class T>
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};

template <class T, int kThreads>
struct BlockReduce {
#if DCUKERN_PLATFORM_HIP
  using impl = rocprim::block_reduce<T, kThreads>;
  using storage_type = typename impl::storage_type;
  // Sum over the block; the result is valid in thread 0.
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

// Exclusive prefix sum over the block (thread order); every thread also receives the block total.
template <class T, int kThreads>
struct BlockScan {
#if DCUKERN_PLATFORM_HIP
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

}  // namespace dcukern
