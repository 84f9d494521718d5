// GEMV device tests: every row this device can run, every output element against the host reference, over the
// edges of the contract: M, K in {1, 7, 40, 64, 255, 1000, 4103, 5120, 17408}, N in 1..16, fp16/bf16, bias/no
// bias, padded strides, misaligned pointers; N > 8 shapes the mma row runs through its register-bounded instance;
// rejection writes nothing; graph replay gives the bits of eager runs.
// DCUKERN_TEST_QUICK=1 runs a smaller set (M, K <= 1031, fewer N) for compute-sanitizer runs.
#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "dcukern/gemv.hpp"
#include "gemv_check.hpp"

using namespace dcukern;
using dcukern::test::DeviceBuffer;

namespace {

using test::device_target;
using test::quick_mode;
using namespace test::gemv_check;

// Ids of the rows that can run on this device (ISA and build); `general`: without the tuned rows, which take
// only their one shape (dcukern-audit runs those) and so skip every problem here.
std::vector<const char*> runnable_rows(bool general = false) {
  std::vector<const char*> ids;
  for (const auto& row : GemvOp::rows())
    if (row_unavailable_reason(row, device_target(), GemvOp::compiled_in(row.kernel)).empty() &&
        !(general && row.tuned_for))
      ids.push_back(row.id);
  return ids;
}

std::vector<int> n_values(int64_t m, int64_t k) {
  if (quick_mode()) return {1, 2, 5, 8, 9, 16};
  if (m * k <= (int64_t(1) << 22)) {
    std::vector<int> all;
    for (int n = 1; n <= kGemvMaxN; ++n) all.push_back(n);
    return all;
  }
  return {1, 2, 3, 4, 7, 8, 9, 15, 16};
}

// Runs every runnable row (and automatic selection) on every N and bias choice of one problem; adds the rows
// that ran to *seen.
void check_problem(Problem& pr, Layout layout, int* runs, std::set<std::string>* seen = nullptr) {
  const auto rows = runnable_rows();
  const std::vector<int> ns = n_values(pr.m, pr.k);
  const Reference r = reference(pr, *std::max_element(ns.begin(), ns.end()));
  for (int n : ns) {
    for (bool with_bias : {false, true}) {
      std::vector<const char*> candidates = rows;
      candidates.push_back(nullptr);  // automatic selection
      for (const char* id : candidates) {
        const GemvParams p = pr.params(n, with_bias);
        const capabilities::GemvRow* row = nullptr;
        if (id && !check_gemv_row(p, device_target(), id, &row).ok()) continue;  // outside its contract
        // (std::string: doctest prints a bare const char* as a pointer)
        INFO(std::string(dtype_name(pr.dt)) << " M=" << pr.m << " K=" << pr.k << " N=" << n << " bias=" << with_bias
                                            << " " << std::string(layout_name(layout))
                                            << " row=" << std::string(id ? id : "auto"));
        pr.dy.fill_bytes(test::kPoisonByte);
        Explanation why;
        const Status s = gemv(p, nullptr, GemvOptions{id, id ? nullptr : &why});
        REQUIRE(s.ok());
        test::device_synchronize();
        if (!id && layout == Layout::misaligned) CHECK(std::string(why.chosen) == "gemv.generic");
        expect_matches(pr, n, with_bias, pr.dy.download(), r);
        ++*runs;
        if (seen && id) seen->insert(id);
      }
    }
  }
}

// 40 and 1000: multiples of 8 (the vectorised rows' K) that end in a part of a 32-element k-step.
std::vector<int64_t> sizes() {
  if (quick_mode()) return {1, 7, 40, 64, 255, 1000, 1031};
  return {1, 7, 40, 64, 255, 1000, 4103, 5120, 17408};
}
std::vector<int64_t> layout_m() {
  return quick_mode() ? std::vector<int64_t>{7, 255} : std::vector<int64_t>{7, 255, 4103};
}
std::vector<int64_t> layout_k() {
  return quick_mode() ? std::vector<int64_t>{7, 64, 1031} : std::vector<int64_t>{7, 64, 4103, 5120};
}

}  // namespace

TEST_CASE("every runnable gemv row matches the reference over the contract's edges") {
  std::mt19937_64 rng(20261129);
  int runs = 0;
  std::set<std::string> seen;
  for (DType dt : {DType::f16, DType::bf16})
    for (int64_t m : sizes())
      for (int64_t k : sizes()) {
        Problem pr(dt, m, k, Layout::dense, rng);
        check_problem(pr, Layout::dense, &runs, &seen);
      }
  MESSAGE("dense layout: " << runs << " kernel runs checked");
  CHECK(runs > 0);
  for (const char* id : runnable_rows(true)) {  // every general row this device can run took some call
    INFO(std::string(id));
    CHECK(seen.count(id) == 1);
  }
}

TEST_CASE("padded strides and misaligned pointers") {
  std::mt19937_64 rng(7);
  int runs = 0;
  for (DType dt : {DType::f16, DType::bf16})
    for (Layout layout : {Layout::padded, Layout::misaligned})
      for (int64_t m : layout_m())
        for (int64_t k : layout_k()) {
          Problem pr(dt, m, k, layout, rng);
          check_problem(pr, layout, &runs);
        }
  MESSAGE("padded / misaligned: " << runs << " kernel runs checked");
  CHECK(runs > 0);
}

#if DCUKERN_PLATFORM_CUDA
// The mma row's N > 8 launch takes its register-bounded instance where the unbounded one's blocks need a
// second round of the device and the bounded one's fit in one (gemv_detail::mma_wide_bounded): a row count
// 3.5 rounds of 16-row blocks per compute unit deep (qkv's 7168 on the H200), odd, is such a call there.
TEST_CASE("N > 8 calls that the mma row runs through its register-bounded instance") {
  const DeviceContext* ctx = nullptr;
  REQUIRE(current_device_context(&ctx).ok());
  const int64_t cus = ctx->facts.compute_units;
  int64_t m = 0;
  for (int64_t candidate : {16 * (7 * cus / 2) + 5, int64_t(7168) + 5, 16 * (3 * cus) + 21})
    if (!m && gemv_detail::mma_wide_bounded<DType::bf16>(candidate, *ctx) &&
        gemv_detail::mma_wide_bounded<DType::f16>(candidate, *ctx))
      m = candidate;
  if (!m) {
    MESSAGE("no row count takes the bounded instance on this device: nothing to check");
    return;
  }
  std::mt19937_64 rng(17);
  int runs = 0;
  for (DType dt : {DType::f16, DType::bf16})
    for (int64_t k : {int64_t(1000), int64_t(5120)}) {
      Problem pr(dt, m, k, Layout::dense, rng);
      check_problem(pr, Layout::dense, &runs);
    }
  MESSAGE("M = " << m << ": " << runs << " kernel runs checked");
  CHECK(runs > 0);
}
#endif

TEST_CASE("a rejected call writes nothing") {
  std::mt19937_64 rng(3);
  Problem pr(DType::bf16, 64, 64, Layout::dense, rng);
  std::vector<GemvParams> bad;
  GemvParams p = pr.params(4, false);
  p.x.rows = 17;  // N out of range
  bad.push_back(p);
  p = pr.params(4, false);
  p.w.dtype = DType::f16;  // dtype mismatch
  bad.push_back(p);
  p = pr.params(4, false);
  p.w.row_stride = 10;  // stride < K
  bad.push_back(p);
  p = pr.params(4, true);
  p.bias.size = 63;
  bad.push_back(p);
  for (const GemvParams& q : bad) {
    pr.dy.fill_bytes(test::kPoisonByte);
    const Status s = gemv(q, nullptr);
    INFO(s.to_string());
    CHECK(s.code() == StatusCode::invalid_argument);
    test::device_synchronize();
    const auto y = pr.dy.download();
    CHECK(std::all_of(y.begin(), y.end(), [](uint16_t v) { return v == 0xFFFF; }));
  }
  // A pinned row that cannot take the call: unsupported, nothing launched.
  pr.dy.fill_bytes(test::kPoisonByte);
  CHECK(gemv(pr.params(4, false), nullptr, GemvOptions{"gemv.rowwise"}).code() == StatusCode::unsupported);
  test::device_synchronize();
  const auto y = pr.dy.download();
  CHECK(std::all_of(y.begin(), y.end(), [](uint16_t v) { return v == 0xFFFF; }));
}

TEST_CASE("graph capture and replay give the bits of eager runs") {
  std::mt19937_64 rng(11);
  for (DType dt : {DType::f16, DType::bf16}) {
    Problem pr(dt, quick_mode() ? 1031 : 4103, quick_mode() ? 1032 : 5120, Layout::dense, rng);
    for (const char* id : runnable_rows()) {
      for (int n : {1, 5, 16}) {
        const GemvParams p = pr.params(n, true);
        const capabilities::GemvRow* row = nullptr;
        if (!check_gemv_row(p, device_target(), id, &row).ok()) continue;
        INFO(std::string(dtype_name(dt)) << " row=" << std::string(id) << " N=" << n);
        pr.dy.fill_bytes(test::kPoisonByte);
        REQUIRE(gemv(p, nullptr, GemvOptions{id}).ok());
        test::device_synchronize();
        const auto eager = pr.dy.download();

        test::CapturedGraph graph([&](stream_t stream) { return gemv(p, stream, GemvOptions{id}); });
        pr.dy.fill_bytes(test::kPoisonByte);
        test::device_synchronize();
        graph.replay(3);
        CHECK(pr.dy.download() == eager);
      }
    }
  }
}
