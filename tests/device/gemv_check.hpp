// GEMV device-test problems and their check, shared by the GEMV suite and the PTX fallback test: inputs on
// host and device in one of three layouts, the reference in double of every output element, and the comparison
// (tolerance from the dtype and each element's sum of |x w|; every element written, padding untouched).
#pragma once
#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "dcukern/gemv.hpp"
#include "support.hpp"

namespace dcukern::test::gemv_check {

enum class Layout { dense, padded, misaligned };
inline const char* layout_name(Layout l) {
  return l == Layout::dense ? "dense" : l == Layout::padded ? "padded" : "misaligned";
}

// One problem: inputs on host and device for N up to 16, with the layout's strides and offsets.
struct Problem {
  DType dt;
  int64_t m, k, ldx, ldw, ldy;
  int offset;  // elements added to x and W base pointers (1: misaligned)
  std::vector<uint16_t> x, w, bias;
  DeviceBuffer<uint16_t> dx, dw, dbias, dy;

  Problem(DType dt_, int64_t m_, int64_t k_, Layout layout, std::mt19937_64& rng) : dt(dt_), m(m_), k(k_) {
    ldx = layout == Layout::padded ? k + 8 : k;
    ldw = layout == Layout::padded ? k + 24 : k;
    ldy = layout == Layout::padded ? m + 3 : m;
    offset = layout == Layout::misaligned ? 1 : 0;
    x = random_halfs(dt, offset + kGemvMaxN * ldx, rng);
    w = random_halfs(dt, offset + m * ldw, rng);
    bias = random_halfs(dt, m, rng);
    dx = DeviceBuffer<uint16_t>(x.size());
    dw = DeviceBuffer<uint16_t>(w.size());
    dbias = DeviceBuffer<uint16_t>(m);
    dy = DeviceBuffer<uint16_t>(kGemvMaxN * ldy);
    dx.upload(x);
    dw.upload(w);
    dbias.upload(bias);
  }
  GemvParams params(int n, bool with_bias) const {
    GemvParams p;
    p.x = {dx.get() + offset, dt, n, k, ldx};
    p.w = {dw.get() + offset, dt, m, k, ldw};
    if (with_bias) p.bias = {dbias.get(), dt, m};
    p.y = {dy.get(), dt, n, m, ldy};
    return p;
  }
};

// The reference in double of every output element for x's first n rows, without the bias (expect_matches adds
// it): value[i * m + j] = sum over k of x[i][k] w[j][k], scale[i * m + j] = sum of |x w|. One per problem serves
// every N up to n and both bias choices.
struct Reference {
  int n;
  std::vector<double> value, scale;  // [n][m]
};

inline Reference reference(const Problem& pr, int n) {
  Reference r{n, std::vector<double>(size_t(n) * pr.m), std::vector<double>(size_t(n) * pr.m)};
  std::vector<float> xf(size_t(n) * pr.k);
  for (int i = 0; i < n; ++i)
    for (int64_t kk = 0; kk < pr.k; ++kk) xf[i * pr.k + kk] = ref::to_float(pr.dt, pr.x[pr.offset + i * pr.ldx + kk]);
  auto rows = [&](int64_t j0, int64_t j1) {  // output rows [j0, j1)
    std::vector<float> wf(pr.k);
    for (int64_t j = j0; j < j1; ++j) {
      const uint16_t* wr = pr.w.data() + pr.offset + j * pr.ldw;
      for (int64_t kk = 0; kk < pr.k; ++kk) wf[kk] = ref::to_float(pr.dt, wr[kk]);
      for (int i = 0; i < n; ++i) {
        double acc = 0, scale = 0;
        const float* xr = xf.data() + i * pr.k;
        for (int64_t kk = 0; kk < pr.k; ++kk) {
          const double t = double(xr[kk]) * wf[kk];
          acc += t;
          scale += std::fabs(t);
        }
        r.value[i * pr.m + j] = acc;
        r.scale[i * pr.m + j] = scale;
      }
    }
  };
  // Large problems on the host's cores (the largest is 17408 x 17408 x 16 products); each thread its own rows.
  const int64_t threads = pr.m * pr.k * n < (int64_t(1) << 24) ? 1 : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t) pool.emplace_back(rows, pr.m * t / threads, pr.m * (t + 1) / threads);
  rows(0, pr.m / threads);
  for (std::thread& t : pool) t.join();
  return r;
}

// Compare y (downloaded, [N, ldy]) with the reference (n <= r.n), every element: within a tolerance from the
// dtype and the element's sum of |x w| + |bias|; also every element of [N, M] written (poison is NaN) and the
// padding columns [M, ldy) untouched.
inline void expect_matches(const Problem& pr, int n, bool with_bias, const std::vector<uint16_t>& y,
                           const Reference& r) {
  REQUIRE(n <= r.n);
  const double out_eps = pr.dt == DType::bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -10);
  int64_t unwritten = 0, touched_padding = 0, wrong = 0;
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    for (int64_t j = pr.m; j < pr.ldy; ++j)
      if (y[i * pr.ldy + j] != 0xFFFF) ++touched_padding;
    for (int64_t j = 0; j < pr.m; ++j) {
      const double got = ref::to_float(pr.dt, y[i * pr.ldy + j]);
      if (std::isnan(got)) ++unwritten;
      const double b = with_bias ? ref::to_float(pr.dt, pr.bias[j]) : 0.0;
      const double want = r.value[i * pr.m + j] + b;
      const double scale = r.scale[i * pr.m + j] + std::fabs(b);
      const double tol = out_eps * std::fabs(want) + std::ldexp(1.0, -14) * scale + 1e-6;
      const double err = std::fabs(got - want);
      if (!(err <= tol)) ++wrong;
      worst = std::max(worst, err / tol);
    }
  }
  CHECK(unwritten == 0);
  CHECK(touched_padding == 0);
  CHECK(wrong == 0);
  CHECK(worst <= 1.0);
}

}  // namespace dcukern::test::gemv_check
