// sampling.transform.block / sampling.transform.block.vec — softmax with temperature, top_k_mask_logits,
// top_k_renorm_probs, top_p_renorm_probs (rules: sampling/transform_params.hpp).
// Contract: any valid call; the vector variant needs 16-byte aligned input rows, V and stride multiples
// of 16 bytes (outputs are written element by element). Work split: one block of kThreads per row,
// passes over the row as in the sampler:
//   row_max (NaN and all -inf checks), then
//   softmax: the sum of exp2(t) over the row, then the write pass (T = 0: one-hot at the argmax);
//   top-k / top-p: build_histogram + find_cut give the cut sort key exactly (integer counts and
//   fixed-point masses), renorm sums the kept values, then the write pass keeps {key >= cut}.
// Probabilities are read as log2(p), so t = log2(p / p_max) and the cuts are those the sampler makes.
// Determinism: integer cuts; float sums per thread in tile order, then one block reduction.
#pragma once
#include "dcukern/sampling/kernels/row_passes.hpp"
#include "dcukern/sampling/transform_params.hpp"

namespace dcukern::sampling_detail {

struct TransformArgs {
  const void* in;
  int64_t ld_in, vocab;
  void* out;
  int64_t ld_out;
  uint8_t* valid;
  float temperature;
  const float* temperature_ptr;
  int32_t top_k;
  const int32_t* top_k_ptr;
  float top_p;
  const float* top_p_ptr;
};

// Probabilities as log2(p): 0 -> -inf, negative or NaN -> NaN (which makes the row invalid).
template <class Base>
struct Log2Loader {
  Base base;
  int64_t vocab;
  __device__ __forceinline__ int64_t index(int64_t b, int u) const { return base.index(b, u); }
  __device__ __forceinline__ void load(int64_t b, float (&x)[kItems]) const {
    base.load(b, x);
#pragma unroll
    for (int u = 0; u < kItems; ++u) x[u] = x[u] > 0.0f ? device_log2(x[u]) : x[u] == 0.0f ? -INFINITY : NAN;
  }
};

template <DType ODT>
__device__ __forceinline__ void store_value(void* row, int64_t i, float v) {
  if constexpr (ODT == DType::f32) static_cast<float*>(row)[i] = v;
  else static_cast<uint16_t*>(row)[i] = from_float<ODT>(v);
}

// Sum over the row of f(t, key), per thread in tile order, then one block reduction.
template <class Loader, class F>
__device__ inline float row_sum(const Loader& L, const RowScale& sc, F f, Shared& s) {
  float sum = 0.0f;
  for_each_element(L, [&](float x, int64_t i) { sum += f(sc.t(finite_logit(x)), sort_key(finite_logit(x), i)); });
  return all_sum(sum, s);
}

// Write pass: out[i] = f(t, key, loaded value).
template <DType ODT, class Loader, class F>
__device__ inline void write_row(const Loader& L, const RowScale& sc, void* out, F f) {
  for_each_element(L, [&](float x, int64_t i) {
    store_value<ODT>(out, i, f(sc.t(finite_logit(x)), sort_key(finite_logit(x), i), x));
  });
}

template <RowTransform kOp, DType ODT, class Loader>
__device__ inline void transform_row(const Loader& L, const TransformArgs& a, int64_t row, void* out, Shared& s) {
  using R = SamplingRowRule;
  const float temperature = device_or_host(a.temperature_ptr, a.temperature, row);
  const int32_t top_k = device_or_host(a.top_k_ptr, a.top_k, row);
  const float top_p = device_or_host(a.top_p_ptr, a.top_p, row);
  const bool ok = R::temperature_ok(temperature) && R::top_k_ok(top_k) && R::top_p_ok(top_p);
  constexpr bool kMask = kOp == RowTransform::top_k_mask_logits;
  constexpr bool kProbs = kOp == RowTransform::top_k_renorm_probs || kOp == RowTransform::top_p_renorm_probs;
  const float fill = kMask ? -INFINITY : 0.0f;
  const RowMax mx = row_max(L, s);
  const float m = key_logit(mx.key);
  bool valid = !mx.nan && ok && m != -INFINITY;
  float c = kProbs ? 1.0f : kLog2e;
  if (kOp == RowTransform::softmax && temperature > 0.0f) c = fminf(kLog2e / temperature, FLT_MAX);
  const RowScale sc{m, c};
  uint64_t cut = 0;  // kept: sort key >= cut
  bool one_hot = false;
  if (valid && kOp == RowTransform::softmax && temperature == 0.0f) {
    cut = mx.key;
    one_hot = true;
  }
  if (valid && (kMask || kOp == RowTransform::top_k_renorm_probs) && top_k > 0 && int64_t(top_k) < a.vocab) {
    build_histogram(L, sc, false, s);
    cut = find_cut(L, sc, false, uint64_t(top_k), s).key;
  }
  if (valid && kOp == RowTransform::top_p_renorm_probs) {
    build_histogram(L, sc, true, s);
    const uint64_t total = find_crossing(s.bin_count, s.bin_mass, kBins, false, false, 1, s).total_mass;
    if (top_p < 1.0f) cut = find_cut(L, sc, true, top_p_target(top_p, total), s).key;
  }
  // Normaliser: softmax sums every exp2(t), renorm the kept probabilities (as exp2(t) = p / p_max).
  float scale = 1.0f;
  if (valid && !kMask && !one_hot) {
    const float sum = row_sum(L, sc, [&](float t, uint64_t key) { return key >= cut ? device_exp2(t) : 0.0f; }, s);
    valid = sum > 0.0f;
    scale = valid ? 1.0f / sum : 0.0f;
  }
  if (threadIdx.x == 0 && a.valid) a.valid[row] = valid ? 1 : 0;
  write_row<ODT>(L, sc, out, [&](float t, uint64_t key, float r) {
    if (!valid) return fill;
    if (kMask) return key >= cut ? r : -INFINITY;
    if (one_hot) return key == cut ? 1.0f : 0.0f;
    return key >= cut ? device_exp2(t) * scale : 0.0f;
  });
}

template <bool kVec, DType DT, RowTransform kOp>
__global__ void __launch_bounds__(kThreads, DCUKERN_CUDA_MIN_BLOCKS(2)) sampling_transform_kernel(TransformArgs a) {
  __shared__ Shared s;
  constexpr int kElt = DT == DType::f32 ? 4 : 2;
  constexpr DType kOut = kOp == RowTransform::top_k_mask_logits ? DT : DType::f32;
  constexpr int kOutElt = kOut == DType::f32 ? 4 : 2;
  const int64_t row = blockIdx.x;
  const RowLoader<DT, kVec> raw{static_cast<const char*>(a.in) + row * a.ld_in * kElt, a.vocab};
  void* out = static_cast<char*>(a.out) + row * a.ld_out * kOutElt;
  if constexpr (kOp == RowTransform::top_k_renorm_probs || kOp == RowTransform::top_p_renorm_probs)
    transform_row<kOp, kOut>(Log2Loader<RowLoader<DT, kVec>>{raw, a.vocab}, a, row, out, s);
  else
    transform_row<kOp, kOut>(raw, a, row, out, s);
}

}  // namespace dcukern::sampling_detail
