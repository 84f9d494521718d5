// Element types known to dcukern, their sizes and names, and a bit mask of them for contracts.
#pragma once
#include <cstdint>
#include <string>

namespace dcukern {

enum class DType : uint8_t { f32, f16, bf16, fp8_e4m3, i32, i64 };

constexpr int dtype_bytes(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f16: return 2;
    case DType::bf16: return 2;
    case DType::fp8_e4m3: return 1;
    case DType::i32: return 4;
    case DType::i64: return 8;
  }
  return 0;
}

constexpr const char* dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::fp8_e4m3: return "fp8_e4m3";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
  }
  return "?";
}

// A set of dtypes, used by capability contracts.
struct DTypeMask {
  uint32_t bits = 0;
  constexpr bool has(DType t) const { return (bits >> static_cast<unsigned>(t)) & 1u; }
};
constexpr DTypeMask dtypes() { return {}; }
template <class... Rest>
constexpr DTypeMask dtypes(DType first, Rest... rest) {
  return {(1u << static_cast<unsigned>(first)) | dtypes(rest...).bits};
}

// "f16,bf16": the names of a mask's dtypes, for capability reports.
inline std::string dtype_list(DTypeMask m) {
  std::string s;
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::fp8_e4m3, DType::i32, DType::i64})
    if (m.has(t)) s += (s.empty() ? "" : ",") + std::string(dtype_name(t));
  return s;
}

}  // namespace dcukern
