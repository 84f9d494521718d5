// Host reference of the row transforms (softmax with temperature, top_k_mask_logits,
// top_k_renorm_probs, top_p_renorm_probs) by the rules of dcukern/sampling/transform_params.hpp, in
// double. It sorts: it is the specification, not the algorithm. top_p_margin says how far the top-p
// boundary is from a knife edge (relative to the row's mass), as in ref/sampling.hpp.
#pragma once
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

namespace dcukern::ref {

struct TransformedRow {
  bool valid = false;
  std::vector<double> out;  // invalid rows: 0 (probabilities) or -inf (masked logits) everywhere
  double top_p_margin = 1.0;
};

// Indices by value descending, index ascending (the sampling order).
inline std::vector<int64_t> sampling_order(const std::vector<double>& x) {
  std::vector<int64_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return x[a] > x[b]; });
  return order;
}

inline TransformedRow ref_softmax(const std::vector<float>& logits, double temperature) {
  TransformedRow r;
  const size_t v = logits.size();
  r.out.assign(v, 0.0);
  std::vector<double> x(v);
  for (size_t i = 0; i < v; ++i) {
    if (std::isnan(logits[i])) return r;
    x[i] = std::min<double>(logits[i], FLT_MAX);
  }
  const auto order = sampling_order(x);
  const double m = x[order[0]];
  if (m == -INFINITY) return r;
  r.valid = true;
  if (temperature == 0.0) {
    r.out[order[0]] = 1.0;
    return r;
  }
  double z = 0.0;
  for (size_t i = 0; i < v; ++i) z += std::exp((x[i] - m) / temperature);
  for (size_t i = 0; i < v; ++i) r.out[i] = std::exp((x[i] - m) / temperature) / z;
  return r;
}

inline TransformedRow ref_top_k_mask_logits(const std::vector<float>& logits, int64_t k) {
  TransformedRow r;
  const int64_t v = int64_t(logits.size());
  r.out.assign(v, -INFINITY);
  std::vector<double> x(v);
  for (int64_t i = 0; i < v; ++i) {
    if (std::isnan(logits[i])) return r;
    x[i] = std::min<double>(logits[i], FLT_MAX);
  }
  const auto order = sampling_order(x);
  if (x[order[0]] == -INFINITY) return r;
  r.valid = true;
  const int64_t keep = k > 0 && k < v ? k : v;
  for (int64_t j = 0; j < keep; ++j) r.out[order[j]] = logits[order[j]];
  return r;
}

// Probabilities: a NaN or negative entry, or a zero row, is invalid.
inline bool probs_ok(const std::vector<float>& p) {
  double sum = 0.0;
  for (float x : p) {
    if (!(x >= 0.0f)) return false;
    sum += x;
  }
  return sum > 0.0;
}

inline TransformedRow renorm(const std::vector<float>& probs, const std::vector<int64_t>& order, int64_t keep) {
  TransformedRow r;
  r.out.assign(probs.size(), 0.0);
  r.valid = true;
  double sum = 0.0;
  for (int64_t j = 0; j < keep; ++j) sum += probs[order[j]];
  for (int64_t j = 0; j < keep; ++j) r.out[order[j]] = probs[order[j]] / sum;
  return r;
}

inline TransformedRow ref_top_k_renorm_probs(const std::vector<float>& probs, int64_t k) {
  if (!probs_ok(probs)) return TransformedRow{false, std::vector<double>(probs.size(), 0.0), 1.0};
  const int64_t v = int64_t(probs.size());
  const auto order = sampling_order(std::vector<double>(probs.begin(), probs.end()));
  return renorm(probs, order, k > 0 && k < v ? k : v);
}

inline TransformedRow ref_top_p_renorm_probs(const std::vector<float>& probs, double top_p) {
  if (!probs_ok(probs)) return TransformedRow{false, std::vector<double>(probs.size(), 0.0), 1.0};
  const int64_t v = int64_t(probs.size());
  const auto order = sampling_order(std::vector<double>(probs.begin(), probs.end()));
  double total = 0.0;
  for (float p : probs) total += p;
  int64_t keep = v;
  double margin = 1.0;
  if (top_p < 1.0) {
    const double target = top_p * total;
    double cum = 0.0;
    for (int64_t j = 0; j < v; ++j) {
      const double before = cum;
      cum += probs[order[j]];
      if (cum >= target) {
        keep = j + 1;
        margin = std::min(target - before, cum - target) / total;
        break;
      }
    }
  }
  TransformedRow r = renorm(probs, order, keep);
  r.top_p_margin = margin;
  return r;
}

}  // namespace dcukern::ref
