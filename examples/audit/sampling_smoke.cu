// dcukern-audit's smoke runs for sampling: every sampling row enabled on this device draws 100 times (offsets
// 0..99) from bf16 logits [4, 40000] with per-row device parameters: a greedy row, top-k 20 + top-p 0.9,
// temperature 0.7 + min-p 0.1, and a row of -inf (a row whose contract starts at a larger batch takes
// that many rows, the four repeated; a row that applies only some filters, as sampling.unfiltered.vec or
// sampling.top_p.vec, takes the same parameters with the others off);
// every token must lie in the host reference's filtered set (the
// greedy one the argmax), the -inf row flagged invalid with token 0. Every row-transform row then
// computes softmax with temperature 0.8 of the same logits, within 1e-4 relative of the reference. These
// are the hard checks only: the frequencies are the device tests' business (tests/device/). V = 40000 takes
// the split rows through several tiles a row (16-element tiles: 5; where the device has clusters, bf16 rows
// of 3 tiles of 64 elements as one cluster).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "audit/device_copy.hpp"
#include "audit/smoke.hpp"
#include "dcukern/ref/gemv.hpp"
#include "dcukern/ref/sampling.hpp"
#include "dcukern/ref/sampling_transforms.hpp"
#include "common/sampling_calls.hpp"  // sample(), compiled in one unit
#include "dcukern/sampling_transforms.hpp"

namespace dcukern::smoke {

struct SamplingProblem {
  static constexpr int B = 4;          // the distinct rows
  static constexpr int kMaxRows = 64;  // rows held: row r repeats row r % B
  static_assert(capabilities::sampling_rows::kStreamBatchMin <= kMaxRows, "every row's smallest batch is held");
  static constexpr int64_t V = 40000;
  std::vector<uint16_t> logits;            // [kMaxRows, V] bf16
  std::vector<std::vector<float>> rows;    // the B distinct rows, in float
  std::vector<float> temperature{0.f, 1.f, 0.7f, 1.f}, top_p{1.f, 0.9f, 1.f, 1.f}, min_p{0.f, 0.f, 0.1f, 0.f};
  std::vector<int32_t> top_k{0, 20, 0, 0};

  // Row b's parameters with the filters outside `filters` (SamplingFilter bits) off.
  ref::SamplingRowParams params_of(int b, uint8_t filters) const {
    return {temperature[b], filters & kFilterTopK ? top_k[b] : 0, filters & kFilterTopP ? top_p[b] : 1.0,
            filters & kFilterMinP ? min_p[b] : 0.0};
  }
  // The sets the B rows draw from with only `filters` on.
  std::vector<ref::FilteredDistribution> allowed(uint8_t filters) const {
    std::vector<ref::FilteredDistribution> d;
    for (int b = 0; b < B; ++b) d.push_back(ref::filtered_distribution(rows[b], params_of(b, filters)));
    return d;
  }

  // Logits N(0, 2) (the last row -inf), from the first seed whose top-p and min-p boundaries lie clear
  // of a knife edge (float rounding on the device could then decide either way).
  SamplingProblem() {
    for (uint32_t seed = 11;; ++seed) {
      std::mt19937 rng(seed);
      std::normal_distribution<float> n(0.f, 2.f);
      logits.assign(B * V, 0);
      rows.assign(B, std::vector<float>(V));
      bool clear = true;
      for (int b = 0; b < B; ++b) {
        for (int64_t i = 0; i < V; ++i) {
          const float x = b == B - 1 ? -INFINITY : n(rng);
          logits[b * V + i] = ref::from_float(DType::bf16, x);
          rows[b][i] = ref::to_float(DType::bf16, logits[b * V + i]);
        }
        const auto all = ref::filtered_distribution(rows[b], params_of(b, kFiltersAll));
        // (top-p alone keeps ~9,500 of the 40000 tokens: its boundary token holds ~1e-5 of the mass, so
        // the margin is smaller; the device's sums are within ~1e-7 of the reference's, as the device
        // tests' 1e-6 allows. Min-p alone judges the same tokens as all filters: row 2 has no other.)
        clear = clear && all.top_p_margin > 1e-3 && all.min_p_margin > 1e-3 &&
                ref::filtered_distribution(rows[b], params_of(b, kFilterTopP)).top_p_margin > 1e-6;
      }
      if (clear) break;
    }
    std::vector<uint16_t> held(size_t(kMaxRows) * V);
    for (int r = 0; r < kMaxRows; ++r) {
      std::copy(logits.begin() + (r % B) * V, logits.begin() + (r % B + 1) * V, held.begin() + r * V);
      if (r < B) continue;
      temperature.push_back(temperature[r % B]), top_p.push_back(top_p[r % B]), min_p.push_back(min_p[r % B]);
      top_k.push_back(top_k[r % B]);
    }
    logits.swap(held);
  }
};

// Returns the number of failed rows; prints one Markdown table row per enabled row.
int sampling_smoke(const TargetInfo& target) {
  std::printf("\n### sampling smoke run\n\n| row | problem | draws outside the allowed set | result |\n"
              "|---|---|---|---|\n");
  const SamplingProblem pr;
  constexpr int B = SamplingProblem::B, kDraws = 100;
  constexpr int64_t V = SamplingProblem::V;
  DeviceCopy dl(pr.logits), dt(pr.temperature), dk(pr.top_k), dp(pr.top_p), dm(pr.min_p);
  int failures = 0;
  for (const auto& row : SamplingOp::rows()) {
    if (!row_unavailable_reason(row, target, SamplingOp::compiled_in(row.kernel)).empty()) continue;
    const int n = int(std::max<int64_t>(B, row.contract.batch_min));  // rows of this run
    if (n > SamplingProblem::kMaxRows) {
      ++failures;
      std::printf("| %s | needs B >= %d, more rows than the smoke problem holds | - | FAIL |\n", row.id, n);
      continue;
    }
    std::vector<int32_t> tokens(n, -1);
    std::vector<uint8_t> valid(n, 2);
    DeviceCopy dtok(tokens), dvalid(valid);
    SamplingParams p;
    p.logits = {dl.ptr, DType::bf16, n, V, V};
    p.tokens = {dtok.ptr, DType::i32, n};
    p.valid = static_cast<uint8_t*>(dvalid.ptr);
    p.temperature.device = static_cast<const float*>(dt.ptr);
    const uint8_t filters = row.contract.filters;  // per-row arrays for the filters the row applies
    if (filters & kFilterTopK) p.top_k.device = static_cast<const int32_t*>(dk.ptr);
    if (filters & kFilterTopP) p.top_p.device = static_cast<const float*>(dp.ptr);
    if (filters & kFilterMinP) p.min_p.device = static_cast<const float*>(dm.ptr);
    const std::vector<ref::FilteredDistribution> allowed = pr.allowed(filters);
    p.seed = 1234;
    const size_t bytes = row.contract.needs_workspace ? sampling_workspace_bytes(p) : 0;
    DeviceCopy ws(std::vector<uint8_t>(std::max<size_t>(bytes, 1), 0));  // zeroed once, as the API asks
    Status s;
    int outside = 0;
    for (int draw = 0; draw < kDraws && s.ok(); ++draw) {
      p.offset = uint64_t(draw);
      s = calls::sample(p, bytes ? ws.ptr : nullptr, bytes, nullptr, SamplingOptions{row.id});
      if (s.ok()) s = runtime_status(runtime_synchronize(), "synchronize");
      if (s.ok()) s = runtime_status(runtime_copy_to_host(tokens.data(), dtok.ptr, n * 4), "copy");
      if (s.ok()) s = runtime_status(runtime_copy_to_host(valid.data(), dvalid.ptr, n), "copy");
      for (int b = 0; s.ok() && b < n; ++b) {
        const ref::FilteredDistribution& a = allowed[b % B];
        const bool ok = a.valid ? valid[b] == 1 && a.prob_of(tokens[b]) > 0 : valid[b] == 0 && tokens[b] == 0;
        outside += !ok;
      }
    }
    const bool ok = s.ok() && outside == 0;
    failures += !ok;
    std::printf("| %s | bf16 B=%d V=%lld: greedy, T 1 / 0.7 with filters %s (top-k 20 + top-p 0.9, min-p 0.1), "
                "all -inf; %d draws | %d of %d | %s |\n", row.id, n, static_cast<long long>(V),
                SamplingContract::filter_list(filters).c_str(), kDraws, outside, kDraws * n,
                ok ? "pass" : (s.ok() ? "FAIL" : s.to_string().c_str()));
  }
  for (const auto& row : TransformOp::rows()) {
    if (!row_unavailable_reason(row, target, TransformOp::compiled_in(row.kernel)).empty()) continue;
    std::vector<float> out(B * V, NAN);
    std::vector<uint8_t> valid(B, 2);
    DeviceCopy dout(out), dvalid(valid);
    RowTransformParams p;
    p.in = {dl.ptr, DType::bf16, B, V, V};
    p.out = {dout.ptr, DType::f32, B, V, V};
    p.valid = static_cast<uint8_t*>(dvalid.ptr);
    p.temperature.value = 0.8f;
    Status s = softmax(p, nullptr, RowOptions{row.id});
    if (s.ok()) s = runtime_status(runtime_synchronize(), "synchronize");
    if (s.ok()) s = runtime_status(runtime_copy_to_host(out.data(), dout.ptr, out.size() * 4), "copy");
    if (s.ok()) s = runtime_status(runtime_copy_to_host(valid.data(), dvalid.ptr, B), "copy");
    int wrong = 0;
    for (int b = 0; s.ok() && b < B; ++b) {
      const ref::TransformedRow want = ref::ref_softmax(pr.rows[b], 0.8);
      wrong += valid[b] != (want.valid ? 1 : 0);
      for (int64_t i = 0; i < V; ++i) wrong += !(std::fabs(out[b * V + i] - want.out[i]) <= 1e-4 * want.out[i] + 1e-12);
    }
    const bool ok = s.ok() && wrong == 0;
    failures += !ok;
    std::printf("| %s | softmax, temperature 0.8, the same logits | %d of %lld values off | %s |\n", row.id, wrong,
                static_cast<long long>(B * V), ok ? "pass" : (s.ok() ? "FAIL" : s.to_string().c_str()));
  }
  return failures;
}

}  // namespace dcukern::smoke
