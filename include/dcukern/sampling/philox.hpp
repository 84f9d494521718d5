// Philox 4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11; the Random123
// library): a counter-based generator, so draw n of stream s is a pure function of (key, counter) and
// needs no state. Host and device share this code; tests check it against Random123's known answers.
// dcukern's use: key = seed (low word, high word), counter = (offset low, offset high, row, 0).
#pragma once
#include <cstdint>

#include "dcukern/platform/detect.hpp"

namespace dcukern {

struct Philox4x32 {
  uint32_t v[4];
};

namespace philox_detail {
constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // round multipliers
constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // key schedule (golden ratio, sqrt(3) - 1)
DCUKERN_HD inline void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t p = uint64_t(a) * b;
  hi = uint32_t(p >> 32);
  lo = uint32_t(p);
}
}  // namespace philox_detail

DCUKERN_HD inline Philox4x32 philox4x32_10(Philox4x32 ctr, uint32_t k0, uint32_t k1) {
  using namespace philox_detail;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kM0, ctr.v[0], hi0, lo0);
    mulhilo(kM1, ctr.v[2], hi1, lo1);
    ctr = Philox4x32{{hi1 ^ ctr.v[1] ^ k0, lo1, hi0 ^ ctr.v[3] ^ k1, lo0}};
  }
  return ctr;
}

// The four words of stream `stream` of row `row` for the call at (seed, offset): counter = (offset low,
// offset high, row, stream).
DCUKERN_HD inline Philox4x32 sampling_words(uint64_t seed, uint64_t offset, uint32_t row, uint32_t stream = 0) {
  return philox4x32_10(Philox4x32{{uint32_t(offset), uint32_t(offset >> 32), row, stream}}, uint32_t(seed),
                       uint32_t(seed >> 32));
}

// A uniform in [0, 1) from 24 bits of a word.
DCUKERN_HD inline float uniform_of_word(uint32_t word) { return float(word >> 8) * (1.0f / 16777216.0f); }

// The uniform in [0, 1) that row `row` uses for the call at (seed, offset): 24 bits of word 0 of stream 0.
// (Rows that draw by rejection, sampling.top_p.vec, take words 1-3 for their further proposals and word 0
// of stream 1 for their fallback's draw.)
DCUKERN_HD inline float sampling_uniform(uint64_t seed, uint64_t offset, uint32_t row) {
  return uniform_of_word(sampling_words(seed, offset, row).v[0]);
}

}  // namespace dcukern
