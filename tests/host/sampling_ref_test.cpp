// The host reference of sampling (the specification): filter order, ties, greedy, invalid rows; the
// chi-square helpers; and argument validation / row selection of the op.
#include <doctest/doctest.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "dcukern/ref/sampling.hpp"
#include "dcukern/registry/resolve.hpp"
#include "dcukern/sampling/select.hpp"
#include "misaligned.hpp"

using namespace dcukern;
using ref::row_params;

TEST_CASE("reference: plain softmax with temperature") {
  const std::vector<float> l = {0.0f, std::log(2.0f), std::log(4.0f)};
  auto d = ref::filtered_distribution(l, row_params(1.0));
  REQUIRE(d.valid);
  CHECK(d.tokens == std::vector<int64_t>{2, 1, 0});
  CHECK(d.probs[0] == doctest::Approx(4.0 / 7));
  CHECK(d.prob_of(0) == doctest::Approx(1.0 / 7));
  d = ref::filtered_distribution(l, row_params(0.5));  // weights 1, 4, 16
  CHECK(d.prob_of(2) == doctest::Approx(16.0 / 21));
}

TEST_CASE("reference: top-k keeps the k largest, lowest index first on ties; k > V is off") {
  const std::vector<float> l = {1, 3, 3, 2, 3};
  auto d = ref::filtered_distribution(l, row_params(1.0, 2));
  CHECK(d.tokens == std::vector<int64_t>{1, 2});
  d = ref::filtered_distribution(l, row_params(1.0, 1));  // top-k = 1 is the argmax with the lowest index
  CHECK(d.tokens == std::vector<int64_t>{1});
  d = ref::filtered_distribution(l, row_params(0.0));  // greedy
  CHECK(d.tokens == std::vector<int64_t>{1});
  d = ref::filtered_distribution(l, row_params(1.0, 100));
  CHECK(d.tokens.size() == 5);
}

TEST_CASE("reference: top-p applies to the renormalised top-k set, then min-p") {
  // weights (T = 1): 8, 4, 2, 1, 1 (logits log2 scaled)
  const std::vector<float> l = {float(std::log(8.0)), float(std::log(4.0)), float(std::log(2.0)), 0.0f, 0.0f};
  // top-p 0.8 alone: total 16, need 12.8: 8+4 = 12 < 12.8, +2 = 14 -> 3 tokens.
  auto d = ref::filtered_distribution(l, row_params(1.0, 0, 0.8));
  CHECK(d.tokens.size() == 3);
  // top-k 2 then top-p 0.6: top-k mass 12, need 7.2: token 0 (8) suffices -> 1 token.
  d = ref::filtered_distribution(l, row_params(1.0, 2, 0.6));
  CHECK(d.tokens.size() == 1);
  // top-k 3 then top-p 0.9: mass 14, need 12.6: 8+4+2 -> 3 tokens; min-p 0.3 (p >= 2.4) -> 2 tokens.
  d = ref::filtered_distribution(l, row_params(1.0, 3, 0.9));
  CHECK(d.tokens.size() == 3);
  d = ref::filtered_distribution(l, row_params(1.0, 3, 0.9, 0.3));
  CHECK(d.tokens.size() == 2);
  CHECK(d.probs[0] == doctest::Approx(8.0 / 12));
}

TEST_CASE("reference: -inf entries are never kept with mass; NaN or all -inf rows are invalid") {
  const float inf = std::numeric_limits<float>::infinity();
  auto d = ref::filtered_distribution({-inf, 0.0f, -inf}, row_params(1.0));
  REQUIRE(d.valid);
  CHECK(d.prob_of(1) == doctest::Approx(1.0));
  CHECK(d.prob_of(0) == 0.0);
  CHECK_FALSE(ref::filtered_distribution({-inf, -inf}, row_params(1.0)).valid);
  CHECK_FALSE(ref::filtered_distribution({0.0f, std::nanf("")}, row_params(1.0)).valid);
  d = ref::filtered_distribution({inf, 0.0f, inf}, row_params(1.0));  // +inf: largest finite, shared
  CHECK(d.prob_of(0) == doctest::Approx(0.5));
  CHECK(d.prob_of(2) == doctest::Approx(0.5));
}

TEST_CASE("chi-square helpers: a perfect sample passes, a biased one fails") {
  const std::vector<float> l = {0.0f, 0.5f, 1.0f, 1.5f};
  const auto d = ref::filtered_distribution(l, row_params(1.0));
  std::vector<int64_t> counts(4, 0);
  const int64_t n = 1000000;
  for (size_t j = 0; j < d.tokens.size(); ++j) counts[d.tokens[j]] = int64_t(std::llround(d.probs[j] * n));
  auto c = ref::chi_square(d, counts, n);
  CHECK(c.statistic < ref::chi_square_bound(c.dof, 4.753));
  counts[0] += 3000;
  counts[3] -= 3000;
  c = ref::chi_square(d, counts, n);
  CHECK(c.statistic > ref::chi_square_bound(c.dof, 4.753));
  // chi2(10): the 1 - 1e-6 quantile is 46.9 (closed form for even dof); Wilson-Hilferty is within 3%.
  CHECK(ref::chi_square_bound(10, 4.753) == doctest::Approx(46.9).epsilon(0.03));
  // A tail whose expected count stays below 5 joins the last bin: expected 50, 49 + 1 (not a bin of 1,
  // where 3 draws instead of 1 would add 4 to the statistic).
  ref::FilteredDistribution tail;
  tail.valid = true, tail.tokens = {0, 1, 2}, tail.probs = {0.5, 0.49, 0.01};
  c = ref::chi_square(tail, {50, 47, 3}, 100);
  CHECK(c.dof == 1);
  CHECK(c.statistic == doctest::Approx(0.0));
}

TEST_CASE("chi-square by index group: 5 % too many draws in one tile of a flat row fail it, not the per-token test") {
  // 1M draws (a fixed seed) from a flat row of V = 151936, about 6.6 a token: fair, then with tokens
  // [8192, 16384) (one 8192-element tile) 5 % too likely and the others less so to match.
  const int64_t v = 151936, n = 1000000;
  const auto d = ref::filtered_distribution(std::vector<float>(size_t(v), 0.0f), row_params(1.0));
  REQUIRE(d.tokens.size() == size_t(v));
  auto sample = [&](double tile_bias) {
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const double tile_mass = 8192.0 / double(v) * (1.0 + tile_bias);
    std::vector<int64_t> counts(size_t(v), 0);
    for (int64_t i = 0; i < n; ++i) {
      const bool in_tile = u(rng) < tile_mass;
      const int64_t t = in_tile ? 8192 + int64_t(u(rng) * 8192.0) : int64_t(u(rng) * double(v - 8192));
      ++counts[size_t(in_tile || t < 8192 ? t : t + 8192)];
    }
    return counts;
  };
  const auto fair = sample(0.0), biased = sample(0.05);
  const auto g_fair = ref::chi_square_by_index_group(d, fair, n, 4096);
  const auto g_biased = ref::chi_square_by_index_group(d, biased, n, 4096);
  const auto t_fair = ref::chi_square(d, fair, n), t_biased = ref::chi_square(d, biased, n);
  CHECK(g_fair.dof == 37);  // 38 groups (the last of 384 tokens)
  CHECK(g_fair.statistic < ref::chi_square_bound(g_fair.dof, 5.199));
  CHECK(t_fair.statistic < ref::chi_square_bound(t_fair.dof, 5.199));
  CHECK(g_biased.statistic > ref::chi_square_bound(g_biased.dof, 5.199));
  CHECK(t_biased.statistic < ref::chi_square_bound(t_biased.dof, 5.199));  // what the group statistic adds
  CHECK(g_biased.outside == 0);
}

namespace {
// Never read (misaligned.hpp).
float* const logits = fake_view<float>(1);
int32_t* const tokens = fake_view<int32_t>(2);
const float* const row_floats = fake_view<const float>(3);   // per-row parameter arrays
const int32_t* const row_ints = fake_view<const int32_t>(4);
uint8_t* const valid_flags = fake_view<uint8_t>(5);
SamplingParams valid_params(int64_t b = 4, int64_t v = 1024) {
  SamplingParams p;
  p.logits = {logits, DType::f32, b, v, v};
  p.tokens = {tokens, DType::i32, b};
  return p;
}
void expect(const SamplingParams& p, StatusCode code, const char* fragment) {
  SamplingCall c;
  const Status s = validate_sampling(p, &c);
  INFO(s.to_string());
  CHECK(s.code() == code);
  CHECK(s.message().find(fragment) != std::string::npos);
}
}  // namespace

TEST_CASE("sampling validation: every invalid input gets a readable error") {
  SamplingCall c;
  CHECK(validate_sampling(valid_params(), &c).ok());
  SamplingParams p = valid_params();
  p.logits.data = nullptr;
  expect(p, StatusCode::invalid_argument, "null pointer for logits");
  p = valid_params(); p.tokens.data = nullptr;
  expect(p, StatusCode::invalid_argument, "null pointer for tokens");
  p = valid_params(); p.logits.dtype = DType::i32;
  expect(p, StatusCode::unsupported, "logits dtype i32");
  p = valid_params(); p.tokens.dtype = DType::f32;
  expect(p, StatusCode::unsupported, "tokens dtype f32");
  p = valid_params(); p.logits.rows = 0;
  expect(p, StatusCode::invalid_argument, "batch B = 0");
  p = valid_params(); p.logits.cols = 0;
  expect(p, StatusCode::invalid_argument, "vocabulary V = 0");
  p = valid_params(); p.logits.cols = kSamplingMaxVocab + 1; p.logits.row_stride = p.logits.cols;
  expect(p, StatusCode::invalid_argument, "out of range");
  p = valid_params(); p.logits.row_stride = 100;
  expect(p, StatusCode::invalid_argument, "row stride 100");
  p = valid_params(); p.tokens.size = 3;
  expect(p, StatusCode::invalid_argument, "expected B = 4");
  p = valid_params(); p.temperature.value = -1.0f;
  expect(p, StatusCode::invalid_argument, "temperature");
  p = valid_params(); p.temperature.value = std::nanf("");
  expect(p, StatusCode::invalid_argument, "temperature");
  // +inf, and finite values whose log2(e) / T is not a normal float (-inf logits would weigh NaN).
  for (float t : {INFINITY, 1e31f, 3e38f}) {
    p = valid_params(); p.temperature.value = t;
    expect(p, StatusCode::invalid_argument, "temperature");
  }
  p = valid_params(); p.temperature.value = kSamplingMaxTemperature;
  SamplingCall hot;
  CHECK(validate_sampling(p, &hot).ok());
  p = valid_params(); p.top_k.value = -2;
  expect(p, StatusCode::invalid_argument, "top_k");
  p = valid_params(); p.top_p.value = 0.0f;
  expect(p, StatusCode::invalid_argument, "top_p");
  p = valid_params(); p.top_p.value = 1.5f;
  expect(p, StatusCode::invalid_argument, "top_p");
  p = valid_params(); p.min_p.value = 2.0f;
  expect(p, StatusCode::invalid_argument, "min_p");
  p = valid_params(); p.advance_offset = true;
  expect(p, StatusCode::invalid_argument, "advance_offset");
  p = valid_params(); p.logits.data = moved_by_bytes(logits, 2);
  expect(p, StatusCode::invalid_argument, "logits is not aligned to its element size");
  p = valid_params(); p.offset_ptr = moved_by_bytes(reinterpret_cast<uint64_t*>(logits), 4);
  expect(p, StatusCode::invalid_argument, "offset_ptr is not aligned");
  p = valid_params(); p.top_k.device = moved_by_bytes(tokens, 1);
  expect(p, StatusCode::invalid_argument, "top_k is not aligned");
  // Device-array parameters are checked per row on the device, not here.
  p = valid_params(); p.top_p.value = 5.0f; p.top_p.device = row_floats;
  CHECK(validate_sampling(p, &c).ok());
  // Outputs overlapping any other view (valid_params(): logits [4, 1024] f32, tokens [4] i32).
  p = valid_params(); p.tokens.data = logits + 4 * 1024 - 1;  // tokens' first element is logits' last
  expect(p, StatusCode::invalid_argument, "tokens overlaps logits");
  p = valid_params(); p.tokens.data = logits + 4 * 1024;  // right after: fine
  CHECK(validate_sampling(p, &c).ok());
  p = valid_params(); p.valid = reinterpret_cast<uint8_t*>(tokens) + 15;
  expect(p, StatusCode::invalid_argument, "tokens overlaps valid");
  p = valid_params(); p.valid = reinterpret_cast<uint8_t*>(tokens) + 16;
  CHECK(validate_sampling(p, &c).ok());
  p = valid_params(); p.top_k.device = tokens + 2;
  expect(p, StatusCode::invalid_argument, "tokens overlaps top_k");
  p = valid_params(); p.valid = valid_flags; p.min_p.device = reinterpret_cast<const float*>(valid_flags) + 0;
  expect(p, StatusCode::invalid_argument, "valid overlaps min_p");
  // The offset counter is written only when the call advances it: then it must not share the seed's word.
  uint64_t* const counter = fake_view<uint64_t>(6);
  p = valid_params(); p.seed_ptr = counter, p.offset_ptr = counter;
  CHECK(validate_sampling(p, &c).ok());
  p.advance_offset = true;
  expect(p, StatusCode::invalid_argument, "offset_ptr overlaps seed_ptr");
  p.seed_ptr = counter + 1;
  CHECK(validate_sampling(p, &c).ok());
}

TEST_CASE("sampling rows: vector row for aligned rows, generic fallback otherwise") {
  const TargetInfo& t = *resolve_target("gfx906").info;
  for (const auto& row : SamplingOp::rows()) CHECK(has_all(row.isa_needs, sampling_kernel_isa(row.kernel)));
  const capabilities::SamplingRow* row = nullptr;
  REQUIRE(select_sampling(valid_params(), t, &row).ok());
  CHECK(std::string(row->id) == "sampling.block.vec");
  SamplingParams p = valid_params(4, 1001);  // V * 4 bytes not a multiple of 16
  p.logits.row_stride = 1001;
  Explanation why;
  REQUIRE(select_sampling(p, t, &row, &why).ok());
  CHECK(std::string(row->id) == "sampling.block");
  CHECK(why.to_string().find("vector width") != std::string::npos);
  p = valid_params();
  p.logits.data = reinterpret_cast<const char*>(logits) + 4;
  REQUIRE(select_sampling(p, *resolve_target("sm_90").info, &row).ok());
  CHECK(std::string(row->id) == "sampling.block");
  CHECK(check_sampling_row(p, t, "sampling.block.vec", &row).code() == StatusCode::unsupported);
  CHECK(check_sampling_row(p, t, "sampling.nope", &row).code() == StatusCode::invalid_argument);
}

// valid_params() with a filter (top_k 50): the unfiltered row does not take it.
SamplingParams filtered_params(int64_t b = 4, int64_t v = 1024) {
  SamplingParams p = valid_params(b, v);
  p.top_k.value = 50;
  return p;
}

TEST_CASE("sampling split rows: chosen when a workspace is given; without one a one-block row runs") {
  const TargetInfo& t = *resolve_target("sm_90").info;
  const capabilities::SamplingRow* row = nullptr;
  const SamplingParams p = filtered_params();
  REQUIRE(select_sampling(p, t, &row, nullptr, true).ok());
  CHECK(std::string(row->id) == "sampling.split.vec");
  SamplingParams odd = filtered_params(4, 1001);
  odd.logits.row_stride = 1001;
  REQUIRE(select_sampling(odd, t, &row, nullptr, true).ok());
  CHECK(std::string(row->id) == "sampling.split");
  CHECK(check_sampling_row(p, t, "sampling.split.vec", &row).code() == StatusCode::unsupported);
  REQUIRE(check_sampling_row(p, t, "sampling.split.vec", &row, true).ok());
  CHECK(row->kernel == SamplingKernel::split_vec);
  // From kStreamBatchMin rows the stream row (16-byte loads and a workspace, like sampling.split.vec).
  const int64_t from = capabilities::sampling_rows::kStreamBatchMin;
  REQUIRE(select_sampling(filtered_params(from), t, &row, nullptr, true).ok());
  CHECK(std::string(row->id) == "sampling.stream.vec");
  CHECK(row->kernel == SamplingKernel::stream_vec);
  Explanation below;
  REQUIRE(select_sampling(filtered_params(from - 1), t, &row, &below, true).ok());
  CHECK(std::string(row->id) == "sampling.split.vec");
  CHECK(below.to_string().find("B below this row's range") != std::string::npos);
  odd.logits.rows = odd.tokens.size = from;
  REQUIRE(select_sampling(odd, t, &row, nullptr, true).ok());
  CHECK(std::string(row->id) == "sampling.split");
  CHECK(row->semantics.needs_workspace);
  CHECK(row->contract.describe().find("workspace") != std::string::npos);
  Explanation why;
  REQUIRE(select_sampling(p, t, &row, &why).ok());  // no workspace: a one-block row
  CHECK(std::string(row->id) == "sampling.block.vec");
  CHECK(why.to_string().find("needs a workspace") != std::string::npos);
  // Kernel symbols tell the variants apart (ISA audit): no row's fragment is inside another's.
  for (const auto& a : SamplingOp::rows())
    for (const auto& b : SamplingOp::rows())
      if (&a != &b) CHECK(std::string(b.kernel_symbol).find(a.kernel_symbol) == std::string::npos);
}

// Calls (each a change to valid_params()) that the row `id` turns down as unsupported, saying `why`.
using ParamsChange = void (*)(SamplingParams&);
void check_rejects(const char* id, const char* why, std::initializer_list<ParamsChange> changes) {
  const TargetInfo& t = *resolve_target("sm_90").info;
  const capabilities::SamplingRow* row = nullptr;
  for (const ParamsChange change : changes) {
    SamplingParams q = valid_params();
    change(q);
    const Status s = check_sampling_row(q, t, id, &row, true);
    INFO(s.to_string());
    CHECK(s.code() == StatusCode::unsupported);
    CHECK(s.message().find(why) != std::string::npos);
  }
}

TEST_CASE("sampling unfiltered row: only calls whose filters are host values that keep every token") {
  const TargetInfo& t = *resolve_target("sm_90").info;
  const capabilities::SamplingRow* row = nullptr;
  const char* id = "sampling.unfiltered.vec";
  {
    const ScopedForce forced(id);  // its contract is checked whatever its evidence
    SamplingParams p = valid_params();
    REQUIRE(check_sampling_row(p, t, id, &row, true).ok());
    CHECK(row->kernel == SamplingKernel::unfiltered_vec);
    CHECK(row->contract.describe().find("filters:none") != std::string::npos);
    CHECK(check_sampling_row(p, t, id, &row).code() == StatusCode::unsupported);  // no workspace
    p.top_k.value = 1024;  // top_k >= V is off
    CHECK(check_sampling_row(p, t, id, &row, true).ok());
    p.temperature.device = row_floats;  // per-row temperatures are fine
    CHECK(check_sampling_row(p, t, id, &row, true).ok());
    check_rejects(id, "without filters",
                  {[](SamplingParams& q) { q.top_k.value = 1023; }, [](SamplingParams& q) { q.top_p.value = 0.99f; },
                   [](SamplingParams& q) { q.min_p.value = 0.01f; },
                   // device arrays may hold filters
                   [](SamplingParams& q) { q.top_k.device = row_ints; },
                   [](SamplingParams& q) { q.top_p.device = row_floats; },
                   [](SamplingParams& q) { q.min_p.device = row_floats; }});
  }
  // Selection with a workspace (the row not forced): the unfiltered row for calls without a filter, at
  // any B; others skip it.
  for (int64_t b : {int64_t(1), capabilities::sampling_rows::kStreamBatchMin}) {
    REQUIRE(select_sampling(valid_params(b), t, &row, nullptr, true).ok());
    CHECK(std::string(row->id) == id);
    Explanation why;
    REQUIRE(select_sampling(filtered_params(b), t, &row, &why, true).ok());
    CHECK(std::string(row->id) != id);
    CHECK(why.to_string().find("without filters") != std::string::npos);
  }
}

// A row that applies one filter alone (`own`), forced: calls with it as a host value or per row (per-row
// temperature too), with top_k >= V (off), or with no filter pass; no workspace is unsupported; top_k and the
// other filter (`other`: a host value that filters, or a device array) are turned down saying `why`.
void check_alone_contract(const char* id, SamplingKernel kernel, const char* filters,
                          PerRow<float> SamplingParams::*own, float value, const char* why,
                          std::initializer_list<ParamsChange> other) {
  const TargetInfo& t = *resolve_target("sm_90").info;
  const capabilities::SamplingRow* row = nullptr;
  const ScopedForce forced(id);  // its contract is checked whatever its evidence
  SamplingParams p = valid_params();
  (p.*own).value = value;
  REQUIRE(check_sampling_row(p, t, id, &row, true).ok());
  CHECK(row->kernel == kernel);
  CHECK(row->contract.describe().find(filters) != std::string::npos);
  CHECK(check_sampling_row(p, t, id, &row).code() == StatusCode::unsupported);  // no workspace
  p.top_k.value = 1024;  // top_k >= V is off
  CHECK(check_sampling_row(p, t, id, &row, true).ok());
  (p.*own).device = row_floats;  // per-row values and temperatures are fine
  p.temperature.device = row_floats;
  CHECK(check_sampling_row(p, t, id, &row, true).ok());
  CHECK(check_sampling_row(valid_params(), t, id, &row, true).ok());  // no filter at all: fine too
  check_rejects(id, why,
                {[](SamplingParams& q) { q.top_k.value = 1023; },
                 [](SamplingParams& q) { q.top_k.device = row_ints; }});
  check_rejects(id, why, other);
}

// Selection with a workspace (row `id` not forced): `id` for calls whose only filter is `own` (at `value`),
// at any B; calls without a filter keep the unfiltered row; calls with top-k skip `id`, saying `why`.
void check_alone_selected(const char* id, PerRow<float> SamplingParams::*own, float value, const char* why) {
  const TargetInfo& t = *resolve_target("sm_90").info;
  const capabilities::SamplingRow* row = nullptr;
  for (int64_t b : {int64_t(1), capabilities::sampling_rows::kStreamBatchMin}) {
    SamplingParams alone = valid_params(b);
    (alone.*own).value = value;
    REQUIRE(select_sampling(alone, t, &row, nullptr, true).ok());
    CHECK(std::string(row->id) == id);
    REQUIRE(select_sampling(valid_params(b), t, &row, nullptr, true).ok());
    CHECK(std::string(row->id) == "sampling.unfiltered.vec");
    Explanation e;
    REQUIRE(select_sampling(filtered_params(b), t, &row, &e, true).ok());
    CHECK(std::string(row->id) != id);
    CHECK(e.to_string().find(why) != std::string::npos);
  }
}

TEST_CASE("sampling top-p row: only calls whose top_k and min_p are host values that keep every token") {
  const char* id = "sampling.top_p.vec";
  check_alone_contract(id, SamplingKernel::top_p_vec, "filters:top_p", &SamplingParams::top_p, 0.9f, "top-p alone",
                       {[](SamplingParams& q) { q.min_p.value = 0.01f; },
                        [](SamplingParams& q) { q.min_p.device = row_floats; }});
  check_alone_selected(id, &SamplingParams::top_p, 0.95f, "top-p alone");
}

TEST_CASE("sampling min-p row: only calls whose top_k and top_p are host values that keep every token") {
  const char* id = "sampling.min_p.vec";
  check_alone_contract(id, SamplingKernel::min_p_vec, "filters:min_p", &SamplingParams::min_p, 0.1f, "min-p alone",
                       {[](SamplingParams& q) { q.top_p.value = 0.99f; },
                        [](SamplingParams& q) { q.top_p.device = row_floats; }});
  check_alone_selected(id, &SamplingParams::min_p, 0.05f, "min-p alone");
}

// P(Bin(n, p) >= m), summed in logs.
static double binomial_at_least(int n, double p, int m) {
  double sum = 0.0;
  for (int i = m; i <= n; ++i)
    sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) + i * std::log(p) +
                    (n - i) * std::log1p(-p));
  return sum;
}

TEST_CASE("sampling threshold: for logits in random order a row misses its fast path below 1e-6 up to k = 1000") {
  // The threshold is the bin of the m-th largest sampled element (an eighth of the row is sampled). The
  // row then holds fewer than k elements at or above it only if m sampled elements lie among its top
  // k - 1, and more than kSplitCap only if fewer than m lie among its top kSplitCap (ties in the
  // threshold's bin aside): binomial tails with p = 1/8.
  using namespace sampling_detail;
  const double p = double(kSampleRunBytes) / kSampleStrideBytes;
  CHECK(p == 0.125);
  auto miss = [&](int k) {
    const int m = int(sample_target(k));
    return binomial_at_least(k - 1, p, m) + (1.0 - binomial_at_least(kSplitCap, p, m));
  };
  for (int k : {2, 3, 20, 50, 128, 129, 500, 1000}) {
    CAPTURE(k);
    CHECK(sample_target(k) >= 16u);
    CHECK(miss(k) < 1e-6);
  }
  CHECK(sample_target(20) == 16u);
  CHECK(sample_target(1000) == 179u);  // T = sqrt(2048 * 1000) = 1431
  // Near the cap the fast path misses often (those rows run the one-block algorithm).
  CHECK(miss(1500) > 1e-3);
}

TEST_CASE("sampling workspace: tile sizes by batch and logits dtype, every region counted") {
  using namespace sampling_detail;
  CHECK(split_tiles(1) == 1);
  CHECK(split_tiles(8192) == 1);
  CHECK(split_tiles(8193) == 2);
  CHECK(split_tiles(151936) == 19);
  const int64_t v = 151936;
  CHECK(split_items(1024, v, DType::f32, true) == 16);
  CHECK(split_items(kSplitPairsBatch - 1, v, DType::bf16, false) == 16);
  CHECK(split_items(kSplitPairsBatch, v, DType::bf16, false) == 64);  // packed pairs: 32 words, 2 blocks an SM
  CHECK(split_items(1024, v, DType::bf16, false) == 64);
  CHECK(split_items(kSplitPairsBatch, v, DType::f16, true) == 32);  // fp16 widens to floats
  CHECK(split_items(1024, v, DType::f16, true) == 32);
  CHECK(split_items(kSplitPairsBatch - 1, v, DType::f32, true) == 16);
  CHECK(split_items(kSplitPairsBatch, v, DType::f32, true) == 32);  // fp32: 32 floats while 2 blocks share an SM
  CHECK(split_items(kSplitLargeBatch, v, DType::f32, true) == 16);
  // fp32 from kSplitPairsBatch rows: 40 elements where that, and not 32, fits one round of 2 blocks an SM.
  CHECK(split_items(32, 151936, DType::f32, true, 132) == kSplitWideItems);  // 8 tiles a row: 256 <= 264
  CHECK(split_items(33, 151936, DType::f32, true, 132) == kSplitWideItems);  // 264
  CHECK(split_items(34, 151936, DType::f32, true, 132) == 32);               // 272: neither fits
  CHECK(split_items(32, 151936, DType::f32, true, 0) == 32);                 // not known (HIP): never
  CHECK(split_items(32, 100000, DType::f32, true, 132) == 32);               // 32 elements fit already
  CHECK(split_items(32, 248320, DType::f32, true, 132) == 32);               // 13 tiles: neither fits
  CHECK(split_items(32, 151936, DType::f16, true, 132) == 32);               // fp32 rows only
  // Small bf16 batches take 64 elements where the device has clusters and a row is a cluster of 2 to 8 tiles.
  CHECK(split_items(1, v, DType::bf16, true) == 64);
  CHECK(split_items(kSplitPairsBatch - 1, 262144, DType::bf16, true) == 64);
  CHECK(split_items(1, 32768, DType::bf16, true) == 16);  // one tile of 64 elements: no cluster
  CHECK(split_items(1, v, DType::f16, true) == 16);
  CHECK(split_tiles(151936, 64) == 5);  // B = 32: 160 blocks
  CHECK(split_tiles(248320, 64) == 8);  // 256 blocks
  // Lists of the 64-element tiles hold twice as many keys; the list region holds the largest layout's.
  CHECK(split_list_cap(16) == kListCap);
  CHECK(split_list_cap(32) == kListCap);
  CHECK(split_list_cap(64) == 2 * kListCap);
  for (const int64_t v : {int64_t(1), int64_t(8193), int64_t(16385), int64_t(151936), int64_t(262144)})
    for (const int items : {16, 32, 64})
      CHECK(split_list_bytes(3, v) >= size_t(3) * split_tiles(v, items) * split_list_cap(items) * sizeof(uint64_t));
  CHECK(split_tiles(151936, 32) == 10);
  CHECK(split_tiles(16384, 32) == 1);
  // Cluster rows (where the device has clusters): 64-element tiles, 2 to kSplitClusterMax a row.
  CHECK(split_clustered(64, split_tiles(151936, 64)));
  CHECK(split_clustered(64, split_tiles(262144, 64)));  // 8 tiles
  CHECK(!split_clustered(64, split_tiles(262145, 64)));
  CHECK(!split_clustered(64, split_tiles(32768, 64)));  // one tile: nothing to hand over
  CHECK(!split_clustered(32, split_tiles(151936, 32)));
  CHECK(!split_clustered(16, 2));
  // The threshold kernel's block: wide while each row's block has an SM of its own.
  CHECK(threshold_threads(1, 132) == kThresholdThreadsWide);
  CHECK(threshold_threads(132, 132) == kThresholdThreadsWide);
  CHECK(threshold_threads(133, 132) == kThresholdThreads);
  CHECK(threshold_threads(1, 0) == kThresholdThreads);  // compute units unknown
  // Rows of small top_k take their tiles' own cuts while the lists stay well under the candidate cap, in
  // batches below kSplitLargeBatch.
  CHECK(split_local_top_k(1, 20, 19));   // V = 151936, 16-element threads
  CHECK(split_local_top_k(1, 50, 19));
  CHECK(!split_local_top_k(1, 50, 31));  // V = 248320: threshold
  CHECK(split_local_top_k(32, 50, 8));  // V = 248320, bf16 at B = 32 (64-element threads)
  CHECK(!split_local_top_k(kSplitLargeBatch, 20, 19));
  CHECK(split_local_top_k(kSplitLargeBatch - 1, 20, 19));
  CHECK(split_local_top_k(1, kListCap / 2, 1));
  CHECK(!split_local_top_k(1, kListCap / 2 + 1, 1));
  CHECK(!split_local_top_k(1, 1000, 19));
  // The threshold kernel runs unless top_k is one value for the batch that every tile's own cut serves.
  CHECK(!split_thresholds(1, false, 20, 19));
  CHECK(split_thresholds(1, true, 20, 19));
  CHECK(split_thresholds(1, false, 1000, 19));
  CHECK(split_thresholds(kSplitLargeBatch, false, 20, 19));
  CHECK(!split_thresholds(1, false, 0, 19));  // top_k off: no fast path
  // Every call's layout lies inside the workspace sized for its shape (headers for 16-item tiles, lists
  // for the largest layout).
  for (const int64_t b : {int64_t(1), kSplitPairsBatch, kSplitLargeBatch, int64_t(100)})
    for (const DType dt : {DType::bf16, DType::f16, DType::f32}) {
      std::vector<char> ws(split_workspace_bytes(b, 262144));
      for (const bool clusters : {false, true}) {
        const SplitWorkspace w = split_layout(ws.data(), b, 262144, dt, true, clusters);
        CHECK(w.items == split_items(b, 262144, dt, clusters));
        // The wide fp32 tiles' lists (V = 262144 needs 1024 rows of 2 blocks to take them).
        const SplitWorkspace wide = split_layout(ws.data(), b, 262144, dt, true, clusters, 1024);
        CHECK(wide.items == split_items(b, 262144, dt, clusters, 1024));
        CHECK(reinterpret_cast<const char*>(wide.list + b * wide.tiles * split_list_cap(wide.items)) <=
              ws.data() + ws.size());
        CHECK(split_layout(ws.data(), b, 262144, dt, false, clusters).items == kScalarSplitItems);
        CHECK(w.tiles <= split_tiles(262144));
        const char* end = reinterpret_cast<const char*>(w.list + b * w.tiles * split_list_cap(w.items));
        CHECK(end <= ws.data() + ws.size());
      }
    }
  SamplingParams p = valid_params();
  CHECK(sampling_workspace_bytes(p) == split_workspace_bytes(4, 1024));
  const size_t big = split_workspace_bytes(1024, 262144);
  CHECK(big >= size_t(1024) * (32 * (sizeof(SplitHeader) + kListCap * 8) + sizeof(SplitSync) + sizeof(uint32_t)));
  CHECK(big % 256 == 0);
  p.logits.rows = 0;
  CHECK(sampling_workspace_bytes(p) == 0);
  // Only the shape is read: a query before any buffer exists gives the same size.
  SamplingParams shape_only;
  shape_only.logits.rows = 4, shape_only.logits.cols = 1024;
  CHECK(sampling_workspace_bytes(shape_only) == split_workspace_bytes(4, 1024));
  shape_only.logits.cols = kSamplingMaxVocab + 1;
  CHECK(sampling_workspace_bytes(shape_only) == 0);
}
