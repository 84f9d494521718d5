// dcukern-audit's smoke runs for gated-delta-net decode: every recurrent-step row enabled on this device
// runs one Qwen3-Next head shape (B = 1, T = 2 tokens in one call, H = 2, HV = 4, K = V = 128, bf16 q / k /
// v, in-kernel gating and L2 norm, fp32 state in slot 1 of a 2-slot pool) in each state layout its contract
// takes, and every conv1d-update row one call (B = 3 with a padding row, 256 channels, width 4, SiLU, bf16
// activations) with each state dtype its contract takes; all compared with the host reference (outputs
// within 1.6e-2 relative, states within 1e-4).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "audit/compare.hpp"
#include "audit/device_copy.hpp"
#include "audit/random_bf16.hpp"
#include "audit/smoke.hpp"
#include "common/gdn_calls.hpp"  // the GDN API, compiled in one unit
#include "dcukern/ref/gdn.hpp"

namespace dcukern::smoke {

// Runs a row's call and copies back its bf16 outputs and the state pool (bytes of dtype pool_dtype); the
// worst error of either against the reference (outputs within 1.6e-2 relative, the pool within 1e-4).
template <class Call>
double run_and_compare(Call call, const DeviceCopy& dout, std::vector<uint16_t>& out,
                       const std::vector<double>& want_out, const DeviceCopy& dpool, std::vector<uint8_t>& pool,
                       DType pool_dtype, const std::vector<double>& want_pool, Status* s) {
  *s = call();
  if (s->ok()) *s = runtime_status(runtime_synchronize(), "synchronize");
  if (s->ok()) *s = runtime_status(runtime_copy_to_host(out.data(), dout.ptr, out.size() * 2), "copy");
  if (s->ok()) *s = runtime_status(runtime_copy_to_host(pool.data(), dpool.ptr, pool.size()), "copy");
  if (!s->ok()) return INFINITY;
  return std::max(worst_relative([&](size_t i) { return ref::to_float(DType::bf16, out[i]); }, want_out, 1.6e-2),
                  worst_relative([&](size_t i) { return ref::load(pool.data(), pool_dtype, i); }, want_pool, 1e-4));
}

// Returns the number of failed runs; prints one Markdown table row per run.
int gdn_smoke(const TargetInfo& target) {
  std::printf("\n### gdn smoke run\n\n| row | problem | max error / tolerance | result |\n|---|---|---|---|\n");
  constexpr int B = 1, T = 2, H = 2, HV = 4, K = 128, V = 128, kSlots = 2;
  RandomBf16 random_bf16(5);
  const std::vector<uint16_t> q = random_bf16(B * T * H * K), k = random_bf16(q.size());
  const std::vector<uint16_t> v = random_bf16(B * T * HV * V);
  const std::vector<uint16_t> ga = random_bf16(B * T * HV), gb = random_bf16(ga.size());
  const std::vector<float> a_log(HV, 0.f), dt_bias(HV, -2.f);  // decay exp(-softplus(a - 2)): 0.27..0.95
  std::vector<float> pool(size_t(kSlots) * HV * K * V);
  for (auto& x : pool) x = 0.5f * random_bf16.uniform();
  const std::vector<int32_t> slots = {1};
  auto params = [&](const void* qp, const void* kp, const void* vp, const void* ap, const void* bp, const float* alog,
                    const float* dtb, void* poolp, GdnStateLayout layout, const int32_t* sp, void* op) {
    GdnParams p;
    p.batch = B, p.tokens = T, p.num_k_heads = H, p.num_v_heads = HV, p.head_k_dim = K, p.head_v_dim = V;
    p.q = {qp, DType::bf16, T * H * K, H * K, K};
    p.k = {kp, DType::bf16, T * H * K, H * K, K};
    p.v = {vp, DType::bf16, T * HV * V, HV * V, V};
    p.a = {ap, DType::bf16, T * HV, HV, 1};
    p.b = {bp, DType::bf16, T * HV, HV, 1};
    p.A_log = alog, p.dt_bias = dtb;
    p.l2norm_qk = true;
    p.state = {poolp, DType::f32, layout, kSlots, int64_t(HV) * K * V};
    p.slots = sp;
    p.o = {op, DType::bf16, T * HV * V, HV * V, V};
    return p;
  };
  int failures = 0;
  for (const auto& row : GdnOp::rows()) {
    if (!row_unavailable_reason(row, target, GdnOp::compiled_in(row.kernel)).empty()) continue;
    for (const GdnStateLayout layout : {GdnStateLayout::kv, GdnStateLayout::vk}) {
      std::vector<double> want_pool(pool.begin(), pool.end()), want_o;
      std::vector<uint8_t> pool_host = dense_bytes(DType::f32, pool);
      std::vector<uint16_t> o_host(B * T * HV * V);
      const GdnParams hp = params(q.data(), k.data(), v.data(), ga.data(), gb.data(), a_log.data(), dt_bias.data(),
                                  pool_host.data(), layout, slots.data(), o_host.data());
      const capabilities::GdnRow* chosen = nullptr;
      if (!check_gdn_row(hp, target, row.id, &chosen).ok()) continue;  // the row's contract takes the other layout
      ref::gdn_recurrent(hp, want_pool, want_o);
      std::vector<uint16_t> o(o_host.size(), 0xFFFF);
      std::vector<uint8_t> pool_out = dense_bytes(DType::f32, pool);
      DeviceCopy dq(q), dk(k), dv(v), da(ga), db(gb), dalog(a_log), ddt(dt_bias), dpool(pool_out), ds(slots), dout(o);
      const GdnParams p = params(dq.ptr, dk.ptr, dv.ptr, da.ptr, db.ptr, static_cast<const float*>(dalog.ptr),
                                 static_cast<const float*>(ddt.ptr), dpool.ptr, layout,
                                 static_cast<const int32_t*>(ds.ptr), dout.ptr);
      Status s;
      const auto call = [&] { return calls::gdn_recurrent(p, nullptr, GdnOptions{row.id}); };
      const double worst = run_and_compare(call, dout, o, want_o, dpool, pool_out, DType::f32, want_pool, &s);
      const bool ok = worst <= 1.0;
      failures += !ok;
      std::printf("| %s | [%s] state f32, B=%d T=%d H/HV=%d/%d K=V=%d | %.3f | %s |\n", row.id, layout_name(layout), B,
                  T, H, HV, K, worst, ok ? "pass" : (s.ok() ? "FAIL" : s.to_string().c_str()));
    }
  }
  return failures;
}

int conv1d_smoke(const TargetInfo& target) {
  std::printf("\n### conv1d smoke run\n\n| row | problem | max error / tolerance | result |\n|---|---|---|---|\n");
  constexpr int B = 3, W = 4, kSlots = 3;
  constexpr int64_t D = 256;
  RandomBf16 random_bf16(7);
  const std::vector<uint16_t> x = random_bf16(B * D), w = random_bf16(D * W), bias = random_bf16(D),
                              state_bf16 = random_bf16(kSlots * D * (W - 1));
  std::vector<float> state(state_bf16.size());  // values exact in either state dtype
  for (size_t i = 0; i < state.size(); ++i) state[i] = ref::to_float(DType::bf16, state_bf16[i]);
  const std::vector<int32_t> slots = {2, -1, 0};  // the second row is padding
  auto params = [&](const void* xp, const void* wp, const void* bp, void* sp, DType sdt, const int32_t* slp, void* yp) {
    Conv1dParams p;
    p.x = {xp, DType::bf16, B, D, D};
    p.weight = {wp, DType::bf16, D, W, W};
    p.bias = {bp, DType::bf16, D};
    p.state = {sp, sdt, kSlots, D * (W - 1)};
    p.slots = slp;
    p.y = {yp, DType::bf16, B, D, D};
    return p;
  };
  int failures = 0;
  for (const auto& row : Conv1dOp::rows()) {
    if (!row_unavailable_reason(row, target, Conv1dOp::compiled_in(row.kernel)).empty()) continue;
    for (const DType sdt : {DType::bf16, DType::f32}) {
      std::vector<uint16_t> y_host(B * D);
      std::vector<uint8_t> state_host = dense_bytes(sdt, state);
      const Conv1dParams hp =
          params(x.data(), w.data(), bias.data(), state_host.data(), sdt, slots.data(), y_host.data());
      const capabilities::Conv1dRow* chosen = nullptr;
      if (!check_conv1d_row(hp, target, row.id, &chosen).ok()) continue;  // the row takes the other state dtype
      std::vector<double> want_pool(state.begin(), state.end()), want_y;
      ref::conv1d_update(hp, want_pool, want_y);
      std::vector<uint16_t> y(y_host.size(), 0xFFFF);
      std::vector<uint8_t> state_out = dense_bytes(sdt, state);
      DeviceCopy dx(x), dw(w), dbias(bias), ds(slots), dy(y), dstate(state_out);
      const Conv1dParams p =
          params(dx.ptr, dw.ptr, dbias.ptr, dstate.ptr, sdt, static_cast<const int32_t*>(ds.ptr), dy.ptr);
      Status s;
      const auto call = [&] { return calls::conv1d_update(p, nullptr, GdnOptions{row.id}); };
      const double worst = run_and_compare(call, dy, y, want_y, dstate, state_out, sdt, want_pool, &s);
      const bool ok = worst <= 1.0;
      failures += !ok;
      std::printf("| %s | state %s, B=%d (one padding row) dim=%lld width=%d SiLU | %.3f | %s |\n", row.id,
                  dtype_name(sdt), B, static_cast<long long>(D), W, worst,
                  ok ? "pass" : (s.ok() ? "FAIL" : s.to_string().c_str()));
    }
  }
  return failures;
}

}  // namespace dcukern::smoke
