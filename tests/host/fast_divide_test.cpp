// FastDivide: multiply-high division equals integer division for every divisor class the kernels use
// (page sizes 1..4096 exhaustively over edge dividends, odd large divisors, powers of two).
#include <doctest/doctest.h>

#include <cstdint>
#include <random>

#include "dcukern/core/fast_divide.hpp"

using namespace dcukern;

TEST_CASE("fast divide: exact for dividends below 2^31") {
  std::mt19937 rng(5);
  std::uniform_int_distribution<uint32_t> any(0, 0x7fffffffu);
  auto check = [&](uint32_t d) {
    const FastDivide f = make_fast_divide(d);
    const uint32_t edges[] = {0u, 1u, d - 1, d, d + 1, 2 * d - 1, 0x7fffffffu, 0x7ffffffeu, 0x7fffffffu / d * d};
    for (uint32_t n : edges)
      if (n <= 0x7fffffffu) REQUIRE(fast_divide_host(n, f) == n / d);
    for (int i = 0; i < 200; ++i) {
      const uint32_t n = any(rng);
      REQUIRE(fast_divide_host(n, f) == n / d);
    }
  };
  for (uint32_t d = 1; d <= 4096; ++d) check(d);
  for (uint32_t d : {5441u, 65537u, 1000003u, 0x40000000u, 0x7fffffffu, 0x12345679u}) check(d);
}
