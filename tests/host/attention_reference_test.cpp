// Attention host reference: its semantics checked against facts that hold independently of it (empty
// contexts, single keys, windows, sinks, soft cap, ALiBi, causal multi-token, layouts, page order), the
// split-and-merge path against the unsplit one, and the fp8 e4m3 conversions.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "attention_problem.hpp"
#include "dcukern/ref/attention.hpp"

using namespace dcukern;
using test::AttnConfig;
using test::AttnHostProblem;

namespace {
double kv_value(const AttnHostProblem& pr, const std::vector<uint8_t>& pool, int b, int hk, int64_t j, int d) {
  const AttentionParams p = pr.host_params();
  const int64_t page = pr.table[size_t(b) * pr.max_pages + j / pr.c.page_size];
  const int64_t off = page * p.kv.page_stride + (j % pr.c.page_size) * p.kv.token_stride + hk * p.kv.head_stride + d;
  const double scale = pr.c.kvt == DType::fp8_e4m3 ? pr.c.v_scale : 1.0;
  return ref::kv_element(pr.c.kvt, pool.data(), off) * scale;
}
void check_close(const ref::AttentionRef& a, const ref::AttentionRef& b, double tol) {
  REQUIRE(a.o.size() == b.o.size());
  for (size_t i = 0; i < a.o.size(); ++i) REQUIRE(std::fabs(a.o[i] - b.o[i]) <= tol);
  for (size_t i = 0; i < a.lse.size(); ++i) {
    if (std::isinf(a.lse[i])) REQUIRE(a.lse[i] == b.lse[i]);
    else REQUIRE(std::fabs(a.lse[i] - b.lse[i]) <= tol);
  }
}
}  // namespace

TEST_CASE("attention ref: fp8 e4m3 conversions") {
  CHECK(ref::fp8_e4m3_to_float(0x38) == 1.f);
  CHECK(ref::fp8_e4m3_to_float(0x7e) == 448.f);
  CHECK(ref::fp8_e4m3_to_float(0x01) == std::ldexp(1.f, -9));
  CHECK(ref::fp8_e4m3_to_float(0xb8) == -1.f);
  CHECK(std::isnan(ref::fp8_e4m3_to_float(0x7f)));
  CHECK(ref::float_to_fp8_e4m3(1.f) == 0x38);
  CHECK(ref::float_to_fp8_e4m3(1000.f) == 0x7e);  // saturates
  CHECK(ref::float_to_fp8_e4m3(-0.0625f) == 0x98);
  CHECK(ref::float_to_fp8_e4m3(std::numeric_limits<float>::infinity()) == 0x7e);
  CHECK(ref::float_to_fp8_e4m3(std::nanf("")) == 0x7f);
  for (int c = 0; c < 0x7f; ++c) {  // every finite value round-trips
    CHECK(ref::float_to_fp8_e4m3(ref::fp8_e4m3_to_float(uint8_t(c))) == c);
    CHECK(ref::float_to_fp8_e4m3(ref::fp8_e4m3_to_float(uint8_t(c | 0x80))) == (c | 0x80));
  }
  // Against the definition (the nearest finite code, the even one of two): every code's value, the
  // midpoints between neighbours and the floats just beside them, past 448, and random magnitudes.
  auto nearest_code = [](float f) {
    const float a = std::fabs(f);
    int best = 0;
    float best_err = std::numeric_limits<float>::infinity();
    for (int c = 0; c < 0x7f; ++c) {  // every finite magnitude, ascending
      const float err = std::fabs(ref::fp8_e4m3_to_float(uint8_t(c)) - a);
      if (err < best_err || (err == best_err && (c & 1) == 0)) best = c, best_err = err;
    }
    return uint8_t((std::signbit(f) ? 0x80 : 0) | best);
  };
  std::vector<float> probes = {0.f, -0.f, 448.f, 464.f, 470.f, 480.f, 1e30f, std::ldexp(1.f, -10),
                               std::ldexp(3.f, -11), std::ldexp(1.f, -12)};
  for (int c = 0; c < 0x7e; ++c) {
    const float mid = 0.5f * (ref::fp8_e4m3_to_float(uint8_t(c)) + ref::fp8_e4m3_to_float(uint8_t(c + 1)));
    probes.insert(probes.end(), {ref::fp8_e4m3_to_float(uint8_t(c)), mid, std::nextafter(mid, 0.f),
                                 std::nextafter(mid, 1e9f)});
  }
  std::mt19937_64 rng(35);
  std::uniform_real_distribution<float> log_mag(-14.f, 10.f);
  for (int i = 0; i < 20000; ++i) probes.push_back(std::exp2(log_mag(rng)));
  int mismatches = 0;
  for (float x : probes)
    for (float f : {x, -x}) mismatches += ref::float_to_fp8_e4m3(f) != nearest_code(f) ? 1 : 0;
  CHECK(mismatches == 0);
}

TEST_CASE("attention ref: empty context gives zeros and -inf, sink or not; a single key gives its value") {
  std::mt19937_64 rng(1);
  AttnConfig c;
  c.ctx = {0, 1, 3};
  c.sinks = true;
  c.T = 1;
  AttnHostProblem pr(c, rng);
  const auto r = ref::attention(pr.host_params());
  for (int h = 0; h < c.hq; ++h) {
    CHECK(std::isinf(r.lse[h]));
    CHECK(r.lse[h] < 0);
    for (int d = 0; d < c.D; ++d) CHECK(r.o[size_t(h) * c.D + d] == 0.0);
  }
  // Without a sink, one key: o = v.
  AttnConfig c2 = c;
  c2.sinks = false;
  AttnHostProblem pr2(c2, rng);
  const auto r2 = ref::attention(pr2.host_params());
  const int group = c.hq / c.hkv;
  for (int h = 0; h < c.hq; ++h)
    for (int d = 0; d < c.D; ++d)
      CHECK(r2.o[(size_t(1) * c.hq + h) * c.D + d] ==
            doctest::Approx(kv_value(pr2, pr2.v, 1, h / group, 0, d)).epsilon(1e-12));
  // q_tokens > ctx: the rows before the first position have no key.
  AttnConfig c3 = c2;
  c3.T = 3, c3.ctx = {2};
  AttnHostProblem pr3(c3, rng);
  const auto r3 = ref::attention(pr3.host_params());
  for (int h = 0; h < c.hq; ++h) CHECK(std::isinf(r3.lse[h]));
  for (int h = 0; h < c.hq; ++h) CHECK(!std::isinf(r3.lse[size_t(c.hq) + h]));
}

TEST_CASE("attention ref: window_left = 0 attends to its own position only") {
  std::mt19937_64 rng(2);
  AttnConfig c;
  c.ctx = {37, 64};
  c.window_left = 0;
  AttnHostProblem pr(c, rng);
  const auto r = ref::attention(pr.host_params());
  const int group = c.hq / c.hkv;
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < c.hq; ++h)
      for (int d = 0; d < c.D; ++d)
        CHECK(r.o[(size_t(b) * c.hq + h) * c.D + d] ==
              doctest::Approx(kv_value(pr, pr.v, b, h / group, c.ctx[b] - 1, d)).epsilon(1e-12));
}

TEST_CASE("attention ref: sinks scale the output by L / (L + e^sink); a huge soft cap changes nothing") {
  std::mt19937_64 rng(3);
  AttnConfig c;
  c.ctx = {50, 9};
  AttnHostProblem pr(c, rng);
  const auto plain = ref::attention(pr.host_params());
  AttentionParams p = pr.host_params();
  std::vector<float> sinks(c.hq);
  for (int h = 0; h < c.hq; ++h) sinks[h] = 0.25f * h - 1.f;
  p.sinks = sinks.data();
  const auto with = ref::attention(p);
  for (size_t row = 0; row < pr.rows(); ++row) {
    const int h = static_cast<int>(row % c.hq);
    const double L = std::exp(plain.lse[row]), S = std::exp(double(sinks[h]));
    CHECK(with.lse[row] == doctest::Approx(std::log(L + S)).epsilon(1e-12));
    for (int d = 0; d < c.D; ++d)
      CHECK(with.o[row * c.D + d] == doctest::Approx(plain.o[row * c.D + d] * L / (L + S)).epsilon(1e-10));
  }
  p = pr.host_params();
  p.soft_cap = 1e6f;
  check_close(ref::attention(p), plain, 1e-9);
  p.soft_cap = 0.5f;  // a small cap flattens the softmax: every logit in (-0.5, 0.5)
  const auto capped = ref::attention(p);
  for (size_t row = 0; row < pr.rows(); ++row) {
    const int n = c.ctx[row / c.hq];
    CHECK(capped.lse[row] < std::log(double(n)) + 0.5);
    CHECK(capped.lse[row] > std::log(double(n)) - 0.5);
  }
}

TEST_CASE("attention ref: ALiBi with zero slopes changes nothing; with slopes it follows the formula") {
  std::mt19937_64 rng(4);
  AttnConfig c;
  c.ctx = {3};
  c.hq = 2, c.hkv = 1, c.D = 4;
  AttnHostProblem pr(c, rng);
  AttentionParams p = pr.host_params();
  const auto plain = ref::attention(p);
  std::vector<float> zero(c.hq, 0.f), slopes = {0.5f, 2.f};
  p.alibi_slopes = zero.data();
  check_close(ref::attention(p), plain, 0);
  p.alibi_slopes = slopes.data();
  const auto r = ref::attention(p);
  for (int h = 0; h < 2; ++h) {  // by hand: s_j = <q,k_j>/2 + slope*(j-2)
    double s[3], m = -1e300, l = 0, o[4] = {};
    for (int j = 0; j < 3; ++j) {
      double dot = 0;
      for (int d = 0; d < 4; ++d) dot += ref::to_float(c.qt, pr.q[size_t(h) * 4 + d]) * kv_value(pr, pr.k, 0, 0, j, d);
      s[j] = dot / 2.0 + slopes[h] * (j - 2);
      m = std::max(m, s[j]);
    }
    for (int j = 0; j < 3; ++j) {
      l += std::exp(s[j] - m);
      for (int d = 0; d < 4; ++d) o[d] += std::exp(s[j] - m) * kv_value(pr, pr.v, 0, 0, j, d);
    }
    CHECK(r.lse[h] == doctest::Approx(m + std::log(l)).epsilon(1e-12));
    for (int d = 0; d < 4; ++d) CHECK(r.o[size_t(h) * 4 + d] == doctest::Approx(o[d] / l).epsilon(1e-12));
  }
}

TEST_CASE("attention ref: multi-token rows equal single-token calls at their positions (causal)") {
  std::mt19937_64 rng(5);
  AttnConfig c;
  c.T = 4, c.ctx = {21, 4, 64};
  c.alibi = true, c.window_left = 9;
  AttnHostProblem pr(c, rng);
  const auto multi = ref::attention(pr.host_params());
  for (int t = 0; t < c.T; ++t) {
    AttentionParams p = pr.host_params();
    std::vector<int32_t> ctx(pr.ctx);
    for (auto& x : ctx) x = x - c.T + t + 1;
    std::vector<uint16_t> q1(size_t(pr.B) * c.hq * c.D);
    for (int b = 0; b < pr.B; ++b)
      std::memcpy(&q1[size_t(b) * c.hq * c.D], &pr.q[(size_t(b) * c.T + t) * c.hq * c.D], size_t(c.hq) * c.D * 2);
    p.q_tokens = 1, p.q = {q1.data(), c.qt, int64_t(c.hq) * c.D, int64_t(c.hq) * c.D, c.D};
    p.o.batch_stride = p.o.token_stride = int64_t(c.hq) * c.D;
    p.context_lens = ctx.data();
    const auto single = ref::attention(p);
    for (int b = 0; b < pr.B; ++b)
      for (int i = 0; i < c.hq * c.D; ++i)
        CHECK(multi.o[(size_t(b) * c.T + t) * c.hq * c.D + i] == single.o[size_t(b) * c.hq * c.D + i]);
  }
}

TEST_CASE("attention ref: NHD and HND layouts and the order of pages give the same result") {
  std::mt19937_64 rng(6);
  for (DType kvt : {DType::bf16, DType::fp8_e4m3}) {
    AttnConfig c;
    c.kvt = kvt, c.k_scale = 0.125f, c.v_scale = 0.25f;
    c.ctx = {17, 33, 1};
    c.page_size = 5;
    AttnHostProblem pr(c, rng);
    const auto nhd = ref::attention(pr.host_params());
    // The same logical cache in head-major layout.
    const int eb = dtype_bytes(kvt);
    AttnConfig ch = c;
    ch.head_major = true;
    AttnHostProblem hnd = pr;
    hnd.c = ch;
    for (int64_t pg = 0; pg < pr.num_pages; ++pg)
      for (int s = 0; s < c.page_size; ++s)
        for (int h = 0; h < c.hkv; ++h) {
          const int64_t from = ((pg * c.page_size + s) * c.hkv + h) * c.D,
                        to = ((pg * c.hkv + h) * c.page_size + s) * c.D;
          std::memcpy(&hnd.k[to * eb], &pr.k[from * eb], size_t(c.D) * eb);
          std::memcpy(&hnd.v[to * eb], &pr.v[from * eb], size_t(c.D) * eb);
        }
    check_close(ref::attention(hnd.host_params()), nhd, 0);
    // Pages relocated: page i moves to slot (i + 1) mod num_pages, the table follows.
    AttnHostProblem moved = pr;
    const int64_t page_bytes = int64_t(c.page_size) * c.hkv * c.D * eb;
    for (int64_t pg = 0; pg < pr.num_pages; ++pg) {
      const int64_t to = (pg + 1) % pr.num_pages;
      std::memcpy(&moved.k[to * page_bytes], &pr.k[pg * page_bytes], page_bytes);
      std::memcpy(&moved.v[to * page_bytes], &pr.v[pg * page_bytes], page_bytes);
    }
    for (auto& e : moved.table)
      if (e != 0x7fffffff) e = int32_t((e + 1) % pr.num_pages);
    check_close(ref::attention(moved.host_params()), nhd, 0);
  }
}

TEST_CASE("attention ref: split-KV partials merged by LSE equal the unsplit result") {
  std::mt19937_64 rng(7);
  AttnConfig c;
  c.T = 2, c.ctx = {0, 1, 100, 257};
  c.page_size = 7;
  c.alibi = true, c.sinks = true, c.soft_cap = 5.f, c.window_left = 150;
  AttnHostProblem pr(c, rng);
  const auto whole = ref::attention(pr.host_params());
  for (int64_t chunk : {1, 7, 16, 100, 1000}) check_close(ref::attention(pr.host_params(), chunk), whole, 1e-12);
}
