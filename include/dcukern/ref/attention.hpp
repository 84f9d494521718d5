// Host reference for paged-KV decode attention (semantics in dcukern/attention/params.hpp): double
// arithmetic over the same rounded inputs (fp8 KV dequantised as float(byte) * scale, as the kernels do),
// outputs in double (the caller compares with a tolerance). All pointers of the params are host memory.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "dcukern/attention/params.hpp"
#include "dcukern/ref/gemv.hpp"

namespace dcukern::ref {

// OCP fp8 e4m3fn: 1 sign, 4 exponent (bias 7), 3 mantissa bits; 0x7f / 0xff are NaN; no infinities.
inline float fp8_e4m3_to_float(uint8_t b) {
  const int sign = b >> 7, exp = (b >> 3) & 0xf, mant = b & 7;
  if (exp == 0xf && mant == 7) return std::numeric_limits<float>::quiet_NaN();
  const float mag = exp == 0 ? std::ldexp(float(mant), -9) : std::ldexp(float(8 + mant), exp - 10);
  return sign ? -mag : mag;
}
// Round to nearest even, saturating at +-448 (for making test data): the magnitude scaled so that its
// code's step is 1 (2^-9 below 2^-6, else 2^(E-3) for 2^E <= |f| < 2^(E+1)), rounded by nearbyint (the
// default mode: to nearest, ties to even), then exponent and mantissa; a mantissa that rounds up to 16 is
// the next binade's 8, which the code's bits carry. Beyond 448 (0x7e) there is only NaN: saturate.
inline uint8_t float_to_fp8_e4m3(float f) {
  if (std::isnan(f)) return 0x7f;
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  const float a = std::fabs(f);
  if (a > 448.f) return uint8_t(sign | 0x7e);
  int code;
  if (a < std::ldexp(1.f, -6)) {
    code = int(std::nearbyint(std::ldexp(a, 9)));  // subnormal codes 0..7 (8: the smallest normal)
  } else {
    int ex = 0;
    std::frexp(a, &ex);  // a in [2^(ex-1), 2^ex)
    const int q = int(std::nearbyint(std::ldexp(a, 4 - ex)));  // 8..16
    code = ((ex + 6) << 3) + (q - 8);
  }
  return uint8_t(sign | (code < 0x7e ? code : 0x7e));
}

// One KV element as the kernels see it (before the per-tensor scale for fp8).
inline double kv_element(DType t, const void* pool, int64_t index) {
  if (t == DType::fp8_e4m3) return fp8_e4m3_to_float(static_cast<const uint8_t*>(pool)[index]);
  return to_float(t, static_cast<const uint16_t*>(pool)[index]);
}

// The keys query row (b, t) attends to: [lo, hi) in positions (empty when hi <= lo).
inline void attention_key_range(const AttentionParams& p, int b, int t, int64_t* lo, int64_t* hi) {
  const int64_t capacity = int64_t(p.max_pages) * p.kv.page_size;
  const int64_t ctx = std::min<int64_t>(std::max<int32_t>(p.context_lens[b], 0), capacity);
  const int64_t pos = ctx - p.q_tokens + t;
  *hi = pos + 1;
  *lo = p.window_left >= 0 ? std::max<int64_t>(0, pos - p.window_left) : 0;
}

struct AttentionRowRef {
  std::vector<double> o;  // [D], normalised by the partial's own denominator (no sink)
  double lse = -std::numeric_limits<double>::infinity();  // natural log, no sink; -inf: no key
};

// Softmax-weighted sum over keys of row (b, t, h) restricted to positions [from, to) (a split chunk).
inline AttentionRowRef attention_row_partial(const AttentionParams& p, int b, int t, int h, int64_t from, int64_t to) {
  const int D = p.head_dim, group = p.num_q_heads / p.num_kv_heads, hk = h / group;
  int64_t lo, hi;
  attention_key_range(p, b, t, &lo, &hi);
  lo = std::max(lo, from);
  hi = std::min(hi, to);
  AttentionRowRef r;
  r.o.assign(D, 0.0);
  if (hi <= lo) return r;
  const double scale = p.scale > 0.f ? double(p.scale) : 1.0 / std::sqrt(double(D));
  const bool fp8 = p.kv.dtype == DType::fp8_e4m3;
  const double ks = fp8 ? double(p.kv.k_scale) : 1.0, vs = fp8 ? double(p.kv.v_scale) : 1.0;
  const auto* q =
      static_cast<const uint16_t*>(p.q.data) + b * p.q.batch_stride + t * p.q.token_stride + h * p.q.head_stride;
  int64_t lo_all, pos1;
  attention_key_range(p, b, t, &lo_all, &pos1);
  const int64_t pos = pos1 - 1;  // the query's own position
  std::vector<double> s(hi - lo);
  std::vector<int64_t> base(hi - lo);
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t j = lo; j < hi; ++j) {
    const int32_t page = p.block_table[b * p.block_table_stride + j / p.kv.page_size];
    const int64_t off =
        int64_t(page) * p.kv.page_stride + (j % p.kv.page_size) * p.kv.token_stride + hk * p.kv.head_stride;
    double dot = 0;
    for (int d = 0; d < D; ++d)
      dot += double(to_float(p.q.dtype, q[d])) * (kv_element(p.kv.dtype, p.kv.k, off + d) * ks);
    double x = dot * scale;
    if (p.soft_cap > 0.f) x = double(p.soft_cap) * std::tanh(x / double(p.soft_cap));
    if (p.alibi_slopes) x += double(p.alibi_slopes[h]) * double(j - pos);
    s[j - lo] = x;
    base[j - lo] = off;
    m = std::max(m, x);
  }
  double l = 0;
  for (int64_t j = lo; j < hi; ++j) {
    const double w = std::exp(s[j - lo] - m);
    l += w;
    for (int d = 0; d < D; ++d) r.o[d] += w * kv_element(p.kv.dtype, p.kv.v, base[j - lo] + d) * vs;
  }
  for (int d = 0; d < D; ++d) r.o[d] /= l;
  r.lse = m + std::log(l);
  return r;
}

// Combines partials by their LSEs, adding the sink (if any) to the denominator; the final row.
inline AttentionRowRef attention_merge(const std::vector<AttentionRowRef>& parts, const float* sink) {
  AttentionRowRef r;
  const size_t D = parts.empty() ? 0 : parts[0].o.size();
  r.o.assign(D, 0.0);
  double m = -std::numeric_limits<double>::infinity();
  for (const auto& pt : parts) m = std::max(m, pt.lse);
  if (std::isinf(m)) return r;  // no key at all: zeros, -inf (the sink does not count)
  double l = 0;
  for (const auto& pt : parts) {
    if (std::isinf(pt.lse)) continue;
    const double w = std::exp(pt.lse - m);
    l += w;
    for (size_t d = 0; d < D; ++d) r.o[d] += w * pt.o[d];
  }
  if (sink) l += std::exp(double(*sink) - m);
  for (size_t d = 0; d < D; ++d) r.o[d] /= l;
  r.lse = m + std::log(l);
  return r;
}

struct AttentionRef {
  std::vector<double> o;    // [B, T, Hq, D] dense
  std::vector<double> lse;  // [B, T, Hq]
};

// The whole op; chunk_size > 0 computes it as split partials merged (must equal the unsplit result).
inline AttentionRef attention(const AttentionParams& p, int64_t chunk_size = 0) {
  const int B = p.batch, T = p.q_tokens, H = p.num_q_heads, D = p.head_dim;
  AttentionRef out;
  out.o.assign(size_t(B) * T * H * D, 0.0);
  out.lse.assign(size_t(B) * T * H, 0.0);
  const int64_t capacity = int64_t(p.max_pages) * p.kv.page_size;
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < H; ++h) {
        std::vector<AttentionRowRef> parts;
        if (chunk_size <= 0) {
          parts.push_back(attention_row_partial(p, b, t, h, 0, capacity));
        } else {
          for (int64_t c = 0; c < capacity; c += chunk_size)
            parts.push_back(attention_row_partial(p, b, t, h, c, c + chunk_size));
        }
        const AttentionRowRef r = attention_merge(parts, p.sinks ? &p.sinks[h] : nullptr);
        const size_t row = (size_t(b) * T + t) * H + h;
        for (int d = 0; d < D; ++d) out.o[row * D + d] = r.o[d];
        out.lse[row] = r.lse;
      }
  return out;
}

}  // namespace dcukern::ref
