// Paged-KV decode attention device tests: every attention row (forced by id) against the double host
// reference over head_dim {64, 96, 128, 256} x page size {1, 16, 64, 544} x GQA ratio {1, 2, 4, 5, 6, 8,
// 16}, both pool layouts; ragged contexts 0..32768 in one batch and a 256K context; dominant keys at page,
// chunk and context edges; every option on and off (scale, soft cap, window, ALiBi, sinks, LSE); fp8 e4m3
// KV; 1..8 query tokens; split and unsplit plans; fixed-chunk bits identical across batch compositions;
// pools over 2^31 elements; graph capture + replay; rejected calls write nothing. DCUKERN_TEST_QUICK=1 runs
// a smaller set (compute-sanitizer).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../host/attention_problem.hpp"
#include "common/attention_calls.hpp"  // the attention API, compiled in one unit
#include "dcukern/attention/table_check.hpp"
#include "support.hpp"

using namespace dcukern;
using dcukern::test::AttnConfig;
using dcukern::test::AttnHostProblem;
using dcukern::test::DeviceBuffer;
using dcukern::test::quick_mode;

namespace {

const char* const kRows[] = {"attention.row", "attention.split_kv", "attention.grouped", "attention.grouped_split",
                             "attention.mma", "attention.mma_split", "attention.mma_split.smem_pipeline"};

// Bitwise equality (NaN poison included).
template <class T>
bool same_bits(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0);
}

bool needs_workspace(const char* id) { return find_attention_row(id)->contract.needs_workspace; }

// Whether this build holds row `id`'s kernel (the simulated device: no mma rows).
bool built(const char* id) { return AttentionOp::compiled_in(find_attention_row(id)->kernel); }

// The rows this build holds whose contract takes call p, validated once, with the workspace run() gives the
// rows that need one (rows with a narrower contract skip the others; the rejection itself is tested below).
// Empty when validation rejects p.
std::vector<const char*> rows_covering(const AttentionParams& p) {
  std::vector<const char*> rows;
  AttentionCall call;
  if (!validate_attention(p, &call).ok()) return rows;
  call.has_workspace = true;
  for (const char* id : kRows)
    if (built(id) && find_attention_row(id)->contract.check(call) == nullptr) rows.push_back(id);
  return rows;
}

template <class T>
DeviceBuffer<T> upload(const std::vector<T>& h) {
  DeviceBuffer<T> d(h.size());
  if (!h.empty()) d.upload(h);
  return d;
}

struct DeviceProblem {
  const AttnHostProblem h;  // fixed once built, so its reference is computed once (reference())
  DeviceBuffer<uint16_t> q, o;
  DeviceBuffer<uint8_t> k, v;
  DeviceBuffer<int32_t> table, ctx;
  DeviceBuffer<float> lse, alibi, sinks;
  DeviceProblem(const AttnConfig& c, std::mt19937_64& rng)
      : h(c, rng), q(upload(h.q)), o(h.out_elems()), k(upload(h.k)), v(upload(h.v)), table(upload(h.table)),
        ctx(upload(h.ctx)), lse(h.rows()), alibi(upload(h.alibi)), sinks(upload(h.sinks)) {}
  AttentionParams params() const {
    return h.params(q.get(), o.get(), k.get(), v.get(), table.get(), ctx.get(), lse.get(), alibi.get(), sinks.get());
  }
  void poison() {
    o.fill_bytes(test::kPoisonByte);
    lse.fill_bytes(test::kPoisonByte);
  }
  // The double reference of the problem, computed at its first use: every row run on it checks against it.
  const ref::AttentionRef& reference() {
    if (!reference_) reference_ = ref::attention(h.host_params());
    return *reference_;
  }

 private:
  std::optional<ref::AttentionRef> reference_;
};

// Runs row `id` (forced) with its workspace on the default stream; synchronises.
Status run(DeviceProblem& pr, const char* id, const AttentionPlanOptions& plan = {},
           const AttentionParams* over = nullptr) {
  const ScopedForce force(id);
  const AttentionParams p = over ? *over : pr.params();
  const size_t bytes = needs_workspace(id) ? calls::attention_workspace_bytes(p, plan) : 0;
  DeviceBuffer<uint8_t> ws(bytes);
  AttentionOptions opt;
  opt.row = id;
  opt.plan = plan;
  const Status s = calls::attention(p, bytes ? ws.get() : nullptr, bytes, stream_t{}, opt);
  test::device_synchronize();
  return s;
}

double out_tolerance(DType t) { return t == DType::bf16 ? 1.6e-2 : 3e-3; }
// LSE: measured on an H100 (sm_90, every row, the suite's configurations but the needle case's full one) at
// most 4.2e-6 x (1 + |lse|), on the simulated device 6.3e-7 x (1 + |lse|) (0.0315 of this bound).
constexpr double kLseTolerance = 2e-5;

test::WorstFractions& worst_errors() {
  static test::WorstFractions w("attention");
  return w;
}

// Device output against the double reference. o: within tol x (|want| + the row's largest |want|), so the
// bound follows the row's own scale (a long context's output is an average near 0, where a bound of
// tol x (1 + |want|) let zeros pass); rows without keys must be zeros. LSE: within kLseTolerance x (1 + |lse|)
// (the kernels' fp32 sums are good to about 1e-6; dropping 1 % of a long context's keys moves it by 1e-2), and
// exactly -inf for rows without keys. The largest fractions of both bounds go to worst_errors().
void check_against_reference(DeviceProblem& pr, const std::string& what) {
  INFO(what);
  const ref::AttentionRef& r = pr.reference();
  const auto o = pr.o.download();
  const auto lse = pr.lse.download();
  const int D = pr.h.c.D;
  const double tol = out_tolerance(pr.h.c.qt);
  double worst_o = 0.0, worst_lse = 0.0;  // error / bound
  int bad = 0;
  for (size_t row = 0; row < pr.h.rows() && bad < 5; ++row) {
    double row_scale = 0.0;
    for (int d = 0; d < D; ++d) row_scale = std::max(row_scale, std::fabs(r.o[row * D + d]));
    for (int d = 0; d < D; ++d) {
      const double got = ref::to_float(pr.h.c.qt, o[row * D + d]), want = r.o[row * D + d];
      const double err = std::fabs(got - want), bound = tol * (std::fabs(want) + row_scale) + 1e-7;
      worst_o = std::max(worst_o, err / bound);
      if (!(err <= bound)) {
        ++bad;
        INFO("row " << row << " d " << d << " got " << got << " want " << want);
        CHECK(false);
        break;
      }
    }
    if (pr.h.c.lse) {
      if (std::isinf(r.lse[row])) {
        CHECK(std::isinf(lse[row]));
        CHECK(lse[row] < 0);
        continue;
      }
      const double err = std::fabs(lse[row] - r.lse[row]), bound = kLseTolerance * (1.0 + std::fabs(r.lse[row]));
      worst_lse = std::max(worst_lse, err / bound);
      if (!(err <= bound)) {
        ++bad;
        INFO("row " << row << " lse got " << lse[row] << " want " << r.lse[row]);
        CHECK(false);
      }
    }
  }
  worst_errors().note("o", worst_o, what);
  if (pr.h.c.lse) worst_errors().note("lse", worst_lse, what);
  CHECK(bad == 0);
}

std::string describe(const AttnConfig& c, const char* id) {
  std::string s = std::string(id) + " D=" + std::to_string(c.D) + " ps=" + std::to_string(c.page_size) +
                  " Hq/Hkv=" + std::to_string(c.hq) + "/" + std::to_string(c.hkv) + " T=" + std::to_string(c.T) +
                  " q=" + dtype_name(c.qt) + " kv=" + dtype_name(c.kvt) + (c.head_major ? " HND" : " NHD") + " ctx=";
  for (int x : c.ctx) s += std::to_string(x) + ",";
  if (c.scale > 0) s += " scale";
  if (c.soft_cap > 0) s += " cap";
  if (c.window_left >= 0) s += " window=" + std::to_string(c.window_left);
  if (c.alibi) s += " alibi";
  if (c.sinks) s += " sinks";
  if (!c.lse) s += " no-lse";
  return s;
}

// Runs every row that covers problem pr and checks each against the reference; returns how many ran and adds
// their ids to *ran_rows.
int run_and_check(DeviceProblem& pr, const AttentionPlanOptions& plan = {}, std::set<std::string>* ran_rows = nullptr) {
  const AttnConfig& c = pr.h.c;
  int ran = 0;
  for (const char* id : rows_covering(pr.params())) {
    ++ran;
    if (ran_rows) ran_rows->insert(id);
    pr.poison();
    const std::string what = describe(c, id);
    INFO(what);
    const Status s = run(pr, id, plan);
    INFO(s.to_string());
    REQUIRE(s.ok());
    check_against_reference(pr, what);
  }
  // Every configuration here is a valid call, and attention.row takes every valid call: a call that no row
  // ran would check nothing (validation rejecting it, say), so it fails.
  if (ran == 0) {
    AttentionCall call;
    const Status valid = validate_attention(pr.params(), &call);
    FAIL_CHECK(describe(c, "any row") << ": no row ran; validation: " << valid.to_string());
  }
  return ran;
}
// The same over a new random problem of config c.
int run_and_check(const AttnConfig& c, std::mt19937_64& rng, const AttentionPlanOptions& plan = {},
                  std::set<std::string>* ran_rows = nullptr) {
  DeviceProblem pr(c, rng);
  return run_and_check(pr, plan, ran_rows);
}

}  // namespace

TEST_CASE("attention: head_dim x page size x GQA ratio, both layouts, ragged short contexts") {
  std::mt19937_64 rng(11);
  const std::vector<int> dims = quick_mode() ? std::vector<int>{64, 128} : std::vector<int>{64, 96, 128, 256};
  const std::vector<int> pages = quick_mode() ? std::vector<int>{1, 544} : std::vector<int>{1, 16, 64, 544};
  const std::vector<int> groups = quick_mode() ? std::vector<int>{1, 5} : std::vector<int>{1, 2, 4, 5, 6, 8, 16};
  std::set<std::string> ran_rows;
  int n = 0;
  for (int D : dims)
    for (int ps : pages)
      for (int g : groups) {
        AttnConfig c;
        c.D = D, c.page_size = ps, c.hkv = 2, c.hq = 2 * g;
        c.head_major = (n & 1) != 0;
        c.qt = (n % 3 == 0) ? DType::f16 : DType::bf16;
        c.kvt = (n % 4 == 1) ? DType::f16 : DType::bf16;
        c.ctx = {0, 1, 17, 300, 1100};
        ++n;
        run_and_check(c, rng, {}, &ran_rows);
      }
  for (const char* id : kRows) {  // every row this build holds ran on some configuration
    INFO(std::string(id));
    CHECK((!built(id) || ran_rows.count(id) == 1));
  }
}

TEST_CASE("attention: head_dim not a multiple of 8, on the rows that take any D <= 256") {
  std::mt19937_64 rng(15);
  int n = 0;
  for (int D : {1, 36, 100, 250})
    for (DType kvt : {DType::bf16, DType::f16, DType::fp8_e4m3}) {
      AttnConfig c;
      c.D = D, c.page_size = 7, c.hkv = 2, c.hq = 6, c.kvt = kvt;
      c.head_major = (n & 1) != 0;
      c.qt = (n % 3 == 0) ? DType::f16 : DType::bf16;
      if (kvt == DType::fp8_e4m3) c.k_scale = 0.05f, c.v_scale = 0.1f;
      c.ctx = {0, 1, 300, 1100};
      ++n;
      CHECK(run_and_check(c, rng) >= 2);  // attention.row and attention.split_kv at least
    }
}

TEST_CASE("attention: ragged contexts 0..32768 in one batch, page sizes 16 and 544") {
  std::mt19937_64 rng(12);
  for (int ps : {16, 544})
    for (DType kvt : {DType::bf16, DType::f16}) {
      AttnConfig c;
      c.D = 128, c.hq = 8, c.hkv = 2, c.page_size = ps, c.kvt = kvt, c.qt = kvt;
      c.ctx = quick_mode() ? std::vector<int32_t>{0, 1, 511, 4097} : std::vector<int32_t>{0, 1, 511, 4097, 32768, 1023};
      run_and_check(c, rng);
    }
}

TEST_CASE("attention: a 256K-token context next to a short one") {
  if (quick_mode()) return;
  std::mt19937_64 rng(21);
  AttnConfig c;
  c.D = 128, c.hq = 8, c.hkv = 2, c.page_size = 544, c.kvt = DType::bf16, c.qt = DType::bf16;
  c.ctx = {262144, 5};
  run_and_check(c, rng);
}

// Needles (AttnConfig::needle_at): one dominant key a sequence at the positions where kernels cut the context
// (the first and last key, both sides of a page boundary and of a fixed chunk's, the middle, one at random),
// in sequences of equal length with a partial last page at both page sizes; automatic plans and a fixed
// chunk size that is no multiple of either page size. First, that the reference's o is the needle's value
// row, so the check below is the sharp one intended.
TEST_CASE("attention: a dominant key at page, chunk and context edges; every row finds it") {
  std::mt19937_64 rng(24);
  const int len = quick_mode() ? 1201 : 32771;
  AttentionPlanOptions fixed;
  fixed.fixed_chunk_size = 1000;
  for (int ps : {16, 544})
    for (DType kvt : {DType::bf16, DType::fp8_e4m3}) {
      AttnConfig c;
      c.D = 128, c.hq = 4, c.hkv = 1, c.page_size = ps, c.kvt = kvt, c.qt = DType::bf16;
      if (kvt == DType::fp8_e4m3) c.k_scale = 0.05f, c.v_scale = 0.1f;
      std::uniform_int_distribution<int> any(0, len - 1);
      const int chunk = int(fixed.fixed_chunk_size);
      c.needle_at = {0, ps - 1, ps, chunk - 1, chunk, len / 2, len - 2, len - 1, any(rng)};
      c.ctx.assign(c.needle_at.size(), len);
      DeviceProblem pr(c, rng);
      const AttnHostProblem& h = pr.h;
      const ref::AttentionRef& r = pr.reference();
      const double v_scale = kvt == DType::fp8_e4m3 ? c.v_scale : 1.0;
      double worst = 0.0;
      for (size_t row = 0; row < h.rows(); ++row) {
        const int b = int(row / size_t(c.T * c.hq)), head = int(row % size_t(c.hq)) / (c.hq / c.hkv);
        for (int d = 0; d < c.D; ++d) {
          const double v = v_scale * ref::kv_element(c.kvt, h.v.data(), h.pool_index(b, c.needle_at[b], head, d));
          worst = std::max(worst, std::fabs(r.o[row * c.D + d] - v));
        }
      }
      INFO("page size " << ps << " kv " << dtype_name(kvt));
      CHECK(worst < 1e-6);
      run_and_check(pr);
      run_and_check(pr, fixed);
    }
}

TEST_CASE("attention: every option on and off, alone and together") {
  std::mt19937_64 rng(13);
  for (int opt = 0; opt < 8; ++opt) {
    AttnConfig c;
    c.D = 128, c.hq = 8, c.hkv = 2, c.page_size = 16;
    c.ctx = {0, 3, 129, 700};
    const bool all = opt == 7;
    c.qt = opt % 2 ? DType::f16 : DType::bf16;  // (KV bf16: q f16 with bf16 KV too)
    if (opt == 1 || all) c.scale = 0.3f;
    if (opt == 2) c.soft_cap = 1.f;  // below the logits' spread: the cap changes them
    if (all) c.soft_cap = 30.f;
    if (opt == 3 || all) c.window_left = 100;
    if (opt == 4 || all) c.alibi = true;
    if (opt == 5 || all) c.sinks = true;
    if (opt == 6) c.lse = false;
    run_and_check(c, rng);
  }
}

TEST_CASE("attention: fp8 e4m3 KV with per-tensor scales against a reference dequantising the same way") {
  std::mt19937_64 rng(14);
  // head_dim 72: rows 8-byte aligned only, so the pipelined kernel copies 8 bytes at a time (16 elsewhere)
  for (int D : {64, 72, 128, 256})
    for (bool hnd : {false, true}) {
      AttnConfig c;
      c.D = D, c.hq = 12, c.hkv = 2, c.page_size = hnd ? 544 : 16, c.head_major = hnd;
      c.kvt = DType::fp8_e4m3, c.k_scale = 0.05f, c.v_scale = 0.1f;
      c.qt = hnd ? DType::f16 : DType::bf16;
      c.ctx = {0, 2, 1000, quick_mode() ? 2000 : 9000};
      c.sinks = hnd;
      run_and_check(c, rng);
    }
  // Every option at once, 3 query tokens a sequence, at head_dim 128.
  {
    AttnConfig c;
    c.D = 128, c.T = 3, c.hq = 8, c.hkv = 2, c.page_size = 16;
    c.kvt = DType::fp8_e4m3, c.k_scale = 0.05f, c.v_scale = 0.1f;
    c.ctx = {0, 2, 129, quick_mode() ? 1500 : 5000};
    c.scale = 0.3f, c.soft_cap = 2.f, c.window_left = 1000, c.alibi = true, c.sinks = true;
    run_and_check(c, rng);
  }
  // A batch whose unsplit blocks fill two per compute unit: the pipelined row takes its shallow ring there
  // (attention_shallow_ring), at head_dim 72 (8-byte copies) and 128.
  const dcukern::DeviceContext* dc = nullptr;
  REQUIRE(dcukern::current_device_context(&dc).ok());
  for (int D : {72, 128}) {
    AttnConfig c;
    c.D = D, c.hq = 32, c.hkv = 8, c.page_size = 16;  // GQA 4: one 8-row query tile per KV head
    c.kvt = DType::fp8_e4m3, c.k_scale = 0.05f, c.v_scale = 0.1f;
    const int batch = (2 * dc->facts.compute_units + c.hkv - 1) / c.hkv;
    std::uniform_int_distribution<int> len(0, quick_mode() ? 80 : 600);
    for (int b = 0; b < batch; ++b) c.ctx.push_back(len(rng));
    CHECK(dcukern::attention_shallow_ring(dcukern::AttentionKernel::mma_split_pipeline, true, D, int64_t(batch) * c.hkv,
                                          dc->facts.compute_units));
    run_and_check(c, rng);
  }
  // Head_dim 256: the pipelined row takes its shallow ring (the head split over two warps) where a block has
  // at most kShallowWideMaxKeys keys, the 6-stage ring above (attention_wide_shallow_ring); with a fixed chunk
  // size the chunk size alone decides. (The automatic plans of the head_dim loop above cut short chunks.)
  const char* pipeline = "attention.mma_split.smem_pipeline";
  for (const int64_t chunk : {dcukern::kShallowWideMaxKeys / 2, 4 * dcukern::kShallowWideMaxKeys}) {
    if (!built(pipeline)) break;
    AttnConfig c;
    c.D = 256, c.hq = 24, c.hkv = 4, c.page_size = 16;
    c.kvt = DType::fp8_e4m3, c.k_scale = 0.05f, c.v_scale = 0.1f;
    c.ctx = {3000, 0, 700, quick_mode() ? 1500 : 6000};
    DeviceProblem pr(c, rng);
    const std::string what = describe(c, pipeline) + " fixed chunk " + std::to_string(chunk);
    INFO(what);
    AttentionPlanOptions plan;
    plan.fixed_chunk_size = chunk;
    {
      const ScopedForce force(pipeline);
      AttentionOptions opt;
      opt.row = pipeline, opt.plan = plan;
      dcukern::AttentionCallPlan cp;
      REQUIRE(calls::attention_call_plan(pr.params(), true, &cp, opt).ok());
      CHECK(cp.split);
      CHECK(cp.shallow_ring == (chunk <= dcukern::kShallowWideMaxKeys));
    }
    pr.poison();
    const Status s = run(pr, pipeline, plan);
    INFO(s.to_string());
    REQUIRE(s.ok());
    check_against_reference(pr, what);
  }
}

TEST_CASE("attention: 1..8 query tokens per sequence, causal within them") {
  std::mt19937_64 rng(15);
  for (int T : {1, 2, 5, 8}) {
    AttnConfig c;
    c.T = T, c.D = 96, c.hq = 6, c.hkv = 1, c.page_size = 544;
    c.ctx = {0, 2, 8, 9, 1500};  // ctx < T: the earliest rows have no key
    c.window_left = T == 5 ? 3 : -1;
    c.alibi = T == 8;
    run_and_check(c, rng);
  }
}

TEST_CASE("attention: KV pools over 2^31 elements (pages past element 2^31, 64-bit offsets)") {
  if (quick_mode()) return;  // two 2 GiB pools: not under the sanitizer
  std::mt19937_64 rng(20);
  AttnConfig c;
  c.D = 128, c.hq = 8, c.hkv = 2, c.page_size = 16, c.kvt = DType::fp8_e4m3, c.k_scale = 0.05f, c.v_scale = 0.1f;
  c.ctx = {300, 1000};
  DeviceProblem pr(c, rng);
  // The problem's pages moved past element 2^31 of pools that large (fp8: one byte per element).
  const int64_t page_elems = int64_t(c.page_size) * c.hkv * c.D;
  const int64_t shift = ((int64_t(1) << 31) + page_elems - 1) / page_elems + 1;
  const size_t pool_bytes = size_t(shift + pr.h.num_pages) * size_t(page_elems);
  DeviceBuffer<uint8_t> k(pool_bytes), v(pool_bytes);
  k.upload_at(size_t(shift * page_elems), pr.h.k);
  v.upload_at(size_t(shift * page_elems), pr.h.v);
  std::vector<int32_t> table = pr.h.table;
  for (int32_t& e : table)
    if (e != 0x7fffffff) e += static_cast<int32_t>(shift);
  DeviceBuffer<int32_t> big_table(upload(table));
  AttentionParams p = pr.params();
  p.kv.k = k.get(), p.kv.v = v.get(), p.kv.num_pages = shift + pr.h.num_pages;
  p.block_table = big_table.get();
  for (const char* id : rows_covering(p)) {
    pr.poison();
    const std::string what = describe(c, id) + " pool of " + std::to_string(pool_bytes) + " elements";
    INFO(what);
    const Status s = run(pr, id, {}, &p);
    INFO(s.to_string());
    REQUIRE(s.ok());
    check_against_reference(pr, what);
  }
}

// Every split row over `c` with each of `plans`: the reference, and the unsplit row's output within twice
// the output tolerance.
static void check_split_plans(const AttnConfig& c, const std::vector<AttentionPlanOptions>& plans,
                              std::mt19937_64& rng) {
  DeviceProblem pr(c, rng);
  pr.poison();
  REQUIRE(run(pr, "attention.row").ok());
  check_against_reference(pr, "unsplit");
  const auto unsplit = pr.o.download();
  for (const char* id :
       {"attention.split_kv", "attention.grouped_split", "attention.mma_split", "attention.mma_split.smem_pipeline"})
    for (size_t i = 0; i < plans.size() && built(id); ++i) {
      if (quick_mode() && plans[i].fixed_chunk_size == 1) continue;
      INFO(std::string(id) << " D " << c.D << " plan " << i << " fixed " << plans[i].fixed_chunk_size);
      pr.poison();
      REQUIRE(run(pr, id, plans[i]).ok());
      check_against_reference(pr, std::string(id) + " split plan " + std::to_string(i));
      const auto split = pr.o.download();
      int far = 0;
      for (size_t e = 0; e < split.size(); ++e)
        far += std::fabs(ref::to_float(c.qt, split[e]) - ref::to_float(c.qt, unsplit[e])) > 2 * out_tolerance(c.qt);
      CHECK(far == 0);
    }
}

TEST_CASE("attention: split plans (automatic, forced, fixed chunks) agree with the reference and with unsplit") {
  std::mt19937_64 rng(16);
  AttnConfig c;
  c.D = 128, c.hq = 16, c.hkv = 2, c.page_size = 64, c.sinks = true, c.alibi = true;
  c.ctx = {0, 1, 63, 64, 65, 2000, quick_mode() ? 3000 : 20000};
  std::vector<AttentionPlanOptions> plans(5);
  plans[1].force_split = true;
  plans[2].fixed_chunk_size = 1;
  plans[3].fixed_chunk_size = 64;
  plans[4].fixed_chunk_size = 1000;
  check_split_plans(c, plans, rng);
  // Without ALiBi (whose slopes leave keys far back with almost no weight: a chunk of them read wrong
  // would hardly move o), so that every chunk of the long context carries its share of the mass.
  AttnConfig flat = c;
  flat.alibi = false, flat.sinks = false;
  flat.ctx = {1, 65, quick_mode() ? 3000 : 20000};
  std::vector<AttentionPlanOptions> flat_plans(3);
  flat_plans[1].force_split = true;
  flat_plans[2].fixed_chunk_size = 1000;  // chunks that end mid-page (64-key pages)
  check_split_plans(flat, flat_plans, rng);
  // head_dim 256 (the pipelined row's head split over two warps) with chunks of 1008 keys, whole 16-key
  // groups but not 64-key ones (kAttnFineChunkGranule: its automatic plans at one block a CU).
  AttnConfig wide;
  wide.D = 256, wide.hq = 24, wide.hkv = 4, wide.page_size = 16;
  wide.ctx = {0, 1, 1009, quick_mode() ? 2100 : 9000};
  std::vector<AttentionPlanOptions> wide_plans(2);
  wide_plans[1].fixed_chunk_size = 1008;
  check_split_plans(wide, wide_plans, rng);
  // 4 query tokens a sequence (causal) with chunks of 1 and 2 keys: a sequence's last chunks hold keys that
  // only its later tokens see, so a chunk is empty for some of the sequence's rows and not for others.
  AttnConfig multi;
  multi.D = 64, multi.T = 4, multi.hq = 8, multi.hkv = 2, multi.page_size = 16, multi.qt = DType::f16;
  multi.ctx = {0, 3, 5, 66, 700};
  std::vector<AttentionPlanOptions> multi_plans(3);
  multi_plans[1].fixed_chunk_size = 1;
  multi_plans[2].fixed_chunk_size = 2;
  check_split_plans(multi, multi_plans, rng);
}

// One sequence alone, then the same sequence (its q, its pages' contents) at batch index `where` among
// `batch` others (the first of them 30000 positions long), each run with `plan` on every row that covers
// it: the sequence's o and LSE must keep their bits.
static void check_batch_invariance(const AttnConfig& alone, int alone_ctx, const AttentionPlanOptions& plan,
                                   std::mt19937_64& rng) {
  AttnConfig one = alone;
  one.ctx = {alone_ctx};
  DeviceProblem a(one, rng);
  const dcukern::DeviceContext* dc = nullptr;
  REQUIRE(dcukern::current_device_context(&dc).ok());
  const int large = dc->facts.compute_units / one.hq + 2;
  const std::pair<int, int> placements[] = {{4, 0}, {4, 3}, {large, large - 1}};  // (batch, index)
  for (const char* id : rows_covering(a.params())) {
    INFO(describe(one, id) << " fixed chunk " << plan.fixed_chunk_size);
    a.poison();
    REQUIRE(run(a, id, plan).ok());
    const auto o_alone = a.o.download();
    const auto lse_alone = a.lse.download();
    for (const auto& placement : placements) {
      const int batch = placement.first, where = placement.second;  // (not a structured binding: INFO captures)
      AttnConfig many = one;
      many.ctx.assign(batch, 1);  // the others: 30000, 0, 77, then 1 each, in order around `where`
      const int32_t others[] = {30000, 0, 77};
      for (int i = 0, j = 0; i < batch && j < 3; ++i)
        if (i != where) many.ctx[i] = others[j++];
      many.ctx[where] = alone_ctx;
      AttnHostProblem h(many, rng);
      const int64_t page_bytes = int64_t(one.page_size) * one.hkv * one.D * dtype_bytes(one.kvt);
      const size_t qrow = size_t(one.hq) * one.D;
      std::memcpy(&h.q[where * qrow], a.h.q.data(), qrow * 2);
      for (int i = 0; i < (alone_ctx + one.page_size - 1) / one.page_size; ++i) {
        const int32_t src = a.h.table[i], dst = h.table[size_t(where) * h.max_pages + i];
        std::memcpy(&h.k[dst * page_bytes], &a.h.k[src * page_bytes], page_bytes);
        std::memcpy(&h.v[dst * page_bytes], &a.h.v[src * page_bytes], page_bytes);
      }
      h.sinks = a.h.sinks;
      DeviceBuffer<uint16_t> q(upload(h.q)), o(h.out_elems());
      DeviceBuffer<uint8_t> k(upload(h.k)), v(upload(h.v));
      DeviceBuffer<int32_t> table(upload(h.table)), ctx(upload(h.ctx));
      DeviceBuffer<float> lse(h.rows()), sinks(upload(h.sinks));
      const AttentionParams p =
          h.params(q.get(), o.get(), k.get(), v.get(), table.get(), ctx.get(), lse.get(), nullptr, sinks.get());
      DeviceProblem dummy(one, rng);
      REQUIRE(run(dummy, id, plan, &p).ok());
      const auto o_many = o.download();
      const auto lse_many = lse.download();
      INFO("at batch index " << where << " of " << batch);
      CHECK(std::memcmp(&o_many[where * qrow], o_alone.data(), qrow * 2) == 0);
      CHECK(std::memcmp(&lse_many[size_t(where) * one.hq], lse_alone.data(), one.hq * 4) == 0);
    }
  }
}

TEST_CASE("attention: with a fixed chunk size a sequence's bits do not depend on the batch around it") {
  std::mt19937_64 rng(17);
  // The merge kernels that run (attention_sliced_merge): alone, 10 chunks of 512, the per-row one; in
  // batches of 4 (59 chunks, fewer query rows than compute units) the sliced one; in the batch with more
  // query rows than compute units the per-row one again.
  AttnConfig bf16;
  bf16.D = 128, bf16.hq = 8, bf16.hkv = 2, bf16.page_size = 16, bf16.sinks = true;
  AttentionPlanOptions plan;
  plan.fixed_chunk_size = 512;
  check_batch_invariance(bf16, 5000, plan, rng);
  // fp8 at head_dim 256, where the pipelined row's ring depth depends on the keys a block: a sequence of 200
  // positions alone has fewer than kShallowWideMaxKeys, the batches' longest more; with a fixed chunk size
  // of 300 the chunk size alone decides (the 6-stage ring) and the bits stay.
  AttnConfig fp8;
  fp8.D = 256, fp8.hq = 12, fp8.hkv = 2, fp8.page_size = 16, fp8.sinks = true;
  fp8.kvt = DType::fp8_e4m3, fp8.k_scale = 0.05f, fp8.v_scale = 0.1f;
  plan.fixed_chunk_size = dcukern::kShallowWideMaxKeys + 44;
  check_batch_invariance(fp8, 200, plan, rng);
}

TEST_CASE("attention: graph capture and replay give the bits of eager runs") {
  std::mt19937_64 rng(18);
  AttnConfig c;
  c.D = 128, c.hq = 8, c.hkv = 2, c.page_size = 544, c.sinks = true;
  c.ctx = {0, 100, 3000};
  DeviceProblem pr(c, rng);
  for (const char* id : kRows) {
    if (!built(id)) continue;
    INFO(std::string(id));
    const ScopedForce force(id);
    const AttentionParams p = pr.params();
    const size_t bytes = needs_workspace(id) ? calls::attention_workspace_bytes(p) : 0;
    DeviceBuffer<uint8_t> ws(bytes);
    AttentionOptions opt;
    opt.row = id;
    pr.poison();
    REQUIRE(calls::attention(p, bytes ? ws.get() : nullptr, bytes, stream_t{}, opt).ok());
    test::device_synchronize();
    const auto o_eager = pr.o.download();
    const auto lse_eager = pr.lse.download();

    test::CapturedGraph graph(
        [&](stream_t stream) { return calls::attention(p, bytes ? ws.get() : nullptr, bytes, stream, opt); });
    pr.poison();
    test::device_synchronize();
    graph.replay(3);
    CHECK(same_bits(pr.o.download(), o_eager));
    CHECK(same_bits(pr.lse.download(), lse_eager));
  }
}

TEST_CASE("attention: the device table check reports the host check's first bad entry") {
  std::mt19937_64 rng(21);
  AttnConfig c;
  c.page_size = 16;
  c.ctx = {40, 0, 17, 300, 5};  // table rows of 19 entries; those past a sequence's pages hold 0x7fffffff
  DeviceProblem pr(c, rng);
  const AttnHostProblem& h = pr.h;
  DeviceBuffer<uint64_t> result(1);
  // The device verdict for these tables, checked against validate_attention_tables on the same data.
  auto verdict = [&](const std::vector<int32_t>& table, const std::vector<int32_t>& lens) {
    DeviceBuffer<int32_t> t(upload(table)), l(upload(lens));
    AttentionParams p = pr.params();
    p.block_table = t.get(), p.context_lens = l.get();
    REQUIRE(attention_check_tables(p, result.get(), stream_t{}).ok());
    test::device_synchronize();
    const Status device = attention_table_verdict(p, result.download()[0]);
    const Status host = validate_attention_tables(p, table.data(), lens.data());
    INFO(device.to_string() << " / host: " << host.to_string());
    CHECK(device.ok() == host.ok());
    return device;
  };
  auto names = [](const Status& s, const char* entry) { return s.message().find(entry) != std::string::npos; };
  CHECK(verdict(h.table, h.ctx).ok());  // (the unused entries are never read as pages)
  const int64_t capacity = int64_t(h.max_pages) * c.page_size;
  std::vector<int32_t> lens = h.ctx, table = h.table;
  lens[3] = static_cast<int32_t>(capacity + 1);
  CHECK(names(verdict(table, lens), "context_lens[3]"));
  lens[1] = -1;
  table[size_t(2) * h.max_pages + 1] = static_cast<int32_t>(h.num_pages);  // sequence 2's second page
  CHECK(names(verdict(table, lens), "context_lens[1]"));
  lens = h.ctx;
  CHECK(names(verdict(table, lens), "block_table[2, 1]"));
  table[size_t(3) * h.max_pages + 18] = -5;                               // sequence 3's last page
  table[2] = static_cast<int32_t>(h.num_pages);                           // sequence 0's third page
  CHECK(names(verdict(table, lens), "block_table[0, 2]"));
  // Graph capture and replay: the result word is reset on every replay.
  DeviceBuffer<int32_t> t(upload(table)), l(upload(lens));
  AttentionParams p = pr.params();
  p.block_table = t.get(), p.context_lens = l.get();
  test::CapturedGraph graph([&](stream_t stream) { return attention_check_tables(p, result.get(), stream); });
  result.fill_bytes(0);
  graph.replay(2);
  CHECK(names(attention_table_verdict(p, result.download()[0]), "block_table[0, 2]"));
  // No result word: an error, nothing launched.
  CHECK(attention_check_tables(p, nullptr, stream_t{}).code() == StatusCode::invalid_argument);
}

TEST_CASE("attention: a rejected call writes nothing; an unforced call takes the first row that fits") {
  Overrides::instance().clear();  // environment overrides (DCUKERN_FORCE / DCUKERN_DISABLE) would change the pick
  std::mt19937_64 rng(19);
  AttnConfig c;
  c.ctx = {10, 20};
  DeviceProblem pr(c, rng);
  pr.poison();
  const auto o0 = pr.o.download();
  const auto lse0 = pr.lse.download();
  for (const char* id : {"attention.split_kv", "attention.grouped_split", "attention.mma_split"}) {
    if (!built(id)) continue;
    INFO(std::string(id));
    const ScopedForce force(id);
    AttentionParams bad = pr.params();
    bad.head_dim = 300;
    CHECK(calls::attention(bad, nullptr, 0, stream_t{}, AttentionOptions{id}).code() == StatusCode::unsupported);
    // A workspace one byte short.
    const size_t bytes = calls::attention_workspace_bytes(pr.params());
    REQUIRE(bytes > 0);
    DeviceBuffer<uint8_t> ws(bytes);
    CHECK(calls::attention(pr.params(), ws.get(), bytes - 1, stream_t{}, AttentionOptions{id}).code() ==
          StatusCode::invalid_argument);
    // No workspace at all.
    CHECK(!calls::attention(pr.params(), nullptr, 0, stream_t{}, AttentionOptions{id}).ok());
    // A workspace of the size the plan needs, over o.
    CHECK(calls::attention(pr.params(), pr.o.get(), bytes, stream_t{}, AttentionOptions{id}).code() ==
          StatusCode::invalid_argument);
  }
  {
    // lse inside o (any row).
    AttentionParams overlapping = pr.params();
    overlapping.lse = reinterpret_cast<float*>(pr.o.get()) + 2;
    CHECK(calls::attention(overlapping, nullptr, 0, stream_t{}).code() == StatusCode::invalid_argument);
  }
  {
    // The grouped rows' contract: KV pools on 8-element boundaries (here one element off).
    const ScopedForce force("attention.grouped");
    AttentionParams odd = pr.params();
    odd.kv.k = static_cast<const uint8_t*>(odd.kv.k) + dtype_bytes(odd.kv.dtype);
    CHECK(calls::attention(odd, nullptr, 0, stream_t{}, AttentionOptions{"attention.grouped"}).code() ==
          StatusCode::unsupported);
  }
  test::device_synchronize();
  CHECK(same_bits(pr.o.download(), o0));
  CHECK(same_bits(pr.lse.download(), lse0));
  // Unforced, no workspace: the first row in table order whose ISA and contract hold runs (the tensor-core
  // row where the device has mma.sync, else the grouped row) and matches the reference.
  Explanation why;
  AttentionOptions opt;
  opt.explain = &why;
  CHECK(calls::attention(pr.params(), nullptr, 0, stream_t{}, opt).ok());
  test::device_synchronize();
  const bool mma = has_feature(test::device_target(), Feature::nv_mma_f16) && built("attention.mma");
  CHECK(std::string(why.chosen ? why.chosen : "") == (mma ? "attention.mma" : "attention.grouped"));
  check_against_reference(pr, "unforced");
}
