// GDN and conv1d validation: every invalid input gets a readable error naming the problem, and the row
// contracts reject what their kernels cannot do.
#include <doctest/doctest.h>

#include <string>

#include "dcukern/gdn/params.hpp"
#include "misaligned.hpp"

using namespace dcukern;

namespace {
constexpr int B = 2, T = 1, H = 2, HV = 4, K = 128, V = 128;
// Never read (misaligned.hpp).
uint16_t *const q = fake_view<uint16_t>(1), *const k = fake_view<uint16_t>(2), *const v = fake_view<uint16_t>(3),
               *const o = fake_view<uint16_t>(4), *const a_in = fake_view<uint16_t>(5),
               *const b_in = fake_view<uint16_t>(6);
float *const g_in = fake_view<float>(7), *const beta_in = fake_view<float>(8), *const A_log = fake_view<float>(9),
            *const dt_bias = fake_view<float>(10), *const state = fake_view<float>(11);
int32_t* const slots = fake_view<int32_t>(12);

GdnInput dense(const void* p, int heads, int dim, DType dt = DType::bf16) {
  return {p, dt, int64_t(T) * heads * dim, int64_t(heads) * dim, dim};
}
GdnParams valid_gdn() {
  GdnParams p;
  p.batch = B; p.tokens = T; p.num_k_heads = H; p.num_v_heads = HV; p.head_k_dim = K; p.head_v_dim = V;
  p.q = dense(q, H, K);
  p.k = dense(k, H, K);
  p.v = dense(v, HV, V);
  p.a = dense(a_in, HV, 1);
  p.b = dense(b_in, HV, 1);
  p.A_log = A_log;
  p.dt_bias = dt_bias;
  p.state = {state, DType::f32, GdnStateLayout::kv, 3, int64_t(HV) * K * V};
  p.slots = slots;
  p.o = {o, DType::bf16, int64_t(T) * HV * V, int64_t(HV) * V, V};
  return p;
}
void expect(const GdnParams& p, StatusCode code, const char* fragment) {
  GdnCall c;
  const Status s = validate_gdn(p, &c);
  INFO(s.to_string() << "  (expected: " << fragment << ")");
  CHECK(s.code() == code);
  CHECK(s.message().find(fragment) != std::string::npos);
}

uint16_t *const cx = fake_view<uint16_t>(13), *const cy = fake_view<uint16_t>(14), *const cw = fake_view<uint16_t>(15),
               *const cb = fake_view<uint16_t>(16), *const cstate = fake_view<uint16_t>(17);
int32_t* const cslots = fake_view<int32_t>(18);
Conv1dParams valid_conv() {
  Conv1dParams p;
  p.x = {cx, DType::bf16, 4, 64, 64};
  p.weight = {cw, DType::bf16, 64, 4, 4};
  p.bias = {cb, DType::bf16, 64};
  p.state = {cstate, DType::bf16, 5, 64 * 3};
  p.slots = cslots;
  p.y = {cy, DType::bf16, 4, 64, 64};
  return p;
}
void expect(const Conv1dParams& p, StatusCode code, const char* fragment) {
  Conv1dCall c;
  const Status s = validate_conv1d(p, &c);
  INFO(s.to_string() << "  (expected: " << fragment << ")");
  CHECK(s.code() == code);
  CHECK(s.message().find(fragment) != std::string::npos);
}
}  // namespace

TEST_CASE("gdn: a valid call passes and its facts are derived") {
  GdnCall c;
  GdnParams p = valid_gdn();
  REQUIRE(validate_gdn(p, &c).ok());
  CHECK(c.k == K);
  CHECK(c.v == V);
  CHECK(c.state_dtype == DType::f32);
  CHECK(c.layout == GdnStateLayout::kv);
  CHECK(c.state_align >= 16);
  // Precomputed gating instead of raw projections.
  p.a = p.b = GdnInput{};
  p.A_log = p.dt_bias = nullptr;
  p.g = dense(g_in, HV, 1, DType::f32);
  p.beta = dense(beta_in, HV, 1, DType::f32);
  CHECK(validate_gdn(p, &c).ok());
  // A packed projection [B, T, 2*H*K + HV*V] read through strides.
  p = valid_gdn();
  p.tokens = 1;
  const int64_t row = 2 * H * K + HV * V;
  alignas(256) static uint16_t packed[B * (2 * H * K + HV * V)];
  p.q = {packed, DType::bf16, row, row, K};
  p.k = {packed + H * K, DType::bf16, row, row, K};
  p.v = {packed + 2 * H * K, DType::bf16, row, row, V};
  CHECK(validate_gdn(p, &c).ok());
  // An odd slot stride lowers the state alignment.
  p = valid_gdn();
  p.state.slot_stride = int64_t(HV) * K * V + 1;
  REQUIRE(validate_gdn(p, &c).ok());
  CHECK(c.state_align == 4);
}

TEST_CASE("gdn: every invalid input gets a readable error") {
  using SC = StatusCode;
  GdnParams p;
  const char* names[] = {"q", "k", "v", "o", "state", "slots"};
  for (int i = 0; i < 6; ++i) {
    p = valid_gdn();
    if (i == 0) p.q.data = nullptr;
    if (i == 1) p.k.data = nullptr;
    if (i == 2) p.v.data = nullptr;
    if (i == 3) p.o.data = nullptr;
    if (i == 4) p.state.data = nullptr;
    if (i == 5) p.slots = nullptr;
    expect(p, SC::invalid_argument, (std::string("null pointer for ") + names[i]).c_str());
  }
  p = valid_gdn(); p.batch = int(kGdnMaxSequenceHeads / HV) + 1;
  expect(p, SC::invalid_argument, "batch x value heads");
  p = valid_gdn(); p.g = dense(g_in, HV, 1, DType::f32);
  expect(p, SC::invalid_argument, "gating given twice");
  p = valid_gdn(); p.A_log = nullptr;
  expect(p, SC::invalid_argument, "needs all of a, b, A_log and dt_bias");
  p = valid_gdn(); p.a = p.b = GdnInput{}; p.A_log = p.dt_bias = nullptr;
  expect(p, SC::invalid_argument, "gating missing");
  p = valid_gdn(); p.a = p.b = GdnInput{}; p.A_log = p.dt_bias = nullptr; p.g = dense(g_in, HV, 1, DType::f32);
  expect(p, SC::invalid_argument, "gating missing");

  p = valid_gdn(); p.batch = 0;
  expect(p, SC::invalid_argument, "batch = 0");
  p = valid_gdn(); p.tokens = 0;
  expect(p, SC::invalid_argument, "tokens = 0 out of range");
  p = valid_gdn(); p.tokens = kGdnMaxTokens + 1;
  expect(p, SC::invalid_argument, "out of range 1..64");
  p = valid_gdn(); p.num_v_heads = 5;
  expect(p, SC::invalid_argument, "positive multiple of key heads");
  p = valid_gdn(); p.num_v_heads = 1;
  expect(p, SC::invalid_argument, "positive multiple of key heads");
  p = valid_gdn(); p.num_k_heads = 0;
  expect(p, SC::invalid_argument, "positive multiple of key heads");
  p = valid_gdn(); p.head_k_dim = 512;
  expect(p, SC::invalid_argument, "K = 512");
  p = valid_gdn(); p.head_v_dim = 0;
  expect(p, SC::invalid_argument, "V = 0");

  p = valid_gdn(); p.q.dtype = p.k.dtype = p.v.dtype = p.o.dtype = DType::f32;
  expect(p, SC::unsupported, "q dtype f32");
  p = valid_gdn(); p.v.dtype = DType::f16;
  expect(p, SC::invalid_argument, "dtype mismatch");
  p = valid_gdn(); p.o.dtype = DType::f16;
  expect(p, SC::invalid_argument, "o f16");
  p = valid_gdn(); p.a.dtype = DType::f16;
  expect(p, SC::invalid_argument, "a and b must share a dtype");
  p = valid_gdn(); p.a.dtype = p.b.dtype = DType::f16;
  expect(p, SC::invalid_argument, "that of q or f32");
  p = valid_gdn(); p.a.dtype = p.b.dtype = DType::f32;
  GdnCall call;
  CHECK(validate_gdn(p, &call).ok());
  p = valid_gdn(); p.a = p.b = GdnInput{}; p.A_log = p.dt_bias = nullptr;
  p.g = dense(g_in, HV, 1, DType::bf16); p.beta = dense(beta_in, HV, 1, DType::f32);
  expect(p, SC::invalid_argument, "g and beta must be f32");
  p = valid_gdn(); p.state.dtype = DType::f16;
  expect(p, SC::unsupported, "state dtype f16");
  p = valid_gdn(); p.state.layout = static_cast<GdnStateLayout>(7);
  expect(p, SC::invalid_argument, "unknown state layout");
  p = valid_gdn(); p.state.num_slots = 0;
  expect(p, SC::invalid_argument, "state pool has 0 slots");
  p = valid_gdn(); p.state.slot_stride = int64_t(HV) * K * V - 1;
  expect(p, SC::invalid_argument, "slot stride");
  p = valid_gdn(); p.scale = INFINITY;
  expect(p, SC::invalid_argument, "scale is not finite");
  p = valid_gdn(); p.tokens = 2; p.o.token_stride = HV * V; p.o.batch_stride = 2 * HV * V;
  p.q.token_stride = p.k.token_stride = H * K; p.v.token_stride = HV * V;
  p.token_slots = slots; p.token_slots_stride = 1;
  expect(p, SC::invalid_argument, "token_slots row stride 1 below tokens = 2");

  p = valid_gdn(); p.q.head_stride = K - 1;
  expect(p, SC::invalid_argument, "q: head stride below the head size");
  p = valid_gdn(); p.k.batch_stride = -1;
  expect(p, SC::invalid_argument, "k: negative stride");
  p = valid_gdn(); p.v.head_stride = V / 2;
  expect(p, SC::invalid_argument, "v: head stride below");
  p = valid_gdn(); p.a.head_stride = 0;
  expect(p, SC::invalid_argument, "a: head stride below");
  p = valid_gdn(); p.o.head_stride = V - 1;
  expect(p, SC::invalid_argument, "o: head stride below");
  p = valid_gdn(); p.o.batch_stride = HV * V - 1;
  expect(p, SC::invalid_argument, "o: batch stride below");
  p = valid_gdn(); p.tokens = 2; p.o.token_stride = HV * V - 1; p.o.batch_stride = 4 * HV * V;
  p.q.token_stride = p.k.token_stride = H * K; p.v.token_stride = HV * V;
  expect(p, SC::invalid_argument, "o: token stride below");
  // One value head: its head stride may be anything, but sequences and tokens still must not overlap.
  p = valid_gdn(); p.num_k_heads = p.num_v_heads = 1; p.o.head_stride = 0; p.o.batch_stride = 0;
  expect(p, SC::invalid_argument, "o: batch stride below");
  p.o.batch_stride = V - 1;
  expect(p, SC::invalid_argument, "o: batch stride below");
  p.o.batch_stride = V;
  CHECK(validate_gdn(p, &call).ok());
  p.tokens = 2; p.o.token_stride = V / 2; p.o.batch_stride = 2 * V;
  expect(p, SC::invalid_argument, "o: token stride below");
  p.o.token_stride = V;
  CHECK(validate_gdn(p, &call).ok());
  // Pointers not aligned to their elements.
  p = valid_gdn(); p.q.data = moved_by_bytes(q, 1);
  expect(p, SC::invalid_argument, "q is not aligned to its element size");
  p = valid_gdn(); p.state.data = moved_by_bytes(state, 2);  // f32 state
  expect(p, SC::invalid_argument, "state is not aligned");
  p = valid_gdn(); p.A_log = moved_by_bytes(A_log, 1);
  expect(p, SC::invalid_argument, "A_log is not aligned");
  // A single sequence's (or token's) stride is never used: any value passes.
  p = valid_gdn(); p.batch = 1; p.o.batch_stride = 0;
  CHECK(validate_gdn(p, &call).ok());

  // Written views (o, the state pool) overlapping any other (valid_gdn(): o [2, 1, 4, 128] bf16, state 3 slots).
  constexpr int64_t kOut = int64_t(B) * T * HV * V, kPool = 3LL * HV * K * V;
  p = valid_gdn(); p.o.data = v; expect(p, SC::invalid_argument, "o overlaps v");
  p = valid_gdn(); p.o.data = q + B * T * H * K - 1; expect(p, SC::invalid_argument, "o overlaps q");
  p = valid_gdn(); p.o.data = q + B * T * H * K; CHECK(validate_gdn(p, &call).ok());
  p = valid_gdn(); p.o.data = reinterpret_cast<uint16_t*>(state + kPool) - 1;
  expect(p, SC::invalid_argument, "o overlaps state");
  p = valid_gdn(); p.slots = reinterpret_cast<int32_t*>(o + kOut) - 1;
  expect(p, SC::invalid_argument, "o overlaps slots");
  p = valid_gdn(); p.A_log = state + 5; expect(p, SC::invalid_argument, "state overlaps A_log");
  p = valid_gdn(); p.token_slots = reinterpret_cast<int32_t*>(state) + kPool - 1; p.token_slots_stride = 1;
  expect(p, SC::invalid_argument, "state overlaps token_slots");
  p = valid_gdn(); p.a = p.b = dense(b_in, HV, 1);  // inputs may share memory
  CHECK(validate_gdn(p, &call).ok());
}

TEST_CASE("gdn contracts reject what their kernels cannot do, with a reason") {
  GdnContract tiled{};
  tiled.layouts = 0b01;
  tiled.k_values = (1u << 6) | (1u << 7) | (1u << 8);
  tiled.v_multiple = 32;
  tiled.state_align_bytes = 16;
  const GdnCall ok{DType::bf16, DType::f32, GdnStateLayout::kv, 128, 128, 1, 256, 64};
  CHECK(tiled.check(ok) == nullptr);
  for (int kk : {64, 256}) {
    GdnCall c = ok; c.k = kk;
    CHECK(tiled.check(c) == nullptr);
  }
  for (int kk : {1, 32, 96, 100, 127, 129}) {
    GdnCall c = ok; c.k = kk;
    INFO(kk);
    CHECK(std::string(tiled.check(c)).find("head sizes") != std::string::npos);
  }
  GdnCall c = ok; c.layout = GdnStateLayout::vk;
  CHECK(std::string(tiled.check(c)).find("layout") != std::string::npos);
  c = ok; c.v = 80;
  CHECK(std::string(tiled.check(c)).find("multiple") != std::string::npos);
  c = ok; c.state_align = 8;
  CHECK(std::string(tiled.check(c)).find("aligned") != std::string::npos);
  tiled.state_dtypes = dtypes(DType::f32);
  c = ok; c.state_dtype = DType::bf16;
  CHECK(std::string(tiled.check(c)).find("state dtype") != std::string::npos);
  tiled.max_batch = 1;
  c = ok;
  CHECK(std::string(tiled.check(c)).find("largest B") != std::string::npos);
  c.batch = 1;
  CHECK(tiled.check(c) == nullptr);
  CHECK(GdnContract{}.check(GdnCall{DType::f16, DType::bf16, GdnStateLayout::vk, 7, 9, 3, 1, 512}) == nullptr);
}

TEST_CASE("conv1d: a valid call passes; every invalid input gets a readable error") {
  using SC = StatusCode;
  Conv1dCall call;
  REQUIRE(validate_conv1d(valid_conv(), &call).ok());
  CHECK(call.width == 4);
  CHECK(call.dim == 64);
  CHECK(call.contiguous_weight);
  CHECK(call.strides_aligned);
  CHECK(call.min_align >= 16);
  Conv1dParams p = valid_conv(); p.bias = {};
  CHECK(validate_conv1d(p, &call).ok());
  p = valid_conv(); p.state.dtype = DType::f32;
  CHECK(validate_conv1d(p, &call).ok());

  const char* names[] = {"x", "weight", "y", "state", "slots"};
  for (int i = 0; i < 5; ++i) {
    p = valid_conv();
    if (i == 0) p.x.data = nullptr;
    if (i == 1) p.weight.data = nullptr;
    if (i == 2) p.y.data = nullptr;
    if (i == 3) p.state.data = nullptr;
    if (i == 4) p.slots = nullptr;
    expect(p, SC::invalid_argument, (std::string("null pointer for ") + names[i]).c_str());
  }
  p = valid_conv(); p.x.dtype = p.weight.dtype = p.y.dtype = p.bias.dtype = DType::f32;
  expect(p, SC::unsupported, "dtype f32");
  p = valid_conv(); p.weight.dtype = DType::f16;
  expect(p, SC::invalid_argument, "dtype mismatch");
  p = valid_conv(); p.bias.dtype = DType::f16;
  expect(p, SC::invalid_argument, "bias f16");
  p = valid_conv(); p.state.dtype = DType::f16;
  expect(p, SC::invalid_argument, "state dtype f16 must be");
  p = valid_conv(); p.x.rows = 0; p.y.rows = 0;
  expect(p, SC::invalid_argument, "batch = 0");
  p = valid_conv(); p.x.rows = p.y.rows = (int64_t(1) << 32) + 4;  // (the kernels take the batch as an int)
  expect(p, SC::invalid_argument, "batch = 4294967300 out of range 1..16777216");
  p = valid_conv(); p.x.cols = kConv1dMaxDim + 1;
  expect(p, SC::invalid_argument, "dim = 16385 out of range");
  p = valid_conv(); p.weight.cols = 5; p.weight.row_stride = 5;
  expect(p, SC::invalid_argument, "width = 5 out of range 2..4");
  p = valid_conv(); p.weight.cols = 1;
  expect(p, SC::invalid_argument, "width = 1");
  p = valid_conv(); p.weight.rows = 63;
  expect(p, SC::invalid_argument, "weight has 63 rows");
  p = valid_conv(); p.bias.size = 63;
  expect(p, SC::invalid_argument, "bias has 63 elements");
  p = valid_conv(); p.y.cols = 63;
  expect(p, SC::invalid_argument, "y is [4, 63], expected [4, 64]");
  p = valid_conv(); p.x.row_stride = 63;
  expect(p, SC::invalid_argument, "row stride below row width");
  p = valid_conv(); p.weight.row_stride = 3;
  expect(p, SC::invalid_argument, "row stride below row width");
  p = valid_conv(); p.state.num_slots = 0;
  expect(p, SC::invalid_argument, "state pool has 0 slots");
  p = valid_conv(); p.state.slot_stride = 64 * 3 - 1;
  expect(p, SC::invalid_argument, "slot stride 191 below");
  p = valid_conv(); p.state.data = moved_by_bytes(cstate, 1);
  expect(p, SC::invalid_argument, "state is not aligned to its element size");
  p = valid_conv(); p.slots = moved_by_bytes(cslots, 2);
  expect(p, SC::invalid_argument, "slots is not aligned");
  // Written views (y, the state pool) overlapping any other (valid_conv(): x, y [4, 64] bf16, 5 state slots).
  p = valid_conv(); p.y.data = cx; CHECK(validate_conv1d(p, &call).ok());  // in place: the same view
  p.y.row_stride = 72; expect(p, SC::invalid_argument, "y overlaps x (in place: y and x must be the same view)");
  p = valid_conv(); p.y.data = cx + 64; expect(p, SC::invalid_argument, "y overlaps x");
  p = valid_conv(); p.y.data = cx + 4 * 64; CHECK(validate_conv1d(p, &call).ok());
  p = valid_conv(); p.y.data = cstate + 5 * 64 * 3 - 1; expect(p, SC::invalid_argument, "y overlaps state");
  p = valid_conv(); p.bias.data = cstate; expect(p, SC::invalid_argument, "state overlaps bias");
  p = valid_conv(); p.slots = reinterpret_cast<int32_t*>(cy) + 31; expect(p, SC::invalid_argument, "y overlaps slots");
}

TEST_CASE("conv1d contracts reject what the vector kernel cannot do") {
  Conv1dContract vec{};
  vec.dim_multiple = 8;
  vec.align_bytes = 16;
  vec.needs_contiguous = true;
  const Conv1dCall ok{DType::bf16, DType::bf16, 4, 8192, true, 16, true};
  CHECK(vec.check(ok) == nullptr);
  Conv1dCall c = ok; c.dim = 8190;
  CHECK(std::string(vec.check(c)).find("multiple") != std::string::npos);
  c = ok; c.min_align = 2;
  CHECK(std::string(vec.check(c)).find("aligned") != std::string::npos);
  c = ok; c.contiguous_weight = false;
  CHECK(std::string(vec.check(c)).find("contiguous") != std::string::npos);
  c = ok; c.strides_aligned = false;
  CHECK(vec.check(c) != nullptr);
  CHECK(Conv1dContract{}.check(Conv1dCall{DType::f16, DType::f32, 2, 7, false, 2, false}) == nullptr);
}
