// Eight consecutive KV elements per lane: one 16-byte load for f16/bf16, one 8-byte load for fp8 e4m3,
// streamed past L1 (each KV element is read once per block). fp8 e4m3 decodes exactly through fp16:
// the byte's exponent and mantissa fields shifted into an fp16 word give value * 2^-8 for normal and
// subnormal values alike, so callers fold kFp8Rescale into the per-tensor scale (NaN bytes are not kept).
#pragma once
#include <cstdint>

#include "dcukern/core/dtype.hpp"
#include "dcukern/platform/numeric.hpp"
#include "dcukern/platform/vec.hpp"

namespace dcukern::attn_detail {

constexpr float kFp8Rescale = 256.f;  // 2^8: fp16 word built from an e4m3 byte -> the byte's value

// fp8 e4m3 bytes at bit 0 and bit 16 of t -> an f16x2 word of value * 2^-8 (sign to bit 15, exponent
// and mantissa to bits 13..7 of each half).
__device__ __forceinline__ uint32_t fp8_pair_to_f16x2(uint32_t t) {
  return ((t & 0x007f007fu) << 7) | ((t & 0x00800080u) << 8);
}
// Four fp8 bytes b0 b1 b2 b3 of w -> f16x2 words (b0, b1) and (b2, b3), each value * 2^-8.
__device__ __forceinline__ void fp8_quad_to_f16x2(uint32_t w, uint32_t& lo, uint32_t& hi) {
  lo = fp8_pair_to_f16x2((w & 0xffu) | ((w & 0xff00u) << 8));
  hi = fp8_pair_to_f16x2(((w >> 16) & 0xffu) | ((w >> 8) & 0xff0000u));
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
