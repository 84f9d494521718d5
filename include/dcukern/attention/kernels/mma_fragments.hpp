// Fragment helpers of the tensor-core attention kernel (attention_mma_kernel, mma.hpp): values to and from
// the MMA input type, packing two halves into an MMA word, KV vectors (kv_vec.hpp) into the A and B
// operands' words, and a named barrier of some of a block's warps.
#pragma once
#include <cstdint>

#include "dcukern/attention/kernels/kv_vec.hpp"

namespace dcukern::attn_detail {

template <DType MT>
__device__ __forceinline__ uint16_t to_mma(float x) {
  if constexpr (MT == DType::bf16) return float_to_bf16(x);
  else return float_to_f16(x);
}
template <DType MT>
__device__ __forceinline__ float from_mma(uint16_t x) {
  if constexpr (MT == DType::bf16) return bf16_to_float(x);
  else return f16_to_float(x);
}
__device__ __forceinline__ uint32_t pack2(uint16_t lo, uint16_t hi) { return uint32_t(lo) | (uint32_t(hi) << 16); }

#if DCUKERN_PLATFORM_CUDA
// A barrier of the `threads` threads (whole warps) that reach it with the same id (1..15; 0 is
// __syncthreads'); their shared-memory writes before it are visible to each other after it.
__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}
// Elements e and e + 1 (e even, 0..6) of key x and of key y, as the MMA words {x_e, y_e} and {x_e+1, y_e+1}.
// fp8: one byte permute gathers the four bytes, each half then converts in place.
template <DType KVT>
__device__ __forceinline__ void pairs_across_keys(const KvVec<KVT>& x, const KvVec<KVT>& y, int e, uint32_t& even,
                                                  uint32_t& odd) {
  if constexpr (KVT == DType::fp8_e4m3) {
    const int w = e / 4, b = e % 4;
    const uint32_t p = __byte_perm(x.w[w], y.w[w], unsigned(b | (4 + b) << 4 | (b + 1) << 8 | (5 + b) << 12));
    even = fp8x2_to_f16x2(p);
    odd = fp8x2_to_f16x2<true>(p);
  } else {
    const int w = e / 2;
    even = __byte_perm(x.w[w], y.w[w], 0x5410u);
    odd = __byte_perm(x.w[w], y.w[w], 0x7632u);
  }
}
// Elements 4s..4s+3 of one key's vector as two MMA words {e, e+1}, {e+2, e+3} (s = 0 or 1).
template <DType KVT>
__device__ __forceinline__ void quad_of_key(const KvVec<KVT>& x, int s, uint32_t& lo, uint32_t& hi) {
  if constexpr (KVT == DType::fp8_e4m3) {
    fp8_quad_to_f16x2(x.w[s], lo, hi);
  } else {
    lo = x.w[2 * s], hi = x.w[2 * s + 1];
  }
}
#endif

}  // namespace dcukern::attn_detail
