// The GDN host reference against hand-computed values and against itself: T tokens equal T single
// steps, grouped heads read their key head, padding leaves the pool alone and outputs zeros, the two
// state layouts give the same numbers, and the conv1d reference shifts its state.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "dcukern/ref/gdn.hpp"

using namespace dcukern;

namespace {
struct Case {
  int B = 2, T = 1, H = 1, HV = 2, K = 4, V = 3;
  GdnStateLayout layout = GdnStateLayout::kv;
  std::vector<uint16_t> q, k, v;
  std::vector<float> g, beta;
  std::vector<int32_t> slots;
  std::vector<double> pool;
  int64_t slot_stride() const { return int64_t(HV) * K * V; }

  Case(int t, int h, int hv, GdnStateLayout l, uint64_t seed) : T(t), H(h), HV(hv), layout(l) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> d(-1, 1);
    auto halfs = [&](size_t n) {
      std::vector<uint16_t> x(n);
      for (auto& e : x) e = ref::float_to_bf16(d(rng));
      return x;
    };
    q = halfs(size_t(B) * T * H * K);
    k = halfs(size_t(B) * T * H * K);
    v = halfs(size_t(B) * T * HV * V);
    for (int i = 0; i < B * T * HV; ++i) {
      g.push_back(-0.5f * (d(rng) + 1.f));
      beta.push_back(0.5f * (d(rng) + 1.f));
    }
    slots = {2, 0};
    pool.resize(3 * slot_stride());
    for (auto& e : pool) e = d(rng);
  }
  GdnParams params(int token0 = 0, int tokens = -1) const {
    GdnParams p;
    p.batch = B; p.tokens = tokens < 0 ? T : tokens;
    p.num_k_heads = H; p.num_v_heads = HV; p.head_k_dim = K; p.head_v_dim = V;
    p.q = {q.data() + token0 * H * K, DType::bf16, int64_t(T) * H * K, int64_t(H) * K, K};
    p.k = {k.data() + token0 * H * K, DType::bf16, int64_t(T) * H * K, int64_t(H) * K, K};
    p.v = {v.data() + token0 * HV * V, DType::bf16, int64_t(T) * HV * V, int64_t(HV) * V, V};
    p.g = {g.data() + token0 * HV, DType::f32, int64_t(T) * HV, HV, 1};
    p.beta = {beta.data() + token0 * HV, DType::f32, int64_t(T) * HV, HV, 1};
    p.scale = 0.75f;
    p.state = {reinterpret_cast<void*>(1), DType::f32, layout, 3, slot_stride()};
    p.slots = slots.data();
    return p;
  }
};
}  // namespace

TEST_CASE("reference: one step by hand (K = 2, V = 1)") {
  const uint16_t q[2] = {ref::float_to_bf16(1.f), ref::float_to_bf16(2.f)};
  const uint16_t k[2] = {ref::float_to_bf16(0.5f), ref::float_to_bf16(-1.f)};
  const uint16_t v[1] = {ref::float_to_bf16(3.f)};
  const float g[1] = {std::log(0.5f)}, beta[1] = {0.25f};
  const int32_t slot[1] = {0};
  GdnParams p;
  p.batch = 1; p.tokens = 1; p.num_k_heads = 1; p.num_v_heads = 1; p.head_k_dim = 2; p.head_v_dim = 1;
  p.q = {q, DType::bf16, 2, 2, 2};
  p.k = {k, DType::bf16, 2, 2, 2};
  p.v = {v, DType::bf16, 1, 1, 1};
  p.g = {g, DType::f32, 1, 1, 1};
  p.beta = {beta, DType::f32, 1, 1, 1};
  p.scale = 1.f;
  p.state = {nullptr, DType::f32, GdnStateLayout::kv, 1, 2};
  p.slots = slot;
  std::vector<double> pool = {4.0, 2.0}, out;
  ref::gdn_recurrent(p, pool, out);
  // S = 0.5 * [4, 2] = [2, 1]; S^T k = 1 - 1 = 0; u = 0.25 * 3 = 0.75; S = [2.375, 0.25]; o = 2.375 + 0.5.
  CHECK(pool[0] == doctest::Approx(2.375));
  CHECK(pool[1] == doctest::Approx(0.25));
  CHECK(out[0] == doctest::Approx(2.875));
}

TEST_CASE("reference: T tokens equal T single steps, token slots hold each step's state") {
  for (GdnStateLayout layout : {GdnStateLayout::kv, GdnStateLayout::vk}) {
    Case c(3, 1, 2, layout, 5);
    GdnParams p = c.params();
    std::vector<int32_t> token_slots = {1, -1, 1, -1, -1, -1};  // [B, T]: seq 0 keeps tokens 0 and 2 in slot 1
    p.token_slots = token_slots.data();
    p.token_slots_stride = 3;
    std::vector<double> pool = c.pool, out;
    ref::gdn_recurrent(p, pool, out);
    std::vector<double> steps = c.pool, one;
    for (int t = 0; t < 3; ++t) {
      ref::gdn_recurrent(c.params(t, 1), steps, one);
      for (int b = 0; b < c.B; ++b)
        for (int j = 0; j < c.HV * c.V; ++j)
          CHECK(out[(size_t(b) * 3 + t) * c.HV * c.V + j] ==
                doctest::Approx(one[size_t(b) * c.HV * c.V + j]).epsilon(1e-12));
    }
    for (int64_t e = 0; e < c.slot_stride(); ++e) {
      CHECK(pool[2 * c.slot_stride() + e] == doctest::Approx(steps[2 * c.slot_stride() + e]).epsilon(1e-12));
      CHECK(pool[e] == doctest::Approx(steps[e]).epsilon(1e-12));
      CHECK(pool[c.slot_stride() + e] == doctest::Approx(steps[2 * c.slot_stride() + e]).epsilon(1e-12));  // token 2
    }
  }
}

TEST_CASE("reference: grouped heads use key head hv / r; the layouts agree; padding is skipped") {
  Case kv(1, 2, 6, GdnStateLayout::kv, 9);  // r = 3
  Case vk = kv;
  vk.layout = GdnStateLayout::vk;
  // Same states in the other layout.
  for (int64_t s = 0; s < 3; ++s)
    for (int h = 0; h < kv.HV; ++h)
      for (int i = 0; i < kv.K; ++i)
        for (int j = 0; j < kv.V; ++j)
          vk.pool[s * kv.slot_stride() + h * kv.K * kv.V + j * kv.K + i] =
              kv.pool[s * kv.slot_stride() + h * kv.K * kv.V + i * kv.V + j];
  kv.slots = vk.slots = {-1, 1};
  std::vector<double> pk = kv.pool, pv = vk.pool, ok, ov;
  ref::gdn_recurrent(kv.params(), pk, ok);
  ref::gdn_recurrent(vk.params(), pv, ov);
  for (size_t i = 0; i < ok.size(); ++i) CHECK(ok[i] == doctest::Approx(ov[i]).epsilon(1e-12));
  for (int j = 0; j < kv.HV * kv.V; ++j) CHECK(ok[j] == 0.0);  // padding sequence
  for (int64_t e = 0; e < kv.slot_stride(); ++e) {
    CHECK(pk[e] == kv.pool[e]);  // slots 0 and 2 untouched
    CHECK(pk[2 * kv.slot_stride() + e] == kv.pool[2 * kv.slot_stride() + e]);
  }
  // Changing key head 0 changes value heads 0..2 only.
  Case kv2 = kv;
  for (int i = 0; i < kv2.K; ++i) kv2.k[1 * kv2.H * kv2.K + i] = ref::float_to_bf16(0.25f);  // seq 1, key head 0
  std::vector<double> p2 = kv2.pool, o2;
  ref::gdn_recurrent(kv2.params(), p2, o2);
  for (int hv = 0; hv < kv.HV; ++hv) {
    bool differs = false;
    for (int j = 0; j < kv.V; ++j) differs |= o2[kv.HV * kv.V + hv * kv.V + j] != ok[kv.HV * kv.V + hv * kv.V + j];
    CHECK(differs == (hv < 3));
  }
}

TEST_CASE("reference: conv1d by hand, with state shift and padding") {
  const uint16_t x[2] = {ref::float_to_bf16(2.f), ref::float_to_bf16(5.f)};
  const uint16_t w[3] = {ref::float_to_bf16(1.f), ref::float_to_bf16(-1.f), ref::float_to_bf16(0.5f)};
  const uint16_t bias[1] = {ref::float_to_bf16(0.25f)};
  const int32_t slots[2] = {1, -1};
  Conv1dParams p;
  p.x = {x, DType::bf16, 2, 1, 1};
  p.weight = {w, DType::bf16, 1, 3, 3};
  p.bias = {bias, DType::bf16, 1};
  p.state = {nullptr, DType::f32, 2, 2};
  p.slots = slots;
  p.silu = false;
  std::vector<double> pool = {9, 9, 3, 4}, y;
  ref::conv1d_update(p, pool, y);
  CHECK(y[0] == doctest::Approx(0.25 + 3 - 4 + 1));
  CHECK(y[1] == 0.0);
  CHECK(pool == std::vector<double>{9, 9, 4, 2});
  p.silu = true;
  pool = {9, 9, 3, 4};
  ref::conv1d_update(p, pool, y);
  CHECK(y[0] == doctest::Approx(0.25 / (1 + std::exp(-0.25))));
}
