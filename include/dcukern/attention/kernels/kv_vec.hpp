// Eight consecutive KV elements per lane: one 16-byte load for f16/bf16, one 8-byte load for fp8 e4m3,
// streamed past L1 (each KV element is read once per block). fp8 e4m3 decodes exactly to fp16: on sm_89
// and later by the hardware conversion; elsewhere the byte's exponent and mantissa fields shifted into an
// fp16 word give value * 2^-8 for normal and subnormal values alike. Callers fold kFp8Rescale (1 or 2^8:
// this device pass's decode) into the per-tensor scale (NaN bytes are not kept).
#pragma once
#include <cstdint>

#include "dcukern/core/dtype.hpp"
#include "dcukern/platform/numeric.hpp"
#include "dcukern/platform/vec.hpp"

namespace dcukern::attn_detail {

#if DCUKERN_PLATFORM_CUDA && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define DCUKERN_FP8_DECODE_HW 1
#else
#define DCUKERN_FP8_DECODE_HW 0
#endif

constexpr float kFp8Rescale = DCUKERN_FP8_DECODE_HW ? 1.f : 256.f;  // decoded fp8 * kFp8Rescale = value

// Two fp8 e4m3 bytes -> an f16x2 word of value / kFp8Rescale: bits 0..7 and 8..15 of t (bits 16..31 are
// ignored), or with kHigh bits 16..23 and 24..31 (the hardware conversion reads that half in place: no shift).
template <bool kHigh = false>
__device__ __forceinline__ uint32_t fp8x2_to_f16x2(uint32_t t) {
#if DCUKERN_FP8_DECODE_HW
  uint32_t r;
  if constexpr (kHigh)
    asm("{\n.reg .b16 lo, hi;\nmov.b32 {lo, hi}, %1;\ncvt.rn.f16x2.e4m3x2 %0, hi;\n}" : "=r"(r) : "r"(t));
  else
    asm("{\n.reg .b16 x;\ncvt.u16.u32 x, %1;\ncvt.rn.f16x2.e4m3x2 %0, x;\n}" : "=r"(r) : "r"(t));
  return r;
#else
  if constexpr (kHigh) t >>= 16;
  const uint32_t s = (t & 0xffu) | ((t & 0xff00u) << 8);  // byte 1 to bit 16; then sign to bit 15 and
  return ((s & 0x007f007fu) << 7) | ((s & 0x00800080u) << 8);  // exponent and mantissa to bits 13..7
#endif
}
// Four fp8 bytes b0 b1 b2 b3 of w -> f16x2 words (b0, b1) and (b2, b3), each value / kFp8Rescale.
__device__ __forceinline__ void fp8_quad_to_f16x2(uint32_t w, uint32_t& lo, uint32_t& hi) {
  lo = fp8x2_to_f16x2(w);  // (no mask: the conversion reads the low half only)
  hi = fp8x2_to_f16x2<true>(w);
}

template <DType KVT>
struct KvVec {
  static constexpr bool kFp8 = KVT == DType::fp8_e4m3;
  static constexpr int kWords = kFp8 ? 2 : 4;
  uint32_t w[kWords];

  __device__ __forceinline__ void zero() {
#pragma unroll
    for (int i = 0; i < kWords; ++i) w[i] = 0u;
  }
  // Elements [elem, elem + 8) of the pool; elem a multiple of 8 (the row contract's alignment).
  __device__ __forceinline__ void load(const void* pool, int64_t elem) {
    if constexpr (kFp8) {
      const vec8_t v = load_stream8(static_cast<const uint8_t*>(pool) + elem);
      w[0] = v.x, w[1] = v.y;
    } else {
      const vec16_t v = load_stream16(static_cast<const uint16_t*>(pool) + elem);
      w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
    }
  }
  // Eight elements from shared memory (p aligned to the vector's 8 or 16 bytes).
  __device__ __forceinline__ void load_shared(const void* p) {
    if constexpr (kFp8) {
      const vec8_t v = *static_cast<const vec8_t*>(p);
      w[0] = v.x, w[1] = v.y;
    } else {
      const vec16_t v = *static_cast<const vec16_t*>(p);
      w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
    }
  }
  // To fp32; fp8 values come out divided by kFp8Rescale.
  __device__ __forceinline__ void to_float(float (&x)[8]) const {
    if constexpr (kFp8) {
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        uint32_t lo, hi;
        fp8_quad_to_f16x2(w[i], lo, hi);
        unpack2<DType::f16>(lo, x[4 * i], x[4 * i + 1]);
        unpack2<DType::f16>(hi, x[4 * i + 2], x[4 * i + 3]);
      }
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) unpack2<KVT>(w[i], x[2 * i], x[2 * i + 1]);
    }
  }
};

}  // namespace dcukern::attn_detail
