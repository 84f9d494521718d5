// GDN / conv1d rows: table consistency, selection by layout, K, V, alignment and dtype on every target
// (no row needs a target instruction, so AMD, Hygon and NVIDIA choose alike), overrides and explain.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "dcukern/gdn/select.hpp"
#include "dcukern/registry/resolve.hpp"

using namespace dcukern;

namespace {
alignas(256) uint16_t q[4 * 2 * 256], k[4 * 2 * 256], v[4 * 6 * 256], o[4 * 6 * 256], gate_in[4 * 6];
alignas(256) float A_log[6], dt_bias[6];
alignas(256) float state[2 * 6 * 256 * 256 + 8];
int32_t slots[4] = {0, 1, -1, 0};

GdnParams params(GdnStateLayout layout, int K, int V, DType sdt = DType::f32) {
  GdnParams p;
  p.batch = 2; p.tokens = 1; p.num_k_heads = 2; p.num_v_heads = 6; p.head_k_dim = K; p.head_v_dim = V;
  p.q = {q, DType::bf16, 2 * K, 2 * K, K};
  p.k = {k, DType::bf16, 2 * K, 2 * K, K};
  p.v = {v, DType::bf16, 6 * V, 6 * V, V};
  p.a = {gate_in, DType::bf16, 6, 6, 1};
  p.b = {gate_in, DType::bf16, 6, 6, 1};
  p.A_log = A_log;
  p.dt_bias = dt_bias;
  p.state = {state, sdt, layout, 2, int64_t(6) * K * V};
  p.slots = slots;
  p.o = {o, DType::bf16, 6 * V, 6 * V, V};
  return p;
}
const TargetInfo& target(const char* name) { return *resolve_target(name).info; }
std::string chosen(const GdnParams& p, const char* t, Explanation* why = nullptr) {
  const capabilities::GdnRow* row = nullptr;
  const Status s = select_gdn(p, target(t), &row, why);
  REQUIRE(s.ok());
  return row->id;
}

alignas(256) uint16_t cx[4 * 8200], cy[4 * 8200], cw[8200 * 4], cb[8200], cstate[3 * 8200 * 4];
Conv1dParams conv(int64_t dim, int width) {
  Conv1dParams p;
  p.x = {cx, DType::bf16, 4, dim, dim};
  p.weight = {cw, DType::bf16, dim, width, width};
  p.bias = {cb, DType::bf16, dim};
  p.state = {cstate, DType::bf16, 3, dim * (width - 1)};
  p.slots = slots;
  p.y = {cy, DType::bf16, 4, dim, dim};
  return p;
}
std::string chosen(const Conv1dParams& p, const char* t) {
  const capabilities::Conv1dRow* row = nullptr;
  REQUIRE(select_conv1d(p, target(t), &row).ok());
  return row->id;
}
struct OverridesReset {
  ~OverridesReset() { Overrides::instance().clear(); }
};
const char* const kTargetsToTry[] = {"gfx906", "gfx90a", "gfx1030", "gfx1100", "gfx926", "gfx936", "sm_90", "sm_100"};

template <class Op, class IsaOf>
void check_table(IsaOf isa_of) {
  std::set<std::string> ids;
  int generic = 0;
  for (const auto& row : Op::rows()) {
    INFO(row.id);
    CHECK(ids.insert(row.id).second);
    CHECK(has_all(row.isa_needs, isa_of(row.kernel)));
    CHECK(row.isa_needs == 0);  // portable code only: opened on every target
    CHECK(row.tuned_for == nullptr);
    CHECK(row.semantics.graph_safe);
    CHECK_FALSE(row.semantics.needs_workspace);
    CHECK(row.semantics.in_place);
    CHECK((!row.evidence || std::string(row.evidence).size() > 0));  // nullptr: experimental, forced only
    CHECK(std::string(row.kernel_symbol).size() > 0);
    if (std::string(row.fallback).rfind("none", 0) == 0) ++generic;
  }
  CHECK(generic == 1);
  for (const auto& row : Op::rows()) {
    INFO(row.id);
    CHECK((ids.count(row.fallback) || std::string(row.fallback).rfind("none", 0) == 0));
  }
  // The last row is the generic one and accepts every valid call.
  CHECK(std::string(Op::rows()[Op::kRowCount - 1].fallback).rfind("none", 0) == 0);
}
}  // namespace

TEST_CASE("gdn and conv1d rows agree with their kernels and are portable") {
  check_table<GdnOp>(gdn_kernel_isa);
  check_table<Conv1dOp>(conv1d_kernel_isa);
  for (const auto& t : capabilities::kTargets)
    for (const auto& row : GdnOp::rows()) CHECK(row_unavailable_reason(row, t, true).empty());
}

TEST_CASE("gdn selection follows layout, K, V and alignment, the same on every target") {
  for (const char* t : kTargetsToTry) {
    INFO(t);
    for (int K : {64, 128, 256}) {
      CHECK(chosen(params(GdnStateLayout::kv, K, 128), t) == "gdn.tiled.kv");
      CHECK(chosen(params(GdnStateLayout::vk, K, 128), t) == "gdn.tiled.vk");
      CHECK(chosen(params(GdnStateLayout::kv, K, 64, DType::bf16), t) == "gdn.tiled.kv");
      CHECK(chosen(params(GdnStateLayout::vk, K, 256, DType::bf16), t) == "gdn.tiled.vk");
    }
    GdnParams one = params(GdnStateLayout::kv, 128, 128);
    one.batch = 1;  // B = 1: the 16-column rows
    CHECK(chosen(one, t) == "gdn.tiled.kv.c16");
    one.state.layout = GdnStateLayout::vk;
    CHECK(chosen(one, t) == "gdn.tiled.vk.c16");
    one.head_v_dim = 40;  // V not a multiple of 16
    one.v.head_stride = one.o.head_stride = 40;
    CHECK(chosen(one, t) == "gdn.generic");
    CHECK(chosen(params(GdnStateLayout::kv, 96, 128), t) == "gdn.generic");   // K not a tile size
    CHECK(chosen(params(GdnStateLayout::vk, 128, 80), t) == "gdn.generic");   // V not a multiple of 32
    GdnParams p = params(GdnStateLayout::kv, 128, 128);
    p.state.data = state + 1;  // 4-byte aligned pool
    CHECK(chosen(p, t) == "gdn.generic");
    p = params(GdnStateLayout::vk, 128, 128);
    p.state.slot_stride += 2;  // slot stride of 8 bytes' alignment
    CHECK(chosen(p, t) == "gdn.generic");
  }
}

TEST_CASE("gdn explain names every rejected row with its reason; pinning a row checks it") {
  Explanation why;
  CHECK(chosen(params(GdnStateLayout::vk, 96, 128), "gfx936", &why) == "gdn.generic");
  REQUIRE(why.rejected.size() == 4);
  CHECK(std::string(why.rejected[0].row_id) == "gdn.tiled.kv.c16");
  CHECK(why.rejected[0].reason.find("layout") != std::string::npos);
  CHECK(std::string(why.rejected[1].row_id) == "gdn.tiled.vk.c16");
  CHECK(why.rejected[1].reason.find("head sizes") != std::string::npos);
  CHECK(std::string(why.rejected[2].row_id) == "gdn.tiled.kv");
  CHECK(why.rejected[2].reason.find("layout") != std::string::npos);
  CHECK(std::string(why.rejected[3].row_id) == "gdn.tiled.vk");
  CHECK(why.rejected[3].reason.find("head sizes") != std::string::npos);
  CHECK(why.to_string().find("chose gdn.generic") != std::string::npos);

  const capabilities::GdnRow* row = nullptr;
  CHECK(check_gdn_row(params(GdnStateLayout::kv, 128, 128), target("gfx906"), "gdn.generic", &row).ok());
  CHECK(row == find_gdn_row("gdn.generic"));
  Status s = check_gdn_row(params(GdnStateLayout::kv, 128, 128), target("gfx906"), "gdn.tiled.vk", &row);
  CHECK(s.code() == StatusCode::unsupported);
  CHECK(s.message().find("cannot run this call: state layout") != std::string::npos);
  s = check_gdn_row(params(GdnStateLayout::kv, 128, 128), target("gfx906"), "gdn.nope", &row);
  CHECK(s.code() == StatusCode::invalid_argument);
  CHECK(s.message().find("no row named 'gdn.nope'") != std::string::npos);
  GdnParams bad = params(GdnStateLayout::kv, 128, 128);
  bad.batch = 0;
  CHECK(check_gdn_row(bad, target("sm_90"), "gdn.generic", &row).code() == StatusCode::invalid_argument);
  CHECK(select_gdn(bad, target("sm_90"), &row).code() == StatusCode::invalid_argument);
}

TEST_CASE("gdn overrides disable and force rows; forcing never bypasses a contract") {
  OverridesReset reset;
  Overrides::instance().disable("gdn.tiled.kv");
  CHECK(chosen(params(GdnStateLayout::kv, 128, 128), "sm_90") == "gdn.generic");
  Overrides::instance().clear();
  Overrides::instance().force("gdn.generic");
  CHECK(chosen(params(GdnStateLayout::kv, 128, 128), "sm_90") == "gdn.generic");
  Overrides::instance().clear();
  Overrides::instance().force("gdn.tiled.vk");  // layout kv: the contract still rejects it
  CHECK(chosen(params(GdnStateLayout::kv, 128, 128), "sm_90") == "gdn.tiled.kv");
  Overrides::instance().clear();
  Overrides::instance().disable("gdn.generic");
  const capabilities::GdnRow* row = nullptr;
  CHECK(select_gdn(params(GdnStateLayout::kv, 96, 128), target("sm_90"), &row).code() == StatusCode::unsupported);
}

TEST_CASE("conv1d selection: the vector rows where their contracts hold, else generic") {
  for (const char* t : kTargetsToTry) {
    INFO(t);
    CHECK(chosen(conv(8192, 4), t) == "conv1d.lanes");
    CHECK(chosen(conv(8192, 2), t) == "conv1d.lanes");
    CHECK(chosen(conv(8200, 4), t) == "conv1d.vec8");  // dim not a multiple of 128
    CHECK(chosen(conv(8190, 4), t) == "conv1d.generic");
    Conv1dParams p = conv(64, 3);
    p.x.data = cx + 1;
    CHECK(chosen(p, t) == "conv1d.generic");
    p = conv(64, 3);
    p.weight.row_stride = 4;
    CHECK(chosen(p, t) == "conv1d.generic");
    p = conv(64, 3);
    p.state.dtype = DType::f32;
    CHECK(chosen(p, t) == "conv1d.vec8.staged");  // the staged row takes f32 states only
  }
  const capabilities::Conv1dRow* row = nullptr;
  CHECK(check_conv1d_row(conv(8190, 4), target("sm_90"), "conv1d.vec8", &row).code() == StatusCode::unsupported);
  CHECK(check_conv1d_row(conv(8190, 4), target("sm_90"), "conv1d.generic", &row).ok());
}

TEST_CASE("conv1d.vec8.staged: f32 states under conv1d.vec8's contract; disabled, conv1d.vec8 takes them") {
  OverridesReset reset;
  const capabilities::Conv1dRow* row = nullptr;
  Conv1dParams f32 = conv(8200, 4);  // not a multiple of 128: outside conv1d.lanes
  f32.state.dtype = DType::f32;
  for (const char* t : kTargetsToTry) {
    INFO(t);
    CHECK(chosen(f32, t) == "conv1d.vec8.staged");
    CHECK(chosen(conv(8200, 4), t) == "conv1d.vec8");
  }
  Conv1dParams lanes_f32 = conv(8192, 4);
  lanes_f32.state.dtype = DType::f32;
  CHECK(chosen(lanes_f32, "sm_90") == "conv1d.lanes");
  CHECK(check_conv1d_row(conv(8200, 4), target("sm_90"), "conv1d.vec8.staged", &row).code() == StatusCode::unsupported);
  CHECK(check_conv1d_row(f32, target("sm_90"), "conv1d.vec8.staged", &row).ok());
  Conv1dParams odd = conv(8190, 4);
  odd.state.dtype = DType::f32;
  CHECK(chosen(odd, "sm_90") == "conv1d.generic");
  Overrides::instance().disable("conv1d.vec8.staged");
  CHECK(chosen(f32, "sm_90") == "conv1d.vec8");
}
