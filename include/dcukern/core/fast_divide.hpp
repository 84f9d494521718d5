// Division by a runtime constant as a multiply-high and a shift (Granlund-Montgomery): the host builds
// the divider once per call, device code divides 32-bit positions by it (page size, for example)
// without an integer division per element. Exact for every divisor >= 1 and dividend < 2^31.
#pragma once
#include <cstdint>

#include "dcukern/platform/detect.hpp"

namespace dcukern {

struct FastDivide {
  uint32_t divisor = 1, multiplier = 1;
  int shift = 0;
};

inline FastDivide make_fast_divide(uint32_t d) {
  FastDivide f;
  f.divisor = d;
  int shift = 0;
  while ((uint64_t(1) << shift) < d) ++shift;
  f.shift = shift;
  f.multiplier = static_cast<uint32_t>(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - d)) / d + 1);
  return f;
}

// n / f.divisor for 0 <= n < 2^31. `mulhi` is the high word of the 64-bit product (host or device).
DCUKERN_HD inline constexpr uint32_t fast_divide_with(uint32_t n, const FastDivide& f, uint32_t hi) {
  return (hi + n) >> f.shift;
}

inline uint32_t fast_divide_host(uint32_t n, const FastDivide& f) {
  return fast_divide_with(n, f, static_cast<uint32_t>((uint64_t(n) * f.multiplier) >> 32));
}

}  // namespace dcukern
