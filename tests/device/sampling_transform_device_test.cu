// Row-transform device tests against the host reference (ref/sampling_transforms.hpp), both rows forced
// (they have no device evidence before these tests run):
//  - every transform, every input dtype, V in {1000, 4099 (odd: scalar loads), 151936}, B = 12 distinct
//    rows with per-row parameters from device arrays (temperature 0 / 0.5 / 1 / 2; k 0 / 1 / 20 / 1000 /
//    V + 1; p 0.5 / 0.9 / 0.99 / 1): the kept set is exact (masked logits bit for bit), values within
//    1e-4 relative (fp32 sums over up to 151936 terms); a row whose top-p boundary is within 2e-5 of
//    the mass (knife edge: the device reads probabilities as log2(p), ~1e-5 per element) is checked
//    against the nearest of the reference's set and the sets one element larger or smaller;
//  - in place (out the same view as in): the bits of the out-of-place call;
//  - invalid rows (NaN, all -inf, negative probability, zero row) flag valid = 0 and write the fill;
//  - graph replay gives the bits of an eager call; a rejected call writes nothing.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dcukern/ref/sampling_transforms.hpp"
#include "dcukern/sampling_transforms.hpp"
#include "support.hpp"

using namespace dcukern;
using dcukern::test::DeviceBuffer;

namespace {

constexpr int64_t kRows = 12;

// Rows of values rounded to dt, uploaded with a row stride of ld.
struct Rows {
  DType dt;
  int64_t b, v, ld;
  std::vector<std::vector<float>> host;  // as the device sees them
  DeviceBuffer<uint8_t> d;
  Rows(DType dt_, std::vector<std::vector<float>> values, int64_t pad)
      : dt(dt_), b(int64_t(values.size())), v(int64_t(values[0].size())), ld(v + pad), host(std::move(values)) {
    const int eb = dtype_bytes(dt);
    std::vector<uint8_t> bytes(size_t(b * ld * eb), 0);
    for (int64_t r = 0; r < b; ++r)
      for (int64_t i = 0; i < v; ++i) {
        float& x = host[r][i];
        uint8_t* dst = bytes.data() + (r * ld + i) * eb;
        if (dt == DType::f32) {
          std::memcpy(dst, &x, 4);
        } else {
          const uint16_t h = ref::from_float(dt, x);
          if (!std::isnan(x)) x = ref::to_float(dt, h);
          std::memcpy(dst, &h, 2);
        }
      }
    d = DeviceBuffer<uint8_t>(bytes.size());
    d.upload(bytes);
  }
  ConstMatrix matrix() const { return {d.get(), dt, b, v, ld}; }
};

// Per-row parameters, uploaded.
struct RowParams {
  std::vector<float> t, p;
  std::vector<int32_t> k;
  DeviceBuffer<float> dt, dp;
  DeviceBuffer<int32_t> dk;
  explicit RowParams(int64_t v) : dt(kRows), dp(kRows), dk(kRows) {
    for (int64_t r = 0; r < kRows; ++r) {
      const float ts[] = {0.0f, 0.5f, 1.0f, 2.0f};
      const int32_t ks[] = {0, 1, 20, 1000, int32_t(v + 1)};
      const float ps[] = {0.5f, 0.9f, 0.99f, 1.0f};
      t.push_back(ts[r % 4]);
      k.push_back(ks[r % 5]);
      p.push_back(ps[r % 4]);
    }
    dt.upload(t);
    dp.upload(p);
    dk.upload(k);
  }
};

// The transforms that read probabilities (the others read logits).
bool takes_probs(RowTransform t) {
  return t == RowTransform::top_k_renorm_probs || t == RowTransform::top_p_renorm_probs;
}

// Transform t of `in` into `out` (flags into `valid`), rp's per-row device parameters, the row `row` forced.
Status transform_forced(RowTransform t, ConstMatrix in, Matrix out, uint8_t* valid, const RowParams& rp,
                        const char* row) {
  RowTransformParams p;
  p.in = in;
  p.out = out;
  p.valid = valid;
  p.temperature.device = rp.dt.get();
  p.top_k.device = rp.dk.get();
  p.top_p.device = rp.dp.get();
  const ScopedForce forced(row);
  return row_transform(t, p, nullptr, RowOptions{row});
}

// Runs transform t with row `row` forced; returns the output as doubles and the validity flags.
void run(RowTransform t, const Rows& in, const RowParams& rp, DType out_dt, const char* row,
         std::vector<std::vector<double>>* out, std::vector<uint8_t>* valid) {
  const int eb = dtype_bytes(out_dt);
  DeviceBuffer<uint8_t> o(size_t(in.b * in.v * eb)), ok(size_t(in.b));
  o.fill_bytes(0x7f);
  const Status s = transform_forced(t, in.matrix(), {o.get(), out_dt, in.b, in.v, in.v}, ok.get(), rp, row);
  INFO(s.to_string());
  REQUIRE(s.ok());
  test::device_synchronize();
  const auto bytes = o.download();
  *valid = ok.download();
  out->assign(size_t(in.b), std::vector<double>(size_t(in.v)));
  for (int64_t r = 0; r < in.b; ++r)
    for (int64_t i = 0; i < in.v; ++i) {
      const uint8_t* src = bytes.data() + (r * in.v + i) * eb;
      float x;
      if (out_dt == DType::f32) std::memcpy(&x, src, 4);
      else {
        uint16_t h;
        std::memcpy(&h, src, 2);
        x = ref::to_float(out_dt, h);
      }
      (*out)[r][i] = x;
    }
}

ref::TransformedRow reference(RowTransform t, const std::vector<float>& x, const RowParams& rp, int64_t r) {
  switch (t) {
    case RowTransform::softmax: return ref::ref_softmax(x, rp.t[r]);
    case RowTransform::top_k_mask_logits: return ref::ref_top_k_mask_logits(x, rp.k[r]);
    case RowTransform::top_k_renorm_probs: return ref::ref_top_k_renorm_probs(x, rp.k[r]);
    case RowTransform::top_p_renorm_probs: return ref::ref_top_p_renorm_probs(x, double(float(rp.p[r])));
  }
  return {};
}

// Elements of a device row outside `want`'s kept set (or inside it where want drops them), and kept
// values off by more than 1e-4 relative or not a number (the outputs start as 0x7f bytes: a NaN in f16).
struct RowErrors {
  int64_t set = 0, values = 0;
  bool operator<(const RowErrors& o) const { return set + values < o.set + o.values; }
};
RowErrors row_errors(const std::vector<double>& got, const std::vector<double>& want) {
  RowErrors e;
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = got[i], w = want[i];
    if ((g == 0.0) != (w == 0.0) || (std::isinf(g) != std::isinf(w))) ++e.set;
    else if (std::isfinite(w) && !(std::fabs(g - w) <= 1e-4 * std::fabs(w) + 1e-12)) ++e.values;
  }
  return e;
}

// Device rows against the reference: same validity, same kept set, values within 1e-4 relative. A top-p
// row whose boundary lies within 2e-5 of the row's mass of the threshold (a float sum may fall either
// side) may keep one element more or fewer: it is checked against the nearest of those three sets.
void check(RowTransform t, const Rows& in, const RowParams& rp, DType out_dt, const char* row) {
  std::vector<std::vector<double>> out;
  std::vector<uint8_t> valid;
  run(t, in, rp, out_dt, row, &out, &valid);
  int64_t mismatches = 0, set_errors = 0, edge_rows = 0;
  for (int64_t r = 0; r < in.b; ++r) {
    const auto want = reference(t, in.host[r], rp, r);
    CHECK(bool(valid[r]) == want.valid);
    RowErrors e = row_errors(out[r], want.out);
    if (want.valid && want.top_p_margin < 2e-5) {
      ++edge_rows;
      const auto order = ref::sampling_order(std::vector<double>(in.host[r].begin(), in.host[r].end()));
      int64_t keep = 0;
      for (double w : want.out) keep += w != 0.0;
      for (int64_t other : {keep - 1, keep + 1})
        if (other >= 1 && other <= in.v) e = std::min(e, row_errors(out[r], ref::renorm(in.host[r], order, other).out));
    }
    set_errors += e.set, mismatches += e.values;
  }
  // (std::string: doctest prints a bare const char* as a pointer)
  INFO(std::string(row_transform_name(t)) << " " << std::string(dtype_name(in.dt)) << " V=" << in.v
                                          << " row=" << std::string(row ? row : "auto") << " edge rows=" << edge_rows);
  CHECK(set_errors == 0);
  CHECK(mismatches == 0);
}

std::vector<std::vector<float>> random_logits(int64_t v, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  std::vector<std::vector<float>> rows(kRows, std::vector<float>(size_t(v)));
  for (auto& row : rows)
    for (auto& x : row) x = nd(rng);
  return rows;
}

std::vector<std::vector<float>> random_probs(int64_t v, uint64_t seed) {
  auto rows = random_logits(v, seed);
  for (auto& row : rows) {
    double z = 0.0;
    for (float x : row) z += std::exp(double(x));
    for (auto& x : row) x = float(std::exp(double(x)) / z);
  }
  return rows;
}

const char* rows_for(const Rows& in, bool vec) {
  const int64_t eb = dtype_bytes(in.dt);
  const bool aligned = (in.v * eb) % 16 == 0 && (in.ld * eb) % 16 == 0;
  return vec && aligned ? "sampling.transform.block.vec" : "sampling.transform.block";
}

}  // namespace

TEST_CASE("row transforms match the reference: every transform, dtype, V, per-row parameters, both rows") {
  const std::vector<int64_t> vs = test::quick_mode() ? std::vector<int64_t>{1000, 4099}
                                                     : std::vector<int64_t>{1000, 4099, 151936};
  for (int64_t v : vs) {
    const RowParams rp(v);
    for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
      const Rows logits(dt, random_logits(v, uint64_t(v) + int(dt)), 0);
      for (bool vec : {true, false}) {
        check(RowTransform::softmax, logits, rp, DType::f32, rows_for(logits, vec));
        check(RowTransform::top_k_mask_logits, logits, rp, dt, rows_for(logits, vec));
      }
    }
    const Rows probs(DType::f32, random_probs(v, uint64_t(v) * 3), 0);
    for (bool vec : {true, false}) {
      check(RowTransform::top_k_renorm_probs, probs, rp, DType::f32, rows_for(probs, vec));
      check(RowTransform::top_p_renorm_probs, probs, rp, DType::f32, rows_for(probs, vec));
    }
  }
}

TEST_CASE("row transforms: invalid rows are flagged and filled") {
  const int64_t v = 1000;
  const float inf = std::numeric_limits<float>::infinity();
  auto logits = random_logits(v, 9);
  logits[1][500] = std::nanf("");
  for (auto& x : logits[2]) x = -inf;
  auto probs = random_probs(v, 10);
  probs[1][3] = -0.25f;
  for (auto& x : probs[2]) x = 0.0f;
  const RowParams rp(v);
  const Rows l(DType::f32, logits, 4), pr(DType::f32, probs, 4);
  for (RowTransform t : {RowTransform::softmax, RowTransform::top_k_mask_logits, RowTransform::top_k_renorm_probs,
                         RowTransform::top_p_renorm_probs}) {
    std::vector<std::vector<double>> out;
    std::vector<uint8_t> valid;
    run(t, takes_probs(t) ? pr : l, rp, DType::f32, "sampling.transform.block", &out, &valid);
    INFO(std::string(row_transform_name(t)));
    CHECK(valid[0] == 1);
    const double fill = t == RowTransform::top_k_mask_logits ? -inf : 0.0;
    for (int r : {1, 2}) {
      CHECK(valid[r] == 0);
      int64_t wrong = 0;
      for (double x : out[r]) wrong += x != fill;
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("row transforms in place (out the same view as in) give the bits of the out-of-place call") {
  struct Case {
    RowTransform t;
    DType dt;
  };
  const Case cases[] = {{RowTransform::softmax, DType::f32},            {RowTransform::top_k_mask_logits, DType::f32},
                        {RowTransform::top_k_mask_logits, DType::bf16}, {RowTransform::top_k_renorm_probs, DType::f32},
                        {RowTransform::top_p_renorm_probs, DType::f32}};
  for (const Case& cs : cases)
    for (bool vec : {true, false}) {
      const int64_t v = vec ? 4096 : 4099, pad = vec ? 0 : 3;  // the scalar row: odd V, padded rows
      const RowParams rp(v);
      const Rows in(cs.dt, takes_probs(cs.t) ? random_probs(v, 31) : random_logits(v, 32), pad);
      const char* row = rows_for(in, vec);
      INFO(std::string(row_transform_name(cs.t)) << " " << std::string(dtype_name(cs.dt)) << " " << std::string(row));
      const std::vector<uint8_t> before = in.d.download();
      DeviceBuffer<uint8_t> apart(before.size()), inplace(before.size());
      apart.upload(before);  // (its padding as the input's: the call writes none)
      inplace.upload(before);
      DeviceBuffer<uint8_t> valid_apart(size_t(in.b)), valid_inplace(size_t(in.b));
      const Status s_apart =
          transform_forced(cs.t, in.matrix(), {apart.get(), cs.dt, in.b, v, in.ld}, valid_apart.get(), rp, row);
      const Matrix same{inplace.get(), cs.dt, in.b, v, in.ld};
      const Status s_inplace = transform_forced(cs.t, same, same, valid_inplace.get(), rp, row);
      INFO(s_apart.to_string() << " / " << s_inplace.to_string());
      REQUIRE(s_apart.ok());
      REQUIRE(s_inplace.ok());
      test::device_synchronize();
      const auto got = inplace.download(), want = apart.download();
      CHECK(got == want);
      CHECK(got != before);  // (the call wrote its rows)
      CHECK(valid_inplace.download() == valid_apart.download());
    }
}

TEST_CASE("row transforms: graph replay gives the eager bits; a rejected call writes nothing") {
  const int64_t v = 4096;
  const RowParams rp(v);
  const Rows l(DType::bf16, random_logits(v, 21), 0);
  DeviceBuffer<float> a(size_t(kRows * v)), b(size_t(kRows * v));
  RowTransformParams p;
  p.in = l.matrix();
  p.out = {a.get(), DType::f32, kRows, v, v};
  p.temperature.device = rp.dt.get();
  const char* row = "sampling.transform.block.vec";
  Overrides::instance().force(row);
  REQUIRE(softmax(p, nullptr, RowOptions{row}).ok());
  test::device_synchronize();
  p.out.data = b.get();
  {
    test::CapturedGraph graph([&](stream_t s) { return softmax(p, s, RowOptions{row}); });
    graph.replay(2);
  }
  CHECK(a.download() == b.download());
  b.fill_bytes(0xFF);
  p.top_k.value = -3;
  CHECK(top_k_mask_logits(p, nullptr).code() == StatusCode::unsupported);  // bf16 -> f32 mask: dtype
  p.out.dtype = DType::bf16;
  CHECK(top_k_mask_logits(p, nullptr).code() == StatusCode::invalid_argument);  // top_k < 0
  test::device_synchronize();
  const auto after = b.download();
  int64_t touched = 0;
  for (float x : after) touched += !std::isnan(x);
  CHECK(touched == 0);
  Overrides::instance().unforce(row);
}
