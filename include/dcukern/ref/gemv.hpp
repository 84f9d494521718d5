// Host reference for GEMV: double accumulation over the same rounded inputs, output in double (the
// caller compares with a tolerance), plus fp16/bf16 <-> float conversions for host code.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dcukern/core/dtype.hpp"

namespace dcukern::ref {

inline float bf16_to_float(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);
  return uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
inline float f16_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const int exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t u;
  if (exp == 0x1f) {
    u = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {  // subnormal
      int e = -1;
      do { ++e; mant <<= 1; } while (!(mant & 0x400u));
      u = sign | uint32_t(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13;
    }
  } else {
    u = sign | uint32_t(exp - 15 + 127) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t float_to_f16(float f) {  // round to nearest even
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t absu = u & 0x7fffffffu;
  if (absu > 0x7f800000u) return uint16_t(sign | 0x7e00u);
  if (absu >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (absu < 0x38800000u) {                                   // subnormal or zero in fp16
    const float a = std::fabs(f) * 16777216.0f;               // scale by 2^24: fp16 subnormal units
    return uint16_t(sign | uint32_t(std::nearbyint(a)));
  }
  const uint32_t rounded = absu + 0xfffu + ((absu >> 13) & 1u);
  return uint16_t(sign | ((rounded - (112u << 23)) >> 13));
}
inline float to_float(DType t, uint16_t h) { return t == DType::bf16 ? bf16_to_float(h) : f16_to_float(h); }
inline uint16_t from_float(DType t, float f) { return t == DType::bf16 ? float_to_bf16(f) : float_to_f16(f); }

// y[n, m] = sum_k x[n, k] * w[m, k] (+ bias[m]), in double. Strides in elements; returns [N, M] dense.
inline std::vector<double> gemv(DType t, const uint16_t* x, int64_t ldx, const uint16_t* w, int64_t ldw,
                                const uint16_t* bias, int n, int64_t m, int64_t k) {
  std::vector<double> y(static_cast<size_t>(n) * m);
  for (int i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      double acc = bias ? to_float(t, bias[j]) : 0.0;
      for (int64_t kk = 0; kk < k; ++kk) acc += double(to_float(t, x[i * ldx + kk])) * to_float(t, w[j * ldw + kk]);
      y[static_cast<size_t>(i) * m + j] = acc;
    }
  return y;
}

}  // namespace dcukern::ref
