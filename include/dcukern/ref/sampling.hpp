// Host reference for sampling: the exact filtered distribution of one row, in double, by the rules of
// dcukern/sampling/params.hpp (sort order logit descending, index ascending; top-k, then top-p on the
// renormalised top-k set, then min-p). It sorts: it is the specification, not the algorithm.
// Also reports how far the row is from a filter boundary, so that tests can avoid knife-edge cases
// where float rounding on the device may legitimately decide the other way.
#pragma once
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

namespace dcukern::ref {

struct SamplingRowParams {
  double temperature = 1.0;
  int64_t top_k = 0;
  double top_p = 1.0;
  double min_p = 0.0;
};
// The parameters in the filters' order; each filter left out is off.
inline SamplingRowParams row_params(double temperature, int64_t top_k = 0, double top_p = 1.0, double min_p = 0.0) {
  SamplingRowParams r;
  r.temperature = temperature, r.top_k = top_k, r.top_p = top_p, r.min_p = min_p;
  return r;
}

struct FilteredDistribution {
  bool valid = false;              // false: NaN in the row, or every entry -inf
  std::vector<int64_t> tokens;     // the kept set, in sort order
  std::vector<double> probs;       // their renormalised probabilities
  double top_p_margin = 1.0;       // |cumulative mass - top_p| at the top-p boundary, relative to the set's mass
  double min_p_margin = 1.0;       // smallest |log2(p / p_max) - log2(min_p)| over the tokens min-p judges
                                   // (those top-k and top-p kept); 1 when min-p is off
  double prob_of(int64_t token) const {
    for (size_t j = 0; j < tokens.size(); ++j)
      if (tokens[j] == token) return probs[j];
    return 0.0;
  }
};

inline FilteredDistribution filtered_distribution(const std::vector<float>& logits, const SamplingRowParams& p) {
  FilteredDistribution d;
  const int64_t v = int64_t(logits.size());
  std::vector<double> x(v);
  for (int64_t i = 0; i < v; ++i) {
    if (std::isnan(logits[i])) return d;
    x[i] = std::min<double>(logits[i], FLT_MAX);  // +inf counts as the largest finite float
  }
  std::vector<int64_t> order(v);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return x[a] > x[b]; });
  const double m = x[order[0]];
  if (m == -INFINITY) return d;
  d.valid = true;
  if (p.temperature == 0.0 || p.top_k == 1) {
    d.tokens = {order[0]};
    d.probs = {1.0};
    return d;
  }
  std::vector<double> w(v);  // weights in sort order, w[0] = 1
  for (int64_t j = 0; j < v; ++j) w[j] = std::exp((x[order[j]] - m) / p.temperature);
  int64_t keep = (p.top_k > 0 && p.top_k < v) ? p.top_k : v;
  if (p.top_p < 1.0) {
    const double mk = std::accumulate(w.begin(), w.begin() + keep, 0.0);
    const double target = p.top_p * mk;
    double cum = 0.0;
    int64_t lp = keep;
    for (int64_t j = 0; j < keep; ++j) {
      const double before = cum;
      cum += w[j];
      if (cum >= target) {
        lp = j + 1;
        d.top_p_margin = std::min(target - before, cum - target) / mk;
        break;
      }
    }
    keep = std::min(keep, lp);
  }
  if (p.min_p > 0.0) {
    const double lmin = std::log2(p.min_p);
    int64_t lm = 0;
    for (int64_t j = 0; j < keep; ++j) {  // min-p can only cut tokens that top-k and top-p kept
      const double t = std::log2(w[j]);
      d.min_p_margin = std::min(d.min_p_margin, std::fabs(t - lmin));
      if (w[j] >= p.min_p) lm = j + 1;
    }
    keep = std::min(keep, lm);
  }
  double total = 0.0;
  for (int64_t j = 0; j < keep; ++j) total += w[j];
  for (int64_t j = 0; j < keep; ++j) {
    d.tokens.push_back(order[j]);
    d.probs.push_back(w[j] / total);
  }
  return d;
}

// Pearson chi-square statistic of observed counts against probabilities over the kept set, with bins of
// expected count below `min_expected` merged (so the chi-square approximation holds); also returns the
// degrees of freedom and the number of draws outside the set.
struct ChiSquare {
  double statistic = 0.0;
  int dof = 0;
  int64_t outside = 0;
};

inline ChiSquare chi_square(const FilteredDistribution& d, const std::vector<int64_t>& counts_by_token,
                            int64_t draws, double min_expected = 5.0) {
  ChiSquare r;
  int64_t inside = 0;
  std::vector<char> kept(counts_by_token.size(), 0);
  for (int64_t t : d.tokens) kept[t] = 1;
  for (size_t t = 0; t < counts_by_token.size(); ++t) {
    if (kept[t]) inside += counts_by_token[t];
    else r.outside += counts_by_token[t];
  }
  (void)inside;
  double obs = 0.0, exp = 0.0, last_obs = 0.0, last_exp = 0.0;  // the open bin, and the last closed one
  int bins = 0;
  auto term = [](double o, double e) { return (o - e) * (o - e) / e; };
  for (size_t j = 0; j < d.tokens.size(); ++j) {
    obs += double(counts_by_token[d.tokens[j]]);
    exp += d.probs[j] * double(draws);
    if (exp >= min_expected) {
      r.statistic += term(obs, exp);
      ++bins;
      last_obs = obs, last_exp = exp;
      obs = exp = 0.0;
    }
  }
  if (exp > 0.0) {  // the leftover tail: into the last bin (every bin keeps >= min_expected), or its own
    if (bins > 0) {
      r.statistic += term(last_obs + obs, last_exp + exp) - term(last_obs, last_exp);
    } else {
      r.statistic += term(obs, exp);
      ++bins;
    }
  }
  r.dof = std::max(bins - 1, 1);
  return r;
}

// The same statistic over groups of `group` consecutive token indices (the kept tokens of [0, group),
// [group, 2 group), ...; groups of expected count below `min_expected` merged with the next): few bins,
// so it sees a bias shared by a range of indices (a tile of a split kernel drawn too often, say) that
// the per-token statistic, with one bin a token on a flat row, spreads over ~V degrees of freedom.
inline ChiSquare chi_square_by_index_group(const FilteredDistribution& d, const std::vector<int64_t>& counts_by_token,
                                           int64_t draws, int64_t group, double min_expected = 5.0) {
  const int64_t v = int64_t(counts_by_token.size());
  std::vector<double> obs(size_t((v + group - 1) / group), 0.0), exp(obs.size(), 0.0);
  for (size_t j = 0; j < d.tokens.size(); ++j) {
    obs[size_t(d.tokens[j] / group)] += double(counts_by_token[d.tokens[j]]);
    exp[size_t(d.tokens[j] / group)] += d.probs[j] * double(draws);
  }
  FilteredDistribution groups;  // one pseudo-token a group, in index order: chi_square merges small ones
  std::vector<int64_t> group_counts(obs.size(), 0);
  for (size_t g = 0; g < obs.size(); ++g) {
    if (exp[g] == 0.0) continue;
    groups.tokens.push_back(int64_t(g));
    groups.probs.push_back(exp[g] / double(draws));
    group_counts[g] = int64_t(obs[g]);
  }
  ChiSquare r = chi_square(groups, group_counts, draws, min_expected);
  r.outside = 0;  // (chi_square of the tokens counts those)
  return r;
}

// Upper quantile of the chi-square distribution with `dof` degrees of freedom at tail probability
// alpha (Wilson-Hilferty), used as the acceptance bound of the statistical tests.
inline double chi_square_bound(int dof, double z_alpha) {
  const double k = double(dof);
  const double a = 2.0 / (9.0 * k);
  const double c = 1.0 - a + z_alpha * std::sqrt(a);
  return k * c * c * c;
}

}  // namespace dcukern::ref
