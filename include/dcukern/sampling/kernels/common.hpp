// Shared pieces of the sampling kernels: the argument block, the block shape, the sort key (logit
// descending, index ascending), the per-row scale t = log2(p / p_max), the level-1 bins over t, the
// fixed-point masses that decide cuts exactly (integer sums: order-independent, so deterministic), and
// the tile loader (scalar or 16-byte loads) every pass over a row goes through.
#pragma once
#include <cfloat>
#include <cstdint>

#include "dcukern/core/dtype.hpp"
#include "dcukern/platform/fastmath.hpp"
#include "dcukern/platform/numeric.hpp"
#include "dcukern/platform/vec.hpp"
#include "dcukern/sampling/params.hpp"

namespace dcukern::sampling_detail {

constexpr int kThreads = 512;                          // one block per row
constexpr int kItems = 8;                              // elements per thread per tile
constexpr int64_t kTile = int64_t(kThreads) * kItems;  // elements per tile
constexpr int kMaxTiles = int((kSamplingMaxVocab + kTile - 1) / kTile);
constexpr int kBins = 2048;                            // level-1 bins: bin = floor(-t * 32), last bin open
constexpr float kBinsPerLog2 = 32.0f;
constexpr int kCap = 2048;                             // candidates resolved in shared memory
constexpr int kCapItems = kCap / kThreads;
constexpr int kDigitBits = 8;                          // refinement digits of the 64-bit sort key
constexpr int kDigits = 1 << kDigitBits;
constexpr float kMassScale = 1099511627776.0f;         // 2^40: fixed-point unit of mass (p_max = 2^40)
constexpr float kLog2e = 1.4426950408889634f;

struct SamplingArgs {
  const void* logits;
  int64_t ld, vocab;
  void* tokens;
  bool tokens_i64;
  uint8_t* valid;
  float temperature;
  const float* temperature_ptr;
  int32_t top_k;
  const int32_t* top_k_ptr;
  float top_p;
  const float* top_p_ptr;
  float min_p;
  const float* min_p_ptr;
  uint64_t seed, offset;
  const uint64_t* seed_ptr;
  const uint64_t* offset_ptr;
};

// Order-preserving 32-bit image of a float (larger float -> larger key) and back. -0 maps to +0's key:
// the two compare equal, so they tie and the lower index comes first (as in the reference's sort).
__device__ __forceinline__ uint32_t order_key(float x) {
  const uint32_t u = __float_as_uint(x) == 0x80000000u ? 0u : __float_as_uint(x);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float key_value(uint32_t k) {
  return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}
// 64-bit sort key: larger key = earlier in the sampling order (logit descending, index ascending).
__device__ __forceinline__ uint64_t sort_key(float x, int64_t i) {
  return (uint64_t(order_key(x)) << 32) | uint64_t(0xFFFFFFFFu - uint32_t(i));
}
__device__ __forceinline__ int64_t key_index(uint64_t k) { return int64_t(0xFFFFFFFFu - uint32_t(k)); }
__device__ __forceinline__ float key_logit(uint64_t k) { return key_value(uint32_t(k >> 32)); }

// +inf counts as the largest finite float (NaN rows are rejected before this is used).
__device__ __forceinline__ float finite_logit(float x) { return x > FLT_MAX ? FLT_MAX : x; }

// t = log2(p / p_max) = (x - max) * log2(e) / T  (<= 0; -inf for -inf logits).
struct RowScale {
  float m, c;
  __device__ __forceinline__ float t(float x) const { return (x - m) * c; }
};
__device__ __forceinline__ int bin_of(float t) {
  const float b = -t * kBinsPerLog2;
  return b >= float(kBins - 1) ? kBins - 1 : int(b);
}
__device__ __forceinline__ uint64_t fixed_mass(float t) { return uint64_t(device_exp2(t) * kMassScale); }

// Value bin of a logit for the split rows: the top 16 bits of its order key (sign, exponent and 7
// mantissa bits: 128 bins per octave). Monotone in x and independent of the temperature, so every
// block of a row bins the same way.
__device__ __forceinline__ uint32_t value_bin(float x) { return order_key(finite_logit(x)) >> 16; }

// The smallest float of value bin `bin` and above: x >= bin_floor(bin) exactly when value_bin(x) >= bin
// (non-NaN x). Bins at or below 0x80 start among the negative NaN patterns: -inf bounds them instead.
__device__ __forceinline__ float bin_floor(uint32_t bin) {
  return bin <= 0x80u ? -INFINITY : key_value(bin << 16);
}

// A parameter the caller gives either in device memory (element i of `device`: per-row arrays, and the
// seed and offset a captured graph advances) or as a host value. On HIP the host value is pinned in a
// register first: else the compiler selects between the two addresses and loads once, which takes a
// private copy of the argument block (scratch memory) in every kernel that reads a parameter (ISA audit).
template <class T>
__device__ __forceinline__ T device_or_host(const T* device, const T& value, int64_t i) {
#if DCUKERN_PLATFORM_HIP
  T pinned = value;
  asm volatile("" : "+v"(pinned));
  return device ? device[i] : pinned;
#else
  return device ? device[i] : value;
#endif
}

// Start of row `row` of the logits.
template <DType DT>
__device__ __forceinline__ const void* row_start(const SamplingArgs& a, int64_t row) {
  return static_cast<const char*>(a.logits) + row * a.ld * (DT == DType::f32 ? 4 : 2);
}

// Tile loader: tile `base` gives each thread kN elements. Scalar: element base + u*kThreads + tid.
// Vector (16-byte loads, V a multiple of the vector width): vector base/W + g*kThreads + tid.
template <DType DT, bool kVec, int kN = kItems>
struct RowLoader {
  static constexpr int kElt = DT == DType::f32 ? 4 : 2;
  static constexpr int kW = kVec ? 16 / kElt : 1;
  static constexpr int kCount = kN;  // elements per thread
  const void* row;
  int64_t vocab;

  __device__ __forceinline__ int64_t index(int64_t base, int u) const {
    const int tid = threadIdx.x;
    if constexpr (kVec) return base + (int64_t(u / kW) * kThreads + tid) * kW + u % kW;
    else return base + int64_t(u) * kThreads + tid;
  }
  __device__ __forceinline__ float scalar(int64_t i) const {
    if constexpr (DT == DType::f32) return static_cast<const float*>(row)[i];
    else return to_float<DT>(static_cast<const uint16_t*>(row)[i]);
  }
  // The raw 32-bit words of this thread's 16-byte vectors (0 past the end), element order as load's.
  __device__ __forceinline__ void load_words(int64_t base, uint32_t (&w)[kN * kElt / 4]) const {
    static_assert(kVec, "16-byte loads");
#pragma unroll
    for (int g = 0; g < kN / kW; ++g) {
      const int64_t e = index(base, g * kW);
      const vec16_t v = e < vocab ? load16(static_cast<const char*>(row) + e * kElt) : vec16_zero();
#pragma unroll
      for (int q = 0; q < 4; ++q) w[4 * g + q] = vec16_word(v, q);
    }
  }
  // x[u] = element index(base, u), or -inf past the end (callers test index < vocab).
  __device__ __forceinline__ void load(int64_t base, float (&x)[kN]) const {
    if constexpr (kVec) {
      constexpr int kLoads = kN / kW;
      vec16_t v[kLoads];
#pragma unroll
      for (int g = 0; g < kLoads; ++g) {
        const int64_t e = index(base, g * kW);
        v[g] = e < vocab ? load16(static_cast<const char*>(row) + e * kElt) : vec16_zero();
      }
#pragma unroll
      for (int g = 0; g < kLoads; ++g) {
#pragma unroll
        for (int w = 0; w < 4; ++w) {
          const uint32_t word = vec16_word(v[g], w);
          if constexpr (DT == DType::f32) {
            x[g * kW + w] = __uint_as_float(word);
          } else {
            unpack2<DT>(word, x[g * kW + 2 * w], x[g * kW + 2 * w + 1]);
          }
        }
      }
    } else {
#pragma unroll
      for (int u = 0; u < kN; ++u) {
        const int64_t e = index(base, u);
        x[u] = e < vocab ? scalar(e) : -INFINITY;
      }
    }
  }
};

// Calls f(x, i) for every element i of the row this thread holds (x: its loaded value, NaN included),
// tile by tile of kTile elements, in (tile, item) order: the shape of every whole-row pass of the block
// kernels (row_passes.hpp, transform_block.hpp).
template <class Loader, class F>
__device__ __forceinline__ void for_each_element(const Loader& L, F f) {
  for (int64_t base = 0; base < L.vocab; base += kTile) {
    float x[kItems];
    L.load(base, x);
#pragma unroll
    for (int u = 0; u < kItems; ++u) {
      const int64_t i = L.index(base, u);
      if (i < L.vocab) f(x[u], i);
    }
  }
}

// kN elements of a thread in registers: floats, or (kPairs) bf16 pairs as loaded, two to a 32-bit word (a
// bf16 value is the top half of its float): half the registers, and maxima and compares take two elements
// per instruction (bf16x2_*, platform/numeric.hpp). The interface thread_max, append_keys and
// count_sample read: kCount, kPairs, w / f, operator[], high16.
template <bool kPairsIn, int kN>
struct ElementRegs {
  static constexpr int kCount = kN;
  static constexpr bool kPairs = kPairsIn;
  uint32_t w[kPairs ? kN / 2 : 1];  // kPairs: element u is half u % 2 of w[u / 2] (low half first)
  float f[kPairs ? 1 : kN];         // otherwise

  __device__ __forceinline__ float operator[](int u) const {
    if constexpr (kPairs) return __uint_as_float(u % 2 ? w[u / 2] & 0xFFFF0000u : w[u / 2] << 16);
    else return f[u];
  }
  // The top 16 bits of element u's float.
  __device__ __forceinline__ uint32_t high16(int u) const {
    if constexpr (kPairs) return u % 2 ? w[u / 2] >> 16 : w[u / 2] & 0xFFFFu;
    else return __float_as_uint(f[u]) >> 16;
  }
};

// A thread's elements of one tile (packed pairs for bf16 rows read with 16-byte loads).
template <DType DT, bool kVec, int kN>
struct TileRegs : ElementRegs<DT == DType::bf16 && kVec, kN> {
  // As RowLoader::load gives them (0 past the end of a row for packed pairs).
  __device__ __forceinline__ void load(const RowLoader<DT, kVec, kN>& L, int64_t base) {
    if constexpr (TileRegs::kPairs) L.load_words(base, this->w);
    else L.load(base, this->f);
  }
};

}  // namespace dcukern::sampling_detail
