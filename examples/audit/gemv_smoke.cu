// dcukern-audit's smoke run for GEMV: every row enabled on this device runs one small problem inside
// its contract, compared with the host reference. Rows tuned for one large shape (M x K up to a few
// 10^9 elements) keep the run short: W is filled from a pool of random values by an index hash, and the
// reference is computed for at most ~1024 output rows spread over M (the last one included).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "audit/device_copy.hpp"
#include "audit/smoke.hpp"
#include "dcukern/gemv.hpp"
#include "dcukern/ref/gemv.hpp"

namespace dcukern::smoke {

// Returns the number of failed rows; prints one Markdown table row per enabled row.
int gemv_smoke(const TargetInfo& target) {
  std::printf("\n### gemv smoke run\n\n| row | problem | max error / tolerance | result |\n|---|---|---|---|\n");
  int failures = 0;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (const auto& row : GemvOp::rows()) {
    if (!row_unavailable_reason(row, target, GemvOp::compiled_in(row.kernel)).empty()) continue;
    const GemvContract& c = row.contract;
    const DType dt = c.dtypes.has(DType::bf16) ? DType::bf16 : DType::f16;
    const int n = std::clamp(3, c.n_min, c.n_max);
    const int64_t m = c.m_exact ? c.m_exact : 300, k = c.k_exact ? c.k_exact : 1000;
    const bool bias = c.bias_rule >= 0;
    std::vector<uint16_t> x(n * k), w(m * k), b(m), y(n * m, 0xFFFF);
    std::vector<uint16_t> pool(4093);
    for (auto& v : pool) v = ref::from_float(dt, d(rng));
    for (auto& v : x) v = ref::from_float(dt, d(rng));
    for (size_t i = 0; i < w.size(); ++i) w[i] = pool[(i * 2654435761u + (i >> 12)) % pool.size()];
    for (auto& v : b) v = ref::from_float(dt, d(rng));
    DeviceCopy dx(x), dw(w), db(b), dy(y);
    GemvParams p;
    p.x = {dx.ptr, dt, n, k, k};
    p.w = {dw.ptr, dt, m, k, k};
    if (bias) p.bias = {db.ptr, dt, m};
    p.y = {dy.ptr, dt, n, m, m};
    Status s = gemv(p, nullptr, GemvOptions{row.id});
    if (s.ok()) s = runtime_status(runtime_synchronize(), "synchronize");
    if (s.ok()) s = runtime_status(runtime_copy_to_host(y.data(), dy.ptr, y.size() * 2), "copy");
    double worst = s.ok() ? 0 : INFINITY;
    std::vector<int64_t> checked;  // output rows compared with the reference
    for (int64_t j = 0; j < m; j += std::max<int64_t>(1, m / 1024)) checked.push_back(j);
    if (checked.back() != m - 1) checked.push_back(m - 1);
    for (const int64_t j : checked) {
      if (!s.ok()) break;
      const auto want = ref::gemv(dt, x.data(), k, &w[j * k], k, bias ? &b[j] : nullptr, n, 1, k);  // [n, 1]
      const double eps = dt == DType::bf16 ? 1.0 / 256 : 1.0 / 1024;
      for (int i = 0; i < n; ++i) {
        const double err = std::fabs(ref::to_float(dt, y[i * m + j]) - want[i]);
        const double tol = eps * std::fabs(want[i]) + 1e-3 * std::sqrt(double(k));
        worst = std::max(worst, std::isnan(err) ? INFINITY : err / tol);
      }
    }
    const bool ok = worst <= 1.0;
    failures += !ok;
    std::printf("| %s | %s N=%d M=%lld K=%lld%s | %.3f | %s |\n", row.id, dtype_name(dt), n, (long long)m, (long long)k,
                bias ? " bias" : "", worst, ok ? "pass" : (s.ok() ? "FAIL" : s.to_string().c_str()));
  }
  return failures;
}

}  // namespace dcukern::smoke
