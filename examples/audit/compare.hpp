// dcukern-audit's smoke runs: a device result against the host reference, and host data in a pool's dtype.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "dcukern/core/dtype.hpp"
#include "dcukern/ref/gemv.hpp"

namespace dcukern::smoke {

// Worst |got(i) - want[i]| / (rel * (1 + |want[i]|)) over want's elements (INFINITY for a NaN).
template <class Got>
double worst_relative(const Got& got, const std::vector<double>& want, double rel) {
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const double err = std::fabs(double(got(i)) - want[i]) / (rel * (1 + std::fabs(want[i])));
    worst = std::max(worst, std::isnan(err) ? INFINITY : err);
  }
  return worst;
}

// The values as a dense array of dtype t (f32, or a 16-bit float type), in bytes.
inline std::vector<uint8_t> dense_bytes(DType t, const std::vector<float>& values) {
  const size_t size = dtype_bytes(t);
  std::vector<uint8_t> out(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t half = t == DType::f32 ? 0 : ref::from_float(t, values[i]);
    std::memcpy(&out[i * size], t == DType::f32 ? static_cast<const void*>(&values[i]) : &half, size);
  }
  return out;
}

}  // namespace dcukern::smoke
