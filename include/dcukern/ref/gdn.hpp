// Host reference for the GDN ops in double precision, over host memory described by the same params
// as the device call (every pointer a host pointer). The state pools are mirrored in double (`pool`,
// indexed exactly like the device pool); outputs come back in double, dense. The recurrent step follows
// the textbook order: S <- exp(g) S; u = beta (v - S^T k); S <- S + k u^T; o = S^T (scale q). A bf16
// state is rounded to bf16 after every token, as the pool stores it.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "dcukern/gdn/params.hpp"
#include "dcukern/ref/gemv.hpp"

namespace dcukern::ref {

inline double load(const void* p, DType t, int64_t i) {
  if (t == DType::f32) return static_cast<const float*>(p)[i];
  return to_float(t, static_cast<const uint16_t*>(p)[i]);
}
inline double round_to(DType t, double v) {
  if (t == DType::f32) return v;
  return to_float(t, from_float(t, static_cast<float>(v)));
}
inline bool slot_valid(int64_t slot, int64_t num_slots) { return slot >= 0 && slot < num_slots; }

// Gating of (b, t, hv): {g, beta}.
inline void gdn_gate(const GdnParams& p, int b, int t, int hv, double* g, double* beta) {
  if (p.a.data) {
    const double x = load(p.a.data, p.a.dtype, b * p.a.batch_stride + t * p.a.token_stride + hv * p.a.head_stride) +
                     p.dt_bias[hv];
    const double softplus = x > 20.0 ? x : std::log1p(std::exp(x));
    *g = -std::exp(double(p.A_log[hv])) * softplus;
    const double bb = load(p.b.data, p.b.dtype, b * p.b.batch_stride + t * p.b.token_stride + hv * p.b.head_stride);
    *beta = 1.0 / (1.0 + std::exp(-bb));
  } else {
    *g = load(p.g.data, DType::f32, b * p.g.batch_stride + t * p.g.token_stride + hv * p.g.head_stride);
    *beta = load(p.beta.data, DType::f32, b * p.beta.batch_stride + t * p.beta.token_stride + hv * p.beta.head_stride);
  }
}

// One head vector of a [B, T, heads, dim] input, in double; L2-normalised on request.
inline std::vector<double> gdn_head(const GdnInput& in, int b, int t, int h, int dim, bool l2norm) {
  std::vector<double> x(dim);
  double ss = 0;
  for (int i = 0; i < dim; ++i) {
    x[i] = load(in.data, in.dtype, b * in.batch_stride + t * in.token_stride + h * in.head_stride + i);
    ss += x[i] * x[i];
  }
  if (l2norm)
    for (double& e : x) e /= std::sqrt(ss + 1e-6);
  return x;
}

// out: [B, T, HV, V] dense. pool: the state pool in double (num_slots * slot_stride elements).
inline void gdn_recurrent(const GdnParams& p, std::vector<double>& pool, std::vector<double>& out) {
  const int K = p.head_k_dim, V = p.head_v_dim, HV = p.num_v_heads, r = HV / p.num_k_heads;
  const double scale = p.scale != 0.f ? double(p.scale) : 1.0 / std::sqrt(double(K));
  const bool kv = p.state.layout == GdnStateLayout::kv;
  auto off = [&](int i, int j) { return kv ? int64_t(i) * V + j : int64_t(j) * K + i; };
  auto head_base = [&](int64_t slot, int hv) { return slot * p.state.slot_stride + int64_t(hv) * K * V; };
  out.assign(size_t(p.batch) * p.tokens * HV * V, 0.0);
  std::vector<double> S(size_t(K) * V), u(V);
  for (int b = 0; b < p.batch; ++b) {
    const int64_t slot = p.slots[b];
    if (!slot_valid(slot, p.state.num_slots)) continue;  // padding: outputs stay zero
    for (int hv = 0; hv < HV; ++hv) {
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < V; ++j) S[size_t(i) * V + j] = pool[head_base(slot, hv) + off(i, j)];
      for (int t = 0; t < p.tokens; ++t) {
        std::vector<double> q = gdn_head(p.q, b, t, hv / r, K, p.l2norm_qk);
        const std::vector<double> k = gdn_head(p.k, b, t, hv / r, K, p.l2norm_qk);
        for (double& e : q) e *= scale;
        double g, beta;
        gdn_gate(p, b, t, hv, &g, &beta);
        const double decay = std::exp(g);
        for (double& e : S) e *= decay;
        for (int j = 0; j < V; ++j) {
          double d = 0;
          for (int i = 0; i < K; ++i) d += S[size_t(i) * V + j] * k[i];
          const double vj =
              load(p.v.data, p.v.dtype, b * p.v.batch_stride + t * p.v.token_stride + hv * p.v.head_stride + j);
          u[j] = beta * (vj - d);
        }
        for (int i = 0; i < K; ++i)
          for (int j = 0; j < V; ++j) S[size_t(i) * V + j] += k[i] * u[j];
        for (int j = 0; j < V; ++j) {
          double o = 0;
          for (int i = 0; i < K; ++i) o += S[size_t(i) * V + j] * q[i];
          out[((size_t(b) * p.tokens + t) * HV + hv) * V + j] = o;
        }
        for (double& e : S) e = round_to(p.state.dtype, e);
        if (p.token_slots) {
          const int64_t ts = p.token_slots[b * p.token_slots_stride + t];
          if (slot_valid(ts, p.state.num_slots))
            for (int i = 0; i < K; ++i)
              for (int j = 0; j < V; ++j) pool[head_base(ts, hv) + off(i, j)] = S[size_t(i) * V + j];
        }
      }
      for (int i = 0; i < K; ++i)
        for (int j = 0; j < V; ++j) pool[head_base(slot, hv) + off(i, j)] = S[size_t(i) * V + j];
    }
  }
}

// out: [B, dim] dense. pool: the conv state pool in double.
inline void conv1d_update(const Conv1dParams& p, std::vector<double>& pool, std::vector<double>& out) {
  const int64_t B = p.x.rows, dim = p.x.cols;
  const int width = static_cast<int>(p.weight.cols), hist = width - 1;
  out.assign(size_t(B) * dim, 0.0);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t slot = p.slots[b];
    if (!slot_valid(slot, p.state.num_slots)) continue;
    for (int64_t c = 0; c < dim; ++c) {
      double* st = pool.data() + slot * p.state.slot_stride + c * hist;
      const double x = load(p.x.data, p.x.dtype, b * p.x.row_stride + c);
      double acc = p.bias.data ? load(p.bias.data, p.bias.dtype, c) : 0.0;
      for (int j = 0; j < hist; ++j) acc += load(p.weight.data, p.weight.dtype, c * p.weight.row_stride + j) * st[j];
      acc += load(p.weight.data, p.weight.dtype, c * p.weight.row_stride + hist) * x;
      for (int j = 0; j + 1 < hist; ++j) st[j] = st[j + 1];
      st[hist - 1] = x;
      out[size_t(b) * dim + c] = p.silu ? acc / (1.0 + std::exp(-acc)) : acc;
    }
  }
}

}  // namespace dcukern::ref
