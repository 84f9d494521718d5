// The sampling device tests' shared pieces (sampling_device_test.cu, sampling_edges_device_test.cu): a batch of
// copies of one row on the device, the rows a case runs, a workspace, parameters, and the exactness check.
// Exactness: ~1M draws per case (1024 identical rows = 1024 independent Philox streams, x 1024 offsets);
// Pearson chi-square over the kept set (expected counts >= 5 per merged bin) must stay under the 1 - 1e-7
// quantile (Wilson-Hilferty), and where more than 4096 tokens are kept, so does the statistic over groups of
// 4096 consecutive indices (few bins: it sees a bias shared by a tile of a split row, which one bin a token on a
// flat row spreads thin): with a few hundred such checks, and Pearson's statistic at small expected counts
// somewhat wider than chi-square, the suites' false-failure rate stays near 1e-4 or below; and no draw may fall
// outside the kept set (a hard check).
// DCUKERN_TEST_QUICK=1 (compute-sanitizer runs): few draws, only the hard checks. DCUKERN_TEST_DRAWS=n: n draws
// per exactness case instead of ~1M (support.hpp: draws_per_check).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dcukern/ref/sampling.hpp"
#include "dcukern/sampling/select.hpp"
#include "common/sampling_calls.hpp"
#include "support.hpp"

namespace dcukern::test::sampling_check {

// The set a draw may come from where a filter's boundary is a knife edge: the reference's set with top_p
// raised and min_p lowered by 1e-4 relative (a float decision within 1e-5 of the boundary may fall either
// way; a wider margin is a wrong set). Every row is checked against it; none is skipped.
inline ref::FilteredDistribution loosened_distribution(const std::vector<float>& row, ref::SamplingRowParams rp) {
  rp.top_p = std::min(1.0, rp.top_p * (1.0 + 1e-4));
  rp.min_p *= 1.0 - 1e-4;
  return ref::filtered_distribution(row, rp);
}

using test::quick_mode;
constexpr double kZ = 5.199;  // one-sided normal quantile of 1e-7

// B copies of one row of logits (rounded to dt), on the device, with a padded stride.
struct Batch {
  DType dt;
  int64_t b, v, ld;
  std::vector<float> row;  // the values as the device sees them
  DeviceBuffer<uint8_t> d;
  Batch(DType dt_, const std::vector<float>& values, int64_t b_, int64_t pad = 0)
      : dt(dt_), b(b_), v(int64_t(values.size())), ld(int64_t(values.size()) + pad) {
    const int eb = dtype_bytes(dt);
    std::vector<uint8_t> host(size_t(b * ld * eb), 0);
    row.resize(v);
    for (int64_t i = 0; i < v; ++i) {
      if (dt == DType::f32) {
        row[i] = values[i];
      } else {
        const uint16_t h = ref::from_float(dt, values[i]);
        row[i] = std::isnan(values[i]) ? values[i] : ref::to_float(dt, h);
      }
    }
    for (int64_t r = 0; r < b; ++r)
      for (int64_t i = 0; i < v; ++i) {
        uint8_t* dst = host.data() + (r * ld + i) * eb;
        if (dt == DType::f32) std::memcpy(dst, &row[i], 4);
        else {
          const uint16_t h = ref::from_float(dt, values[i]);
          std::memcpy(dst, &h, 2);
        }
      }
    d = DeviceBuffer<uint8_t>(host.size());
    d.upload(host);
  }
  // Set elements [i, i + count) of one row to `value` (for per-row edge cases), in one copy.
  void set(int64_t r, int64_t i, float value, int64_t count = 1) {
    const int eb = dtype_bytes(dt);
    uint8_t one[4];
    if (dt == DType::f32) std::memcpy(one, &value, 4);
    else {
      const uint16_t h = ref::from_float(dt, value);
      std::memcpy(one, &h, 2);
    }
    std::vector<uint8_t> bytes(size_t(count * eb));
    for (int64_t j = 0; j < count; ++j) std::memcpy(bytes.data() + j * eb, one, eb);
    DCUKERN_REQUIRE_RT(
        DCUKERN_RT(Memcpy)(d.get() + (r * ld + i) * eb, bytes.data(), bytes.size(), DCUKERN_RT(MemcpyHostToDevice)));
  }
  ConstMatrix matrix() const { return {d.get(), dt, b, v, ld}; }
};

// The split row for the batch's shape (16-byte loads need 16-byte rows).
inline const char* split_row(const Batch& lb) {
  const int64_t eb = dtype_bytes(lb.dt);
  return (lb.v * eb) % 16 == 0 && (lb.ld * eb) % 16 == 0 ? "sampling.split.vec" : "sampling.split";
}
const char* const kAutoRow = nullptr;  // automatic selection without a workspace: a one-block row
// The stream row where the batch's shape allows 16-byte loads and B is in the row's range, else nullptr.
inline const char* stream_row(const Batch& lb) {
  const bool vec = std::string(split_row(lb)) == "sampling.split.vec";
  return vec && lb.b >= capabilities::sampling_rows::kStreamBatchMin ? "sampling.stream.vec" : nullptr;
}
// The row `id` of 16-byte loads (the unfiltered, top-p and min-p rows) where the batch's shape allows them,
// else nullptr.
inline const char* vector_row(const Batch& lb, const char* id) {
  return std::string(split_row(lb)) == "sampling.split.vec" ? id : nullptr;
}
// The rows that take a workspace and serve the batch's shape: the split row, and the stream row.
inline std::vector<const char*> workspace_rows(const Batch& lb) {
  std::vector<const char*> rows{split_row(lb)};
  if (const char* r = stream_row(lb)) rows.push_back(r);
  return rows;
}

// A workspace for calls of the batch's shape. sample() pins `row` and passes the workspace; kAutoRow:
// automatic selection without the workspace. A pinned row is forced for the call, so that it runs whether
// or not it has device evidence.
struct Workspace {
  DeviceBuffer<uint8_t> d;
  explicit Workspace(size_t bytes) : d(bytes) {
    REQUIRE(calls::sampling_workspace_init(d.get(), d.size(), nullptr).ok());
    test::device_synchronize();
  }
  // The row counters a call of batch b uses: zero between calls.
  bool counters_zero(int64_t b) {
    const auto bytes = d.download();
    const size_t n = sampling_detail::split_sync_bytes(b);
    return std::all_of(bytes.begin(), bytes.begin() + std::min(n, bytes.size()), [](uint8_t x) { return x == 0; });
  }
  Status sample(const SamplingParams& p, stream_t stream, const char* row) {
    if (!row) return calls::sample(p, stream);
    const ScopedForce forced(row);
    return calls::sample(p, d.get(), d.size(), stream, SamplingOptions{row});
  }
};
inline size_t workspace_bytes(const Batch& lb) {
  SamplingParams p;
  p.logits = lb.matrix();
  p.tokens = {reinterpret_cast<void*>(uintptr_t(256)), DType::i32, lb.b};  // shape only
  return sampling_workspace_bytes(p);
}

inline SamplingParams make_params(const Batch& lb, int32_t* tokens, const ref::SamplingRowParams& rp) {
  SamplingParams p;
  p.logits = lb.matrix();
  p.tokens = {tokens, DType::i32, lb.b};
  p.temperature.value = float(rp.temperature);
  p.top_k.value = int32_t(rp.top_k);
  p.top_p.value = float(rp.top_p);
  p.min_p.value = float(rp.min_p);
  p.seed = 0x5eed;
  return p;
}

// Draws of `calls` calls (offset = call number) of the whole batch, counted by token apart for each of `classes`
// row classes (row r in class r % classes); each class holds draws_per_class draws. `edit` may change each call's
// parameters (e.g. to per-row device arrays).
struct DrawCounts {
  std::vector<std::vector<int64_t>> by_class;
  int64_t draws_per_class = 0;
};
template <class Edit>
DrawCounts draw_counts(const Batch& lb, const ref::SamplingRowParams& rp, const char* row, int classes, Edit edit) {
  const int calls = quick_mode() ? 2 : int(std::max<int64_t>(1, test::draws_per_check() / lb.b));
  DeviceBuffer<int32_t> tok(size_t(lb.b) * calls);
  Workspace ws(workspace_bytes(lb));
  for (int c = 0; c < calls; ++c) {
    SamplingParams p = make_params(lb, tok.get() + size_t(c) * lb.b, rp);
    p.offset = uint64_t(c);
    edit(p);
    const Status s = ws.sample(p, nullptr, row);
    INFO(s.to_string());
    REQUIRE(s.ok());
  }
  test::device_synchronize();
  const auto t = tok.download();
  DrawCounts out{std::vector<std::vector<int64_t>>(size_t(classes), std::vector<int64_t>(lb.v, 0)),
                 int64_t(t.size()) / classes};
  int64_t bad = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] < 0 || t[i] >= lb.v) ++bad;
    else ++out.by_class[size_t(int64_t(i) % lb.b % classes)][size_t(t[i])];
  }
  REQUIRE(bad == 0);
  return out;
}
inline DrawCounts draw_counts(const Batch& lb, const ref::SamplingRowParams& rp, const char* row) {
  return draw_counts(lb, rp, row, 1, [](SamplingParams&) {});
}

inline std::string describe(const ref::SamplingRowParams& rp) {
  return "T=" + std::to_string(rp.temperature) + " k=" + std::to_string(rp.top_k) + " p=" + std::to_string(rp.top_p) +
         " min_p=" + std::to_string(rp.min_p);
}

// Token counts (`draws` in all) against the distribution d: no draw outside the kept set (a hard check); outside
// quick mode, the chi-square per token and, where more than 4096 tokens are kept, over groups of 4096 consecutive
// indices (a split row's tiles are multiples of 4096 elements). Returns whether the per-token statistic passed.
inline bool check_counts(const ref::FilteredDistribution& d, const std::vector<int64_t>& counts, int64_t draws) {
  const auto c = ref::chi_square(d, counts, draws);
  INFO("kept=" << d.tokens.size() << " chi2=" << c.statistic << " dof=" << c.dof
               << " bound=" << ref::chi_square_bound(c.dof, kZ));
  CHECK(c.outside == 0);
  if (quick_mode()) return true;
  if (d.tokens.size() > 4096) {
    const auto g = ref::chi_square_by_index_group(d, counts, draws, 4096);
    INFO("by index group: chi2=" << g.statistic << " dof=" << g.dof << " bound=" << ref::chi_square_bound(g.dof, kZ));
    CHECK(g.statistic < ref::chi_square_bound(g.dof, kZ));
  }
  const bool fits = c.statistic < ref::chi_square_bound(c.dof, kZ);
  CHECK(fits);
  return fits;
}

// Draws match the reference distribution (check_counts); on a failure, the tokens that deviate most.
inline void check_distribution(const Batch& lb, const ref::SamplingRowParams& rp, const char* row = nullptr) {
  const auto d = ref::filtered_distribution(lb.row, rp);
  REQUIRE(d.valid);
  const DrawCounts drawn = draw_counts(lb, rp, row);
  const std::vector<int64_t>& counts = drawn.by_class[0];
  // (std::string: doctest prints a bare const char* as a pointer)
  INFO(std::string(dtype_name(lb.dt)) << " V=" << lb.v << " " << describe(rp)
                                      << " row=" << std::string(row ? row : "auto"));
  if (check_counts(d, counts, drawn.draws_per_class)) return;
  // The tokens that deviate most (expected >= 5), to tell a bias from noise.
  std::vector<std::pair<double, size_t>> worst;
  for (size_t j = 0; j < d.tokens.size(); ++j) {
    const double e = d.probs[j] * double(drawn.draws_per_class), o = double(counts[d.tokens[j]]);
    if (e >= 5.0) worst.push_back({(o - e) * (o - e) / e, j});
  }
  std::sort(worst.rbegin(), worst.rend());
  for (size_t w = 0; w < worst.size() && w < 6; ++w) {
    const size_t j = worst[w].second;
    MESSAGE("token " << d.tokens[j] << " (rank " << j << ", logit " << lb.row[d.tokens[j]] << "): observed "
                     << counts[d.tokens[j]] << ", expected " << d.probs[j] * double(drawn.draws_per_class));
  }
}

// Same seed and offset give the same bits; other offsets, and other rows of one call, independent draws:
// `row` at rp over b copies of a nearly uniform row of V = 1000, where two independent draws agree with
// probability about 1 / (the kept set's size): fewer than 20 of the ~b pairs may agree.
inline void check_seed_streams(const char* row, const ref::SamplingRowParams& rp, int64_t b = 1024) {
  std::vector<float> l(1000, 0.0f);
  l[0] = 0.001f;  // nearly uniform
  const Batch lb(DType::f32, l, b);
  DeviceBuffer<int32_t> t0(b), t1(b);
  Workspace ws(workspace_bytes(lb));
  auto run = [&](DeviceBuffer<int32_t>& out, uint64_t offset, uint64_t seed_xor = 0) {
    SamplingParams p = make_params(lb, out.get(), rp);
    p.offset = offset;
    p.seed ^= seed_xor;
    REQUIRE(ws.sample(p, nullptr, row).ok());
    test::device_synchronize();
    return out.download();
  };
  auto agreements = [&](const std::vector<int32_t>& x, const std::vector<int32_t>& y) {
    int same = 0;
    for (int64_t r = 0; r < b; ++r) same += x[r] == y[r];
    return same;
  };
  INFO(std::string(row));
  const auto first = run(t0, 9);
  CHECK(run(t1, 9) == first);
  CHECK(agreements(first, run(t1, 10)) < 20);
  // Every bit of the seed and the offset counts: seeds that differ in bit 40 only, offsets in bit 32 only.
  CHECK(agreements(first, run(t1, 9, uint64_t(1) << 40)) < 20);
  CHECK(agreements(first, run(t1, 9 + (uint64_t(1) << 32))) < 20);
  int adjacent = 0;
  for (int64_t r = 0; r + 1 < b; ++r) adjacent += first[r] == first[r + 1];  // rows are streams too
  CHECK(adjacent < 20);
}

// Logits with no filter knife-edge for rp (regenerated from the next seed if one is too close).
inline std::vector<float> logits_for(DType dt, int64_t v, double scale, const ref::SamplingRowParams& rp,
                                     uint64_t seed) {
  for (;; ++seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> nd(0.0f, float(scale));
    std::vector<float> l(v);
    for (auto& x : l) x = dt == DType::f32 ? nd(rng) : ref::to_float(dt, ref::from_float(dt, nd(rng)));
    const auto d = ref::filtered_distribution(l, rp);
    if (d.top_p_margin > 1e-4 && d.min_p_margin > 1e-3) return l;
  }
}

inline std::vector<ref::SamplingRowParams> filter_combinations(int64_t v) {
  const auto rp = ref::row_params;
  return {rp(1.0, 0, 1.0, 0.0),  rp(0.7, 10, 1.0, 0.0), rp(1.3, 0, 0.9, 0.0),   rp(1.0, 0, 1.0, 0.05),
          rp(0.8, 50, 0.8, 0.0), rp(1.0, 20, 0.95, 0.02), rp(1.0, v + 5, 0.7, 0.0), rp(1.0, 5, 1.0, 0.1)};
}

// With ~10^5 kept tokens the top-p boundary always lies within one token's mass (~1/V) of the
// cumulative sum: nudge top_p (as the float the device sees) until the boundary is >= 1e-6 of the mass
// away, far above the device's rounding of the cumulative mass (~1e-7). Likewise bf16 rows put many
// tokens on a grid of log-probabilities: nudge min_p (relative steps of 1e-4) until every token min-p
// judges is >= 1e-5 (log2) clear of its threshold. The checks themselves are unchanged.
inline ref::SamplingRowParams away_from_edges(const std::vector<float>& row, ref::SamplingRowParams r) {
  for (int step = 0; step < 1000 && r.top_p < 1.0; ++step) {
    if (ref::filtered_distribution(row, r).top_p_margin >= 1e-6) break;
    r.top_p = double(float(r.top_p - 1e-6));
  }
  for (int step = 0; step < 100 && r.min_p > 0.0; ++step) {
    if (ref::filtered_distribution(row, r).min_p_margin >= 1e-5) break;
    r.min_p = double(float(r.min_p * (1.0 - 1e-4)));
  }
  const auto d = ref::filtered_distribution(row, r);
  if ((r.top_p < 1.0 && d.top_p_margin < 1e-6) || d.min_p_margin < 1e-5) FAIL("knife-edge test data: " << describe(r));
  return r;
}

// Rows of V = 151936 (19 tiles of 8192, the last partial) from one seed: concentrated (12 dominant tokens
// above a normal background of sd 2) and flat (uniform in [-0.5, 0.5): kept sets of ~10^5 tokens); rng
// goes on from there for a case's further data.
struct LargeRows {
  static constexpr int64_t v = 151936;
  std::mt19937_64 rng;
  std::vector<float> conc, flat;
  explicit LargeRows(uint64_t seed) : rng(seed), conc(v), flat(v) {
    std::normal_distribution<float> nd(0.0f, 2.0f);
    for (auto& x : conc) x = nd(rng);
    for (int i = 0; i < 12; ++i) conc[(i * 12347 + 11) % v] = 14.0f - 0.5f * i;
    std::uniform_real_distribution<float> ud(-0.5f, 0.5f);
    for (auto& x : flat) x = ud(rng);
  }
};

// `row` over small vocabularies (one partial tile each: f32 V = 32, bf16 264, f16 1000, f32 1000) at each
// of `params`, the logits of the n-th check from seed + n.
inline void check_small_vocabularies(const char* row, std::initializer_list<ref::SamplingRowParams> params,
                                     uint64_t seed) {
  struct Case {
    DType dt;
    int64_t v;
  };
  for (const Case& cs : {Case{DType::f32, 32}, Case{DType::bf16, 264}, Case{DType::f16, 1000}, Case{DType::f32, 1000}})
    for (const auto& r : params) {
      const Batch lb(cs.dt, logits_for(cs.dt, cs.v, 2.0, r, seed++), quick_mode() ? 64 : 1024);
      check_distribution(lb, r, row);
    }
}

// One filter given per row (`filter`: a device array cycling through `values`, the field `ref_value` of the
// reference's parameters) and temperature {0.5, 1, 2, 0, 1} per row, over B = 512 rows of V = 40000 normal
// logits (quick mode: 20, each combination once): every draw inside its row's set (the rows of temperature 0
// draw the argmax), every row valid; row 3 holds a NaN, row 6 the out-of-range `bad` and row 9 the
// temperature +inf: all three invalid.
inline void check_per_row_filter(const char* row, PerRow<float> SamplingParams::*filter, std::array<float, 4> values,
                          float bad, double ref::SamplingRowParams::*ref_value, std::mt19937_64& rng) {
  const int64_t rows_b = quick_mode() ? 20 : 512, vv = 40000;
  std::normal_distribution<float> nd(0.0f, 2.0f);
  std::vector<float> l(vv);
  for (auto& x : l) x = nd(rng);
  Batch lb(DType::f32, l, rows_b);
  lb.set(3, 17, std::nanf(""));
  std::vector<float> vs(rows_b), ts(rows_b);
  for (int64_t r = 0; r < rows_b; ++r) {
    vs[r] = values[r % 4];
    ts[r] = r % 5 == 0 ? 0.5f : r % 5 == 1 ? 1.0f : r % 5 == 2 ? 2.0f : r % 5 == 3 ? 0.0f : 1.0f;
  }
  vs[6] = bad;
  ts[9] = INFINITY;
  DeviceBuffer<float> dv(rows_b), dt(rows_b);
  DeviceBuffer<int32_t> tok(rows_b);
  DeviceBuffer<uint8_t> valid(rows_b);
  dv.upload(vs);
  dt.upload(ts);
  SamplingParams p = make_params(lb, tok.get(), ref::SamplingRowParams{});
  (p.*filter).device = dv.get();
  p.temperature.device = dt.get();
  p.valid = valid.get();
  Workspace ws(workspace_bytes(lb));
  std::vector<ref::FilteredDistribution> refs(20);
  int64_t outside = 0, invalid = 0;
  for (int call = 0; call < (quick_mode() ? 2 : 16); ++call) {
    p.offset = uint64_t(call);
    REQUIRE(ws.sample(p, nullptr, row).ok());
    test::device_synchronize();
    const auto t = tok.download();
    const auto ok = valid.download();
    for (int64_t r : {3, 6, 9}) {
      CHECK(t[r] == kSamplingInvalidToken);
      CHECK(ok[r] == 0);
    }
    for (int64_t r = 0; r < rows_b; ++r) {
      if (r == 3 || r == 6 || r == 9) continue;
      if (ok[r] != 1) ++invalid;
      auto& d = refs[r % 20];  // (parameters repeat every 20 rows)
      if (d.tokens.empty()) {
        ref::SamplingRowParams rp;
        rp.temperature = ts[r];
        rp.*ref_value = vs[r];
        d = loosened_distribution(lb.row, rp);
      }
      if (d.prob_of(t[r]) == 0.0) ++outside;
    }
  }
  CHECK(outside == 0);
  CHECK(invalid == 0);
}


}  // namespace dcukern::test::sampling_check
