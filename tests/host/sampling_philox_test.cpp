// Philox 4x32-10 against the known-answer vectors of the Random123 library (kat_vectors:
// "philox4x32 10 <ctr[4]> <key[2]> <out[4]>"), and the uniform that sampling derives from it.
#include <doctest/doctest.h>

#include "dcukern/sampling/philox.hpp"

using namespace dcukern;

TEST_CASE("philox4x32-10 matches Random123's known answers") {
  struct Kat {
    Philox4x32 ctr;
    uint32_t k0, k1;
    Philox4x32 out;
  };
  const Kat kats[] = {
      {{{0u, 0u, 0u, 0u}}, 0u, 0u, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
      {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu, 0xffffffffu,
       {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
      {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u, 0x299f31d0u,
       {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
  };
  for (const Kat& k : kats) {
    const Philox4x32 r = philox4x32_10(k.ctr, k.k0, k.k1);
    for (int i = 0; i < 4; ++i) CHECK(r.v[i] == k.out.v[i]);
  }
}

TEST_CASE("the sampling uniform lies in [0, 1) and depends on seed, offset and row") {
  const float a = sampling_uniform(1, 0, 0);
  CHECK(a >= 0.0f);
  CHECK(a < 1.0f);
  CHECK(sampling_uniform(1, 0, 0) == a);
  CHECK(sampling_uniform(2, 0, 0) != a);
  CHECK(sampling_uniform(1, 1, 0) != a);
  CHECK(sampling_uniform(1, 0, 1) != a);
  double sum = 0;
  for (uint32_t row = 0; row < 100000; ++row) sum += sampling_uniform(7, 3, row);
  CHECK(sum / 100000 == doctest::Approx(0.5).epsilon(0.01));
}
