// Sampling device tests against the host reference (ref/sampling.hpp):
//  - exactness: ~1M draws per case (1024 identical rows = 1024 independent Philox streams, x 1024
//    offsets); Pearson chi-square over the kept set (expected counts >= 5 per merged bin) must stay
//    under the 1 - 1e-7 quantile (Wilson-Hilferty), and where more than 4096 tokens are kept, so does the
//    statistic over groups of 4096 consecutive indices (few bins: it sees a bias shared by a tile of a
//    split row, which one bin a token on a flat row spreads thin): with a few hundred such checks, and Pearson's
//    statistic at small expected counts somewhat wider than chi-square, the suite's false-failure rate
//    stays near 1e-4 or below; and no draw may fall outside the kept set (a hard check).
//  - small V (32, 257, 1000) under every filter combination; V = 151936 concentrated and flat.
//  - greedy = argmax (lowest index on ties); invalid rows; k > V; V of odd sizes up to 262144, B = 1024;
//    per-row device parameters (each row's draws against its own parameters' distribution); same seed ->
//    same bits; offsets -> independent streams; graph replay advances the device offset; a rejected call
//    writes nothing; rows whose largest logit is not above 0.
//  - rows without a filter on the unfiltered row (sampling.unfiltered.vec): small V, V = 151936, ties at a
//    tiny temperature and between +inf logits, seeds, greedy and invalid rows, graph replay.
//  - rows whose only filter is top-p on the top-p row (sampling.top_p.vec): small V, V = 151936, B = 1 / 32 /
//    1024, a top_p small enough that the four proposals mostly miss (the fallback's draw), per-row top_p
//    and temperature, seeds, greedy and invalid rows, graph replay.
//  - rows whose only filter is min-p on the min-p row (sampling.min_p.vec):
//    small V, min_p 1 over ties in three tiles, V = 151936, B = 1 / 32 / 1024, per-row min_p and
//    temperature, seeds, greedy and invalid rows, graph replay.
//  - every case runs the row automatic selection picks without a workspace (a one-block row) and the
//    split row pinned (sampling.split.vec where the shape allows 16-byte loads, else sampling.split),
//    with a workspace; most cases also the stream row (sampling.stream.vec) where 16-byte loads fit and B
//    is in its range.
// DCUKERN_TEST_QUICK=1 (compute-sanitizer runs): few draws, only the hard checks. DCUKERN_TEST_DRAWS=n:
// n draws per exactness case instead of ~1M (support.hpp: draws_per_check).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dcukern/ref/sampling.hpp"
#include "dcukern/sampling.hpp"
#include "support.hpp"

using namespace dcukern;
using dcukern::test::DeviceBuffer;

namespace {

// The set a draw may come from where a filter's boundary is a knife edge: the reference's set with top_p
// raised and min_p lowered by 1e-4 relative (a float decision within 1e-5 of the boundary may fall either
// way; a wider margin is a wrong set). Every row is checked against it; none is skipped.
ref::FilteredDistribution loosened_distribution(const std::vector<float>& row, ref::SamplingRowParams rp) {
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
const char* split_row(const Batch& lb) {
  const int64_t eb = dtype_bytes(lb.dt);
  return (lb.v * eb) % 16 == 0 && (lb.ld * eb) % 16 == 0 ? "sampling.split.vec" : "sampling.split";
}
const char* const kAutoRow = nullptr;  // automatic selection without a workspace: a one-block row
// The stream row where the batch's shape allows 16-byte loads and B is in the row's range, else nullptr.
const char* stream_row(const Batch& lb) {
  const bool vec = std::string(split_row(lb)) == "sampling.split.vec";
  return vec && lb.b >= capabilities::sampling_rows::kStreamBatchMin ? "sampling.stream.vec" : nullptr;
}
// The row `id` of 16-byte loads (the unfiltered, top-p and min-p rows) where the batch's shape allows them,
// else nullptr.
const char* vector_row(const Batch& lb, const char* id) {
  return std::string(split_row(lb)) == "sampling.split.vec" ? id : nullptr;
}
// The rows that take a workspace and serve the batch's shape: the split row, and the stream row.
std::vector<const char*> workspace_rows(const Batch& lb) {
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
    REQUIRE(sampling_workspace_init(d.get(), d.size(), nullptr).ok());
    test::device_synchronize();
  }
  // The row counters a call of batch b uses: zero between calls.
  bool counters_zero(int64_t b) {
    const auto bytes = d.download();
    const size_t n = sampling_detail::split_sync_bytes(b);
    return std::all_of(bytes.begin(), bytes.begin() + std::min(n, bytes.size()), [](uint8_t x) { return x == 0; });
  }
  Status sample(const SamplingParams& p, stream_t stream, const char* row) {
    if (!row) return dcukern::sample(p, stream);
    const ScopedForce forced(row);
    return dcukern::sample(p, d.get(), d.size(), stream, SamplingOptions{row});
  }
};
size_t workspace_bytes(const Batch& lb) {
  SamplingParams p;
  p.logits = lb.matrix();
  p.tokens = {reinterpret_cast<void*>(uintptr_t(256)), DType::i32, lb.b};  // shape only
  return sampling_workspace_bytes(p);
}

SamplingParams make_params(const Batch& lb, int32_t* tokens, const ref::SamplingRowParams& rp) {
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
DrawCounts draw_counts(const Batch& lb, const ref::SamplingRowParams& rp, const char* row) {
  return draw_counts(lb, rp, row, 1, [](SamplingParams&) {});
}

std::string describe(const ref::SamplingRowParams& rp) {
  return "T=" + std::to_string(rp.temperature) + " k=" + std::to_string(rp.top_k) + " p=" + std::to_string(rp.top_p) +
         " min_p=" + std::to_string(rp.min_p);
}

// Token counts (`draws` in all) against the distribution d: no draw outside the kept set (a hard check); outside
// quick mode, the chi-square per token and, where more than 4096 tokens are kept, over groups of 4096 consecutive
// indices (a split row's tiles are multiples of 4096 elements). Returns whether the per-token statistic passed.
bool check_counts(const ref::FilteredDistribution& d, const std::vector<int64_t>& counts, int64_t draws) {
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
void check_distribution(const Batch& lb, const ref::SamplingRowParams& rp, const char* row = nullptr) {
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
void check_seed_streams(const char* row, const ref::SamplingRowParams& rp, int64_t b = 1024) {
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
std::vector<float> logits_for(DType dt, int64_t v, double scale, const ref::SamplingRowParams& rp, uint64_t seed) {
  for (;; ++seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> nd(0.0f, float(scale));
    std::vector<float> l(v);
    for (auto& x : l) x = dt == DType::f32 ? nd(rng) : ref::to_float(dt, ref::from_float(dt, nd(rng)));
    const auto d = ref::filtered_distribution(l, rp);
    if (d.top_p_margin > 1e-4 && d.min_p_margin > 1e-3) return l;
  }
}

std::vector<ref::SamplingRowParams> filter_combinations(int64_t v) {
  const auto rp = ref::row_params;
  return {rp(1.0, 0, 1.0, 0.0),  rp(0.7, 10, 1.0, 0.0), rp(1.3, 0, 0.9, 0.0),   rp(1.0, 0, 1.0, 0.05),
          rp(0.8, 50, 0.8, 0.0), rp(1.0, 20, 0.95, 0.02), rp(1.0, v + 5, 0.7, 0.0), rp(1.0, 5, 1.0, 0.1)};
}

// With ~10^5 kept tokens the top-p boundary always lies within one token's mass (~1/V) of the
// cumulative sum: nudge top_p (as the float the device sees) until the boundary is >= 1e-6 of the mass
// away, far above the device's rounding of the cumulative mass (~1e-7). Likewise bf16 rows put many
// tokens on a grid of log-probabilities: nudge min_p (relative steps of 1e-4) until every token min-p
// judges is >= 1e-5 (log2) clear of its threshold. The checks themselves are unchanged.
ref::SamplingRowParams away_from_edges(const std::vector<float>& row, ref::SamplingRowParams r) {
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
void check_small_vocabularies(const char* row, std::initializer_list<ref::SamplingRowParams> params, uint64_t seed) {
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
void check_per_row_filter(const char* row, PerRow<float> SamplingParams::*filter, std::array<float, 4> values,
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

}  // namespace

TEST_CASE("small vocabularies: draws follow the exact filtered distribution under every filter combination") {
  struct Case {
    DType dt;
    int64_t v;
  };
  const Case cases[] = {{DType::f32, 32}, {DType::bf16, 257}, {DType::f16, 1000}, {DType::f32, 1000}};
  int n = 0;
  for (const Case& cs : cases)
    for (const auto& rp : filter_combinations(cs.v)) {
      if (quick_mode() && n % 3) {
        ++n;
        continue;
      }
      const Batch lb(cs.dt, logits_for(cs.dt, cs.v, 2.0, rp, 100 + n), quick_mode() ? 64 : 1024);
      check_distribution(lb, rp);
      for (const char* row : workspace_rows(lb)) check_distribution(lb, rp, row);
      if (rp.top_k >= 2 && rp.top_k <= 128) {  // small batches: the tiles' own cuts (split_local_top_k)
        const Batch small(cs.dt, lb.row, quick_mode() ? 8 : 32);
        check_distribution(small, rp, split_row(small));
      }
      ++n;
    }
  // The generic row on a vector-capable shape agrees in distribution too.
  ref::SamplingRowParams rp;
  rp.top_k = 50;
  rp.top_p = 0.9;
  const Batch lb(DType::f32, logits_for(DType::f32, 1000, 2.0, rp, 7), quick_mode() ? 64 : 1024);
  check_distribution(lb, rp, "sampling.block");
}

TEST_CASE("per-row parameters from device arrays: each row's draws follow its own row's distribution") {
  // Two parameter sets on alternate rows (every parameter a device array), their draws counted apart: a
  // row that took its neighbour's parameters, or the batch's first, would draw from the other set's
  // distribution (both sets keep most of the same tokens, so membership alone would not see it).
  const int64_t v = 1000, b = quick_mode() ? 64 : 1024;
  for (DType dt : {DType::f32, DType::bf16}) {
    const ref::SamplingRowParams base = ref::row_params(1.0, 0, 1.0, 0.0);
    const Batch probe(dt, logits_for(dt, v, 2.0, base, 77), b);
    const ref::SamplingRowParams sets[2] = {away_from_edges(probe.row, ref::row_params(0.5, 50, 0.9, 0.0)),
                                            away_from_edges(probe.row, ref::row_params(2.0, 0, 0.95, 0.01))};
    std::vector<float> ts(b), ps(b), mps(b);
    std::vector<int32_t> ks(b);
    for (int64_t r = 0; r < b; ++r) {
      const ref::SamplingRowParams& rp = sets[r % 2];
      ts[r] = float(rp.temperature), ps[r] = float(rp.top_p), mps[r] = float(rp.min_p), ks[r] = int32_t(rp.top_k);
    }
    DeviceBuffer<float> dt_(b), dp(b), dmp(b);
    DeviceBuffer<int32_t> dk(b);
    dt_.upload(ts), dp.upload(ps), dmp.upload(mps), dk.upload(ks);
    std::vector<const char*> rows = workspace_rows(probe);
    rows.push_back(kAutoRow);
    for (const char* row : rows) {
      const DrawCounts drawn = draw_counts(probe, base, row, 2, [&](SamplingParams& p) {
        p.temperature.device = dt_.get(), p.top_k.device = dk.get(), p.top_p.device = dp.get();
        p.min_p.device = dmp.get();
      });
      for (int set = 0; set < 2; ++set) {
        INFO(std::string(dtype_name(dt)) << " row=" << std::string(row ? row : "auto") << " set " << set << " "
                                         << describe(sets[set]));
        check_counts(ref::filtered_distribution(probe.row, sets[set]), drawn.by_class[size_t(set)],
                     drawn.draws_per_class);
      }
    }
  }
}

TEST_CASE("V = 151936: concentrated and flat distributions") {
  const int64_t b = quick_mode() ? 8 : 1024;
  const LargeRows large(42);
  const std::vector<float>&conc = large.conc, &flat = large.flat;
  auto rp = [](int64_t k, double p, double mp) { return ref::row_params(1.0, k, p, mp); };
  const Batch c32(DType::f32, conc, b);
  for (const char* row : {kAutoRow, split_row(c32), stream_row(c32)})
    for (const auto& r : {rp(0, 1.0, 0.0), rp(50, 0.9, 0.0), rp(0, 0.95, 0.0), rp(1000, 0.95, 0.01)})
      check_distribution(c32, away_from_edges(c32.row, r), row);
  const Batch f16(DType::bf16, flat, b);
  for (const char* row : {kAutoRow, split_row(f16), stream_row(f16)})
    for (const auto& r : {rp(0, 0.95, 0.0), rp(1000, 0.8, 0.0), rp(0, 1.0, 0.9), rp(20, 0.95, 0.0)})
      check_distribution(f16, away_from_edges(f16.row, r), row);
  // Small batches: rows of small k take their tiles' own cuts (split_local_top_k).
  const int64_t small_b = quick_mode() ? 4 : 32;
  const Batch c32_small(DType::f32, conc, small_b), f16_small(DType::bf16, flat, small_b);
  check_distribution(c32_small, away_from_edges(c32_small.row, rp(50, 0.9, 0.0)), split_row(c32_small));
  // fp32 at B = 32: 40 elements a thread where 32 rows' tiles then fit one round (split_wide_f32: 132
  // compute units), with the threshold kernel and the fine buckets of top_k 1000.
  const Batch c32_wide(DType::f32, conc, 32);
  check_distribution(c32_wide, away_from_edges(c32_wide.row, rp(1000, 0.95, 0.01)), split_row(c32_wide));
  check_distribution(f16_small, away_from_edges(f16_small.row, rp(20, 0.95, 0.0)), split_row(f16_small));
  // bf16 at B = 32 (64 elements a thread, split_items) with the threshold kernel.
  check_distribution(f16_small, away_from_edges(f16_small.row, rp(1000, 0.8, 0.0)), split_row(f16_small));
  // bf16 below kSplitPairsBatch rows: a cluster of 5 tiles a row where the device has clusters
  // (split_items), with the tiles' own cuts and with the threshold kernel.
  const Batch f16_few(DType::bf16, flat, quick_mode() ? 2 : 8);
  for (const auto& r : {rp(20, 0.95, 0.0), rp(1000, 0.8, 0.0)})
    check_distribution(f16_few, away_from_edges(f16_few.row, r), split_row(f16_few));
  // bf16 over the normal background: every value bin one logit, ~40 candidates a bin near the k-th at
  // top_k 1000 (sort_top_by_bin's bucket order, token_in_bucket_order), at B = 32 and as clusters.
  const Batch c16_small(DType::bf16, conc, small_b), c16_few(DType::bf16, conc, quick_mode() ? 2 : 8);
  for (const Batch* lb : {&c16_small, &c16_few})
    for (const auto& r : {rp(1000, 0.95, 0.01), rp(200, 1.0, 0.0), rp(50, 0.9, 0.0)})
      check_distribution(*lb, away_from_edges(lb->row, r), split_row(*lb));
}

TEST_CASE("rows without a filter (sampling.unfiltered.vec): the whole softmax, ties at a tiny T, +inf, seeds") {
  auto rp = [](double t, int64_t k) { return ref::row_params(t, k); };
  const char* const row = "sampling.unfiltered.vec";
  // Small vocabularies (one partial tile), top_k 0 and top_k > V (both off).
  check_small_vocabularies(row, {rp(1.0, 0), rp(0.7, 1005)}, 300);
  // V = 151936 (19 tiles a row, the last partial): concentrated and flat, at T = 1 and 0.5.
  const LargeRows large(43);
  const int64_t v = large.v, b = quick_mode() ? 8 : 1024;
  const std::vector<float>&conc = large.conc, &flat = large.flat;
  for (DType dt : {DType::f32, DType::bf16}) {
    const Batch c(dt, conc, b), f(dt, flat, b);
    for (double t : {1.0, 0.5}) {
      check_distribution(c, rp(t, 0), row);
      check_distribution(f, rp(t, 0), row);
    }
  }
  // Small batches (the rows above: 1024): B = 1 and 32.
  for (int64_t small_b : {int64_t(1), int64_t(32)}) {
    const Batch c(DType::f32, conc, small_b);
    check_distribution(c, rp(1.0, 0), row);
  }
  // Ties across tiles at T = 1e-6: two equal maxima in tiles 0 and 12 share the draws, a logit 1e-5 below
  // them in tile 8 takes e^-10 of their mass, the rest none; two +inf logits at T = 1 share them likewise.
  std::vector<float> ties(v, -1.0f);
  ties[10] = ties[100000] = 3.0f;
  ties[70000] = 3.0f - 1e-5f;
  const Batch tied(DType::f32, ties, b);
  check_distribution(tied, rp(1e-6, 0), row);
  std::vector<float> infs(4096, 0.0f);
  infs[5] = infs[4000] = std::numeric_limits<float>::infinity();
  const Batch inf_row(DType::f32, infs, quick_mode() ? 64 : 1024);
  check_distribution(inf_row, rp(1.0, 0), row);
  // Same seed and offset: the same bits; other offsets: independent draws.
  check_seed_streams(row, rp(1.0, 0));
}

TEST_CASE("rows whose only filter is top-p (sampling.top_p.vec): proposals, their check, the fallback") {
  auto rp = [](double t, double p) { return ref::row_params(t, 0, p); };
  const char* const row = "sampling.top_p.vec";
  // Small vocabularies (one partial tile) at three temperatures and top_p values.
  check_small_vocabularies(row, {rp(1.3, 0.9), rp(1.0, 0.7), rp(0.7, 0.5)}, 500);
  // top_p 0.05 over a near-flat row: the set holds ~5 % of the mass, so all four proposals miss ~80 % of
  // the time and the row's last block draws by the one-block algorithm at the fallback's uniform.
  const Batch near_flat(DType::f32, logits_for(DType::f32, 1000, 0.3, rp(1.0, 0.05), 600), quick_mode() ? 64 : 1024);
  check_distribution(near_flat, away_from_edges(near_flat.row, rp(1.0, 0.05)), row);
  // V = 151936 (19 tiles a row, the last partial): concentrated and flat, f32 and bf16, two top_p, T 1 and 0.5.
  LargeRows large(44);
  const int64_t b = quick_mode() ? 8 : 1024;
  const std::vector<float>&conc = large.conc, &flat = large.flat;
  // (quick mode, for the sanitizers and the simulated device: f32 and T = 0.5 alone)
  const auto dts = quick_mode() ? std::vector<DType>{DType::f32} : std::vector<DType>{DType::f32, DType::bf16};
  const auto rps = quick_mode() ? std::vector<ref::SamplingRowParams>{rp(0.5, 0.9)}
                                : std::vector<ref::SamplingRowParams>{rp(1.0, 0.95), rp(1.0, 0.8), rp(0.5, 0.9)};
  for (DType dt : dts) {
    const Batch c(dt, conc, b), f(dt, flat, b);
    for (const auto& r : rps) {
      check_distribution(c, away_from_edges(c.row, r), row);
      check_distribution(f, away_from_edges(f.row, r), row);
    }
  }
  // Small batches: B = 1 and 32 (quick mode: B = 1).
  for (int64_t small_b : quick_mode() ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 32}) {
    const Batch c(DType::f32, conc, small_b);
    check_distribution(c, away_from_edges(c.row, rp(1.0, 0.9)), row);
  }
  // Per-row top_p {1, 0.9, 0.5, 0.05} (0: out of range) and temperature.
  check_per_row_filter(row, &SamplingParams::top_p, {1.0f, 0.9f, 0.5f, 0.05f}, 0.0f, &ref::SamplingRowParams::top_p,
                       large.rng);
  // Same seed and offset: the same bits; other offsets: independent draws.
  check_seed_streams(row, rp(1.0, 0.6));
}

TEST_CASE("rows whose only filter is min-p (sampling.min_p.vec): the row's maximum, then a draw over kept weights") {
  auto rp = [](double t, double mp) { return ref::row_params(t, 0, 1.0, mp); };
  const char* const row = "sampling.min_p.vec";
  // Small vocabularies (one partial tile) at three temperatures and min_p values.
  check_small_vocabularies(row, {rp(1.3, 0.05), rp(1.0, 0.1), rp(0.7, 0.3)}, 700);
  // min_p 1 keeps the row's maxima alone: three equal ones in tiles 0, 9 and 18 share the draws.
  LargeRows large(45);
  std::vector<float> tied = large.flat;
  tied[3] = tied[77777] = tied[151935] = 1.0f;
  const Batch tied_rows(DType::f32, tied, quick_mode() ? 8 : 1024);
  check_distribution(tied_rows, rp(1.0, 1.0), row);
  // V = 151936: concentrated and flat, f32 and bf16; min_p 0.05 keeps a few tokens of the concentrated row
  // and the whole flat one at T = 1; min_p 0.9 at T 0.1 the flat one's elements within 0.0105 of its
  // maximum (~1 %).
  const int64_t b = quick_mode() ? 8 : 1024;
  const auto dts = quick_mode() ? std::vector<DType>{DType::f32} : std::vector<DType>{DType::f32, DType::bf16};
  const auto rps = quick_mode() ? std::vector<ref::SamplingRowParams>{rp(0.5, 0.1)}
                                : std::vector<ref::SamplingRowParams>{rp(1.0, 0.05), rp(0.1, 0.9), rp(0.5, 0.1)};
  for (DType dt : dts) {
    const Batch c(dt, large.conc, b), f(dt, large.flat, b);
    for (const auto& r : rps) {
      check_distribution(c, away_from_edges(c.row, r), row);
      check_distribution(f, away_from_edges(f.row, r), row);
    }
  }
  // Small batches: B = 1 and 32 (quick mode: B = 1).
  for (int64_t small_b : quick_mode() ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 32}) {
    const Batch c(DType::f32, large.conc, small_b);
    check_distribution(c, away_from_edges(c.row, rp(1.0, 0.01)), row);
  }
  // Per-row min_p {0, 0.05, 0.5, 1} (1.5: out of range) and temperature: the rows of min_p 0 draw from the
  // whole row in the first kernel.
  check_per_row_filter(row, &SamplingParams::min_p, {0.0f, 0.05f, 0.5f, 1.0f}, 1.5f, &ref::SamplingRowParams::min_p,
                       large.rng);
  // Same seed and offset: the same bits; other offsets: independent draws.
  check_seed_streams(row, rp(1.0, 0.5));
}

TEST_CASE("bf16 rows gathered from the tiles' lists: few candidates ordered by bucket, or the fallback") {
  // V = 248320 at B = 32: the tiles hand over through L2 (no cluster), and at top_k 20 and 50 the row's
  // candidates (8 tiles' lists of a little over k) are more than 128 and at most a block's threads, so the
  // last block orders them by value bin (order_few_by_bucket). Rows: a normal background (a few keys a
  // bin near the k-th: at top_k 50 one wave draws and finds the key); 50 ties at 7.5 over it (the k-th of
  // top_k 50 among them: more than one wave's candidates, the block-wide draw and its bucket lookup);
  // flat (hundreds a bin: more than kRankBucket, so sort_top_by_bin, which sorts them); one spike far
  // above a normal background (the k-th more than kFewBuckets bins below the largest: sort_top_by_bin).
  const int64_t v = 248320;
  std::mt19937_64 rng(31);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  std::uniform_real_distribution<float> ud(-0.5f, 0.5f);
  std::vector<float> normal(v), ties(v), flat(v), spike(v);
  for (int64_t i = 0; i < v; ++i) normal[i] = nd(rng), ties[i] = nd(rng), flat[i] = ud(rng), spike[i] = nd(rng);
  for (int64_t i = 0; i < 50; ++i) ties[(i * 4969 + 7) % v] = 7.5f;  // ~22 larger logits (normal, sd 2)
  spike[123457] = 40.0f;                                            // ~350 bins above the k-th
  ref::SamplingRowParams rp;
  rp.top_p = 0.95;
  for (const std::vector<float>* l : {&normal, &ties, &flat, &spike}) {
    const Batch lb(DType::bf16, *l, 32);  // (fewer rows would run as clusters)
    for (int64_t k : {20, 50}) {
      rp.top_k = k;
      rp.temperature = l == &spike ? 8.0 : 1.0;  // the spike then holds ~3/4 of the top-k mass, not all
      check_distribution(lb, away_from_edges(lb.row, rp), split_row(lb));
    }
  }
}

TEST_CASE("split rows: a tile with more candidates than its list holds, so the last block gathers the row again") {
  // 600 copies of the row's maximum in the first tile: with k = 1000 the threshold lies at or below
  // their bin, more than one tile's list holds, so the row's candidates are gathered from the logits
  // again. The other elements lie below the maximum's bin.
  const int64_t v = 20000;
  std::mt19937_64 rng(11);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> l(v);
  for (auto& x : l) x = std::min(nd(rng), 2.75f);
  for (int64_t i = 0; i < 600; ++i) l[(i * 13) % 8192] = 3.0f;
  ref::SamplingRowParams rp;
  rp.top_k = 1000;
  for (DType dt : {DType::f32, DType::bf16}) {
    std::vector<float> row(l);
    for (auto& x : row) x = ref::to_float(dt, ref::from_float(dt, x));
    const Batch lb(dt, row, quick_mode() ? 64 : 1024);
    for (double top_p : {1.0, 0.9}) {
      rp.top_p = top_p;
      for (const char* row : workspace_rows(lb)) check_distribution(lb, away_from_edges(lb.row, rp), row);
    }
  }
}

TEST_CASE("split rows: a sample that misleads the threshold makes the row fall back, still exact") {
  // The threshold kernel samples the first 8 elements of every 64. Here they are unlike the rest: far
  // above it (the threshold then admits fewer than k elements) or far below it (more than the
  // candidate cap); either way the row's last block runs the one-block algorithm.
  std::mt19937_64 rng(5);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  auto row_with_sample = [&](int64_t v, float sampled_shift) {
    std::vector<float> l(v);
    for (int64_t i = 0; i < v; ++i) l[i] = std::clamp(nd(rng), -3.0f, 3.0f) + (i % 64 < 8 ? sampled_shift : 0.0f);
    return l;
  };
  struct Case {
    int64_t v;
    float shift;
    int k;
    double top_p;
  };
  // (k above split_local_top_k's reach: rows of small k take their tiles' own cuts, no threshold.)
  for (const Case c : {Case{4000, 8.0f, 1000, 1.0}, Case{4000, 8.0f, 300, 0.9}, Case{40000, -30.0f, 200, 0.95}})
    for (DType dt : {DType::f32, DType::bf16}) {
      const Batch lb(dt, row_with_sample(c.v, c.shift), quick_mode() ? 64 : 1024);
      ref::SamplingRowParams rp;
      rp.top_k = c.k;
      rp.top_p = c.top_p;
      for (const char* row : workspace_rows(lb)) check_distribution(lb, away_from_edges(lb.row, rp), row);
    }
}

TEST_CASE("rows whose largest logit is not above 0: the stream row's draw finds the largest candidate") {
  // The stream row takes a fast row's largest value from its threads' maxima, where the loads past the
  // row's end read 0 (V = 40000: a partial last tile for every dtype): a largest value not above 0 could
  // be such a 0, so the draw then finds the largest among the candidates instead.
  const int64_t v = 40000;
  std::mt19937_64 rng(23);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  std::vector<float> base(v);
  for (auto& x : base) x = nd(rng);
  const float top = *std::max_element(base.begin(), base.end());
  for (DType dt : {DType::f32, DType::bf16})
    for (float shift : {-20.0f, -top}) {  // every logit negative; the largest exactly 0
      std::vector<float> row(v);
      for (int64_t i = 0; i < v; ++i)
        row[i] = dt == DType::f32 ? base[i] + shift : ref::to_float(dt, ref::from_float(dt, base[i] + shift));
      const Batch lb(dt, row, 64);
      for (int64_t k : {20, 1000}) {
        ref::SamplingRowParams rp;
        rp.top_k = k;
        rp.top_p = 0.9;
        for (const char* r : workspace_rows(lb)) check_distribution(lb, away_from_edges(lb.row, rp), r);
      }
    }
}

TEST_CASE("split rows of small top_k: each tile's own cut holds the row's top k, or the row falls back") {
  // Rows of small k take no threshold: each tile lists its elements at or above a cut of its own, from
  // its threads' largest elements. Here the row's top k all lie in one tile (the others' cuts hold none
  // of them); one tile holds 600 copies of the maximum (its list overflows: the row is gathered from
  // the logits again, each tile from its own cut); one tile's k-th largest thread maximum lies more than
  // kWindow bins below its largest (its cut takes every element: more than the candidate cap, so the
  // row falls back to the one-block algorithm).
  const int64_t v = 40000;
  std::mt19937_64 rng(13);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> one_tile(v), ties(v), far(v);
  for (int64_t i = 0; i < v; ++i) {
    const float x = std::clamp(nd(rng), -3.0f, 2.75f);
    one_tile[i] = i >= 16384 && i < 16384 + 100 ? 5.0f + 0.01f * float(i % 97) : x;
    ties[i] = i < 7800 && i % 13 == 0 ? 3.0f : x;
    far[i] = i == 100 ? -0.1f : x - 50.0f;
  }
  struct Case {
    const std::vector<float>* row;
    int k;
    double temperature, top_p;
  };
  for (const Case c : {Case{&one_tile, 50, 1.0, 0.9}, Case{&ties, 50, 1.0, 1.0}, Case{&ties, 20, 1.0, 0.8},
                       Case{&far, 20, 20.0, 1.0}})
    for (DType dt : {DType::f32, DType::bf16}) {
      std::vector<float> row(*c.row);
      for (auto& x : row) x = ref::to_float(dt, ref::from_float(dt, x));
      const Batch lb(dt, row, quick_mode() ? 8 : 32);  // below kSplitLargeBatch: the tiles' own cuts
      ref::SamplingRowParams rp;
      rp.top_k = c.k;
      rp.temperature = c.temperature;
      rp.top_p = c.top_p;
      for (const char* row : workspace_rows(lb)) check_distribution(lb, away_from_edges(lb.row, rp), row);
    }
}

TEST_CASE("split rows: one workspace serves calls of different B and V in turn") {
  // Every call leaves the workspace's counters zero whatever its shape (a larger batch after a smaller
  // one, longer rows after shorter ones), so the next call's tickets find each row's last block. The
  // shapes also lay the workspace out for different tiles (split_items: 16, 32 and 64 elements per
  // thread; fp32 takes 32 at B = 32 and 16 at B = 64, bf16 64 from B = 32).
  std::mt19937_64 rng(9);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  auto values = [&](int64_t v) {
    std::vector<float> l(v);
    for (auto& x : l) x = nd(rng);
    return l;
  };
  const Batch small(DType::f32, values(9000), 3), mid(DType::f32, values(40000), 32);
  const Batch big(DType::f32, values(40000), 64);
  const Batch small16(DType::bf16, values(9000), 3), mid16(DType::bf16, values(70000), 32);
  const Batch big16(DType::bf16, values(40000), 64);
  Workspace ws(std::max({workspace_bytes(small), workspace_bytes(big), workspace_bytes(mid16)}));
  ref::SamplingRowParams rp;
  rp.top_k = 5;
  int call = 0;
  for (const Batch* lb :
       {&small, &big, &small, &mid, &big, &mid, &small16, &big16, &mid16, &small16, &big16, &mid16, &small}) {
    std::vector<int64_t> order(lb->v);
    for (int64_t i = 0; i < lb->v; ++i) order[i] = i;
    std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                      [&](int64_t x, int64_t y) { return lb->row[x] > lb->row[y]; });
    DeviceBuffer<int32_t> tok(lb->b);
    tok.fill_bytes(0x7f);
    SamplingParams p = make_params(*lb, tok.get(), rp);
    p.seed = 3;
    p.offset = uint64_t(call++);
    const char* row = call % 2 && stream_row(*lb) ? stream_row(*lb) : split_row(*lb);
    REQUIRE(ws.sample(p, nullptr, row).ok());
    test::device_synchronize();
    INFO("call " << call << ": B = " << lb->b << ", V = " << lb->v);
    for (const int32_t t : tok.download())
      CHECK(std::find(order.begin(), order.begin() + 5, int64_t(t)) != order.begin() + 5);
    CHECK(ws.counters_zero(lb->b));
  }
}

TEST_CASE("greedy is the argmax with the lowest index; top_k = 1 too; invalid rows are flagged, also under top_k") {
  // Shapes: one partial tile with scalar loads; whole tiles with 16-byte loads (bf16 as packed pairs),
  // at B = 8, 32 and 64 (larger tiles from B = 32: split_items).
  struct Shape {
    int64_t v, pad, b;
  };
  for (const Shape sh : {Shape{5000, 3, 8}, Shape{40000, 0, 8}, Shape{40000, 0, 32}, Shape{40000, 0, 64}}) {
    for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
      const int64_t v = sh.v, b = sh.b;
      std::vector<float> l(v);
      for (int64_t i = 0; i < v; ++i) l[i] = float(i % 97) * 0.01f;  // maximum 0.96 at 96, 193, ...
      Batch lb(dt, l, b, sh.pad);
      const float inf = std::numeric_limits<float>::infinity();
      lb.set(1, 4000, std::nanf(""));                      // row 1: NaN -> invalid
      lb.set(2, 0, -inf, v);                               // row 2: all -inf -> invalid
      lb.set(3, 4321, inf);                                // row 3: +inf wins
      lb.set(4, v - 5, std::nanf(""));                     // row 4: a NaN near the row's end -> invalid
      lb.set(5, v - 1, inf);                               // row 5: +inf as the row's last element wins
      DeviceBuffer<int32_t> tok(b);
      DeviceBuffer<uint8_t> valid(b);
      Workspace ws(workspace_bytes(lb));
      // Row 0's 20 largest, the lowest index first among equal values (mode 4 draws among them).
      std::vector<int64_t> top20(v);
      for (int64_t i = 0; i < v; ++i) top20[i] = i;
      std::stable_sort(top20.begin(), top20.end(), [&](int64_t x, int64_t y) { return lb.row[x] > lb.row[y]; });
      top20.resize(20);
      // Modes 0-3: greedy (temperature 0, then top_k 1), automatic row then the split row; mode 4: top_k
      // 20 on the split row (its fast path: threshold, lists, the draw); modes 5-7: modes 2-4 on the
      // stream row, where the shape allows it; modes 0 and 5 (no filter, temperature 1) on the unfiltered
      // row, modes 0 and 6 (top_p 0.9 alone) on the top-p row, modes 0 and 7 (min_p 0.1 alone) on the min-p
      // row, where the shape allows them.
      for (int m = 0; m < 14; ++m) {
        const char* row = m < 2    ? kAutoRow
                          : m < 5  ? split_row(lb)
                          : m < 8  ? stream_row(lb)
                          : m < 10 ? vector_row(lb, "sampling.unfiltered.vec")
                          : m < 12 ? vector_row(lb, "sampling.top_p.vec")
                                   : vector_row(lb, "sampling.min_p.vec");
        if (!row && m >= 5) continue;
        const int mode = m < 5 ? m : m < 8 ? m - 3 : m % 2 == 0 ? 0 : m == 9 ? 5 : m == 11 ? 6 : 7;
        ref::SamplingRowParams rp;
        rp.temperature = mode % 2 == 0 && mode < 4 ? 0.0 : 1.0;
        rp.top_k = mode == 4 ? 20 : mode == 1 || mode == 3 ? 1 : 0;
        rp.top_p = mode == 6 ? 0.9 : 1.0;
        rp.min_p = mode == 7 ? 0.1 : 0.0;
        SamplingParams p = make_params(lb, tok.get(), rp);
        p.valid = valid.get();
        tok.fill_bytes(0x7f);
        REQUIRE(ws.sample(p, nullptr, row).ok());
        test::device_synchronize();
        const auto t = tok.download();
        const auto ok = valid.download();
        INFO(std::string(dtype_name(dt)) << " V " << v << " B " << b << " mode " << mode << " row "
             << std::string(row ? row : "auto"));
        int64_t want = 0;
        for (int64_t i = 0; i < v; ++i)
          if (lb.row[i] > lb.row[want]) want = i;
        // Row 0 and every row after 5 (copies of row 0; their tiles share blocks and SMs with the others).
        int64_t wrong_rows = 0;
        for (int64_t r = 0; r < b; ++r) {
          if (r >= 1 && r <= 5) continue;
          const int32_t got = t[size_t(r)];
          const bool right = mode < 4    ? got == want
                             : mode == 4 ? std::find(top20.begin(), top20.end(), int64_t(got)) != top20.end()
                                         : got >= 0 && got < v;
          wrong_rows += !right || ok[size_t(r)] != 1;
        }
        CHECK(wrong_rows == 0);
        CHECK(t[1] == kSamplingInvalidToken);
        CHECK(ok[1] == 0);
        CHECK(t[2] == kSamplingInvalidToken);
        CHECK(ok[2] == 0);
        CHECK(t[3] == 4321);
        CHECK(ok[3] == 1);
        CHECK(t[4] == kSamplingInvalidToken);
        CHECK(ok[4] == 0);
        CHECK(t[5] == v - 1);
        CHECK(ok[5] == 1);
      }
    }
  }
}

TEST_CASE("-0 and +0 are equal logits: they tie and the lower index comes first") {
  for (int64_t v : {4096, 4099}) {
    std::vector<float> l(v, -1.0f);
    l[7] = -0.0f;
    l[11] = 0.0f;
    l[20] = -0.0f;
    l[30] = 0.0f;
    for (DType dt : {DType::f32, DType::bf16, DType::f16}) {
      const int64_t b = quick_mode() ? 16 : 64;
      Batch lb(dt, l, b);
      DeviceBuffer<int32_t> tok(b);
      Workspace ws(workspace_bytes(lb));
      for (const char* row : {kAutoRow, split_row(lb), stream_row(lb)})
        for (int32_t k : {0, 2, 3}) {  // 0: greedy
          ref::SamplingRowParams rp;
          rp.temperature = k == 0 ? 0.0 : 1.0;
          rp.top_k = k;
          const ref::FilteredDistribution want = ref::filtered_distribution(lb.row, rp);
          std::vector<int64_t> seen(v, 0);
          for (int call = 0; call < (k == 0 ? 1 : 20); ++call) {
            SamplingParams p = make_params(lb, tok.get(), rp);
            p.offset = uint64_t(call);
            REQUIRE(ws.sample(p, nullptr, row).ok());
            test::device_synchronize();
            for (int32_t t : tok.download()) {
              REQUIRE((t >= 0 && t < v));
              ++seen[t];
            }
          }
          INFO(std::string(dtype_name(dt)) << " V=" << v << " k=" << k << " row " << std::string(row ? row : "auto"));
          for (int64_t i = 0; i < v; ++i)
            if (seen[i] != 0) CHECK(want.prob_of(i) > 0.0);
          for (int64_t t : want.tokens) CHECK(seen[t] > 0);  // k = 2, 3: 1280 (quick: 320) draws, 2-3 tokens
        }
    }
  }
}

TEST_CASE("k > V, odd V up to 262144, B = 1024, -inf entries, per-row device parameters") {
  const std::vector<int64_t> vs = quick_mode() ? std::vector<int64_t>{1, 2, 7, 4099}
                                               : std::vector<int64_t>{1, 2, 7, 4099, 65537, 262144};
  for (int64_t v : vs) {
    // V = 4099 in 48 rows: its rows of k = 3 and 40 take their tiles' own cuts while the threshold kernel
    // runs for the others (per-row k).
    const int64_t b = quick_mode() ? 16 : v >= 65537 ? 1024 : v == 4099 ? 48 : 256;
    std::mt19937_64 rng(v);
    std::normal_distribution<float> nd(0.0f, 3.0f);
    std::vector<float> l(v);
    for (auto& x : l) x = nd(rng);
    for (int64_t i = 1; i < v; i += 3) l[i] = -std::numeric_limits<float>::infinity();
    const Batch lb(DType::f32, l, b, v % 2);
    // Per-row parameters: k cycles through {0, 1, 3, V + 3, 40}, p through {1, 0.9, 0.5}, T {0.5, 1, 2}.
    std::vector<int32_t> ks(b);
    std::vector<float> ps(b), ts(b), mps(b);
    for (int64_t r = 0; r < b; ++r) {
      const int32_t kk[] = {0, 1, 3, int32_t(v + 3), 40};
      ks[r] = kk[r % 5];
      ps[r] = r % 3 == 0 ? 1.0f : r % 3 == 1 ? 0.9f : 0.5f;
      ts[r] = r % 4 == 0 ? 0.5f : r % 4 == 1 ? 1.0f : 2.0f;
      mps[r] = r % 7 == 0 ? 0.1f : 0.0f;
    }
    DeviceBuffer<int32_t> dk(b), tok(b);
    DeviceBuffer<float> dp(b), dt(b), dmp(b);
    DeviceBuffer<uint8_t> valid(b);
    dk.upload(ks);
    dp.upload(ps);
    dt.upload(ts);
    dmp.upload(mps);
    SamplingParams p = make_params(lb, tok.get(), ref::SamplingRowParams{});
    p.top_k.device = dk.get();
    p.top_p.device = dp.get();
    p.temperature.device = dt.get();
    p.min_p.device = dmp.get();
    p.valid = valid.get();
    int64_t outside = 0, invalid = 0;
    std::vector<ref::FilteredDistribution> refs(105);
    Workspace ws(workspace_bytes(lb));
    for (int call = 0; call < (quick_mode() ? 2 : 8); ++call) {
      p.offset = call;
      const char* row = call % 3 == 1 ? split_row(lb) : call % 3 == 2 ? stream_row(lb) : kAutoRow;
      REQUIRE(ws.sample(p, nullptr, call % 3 == 2 && !row ? split_row(lb) : row).ok());
      test::device_synchronize();
      const auto t = tok.download();
      const auto ok = valid.download();
      for (int64_t r = 0; r < b; ++r) {
        ref::SamplingRowParams rp;
        rp.top_k = ks[r];
        rp.top_p = ps[r];
        rp.temperature = ts[r];
        rp.min_p = mps[r];
        // The reference sorts the row: check the first 105 rows (every k, p, min-p combination).
        if (r >= 105) {
          if (ok[r] != 1) ++invalid;
          continue;
        }
        auto& d = refs[r];
        if (d.tokens.empty()) d = loosened_distribution(lb.row, rp);
        if (d.prob_of(t[r]) == 0.0) ++outside;
        if (ok[r] != 1) ++invalid;
      }
    }
    INFO("V=" << v);
    CHECK(outside == 0);
    CHECK(invalid == 0);
  }
}

TEST_CASE("same seed and offset give the same bits; other offsets give independent streams") {
  ref::SamplingRowParams rp;
  rp.top_k = 500;
  rp.top_p = 0.99;
  for (const char* row :
       {"sampling.block", "sampling.block.vec", "sampling.split", "sampling.split.vec", "sampling.stream.vec"})
    check_seed_streams(row, rp, quick_mode() ? 256 : 1024);
}

// One shape's graph test (below): `rows` in turn (nullptr: automatic selection), each with the call's
// parameters rp and, where per_row_k, again with per-row top_k.
void check_graph_replay(int64_t v, int64_t b, const ref::SamplingRowParams& rp, std::vector<const char*> rows,
                        bool per_row_k) {
  std::mt19937_64 rng(5);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> l(v);
  for (auto& x : l) x = nd(rng);
  const Batch lb(DType::bf16, l, b);
  DeviceBuffer<int32_t> tok(b), eager(b);
  DeviceBuffer<uint64_t> seed(1), offset(1);
  seed.upload({1234});
  offset.upload({77});
  SamplingParams p = make_params(lb, tok.get(), rp);
  p.seed_ptr = seed.get();
  p.offset_ptr = offset.get();
  p.advance_offset = true;
  Workspace ws(workspace_bytes(lb));
  // Per-row top_k in a second round: the split rows then finish some rows in their first pass (k = 100)
  // and the others (k = 0: top-p alone) in the second; the offset still advances once per call.
  std::vector<int32_t> ks(b);
  for (int64_t r = 0; r < b; ++r) ks[r] = r % 3 ? 100 : 0;
  DeviceBuffer<int32_t> dk(b);
  dk.upload(ks);
  const int n_rows = int(rows.size());
  for (int round = 0; round < (per_row_k ? 2 : 1) * n_rows; ++round) {
    const char* row = rows[round % n_rows];
    p.top_k.device = round >= n_rows ? dk.get() : nullptr;
    INFO(std::string(row ? row : "auto") << (p.top_k.device ? " per-row top_k" : ""));
    offset.upload({77});
    test::CapturedGraph graph([&](stream_t stream) { return ws.sample(p, stream, row); });
    std::vector<std::vector<int32_t>> replays;
    for (int rep = 0; rep < 3; ++rep) {
      graph.replay();
      replays.push_back(tok.download());
    }
    CHECK(offset.download()[0] == 80);
    CHECK(ws.counters_zero(b));  // every call leaves the workspace ready for the next
    CHECK(replays[0] != replays[1]);
    for (int rep = 0; rep < 3; ++rep) {  // replay r used offset 77 + r, seed 1234
      SamplingParams q = make_params(lb, eager.get(), rp);
      q.top_k.device = p.top_k.device;
      q.seed = 1234;
      q.offset = 77 + rep;
      REQUIRE(ws.sample(q, nullptr, row).ok());
      test::device_synchronize();
      CHECK(eager.download() == replays[rep]);
    }
  }
}

TEST_CASE("graph capture and replay advance the device offset and match eager calls") {
  // A row of one tile (B = 64), and bf16 V = 151936 at B = 32: 5 tiles of 64 elements a thread, a cluster
  // a row where the device has clusters (split_clustered), whose first call in a process may be captured.
  // The automatic, split and stream rows (the stream row where the shape allows it), top-k 100 and top-p 0.9,
  // then per-row top_k; the unfiltered row without a filter; the top-p row with top-p alone; the min-p row
  // with min-p alone.
  ref::SamplingRowParams rp;
  rp.top_k = 100;
  rp.top_p = 0.9;
  SUBCASE("V = 4099, B = 64") { check_graph_replay(4099, 64, rp, {kAutoRow, "sampling.split"}, true); }
  SUBCASE("V = 4096, B = 64: the stream row too") {
    check_graph_replay(4096, 64, rp, {kAutoRow, "sampling.split.vec", "sampling.stream.vec"}, true);
  }
  SUBCASE("V = 151936, B = 32") { check_graph_replay(151936, 32, rp, {kAutoRow, "sampling.split.vec"}, true); }
  SUBCASE("V = 151936, B = 32, no filter: the unfiltered row") {
    check_graph_replay(151936, 32, ref::SamplingRowParams{}, {"sampling.unfiltered.vec"}, false);
  }
  SUBCASE("V = 151936, B = 32, top_p 0.9 alone: the top-p row") {
    ref::SamplingRowParams top_p;
    top_p.top_p = 0.9;
    check_graph_replay(151936, 32, top_p, {"sampling.top_p.vec"}, false);
  }
  SUBCASE("V = 151936, B = 32, min_p 0.05 alone: the min-p row") {
    ref::SamplingRowParams min_p;
    min_p.min_p = 0.05;
    check_graph_replay(151936, 32, min_p, {"sampling.min_p.vec"}, false);
  }
}

TEST_CASE("a rejected call writes nothing") {
  const Batch lb(DType::f32, std::vector<float>(64, 0.0f), 4);
  DeviceBuffer<int32_t> tok(4);
  DeviceBuffer<uint64_t> offset(1);
  offset.upload({5});
  std::vector<SamplingParams> bad;
  ref::SamplingRowParams rp;
  SamplingParams p = make_params(lb, tok.get(), rp);
  p.top_p.value = 0.0f;
  bad.push_back(p);
  p = make_params(lb, tok.get(), rp);
  p.tokens.size = 3;
  bad.push_back(p);
  p = make_params(lb, tok.get(), rp);
  p.temperature.value = -1.0f;
  p.offset_ptr = offset.get();
  p.advance_offset = true;
  bad.push_back(p);
  p = make_params(lb, tok.get(), rp);  // validity flags inside the tokens
  p.valid = reinterpret_cast<uint8_t*>(tok.get()) + 4;
  bad.push_back(p);
  for (const SamplingParams& q : bad) {
    tok.fill_bytes(0xFF);
    CHECK(sample(q, nullptr).code() == StatusCode::invalid_argument);
    test::device_synchronize();
    const auto t = tok.download();
    CHECK(std::all_of(t.begin(), t.end(), [](int32_t x) { return x == -1; }));
  }
  CHECK(offset.download()[0] == 5);
  // The split rows: no workspace -> unsupported when pinned; too small -> invalid; nothing written.
  p = make_params(lb, tok.get(), rp);
  p.offset_ptr = offset.get();
  p.advance_offset = true;
  Overrides::instance().force("sampling.split.vec");
  CHECK(sample(p, nullptr, SamplingOptions{"sampling.split.vec"}).code() == StatusCode::unsupported);
  Overrides::instance().unforce("sampling.split.vec");
  Workspace small(workspace_bytes(lb) - 256);
  tok.fill_bytes(0xFF);
  CHECK(small.sample(p, nullptr, "sampling.split.vec").code() == StatusCode::invalid_argument);
  CHECK(small.sample(p, nullptr, "sampling.stream.vec").code() == StatusCode::unsupported);  // B below its range
  {
    const ScopedForce forced("sampling.split.vec");  // a workspace of the size the call needs, over the tokens
    CHECK(dcukern::sample(p, tok.get(), workspace_bytes(lb), stream_t{}, SamplingOptions{"sampling.split.vec"})
              .code() == StatusCode::invalid_argument);
  }
  test::device_synchronize();
  const auto t = tok.download();
  CHECK(std::all_of(t.begin(), t.end(), [](int32_t x) { return x == -1; }));
  CHECK(offset.download()[0] == 5);
  // The stream row at a batch in its range: a workspace too small -> invalid, nothing written.
  const Batch rows(DType::f32, std::vector<float>(64, 0.0f), capabilities::sampling_rows::kStreamBatchMin);
  DeviceBuffer<int32_t> rows_tok(rows.b);
  rows_tok.fill_bytes(0xFF);
  SamplingParams q = make_params(rows, rows_tok.get(), rp);
  q.offset_ptr = offset.get();
  q.advance_offset = true;
  Workspace rows_small(workspace_bytes(rows) - 256);
  CHECK(rows_small.sample(q, nullptr, "sampling.stream.vec").code() == StatusCode::invalid_argument);
  test::device_synchronize();
  const auto rt = rows_tok.download();
  CHECK(std::all_of(rt.begin(), rt.end(), [](int32_t x) { return x == -1; }));
  CHECK(offset.download()[0] == 5);
  // The unfiltered row pinned for a call with a filter: unsupported, nothing written.
  p = make_params(lb, tok.get(), rp);
  p.top_p.value = 0.9f;
  Workspace ws(workspace_bytes(lb));
  tok.fill_bytes(0xFF);
  CHECK(ws.sample(p, nullptr, "sampling.unfiltered.vec").code() == StatusCode::unsupported);
  test::device_synchronize();
  const auto ut = tok.download();
  CHECK(std::all_of(ut.begin(), ut.end(), [](int32_t x) { return x == -1; }));
  // The top-p row pinned for a call with top_k or min_p, the min-p row for one with top_k or top_p:
  // unsupported, nothing written.
  for (const char* id : {"sampling.top_p.vec", "sampling.min_p.vec"})
    for (int filter = 0; filter < 2; ++filter) {
      const bool top_p_row = std::string(id) == "sampling.top_p.vec";
      p = make_params(lb, tok.get(), rp);
      (top_p_row ? p.top_p.value : p.min_p.value) = top_p_row ? 0.9f : 0.1f;  // the row's own filter
      if (filter == 0) p.top_k.value = 20;
      else (top_p_row ? p.min_p.value : p.top_p.value) = top_p_row ? 0.1f : 0.9f;
      tok.fill_bytes(0xFF);
      INFO(std::string(id) << " filter " << filter);
      CHECK(ws.sample(p, nullptr, id).code() == StatusCode::unsupported);
      test::device_synchronize();
      const auto pt = tok.download();
      CHECK(std::all_of(pt.begin(), pt.end(), [](int32_t x) { return x == -1; }));
    }
  p = make_params(lb, tok.get(), rp);
  p.logits.data = static_cast<const char*>(p.logits.data) + 4;
  p.logits.cols = 63;
  CHECK(sample(p, nullptr, SamplingOptions{"sampling.block.vec"}).code() == StatusCode::unsupported);
}
