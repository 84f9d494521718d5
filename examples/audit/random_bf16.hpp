// dcukern-audit's smoke inputs: values uniform in [-1, 1) from a seeded generator, as bf16 bits or floats.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "dcukern/ref/gemv.hpp"

namespace dcukern::smoke {

struct RandomBf16 {
  std::mt19937 rng;
  std::uniform_real_distribution<float> d{-1.f, 1.f};
  explicit RandomBf16(uint32_t seed) : rng(seed) {}
  float uniform() { return d(rng); }
  std::vector<uint16_t> operator()(size_t n) {
    std::vector<uint16_t> v(n);
    for (auto& x : v) x = ref::from_float(DType::bf16, uniform());
    return v;
  }
};

}  // namespace dcukern::smoke
