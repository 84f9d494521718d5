// sampling.block / sampling.block.vec — draw one token per row from temperature-scaled softmax(logits)
// after top-k, top-p, min-p (see sampling/params.hpp for the exact rules).
// Contract: any valid call; the vector variant needs 16-byte aligned rows and V, stride multiples of
// 16 bytes. Work split: one block of kThreads per row; no sort of the vocabulary:
//   1. row_max: max, lowest-index argmax, NaN check (greedy rows end here)
//   2. build_histogram over t = log2(p / p_max) in 2048 bins (integer counts and fixed-point masses)
//   3. fast path: the bins that can hold any kept element (plus the top-k boundary bin) hold <= kCap
//      elements: gather them once, sort them in shared memory, apply the three filters exactly and
//      draw by inverse CDF there (3 reads of the row in all);
//      general path: find_cut for top-k, then for top-p (each one gather, or radix digits when a bin
//      is crowded), then draw_kept over the row.
// Determinism: cuts use integer sums; float sums run in a fixed order; no float atomics.
// sample_row is also the split rows' fallback for rows their fast path cannot decide.
#pragma once
#include "dcukern/sampling/kernels/row_passes.hpp"
#include "dcukern/sampling/philox.hpp"

namespace dcukern::sampling_detail {

struct RowParams {
  float temperature, top_p, min_p;
  int32_t top_k;
  bool ok;
};

__device__ inline RowParams row_params(const SamplingArgs& a, int64_t row) {
  RowParams p;
  p.temperature = device_or_host(a.temperature_ptr, a.temperature, row);
  p.top_k = device_or_host(a.top_k_ptr, a.top_k, row);
  p.top_p = device_or_host(a.top_p_ptr, a.top_p, row);
  p.min_p = device_or_host(a.min_p_ptr, a.min_p, row);
  using R = SamplingRowRule;
  p.ok = R::temperature_ok(p.temperature) && R::top_k_ok(p.top_k) && R::top_p_ok(p.top_p) && R::min_p_ok(p.min_p);
  return p;
}

__device__ inline void write_token(const SamplingArgs& a, int64_t row, int64_t token, bool valid) {
  if (threadIdx.x != 0) return;
  if (a.tokens_i64) static_cast<int64_t*>(a.tokens)[row] = token;
  else static_cast<int32_t*>(a.tokens)[row] = int32_t(token);
  if (a.valid) a.valid[row] = valid ? 1 : 0;
}


// Draw from sorted candidates s.cand[0, n): the first n_pre are a prefix of the row's sort order; with
// `tail` the rest is the top-k boundary bin, `gap` elements (of fixed mass gap_mass) further down.
// Applies top-k, top-p (on the top-k mass), min-p exactly and draws by inverse CDF; returns the index.
__device__ inline int64_t draw_sorted(const RowScale& sc, const RowParams& p, bool k_on, bool p_on, float tmin, int n,
                                      uint64_t n_pre, uint64_t gap, uint64_t gap_mass, uint64_t total_mass, float u,
                                      Shared& s) {
  const uint64_t k = uint64_t(p.top_k);
  uint64_t L_keep = n_pre;
  if (k_on) L_keep = L_keep < k ? L_keep : k;
  if (p_on) {
    uint64_t mk = total_mass;
    if (k_on) {  // mass of the top-k set: candidates ranked below k, plus whole bins skipped in between
      uint64_t mine = 0;
      for (int q = 0; q < kCapItems; ++q) {
        const int j = threadIdx.x * kCapItems + q;
        const uint64_t rank = uint64_t(j) < n_pre ? uint64_t(j) : uint64_t(j) + gap;
        if (j < n && rank < k) mine += fixed_mass(sc.t(key_logit(s.cand[j])));
      }
      mk = all_sum(mine, s) + (k > n_pre ? gap_mass : 0);
    }
    const Selected sp = select_candidate(int(n_pre), true, top_p_target(p.top_p, mk), sc, s);
    L_keep = L_keep < uint64_t(sp.j) + 1 ? L_keep : uint64_t(sp.j) + 1;
  }
  // min-p keeps a prefix: the first candidate below the threshold ends it.
  uint64_t first_out = n_pre;
  float e[kCapItems];
  float mine = 0.0f;
  for (int q = 0; q < kCapItems; ++q) {
    const int j = threadIdx.x * kCapItems + q;
    const float t = j < n ? sc.t(key_logit(s.cand[j])) : -INFINITY;
    if (uint64_t(j) < n_pre && t < tmin && uint64_t(j) < first_out) first_out = uint64_t(j);
    e[q] = t;
  }
  first_out = all_min(first_out, s);
  L_keep = L_keep < first_out ? L_keep : first_out;
  for (int q = 0; q < kCapItems; ++q) {
    const int j = threadIdx.x * kCapItems + q;
    e[q] = uint64_t(j) < L_keep ? device_exp2(e[q]) : 0.0f;
    mine += e[q];
  }
  float total;
  float run = exclusive_sum(mine, total, s);
  const float target = u * total;
  uint64_t pick = 0;
  for (int q = 0; q < kCapItems; ++q) {
    const int j = threadIdx.x * kCapItems + q;
    if (e[q] > 0.0f && run <= target) pick = uint64_t(j) + 1;
    run += e[q];
  }
  pick = all_max(pick, s);
  return key_index(s.cand[pick - 1]);
}

// Fast path: everything decided among the sorted candidates of bins [0, hi] (+ the top-k bin).
template <class Loader>
__device__ inline int64_t sample_from_candidates(const Loader& L, const RowScale& sc, const RowParams& p, bool k_on,
                                                 bool p_on, float tmin, int hi, const Crossing& ck,
                                                 uint64_t n_pre, uint64_t mass_pre, uint64_t total_mass, float u,
                                                 Shared& s) {
  const bool tail = k_on && ck.bin > hi;
  const int n = gather_candidates(
      L, sc, [&](float, int b, uint64_t) { return b <= hi || (tail && b == ck.bin); }, s);
  const uint64_t gap = tail ? ck.before_count - n_pre : 0;  // elements between the prefix and the top-k bin
  return draw_sorted(sc, p, k_on, p_on, tmin, n, n_pre, gap, ck.before_mass - mass_pre, total_mass, u, s);
}

// The row's Philox words of `stream` for this call (sampling_words).
__device__ inline Philox4x32 row_words(const SamplingArgs& a, int64_t row, uint32_t stream) {
  const uint64_t seed = device_or_host(a.seed_ptr, a.seed, 0);
  const uint64_t offset = device_or_host(a.offset_ptr, a.offset, 0);
  return sampling_words(seed, offset, uint32_t(row), stream);
}
// The uniform of this row's draw (sampling_uniform).
__device__ inline float row_uniform(const SamplingArgs& a, int64_t row) {
  return uniform_of_word(row_words(a, row, 0).v[0]);
}

__device__ inline RowScale row_scale(float m, const RowParams& p) {
  return RowScale{m, fminf(kLog2e / p.temperature, FLT_MAX)};
}

// The min-p threshold on t = log2(p / p_max); -inf when min-p is off.
__device__ inline float row_tmin(const RowParams& p) { return p.min_p > 0.0f ? device_log2(p.min_p) : -INFINITY; }

// One row, one block: the whole algorithm above; writes the token and the validity flag. `uniform()`
// gives the draw's uniform (called once, where a draw needs it).
template <class Loader, class Uniform>
__device__ inline void sample_row_with(const Loader& L, const SamplingArgs& a, int64_t row, Uniform uniform,
                                       Shared& s) {
  const RowParams p = row_params(a, row);
  const RowMax mx = row_max(L, s);
  const float m = key_logit(mx.key);
  if (mx.nan || !p.ok || m == -INFINITY) return write_token(a, row, kSamplingInvalidToken, false);
  if (p.temperature == 0.0f || p.top_k == 1) return write_token(a, row, key_index(mx.key), true);

  const RowScale sc = row_scale(m, p);
  const bool k_on = p.top_k > 0 && int64_t(p.top_k) < a.vocab;
  const bool p_on = p.top_p < 1.0f;
  const bool mp_on = p.min_p > 0.0f;
  const float tmin = row_tmin(p);
  const float u = uniform();
  if (!k_on && !p_on) return write_token(a, row, draw_kept(L, sc, 0, tmin, u, s), true);

  build_histogram(L, sc, p_on, s);
  int hi = kBins - 1;
  Crossing ck{};
  if (k_on) {
    ck = find_crossing(s.bin_count, s.bin_mass, kBins, false, false, uint64_t(p.top_k), s);
    hi = ck.bin;
  }
  const Crossing all = find_crossing(s.bin_count, s.bin_mass, kBins, false, false, 1, s);
  if (p_on) {
    const uint64_t bound = k_on ? ck.before_mass + s.bin_mass[ck.bin] : all.total_mass;
    const Crossing cp = find_crossing(s.bin_count, s.bin_mass, kBins, false, true, top_p_target(p.top_p, bound), s);
    hi = cp.bin < hi ? cp.bin : hi;
  }
  if (mp_on) hi = bin_of(tmin) < hi ? bin_of(tmin) : hi;
  // Count and mass of bins [0, hi].
  uint64_t c = 0, mass = 0;
  for (int b = threadIdx.x; b <= hi; b += kThreads) {
    c += s.bin_count[b];
    mass += s.bin_mass[b];
  }
  const uint64_t n_pre = all_sum(c, s);
  const uint64_t mass_pre = all_sum(mass, s);
  const uint64_t n_tail = k_on && ck.bin > hi ? s.bin_count[ck.bin] : 0;
  if (n_pre + n_tail <= uint64_t(kCap)) {
    const int64_t token =
        sample_from_candidates(L, sc, p, k_on, p_on, tmin, hi, ck, n_pre, mass_pre, all.total_mass, u, s);
    return write_token(a, row, token, true);
  }
  // General path.
  uint64_t cut = 0, mk = all.total_mass;
  if (k_on) {
    const Cut c_k = find_cut(L, sc, false, uint64_t(p.top_k), s);
    cut = c_k.key;
    mk = c_k.mass_through;
  }
  if (p_on) {
    const Cut c_p = find_cut(L, sc, true, top_p_target(p.top_p, mk), s);
    cut = c_p.key > cut ? c_p.key : cut;
  }
  write_token(a, row, draw_kept(L, sc, cut, tmin, u, s), true);
}

// sample_row_with at the row's uniform (row_uniform).
template <class Loader>
__device__ inline void sample_row(const Loader& L, const SamplingArgs& a, int64_t row, Shared& s) {
  sample_row_with(L, a, row, [&] { return row_uniform(a, row); }, s);
}

template <bool kVec, DType DT>
__global__ void __launch_bounds__(kThreads, DCUKERN_CUDA_MIN_BLOCKS(2)) sampling_block_kernel(SamplingArgs a) {
  __shared__ Shared s;
  const int64_t row = blockIdx.x;
  sample_row(RowLoader<DT, kVec>{row_start<DT>(a, row), a.vocab}, a, row, s);
}

// Adds 1 to the device offset after the draw (stream order), so a replayed graph draws new numbers. (A
// template, as every kernel of these headers: one definition in every translation unit that includes it.)
template <int = 0>
__global__ void sampling_advance_offset_kernel(uint64_t* offset) { *offset += 1; }

}  // namespace dcukern::sampling_detail
