// Decode GEMV / skinny GEMM: y[N,M] = x[N,K] · W[M,K]ᵀ (+ bias[M]), fp16 or bf16 in and out, fp32
// accumulation, N = 1..16. All tensors share one dtype. Rows are contiguous; row strides (elements) may
// exceed the logical width. y must not overlap x, W or bias (core/overlap.hpp).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "dcukern/core/overlap.hpp"
#include "dcukern/core/status.hpp"
#include "dcukern/core/tensor.hpp"

namespace dcukern {

constexpr int kGemvMaxN = 16;

struct GemvParams {
  ConstMatrix x;     // [N, K]
  ConstMatrix w;     // [M, K]
  ConstVector bias;  // [M] or data == nullptr for no bias
  Matrix y;          // [N, M]
};

// The facts of one call that contracts look at (derived once per call by validate_gemv).
struct GemvCall {
  DType dtype;
  int n;
  int64_t m, k;
  bool has_bias;
  int64_t ldx, ldw, ldy;
  int min_align;  // smallest byte alignment among x, W, y (and bias)
};

namespace detail {
inline std::string shape_str(int64_t r, int64_t c) {
  return "[" + std::to_string(r) + ", " + std::to_string(c) + "]";
}
}  // namespace detail

// Checks every precondition of the op (not of a particular kernel). On success fills *call.
inline Status validate_gemv(const GemvParams& p, GemvCall* call) {
  using detail::shape_str;
  if (!p.x.data || !p.w.data || !p.y.data)
    return Status::invalid(std::string("gemv: null pointer for ") +
                           (!p.x.data ? "x" : !p.w.data ? "w" : "y"));
  const DType dt = p.x.dtype;
  if (dt != DType::f16 && dt != DType::bf16)
    return Status::unsupported(std::string("gemv: dtype ") + dtype_name(dt) + " (supported: f16, bf16)");
  if (p.w.dtype != dt || p.y.dtype != dt || (p.bias.data && p.bias.dtype != dt))
    return Status::invalid(std::string("gemv: dtype mismatch: x ") + dtype_name(dt) + ", w " +
                           dtype_name(p.w.dtype) + ", y " + dtype_name(p.y.dtype) +
                           (p.bias.data ? std::string(", bias ") + dtype_name(p.bias.dtype) : std::string()));
  const int64_t n = p.x.rows, k = p.x.cols, m = p.w.rows;
  if (n < 1 || n > kGemvMaxN)
    return Status::invalid("gemv: N = " + std::to_string(n) + " out of range 1.." + std::to_string(kGemvMaxN));
  if (k < 1 || m < 1) return Status::invalid("gemv: empty K or M (x " + shape_str(n, k) + ", w " +
                                             shape_str(m, p.w.cols) + ")");
  if (p.w.cols != k)
    return Status::invalid("gemv: K mismatch: x " + shape_str(n, k) + ", w " + shape_str(m, p.w.cols));
  if (p.y.rows != n || p.y.cols != m)
    return Status::invalid("gemv: y is " + shape_str(p.y.rows, p.y.cols) + ", expected " + shape_str(n, m));
  if (p.bias.data && p.bias.size != m)
    return Status::invalid("gemv: bias has " + std::to_string(p.bias.size) + " elements, expected M = " +
                           std::to_string(m));
  if (p.x.row_stride < k || p.w.row_stride < k || p.y.row_stride < m)
    return Status::invalid("gemv: row stride below row width (x " + std::to_string(p.x.row_stride) + " < K?, w " +
                           std::to_string(p.w.row_stride) + " < K?, y " + std::to_string(p.y.row_stride) +
                           " < M?)");
  const int eb = dtype_bytes(dt);
  if (const char* name = first_misaligned({{"x", p.x.data, eb}, {"w", p.w.data, eb}, {"y", p.y.data, eb},
                                           {"bias", p.bias.data, eb}}))
    return Status::invalid(std::string("gemv: ") + name + " is not aligned to its element size");
  if (const std::string o = first_overlap({{"y", span_of(p.y), true}, {"x", span_of(p.x)}, {"w", span_of(p.w)},
                                            {"bias", span_of(p.bias)}});
      !o.empty())
    return Status::invalid("gemv: " + o);
  int align = address_alignment(p.x.data);
  align = std::min(align, address_alignment(p.w.data));
  align = std::min(align, address_alignment(p.y.data));
  if (p.bias.data) align = std::min(align, address_alignment(p.bias.data));
  *call = GemvCall{dt, static_cast<int>(n), m, k, p.bias.data != nullptr,
                   p.x.row_stride, p.w.row_stride, p.y.row_stride, align};
  return Status::success();
}

// The tensor contract of one GEMV row. check() returns nullptr when the call is accepted, else why not.
struct GemvContract {
  DTypeMask dtypes;
  int n_min = 1, n_max = kGemvMaxN;
  int k_multiple = 1;       // K, ldx and ldw must be multiples of this
  int align_bytes = 1;      // x, W, y, bias base addresses
  int64_t m_exact = 0;      // tuned rows: exact M (0: any)
  int64_t k_exact = 0;      // tuned rows: exact K (0: any)
  int bias_rule = 0;        // 0 any, 1 bias required, -1 no bias

  constexpr const char* check(const GemvCall& c) const {
    if (!dtypes.has(c.dtype)) return "dtype not covered by this row";
    if (c.n < n_min || c.n > n_max) return "N outside this row's range";
    if (c.k % k_multiple || c.ldx % k_multiple || c.ldw % k_multiple)
      return "K or a row stride is not a multiple of the row's vector width";
    if (c.min_align < align_bytes) return "a pointer is not aligned for this row's vector loads";
    if (m_exact && c.m != m_exact) return "M differs from the shape this row is tuned for";
    if (k_exact && c.k != k_exact) return "K differs from the shape this row is tuned for";
    if (bias_rule > 0 && !c.has_bias) return "row requires a bias";
    if (bias_rule < 0 && c.has_bias) return "row is tuned for calls without bias";
    return nullptr;
  }

  // One line for capability reports: "f16,bf16 N=1..16 K%8 align16 M=5120 K=17408 no-bias".
  std::string describe() const {
    std::string s = dtype_list(dtypes);
    s += n_min == n_max ? " N=" + std::to_string(n_min) : " N=" + std::to_string(n_min) + ".." + std::to_string(n_max);
    if (k_multiple > 1) s += " K%" + std::to_string(k_multiple);
    if (align_bytes > 1) s += " align" + std::to_string(align_bytes);
    if (m_exact) s += " M=" + std::to_string(m_exact);
    if (k_exact) s += " K=" + std::to_string(k_exact);
    if (bias_rule) s += bias_rule > 0 ? " bias" : " no-bias";
    return s;
  }
};

}  // namespace dcukern
