#include <doctest/doctest.h>

#include <set>
#include <string>

#include "dcukern/gemv/select.hpp"
#include "dcukern/registry/resolve.hpp"

using namespace dcukern;

namespace {
alignas(256) uint16_t buf_x[16 * 4096], buf_w[64 * 4096], buf_y[16 * 64], buf_b[64];

GemvParams params(DType dt, int n, int64_t m, int64_t k, bool bias = false) {
  GemvParams p;
  p.x = {buf_x, dt, n, k, k};
  p.w = {buf_w, dt, m, k, k};
  p.y = {buf_y, dt, n, m, m};
  if (bias) p.bias = {buf_b, dt, m};
  return p;
}
const TargetInfo& target(const char* name) { return *resolve_target(name).info; }
std::string chosen(const GemvParams& p, const char* t, Explanation* why = nullptr) {
  const capabilities::GemvRow* row = nullptr;
  Status s = select_gemv(p, target(t), &row, why);
  REQUIRE(s.ok());
  return row->id;
}
struct OverridesReset {
  ~OverridesReset() { Overrides::instance().clear(); }
};
}  // namespace

TEST_CASE("gemv rows agree with the kernels they launch and with the target table") {
  std::set<std::string> ids;
  bool has_generic = false;
  for (const auto& row : GemvOp::rows()) {
    INFO(row.id);
    CHECK(ids.insert(row.id).second);  // unique ids
    // The row needs at least the instructions its kernel's code uses.
    CHECK(has_all(row.isa_needs, gemv_kernel_isa(row.kernel)));
    // Every needed feature is confirmed somewhere: no row is dead everywhere.
    bool enabled_somewhere = false;
    for (const auto& t : capabilities::kTargets) enabled_somewhere |= has_all(t.features, row.isa_needs);
    CHECK(enabled_somewhere);
    if (row.kernel == GemvKernel::generic) {
      has_generic = true;
      CHECK(row.isa_needs == 0);
      CHECK(row.tuned_for == nullptr);
    }
    CHECK(row.semantics.graph_safe);
    CHECK_FALSE(row.semantics.needs_workspace);
    CHECK(std::string(row.evidence).size() > 0);
  }
  CHECK(has_generic);
  for (const auto& row : GemvOp::rows()) {  // every fallback names a row (or says none)
    INFO(row.id);
    CHECK((ids.count(row.fallback) || std::string(row.fallback).rfind("none", 0) == 0));
    if (row.tuned_for) CHECK(capabilities::find_target(row.tuned_for) != nullptr);
  }
}

TEST_CASE("no row is opened by a target name alone or by an unverified feature") {
  for (const auto& t : capabilities::kTargets) {
    for (const auto& row : GemvOp::rows()) {
      INFO(t.name << " / " << row.id);
      const bool enabled = row_unavailable_reason(row, t, true).empty();
      const bool expected =
          has_all(t.features, row.isa_needs) && (!row.tuned_for || std::string(row.tuned_for) == t.name);
      CHECK(enabled == expected);
    }
  }
}

TEST_CASE("selection follows ISA features and contracts") {
  // gfx906: fdot2 rows yes, dot2c rows no.
  CHECK(chosen(params(DType::f16, 1, 64, 4096), "gfx906") == "gemv.rowwise.fdot2");
  CHECK(chosen(params(DType::f16, 4, 64, 4096), "gfx906:sramecc+:xnack-") == "gemv.splitk.fdot2");
  // gfx90a: dot2c rows.
  CHECK(chosen(params(DType::f16, 1, 64, 4096), "gfx90a") == "gemv.rowwise.dot2c");
  CHECK(chosen(params(DType::f16, 16, 64, 4096), "gfx90a") == "gemv.splitk.dot2c");
  // bf16 takes the portable rows on AMD.
  CHECK(chosen(params(DType::bf16, 1, 64, 4096), "gfx90a") == "gemv.rowwise");
  CHECK(chosen(params(DType::bf16, 8, 64, 4096), "gfx906") == "gemv.splitk");
  // Hygon: only rows that need no target instruction.
  for (const char* t : {"gfx926", "gfx928", "gfx936", "gfx938", "gfx939"}) {
    INFO(t);
    CHECK(chosen(params(DType::f16, 1, 64, 4096), t) == "gemv.rowwise");
    CHECK(chosen(params(DType::f16, 5, 64, 4096), t) == "gemv.splitk");
  }
  // NVIDIA: tensor-core row.
  CHECK(chosen(params(DType::bf16, 16, 64, 4096), "sm_90") == "gemv.mma");
  CHECK(chosen(params(DType::bf16, 16, 64, 4096), "sm_100") == "gemv.splitk");  // unlisted: no features
  // K not a multiple of 8: only the generic row.
  CHECK(chosen(params(DType::f16, 1, 64, 4095), "gfx90a") == "gemv.generic");
  CHECK(chosen(params(DType::f16, 3, 7, 7), "sm_90") == "gemv.generic");
}

TEST_CASE("a misaligned but valid call falls back to the generic row") {
  GemvParams p = params(DType::f16, 2, 64, 1024);
  p.x.data = buf_x + 1;  // 2-byte aligned
  Explanation why;
  CHECK(chosen(p, "gfx90a", &why) == "gemv.generic");
  bool saw_alignment = false;
  for (const auto& r : why.rejected) saw_alignment |= r.reason.find("aligned") != std::string::npos;
  CHECK(saw_alignment);
}

TEST_CASE("explain names every rejected row with its reason") {
  Explanation why;
  CHECK(chosen(params(DType::f16, 1, 64, 4096), "gfx906", &why) == "gemv.rowwise.fdot2");
  REQUIRE(why.chosen != nullptr);
  bool saw_dot2c = false;
  for (const auto& r : why.rejected) {
    if (std::string(r.row_id) == "gemv.rowwise.dot2c") {
      saw_dot2c = true;
      CHECK(r.reason.find("dot2c_f32_f16") != std::string::npos);
      CHECK(r.reason.find("gfx906") != std::string::npos);
    }
  }
  CHECK(saw_dot2c);
  // Selection stops at the first general row that accepts the call: only rows before it (and rows tuned
  // for other targets) are listed.
  int general_rejections = 0;
  for (const auto& r : why.rejected) general_rejections += r.reason.rfind("tuned for ", 0) != 0;
  CHECK(general_rejections == 1);
  Explanation sm90;
  CHECK(chosen(params(DType::bf16, 4, 64, 4096), "sm_90", &sm90) == "gemv.mma");
  bool saw_rowwise_n = false;
  for (const auto& r : sm90.rejected)
    saw_rowwise_n |= std::string(r.row_id) == "gemv.rowwise" && r.reason.find("N outside") != std::string::npos;
  CHECK(saw_rowwise_n);
  CHECK(why.to_string().find("chose gemv.rowwise.fdot2") != std::string::npos);
  // An unverified feature is named as such.
  Explanation hygon;
  chosen(params(DType::f16, 1, 64, 4096), "gfx936", &hygon);
  bool saw_unverified = false;
  for (const auto& r : hygon.rejected) saw_unverified |= r.reason.find("unverified on gfx936") != std::string::npos;
  CHECK(saw_unverified);
}

TEST_CASE("a feature the running code lacks is named as the code's, not the device's") {
  const TargetInfo& table = *capabilities::find_target("sm_90");
  const capabilities::GemvRow* mma = find_gemv_row("gemv.mma");
  REQUIRE(mma != nullptr);
  CHECK(row_unavailable_reason(*mma, table, true).empty());
  // What DeviceContext selects for on sm_90 when the code comes from PTX below compute_80.
  const TargetInfo t = for_code_lacking(table, feature_bit(Feature::nv_mma_f16));
  CHECK_FALSE(has_feature(t, Feature::nv_mma_f16));
  CHECK(row_unavailable_reason(*mma, t, true) ==
        "needs nv_mma_f16, which this program's device code for sm_90 lacks (built for an older target)");
}

TEST_CASE("overrides disable and force rows, and forcing never bypasses a check") {
  OverridesReset reset;
  Overrides::instance().disable("gemv.rowwise.fdot2");
  CHECK(chosen(params(DType::f16, 1, 64, 4096), "gfx906") == "gemv.rowwise");
  Overrides::instance().disable("gemv.rowwise");
  CHECK(chosen(params(DType::f16, 1, 64, 4096), "gfx906") == "gemv.splitk.fdot2");
  Overrides::instance().clear();
  Overrides::instance().force("gemv.generic");
  CHECK(chosen(params(DType::f16, 1, 64, 4096), "gfx906") == "gemv.generic");
  Overrides::instance().clear();
  Overrides::instance().force("gemv.rowwise.dot2c");  // gfx906 lacks dot2c: forcing cannot open it
  CHECK(chosen(params(DType::f16, 1, 64, 4096), "gfx906") == "gemv.rowwise.fdot2");
  Overrides::instance().clear();
  Overrides::instance().force("gemv.rowwise");  // contract N = 1 only
  CHECK(chosen(params(DType::f16, 2, 64, 4096), "gfx906") == "gemv.splitk.fdot2");
  Overrides::instance().clear();
  Overrides::instance().disable("gemv.generic");  // the last resort: a call only it takes has no row left
  GemvParams misaligned = params(DType::f16, 2, 64, 1024);
  misaligned.x.data = buf_x + 1;
  const capabilities::GemvRow* row = nullptr;
  const Status s = select_gemv(misaligned, target("gfx90a"), &row, nullptr);
  CHECK(s.code() == StatusCode::unsupported);
  CHECK(s.message().find("no row accepts this call") != std::string::npos);
  CHECK(chosen(params(DType::f16, 2, 64, 1024), "gfx90a") != "gemv.generic");  // aligned calls still have rows
}

TEST_CASE("overrides are read from the environment") {
  OverridesReset reset;
  setenv("DCUKERN_DISABLE", "gemv.mma, gemv.splitk", 1);
  setenv("DCUKERN_FORCE", "gemv.generic", 1);
  Overrides::instance().load_environment();
  CHECK(Overrides::instance().is_disabled("gemv.mma"));
  CHECK(Overrides::instance().is_disabled("gemv.splitk"));
  CHECK_FALSE(Overrides::instance().is_disabled("gemv.rowwise"));
  CHECK(Overrides::instance().is_forced("gemv.generic"));
  {  // Forces are counted: a scope that forces the same row leaves the environment's force in place.
    const ScopedForce nested("gemv.generic");
    CHECK(Overrides::instance().is_forced("gemv.generic"));
  }
  CHECK(Overrides::instance().is_forced("gemv.generic"));
  Overrides::instance().unforce("gemv.generic");
  CHECK_FALSE(Overrides::instance().is_forced("gemv.generic"));
  unsetenv("DCUKERN_DISABLE");
  unsetenv("DCUKERN_FORCE");
  Overrides::instance().clear();
  CHECK(chosen(params(DType::bf16, 8, 64, 4096), "sm_90") == "gemv.mma");
}

TEST_CASE("a pinned row is checked like any other") {
  const capabilities::GemvRow* row = nullptr;
  CHECK(check_gemv_row(params(DType::f16, 1, 64, 4096), target("gfx90a"), "gemv.rowwise", &row).ok());
  Status s = check_gemv_row(params(DType::f16, 1, 64, 4096), target("gfx906"), "gemv.rowwise.dot2c", &row);
  CHECK(s.code() == StatusCode::unsupported);
  CHECK(s.message().find("dot2c") != std::string::npos);
  CHECK(check_gemv_row(params(DType::f16, 2, 64, 4096), target("gfx906"), "gemv.rowwise", &row).code() ==
        StatusCode::unsupported);
  CHECK(check_gemv_row(params(DType::f16, 2, 64, 4096), target("gfx906"), "gemv.nope", &row).code() ==
        StatusCode::invalid_argument);
}

TEST_CASE("hit counters count selections") {
  const auto before = HitCounters<GemvOp>::hits(GemvOp::kRowCount - 1);  // generic is last
  for (int i = 0; i < 3; ++i) chosen(params(DType::f16, 1, 64, 4095), "gfx906");
  CHECK(HitCounters<GemvOp>::hits(GemvOp::kRowCount - 1) == before + 3);
}

namespace {
// A two-row op: one row without device evidence, one with.
struct TwoRowOp {
  using Row = CapabilityRow<GemvContract, GemvKernel>;
  static constexpr std::size_t kRowCount = 2;
  static const Row (&rows())[2] {
    static const Row r[2] = {
        {"test.unproven", "no evidence", 0, nullptr, GemvContract{dtypes(DType::f16)}, {}, nullptr, "test.proven",
         GemvKernel::generic, "x"},
        {"test.proven", "evidence", 0, nullptr, GemvContract{dtypes(DType::f16)}, {}, "a test", "none",
         GemvKernel::generic, "x"}};
    return r;
  }
  static constexpr bool compiled_in(GemvKernel) { return true; }
};
}  // namespace

TEST_CASE("a row without device evidence is never selected unless forced") {
  OverridesReset reset;
  const GemvCall call{DType::f16, 1, 64, 64, false, 64, 64, 64, 16};
  Explanation why;
  const auto* row = select_row<TwoRowOp>(target("sm_90"), call, &why);
  REQUIRE(row != nullptr);
  CHECK(std::string(row->id) == "test.proven");
  REQUIRE(why.rejected.size() == 1);
  CHECK(why.rejected[0].reason.find("no device evidence") != std::string::npos);
  Overrides::instance().force("test.unproven");
  CHECK(std::string(select_row<TwoRowOp>(target("sm_90"), call, nullptr)->id) == "test.unproven");
}
