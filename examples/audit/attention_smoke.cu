// dcukern-audit's smoke run for paged-KV decode attention: every row enabled on this device runs one
// problem a hybrid model brings (page size 544, 6 query heads per KV head, head_dim 128, bf16, contexts
// 0, 1 and 1500 with their pages scattered through the pool, LSE out), with its workspace where it needs
// one, compared with the host reference (o within 1.6e-2 relative, LSE within 1e-3).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include "audit/compare.hpp"
#include "audit/device_copy.hpp"
#include "audit/random_bf16.hpp"
#include "audit/smoke.hpp"
#include "common/attention_calls.hpp"  // the attention API, compiled in one unit
#include "dcukern/ref/attention.hpp"

namespace dcukern::smoke {

// Returns the number of failed rows; prints one Markdown table row per enabled row.
int attention_smoke(const TargetInfo& target) {
  std::printf("\n### attention smoke run\n\n| row | problem | max error / tolerance | result |\n|---|---|---|---|\n");
  constexpr int B = 3, HQ = 6, HKV = 1, D = 128, PS = 544, MP = 3;
  const std::vector<int32_t> lens = {0, 1, 1500};
  std::vector<int32_t> table(B * MP);
  std::iota(table.begin(), table.end(), 0);
  std::reverse(table.begin(), table.end());  // pages scattered: sequence 0 owns the pool's last pages
  RandomBf16 random_bf16(3);
  const std::vector<uint16_t> q = random_bf16(B * HQ * D), k = random_bf16(size_t(B) * MP * PS * HKV * D),
                              v = random_bf16(k.size());
  // The same call over host (reference) or device (the row) memory.
  auto params = [&](const void* qp, void* op, const void* kp, const void* vp, const int32_t* tp, const int32_t* lp,
                    float* lsep) {
    AttentionParams p;
    p.batch = B, p.num_q_heads = HQ, p.num_kv_heads = HKV, p.head_dim = D;
    p.q = {qp, DType::bf16, HQ * D, HQ * D, D};
    p.o = {op, DType::bf16, HQ * D, HQ * D, D};
    p.kv = {kp, vp, DType::bf16, B * MP, PS, int64_t(PS) * HKV * D, HKV * D, D};
    p.block_table = tp, p.max_pages = MP, p.block_table_stride = MP;
    p.context_lens = lp;
    p.lse = lsep;
    return p;
  };
  std::vector<uint16_t> o_host(q.size());
  std::vector<float> lse_host(B * HQ);
  const auto want = ref::attention(params(q.data(), o_host.data(), k.data(), v.data(), table.data(), lens.data(),
                                          lse_host.data()));
  int failures = 0;
  for (const auto& row : AttentionOp::rows()) {
    if (!row_unavailable_reason(row, target, AttentionOp::compiled_in(row.kernel)).empty()) continue;
    std::vector<uint16_t> o(q.size(), 0xFFFF);
    std::vector<float> lse(B * HQ, std::nanf(""));  // an LSE the row never writes fails
    DeviceCopy dq(q), dk(k), dv(v), dt(table), dl(lens), dout(o), dlse(lse);
    const AttentionParams p = params(dq.ptr, dout.ptr, dk.ptr, dv.ptr, static_cast<const int32_t*>(dt.ptr),
                                     static_cast<const int32_t*>(dl.ptr), static_cast<float*>(dlse.ptr));
    const size_t bytes = row.contract.needs_workspace ? calls::attention_workspace_bytes(p) : 0;
    std::vector<uint8_t> ws_init(std::max<size_t>(bytes, 1));
    DeviceCopy ws(ws_init);
    Status s = calls::attention(p, bytes ? ws.ptr : nullptr, bytes, nullptr, AttentionOptions{row.id});
    if (s.ok()) s = runtime_status(runtime_synchronize(), "synchronize");
    if (s.ok()) s = runtime_status(runtime_copy_to_host(o.data(), dout.ptr, o.size() * 2), "copy");
    if (s.ok()) s = runtime_status(runtime_copy_to_host(lse.data(), dlse.ptr, lse.size() * 4), "copy");
    double worst =
        s.ok() ? worst_relative([&](size_t i) { return ref::to_float(DType::bf16, o[i]); }, want.o, 1.6e-2) : INFINITY;
    for (size_t i = 0; s.ok() && i < lse.size(); ++i) {
      if (std::isinf(want.lse[i])) {
        if (!(std::isinf(lse[i]) && lse[i] < 0)) worst = INFINITY;
      } else {
        const double err = std::fabs(lse[i] - want.lse[i]);
        worst = std::max(worst, std::isnan(err) ? INFINITY : err / (1e-3 * (1 + std::fabs(want.lse[i]))));
      }
    }
    const bool ok = worst <= 1.0;
    failures += !ok;
    std::printf("| %s | bf16 D=%d Hq/Hkv=%d/%d page %d contexts 0,1,1500 | %.3f | %s |\n", row.id, D, HQ, HKV, PS,
                worst, ok ? "pass" : (s.ok() ? "FAIL" : s.to_string().c_str()));
  }
  return failures;
}

}  // namespace dcukern::smoke
