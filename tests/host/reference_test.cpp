#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "dcukern/ref/gemv.hpp"

using namespace dcukern;

TEST_CASE("fp16 conversion round-trips every finite value and rounds to nearest even") {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t v = uint16_t(h);
    if ((v & 0x7c00u) == 0x7c00u) continue;  // inf / nan
    REQUIRE(ref::float_to_f16(ref::f16_to_float(v)) == v);
  }
  CHECK(ref::f16_to_float(0x3c00) == 1.0f);
  CHECK(ref::f16_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(ref::float_to_f16(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);            // tie -> even
  CHECK(ref::float_to_f16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);        // tie -> even (up)
  CHECK(ref::float_to_f16(70000.0f) == 0x7c00);
  CHECK(std::isnan(ref::f16_to_float(ref::float_to_f16(NAN))));
}

TEST_CASE("bf16 conversion rounds to nearest even and keeps NaN") {
  CHECK(ref::bf16_to_float(0x3f80) == 1.0f);
  CHECK(ref::float_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);             // tie -> even
  CHECK(ref::float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);
  CHECK(std::isnan(ref::bf16_to_float(ref::float_to_bf16(NAN))));
}

TEST_CASE("reference gemv on a hand-checked case, with strides and bias") {
  const DType t = DType::bf16;
  // x [2, 3] with row stride 4; w [2, 3] with row stride 5.
  const float xs[2][4] = {{1, 2, 3, 99}, {-1, 0.5f, 2, 99}};
  const float ws[2][5] = {{1, 1, 1, 99, 99}, {2, -1, 0.25f, 99, 99}};
  uint16_t x[8], w[10], bias[2] = {ref::from_float(t, 0.5f), ref::from_float(t, -1)};
  for (int i = 0; i < 8; ++i) x[i] = ref::from_float(t, xs[i / 4][i % 4]);
  for (int i = 0; i < 10; ++i) w[i] = ref::from_float(t, ws[i / 5][i % 5]);
  const auto y = ref::gemv(t, x, 4, w, 5, bias, 2, 2, 3);
  CHECK(y[0] == doctest::Approx(6.5));         // 1+2+3 + 0.5
  CHECK(y[1] == doctest::Approx(-1 + 0.75));   // 2-2+0.75 - 1
  CHECK(y[2] == doctest::Approx(1.5 + 0.5));   // -1+0.5+2 + 0.5
  CHECK(y[3] == doctest::Approx(-2 - 0.5 + 0.5 - 1));
}
