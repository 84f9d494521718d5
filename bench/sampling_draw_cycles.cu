// SM cycles of the split rows' last steps in isolation: order_candidates (split_rows.hpp) and draw_ordered
// over a row's gathered candidates, one block a row, the candidates already in shared memory (as a cluster
// row's first block has them). For tuning those steps: sampling_bench times whole calls, where they are one
// part of a row's chain (bench/sampling_trace_report.py splits the chain into its phases).
//   sampling_draw_cycles    prints, per candidate set: the candidates, those order_candidates keeps,
//                           whether it left them in bucket order, and the median and largest cycles of
//                           each step over 32 rows (clock64 of thread 0 between block barriers); each
//                           set twice: with the row's top value bin found among the candidates (as the
//                           split kernels do) and passed in (order_candidates' max_key); and where one
//                           wave draws, how many of its positions differ from the block-wide draw's over
//                           192 uniforms and filters a row (none may: the same masses and rules).
// Candidate sets: the elements of a row of V normal logits (sd 2, as sampling_bench's) in value bins at or
// above the bin that holds the row's target-th largest (about 5.5 k for small k, whose five tiles each list
// a little over k; sqrt(2048 k), the threshold kernel's aim, above k = 128), in random order; bf16 rows
// (each bin one logit) and fp32 rows.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "harness.hpp"
#include "dcukern/ref/gemv.hpp"  // bf16 rounding
#include "dcukern/sampling/kernels/split_rows.hpp"

namespace {

using namespace dcukern::sampling_detail;
constexpr int kRows = 32;
constexpr int kOut = 7;  // per row: cycles of each step, kept, bucket order, token, wave/block draws apart, draws

template <bool kBf16>
__global__ void __launch_bounds__(kThreads) draw_cycles_kernel(const uint64_t* cand, const int* counts,
                                                               const uint64_t* max_keys, int top_k, float top_p,
                                                               long long* out) {
  __shared__ Shared s;
  const int row = blockIdx.x, n = counts[row];
  for (int j = threadIdx.x; j < n; j += kThreads) s.cand[j] = cand[int64_t(row) * kCap + j];
  zero_few_buckets(s);
  __syncthreads();
  const long long t0 = clock64();
  const OrderedCandidates o = order_candidates<kBf16>(max_keys ? max_keys[row] : 0, top_k, n, s);
  __syncthreads();
  const long long t1 = clock64();
  const RowParams p{1.0f, top_p, 0.0f, top_k, true};
  const int64_t token = draw_ordered(p, o, 0.37f, s);
  __syncthreads();
  const long long t2 = clock64();
  // Where one wave draws: the position it picks against draw_sorted_candidates' on the same candidates, over
  // uniforms and filters (they must agree: the same fixed-point masses and rules).
  long long trials = 0, differ = 0;
  const float top_ps[3] = {1.0f, top_p, 0.5f}, min_ps[2] = {0.0f, 0.05f};
  if (o.n <= kWaveDrawCap)
    for (float q_top_p : top_ps)
      for (float q_min_p : min_ps)
        for (int i = 0; i < 32; ++i) {
          const RowParams q{1.0f, q_top_p, q_min_p, top_k, true};
          const RowScale sc = row_scale(key_logit(s.cand[0]), q);
          const float u = (float(i) + 0.5f) / 32.0f;
          if (int(threadIdx.x) < dcukern::kWarpSize) wave_draw(sc, q, row_tmin(q), o.n, u, s);
          __syncthreads();
          const int by_wave = int(s.b64[0]);
          __syncthreads();
          ++trials, differ += draw_sorted_candidates(sc, q, row_tmin(q), o.n, u, s) != by_wave ? 1 : 0;
        }
  if (threadIdx.x == 0) {
    long long* r = out + row * kOut;
    r[0] = t1 - t0, r[1] = t2 - t1, r[2] = o.n, r[3] = o.by_bucket, r[4] = token, r[5] = differ, r[6] = trials;
  }
}

uint32_t order_key_host(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if (u == 0x80000000u) u = 0;
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// Each row's candidates (at most kCap, sort keys as the split rows append them) from its own logits.
void candidate_sets(int64_t vocab, int target, bool bf16, std::vector<uint64_t>& cand, std::vector<int>& counts,
                    std::vector<uint64_t>& max_keys) {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  cand.assign(size_t(kRows) * kCap, 0);
  counts.assign(kRows, 0);
  max_keys.assign(kRows, 0);
  std::vector<float> x(static_cast<size_t>(vocab));
  std::vector<uint32_t> bins(static_cast<size_t>(vocab));
  for (int r = 0; r < kRows; ++r) {
    for (int64_t i = 0; i < vocab; ++i) {
      x[i] = bf16 ? dcukern::ref::bf16_to_float(dcukern::ref::float_to_bf16(nd(rng))) : nd(rng);
      bins[i] = order_key_host(x[i]) >> 16;
    }
    std::vector<uint32_t> sorted = bins;
    std::nth_element(sorted.begin(), sorted.begin() + (target - 1), sorted.end(), std::greater<uint32_t>());
    const uint32_t cut = sorted[target - 1];
    std::vector<uint64_t> c;
    for (int64_t i = 0; i < vocab; ++i)
      if (bins[i] >= cut) c.push_back(uint64_t(order_key_host(x[i])) << 32 | uint64_t(0xFFFFFFFFu - uint32_t(i)));
    std::shuffle(c.begin(), c.end(), rng);
    c.resize(std::min<size_t>(c.size(), kCap));
    counts[r] = int(c.size());
    max_keys[r] = *std::max_element(c.begin(), c.end());
    std::copy(c.begin(), c.end(), cand.begin() + int64_t(r) * kCap);
  }
}

}  // namespace

int main() {
  struct Case {
    int top_k, target;
  };
  const Case cases[] = {{20, 110}, {50, 275}, {200, 640}, {1000, 1431}};
  uint64_t* d_cand;
  int* d_counts;
  long long* d_out;
  uint64_t* d_max_keys;
  BENCH_RT(dcukern::runtime_malloc(reinterpret_cast<void**>(&d_cand), sizeof(uint64_t) * kRows * kCap));
  BENCH_RT(dcukern::runtime_malloc(reinterpret_cast<void**>(&d_counts), sizeof(int) * kRows));
  BENCH_RT(dcukern::runtime_malloc(reinterpret_cast<void**>(&d_out), sizeof(long long) * kRows * kOut));
  BENCH_RT(dcukern::runtime_malloc(reinterpret_cast<void**>(&d_max_keys), sizeof(uint64_t) * kRows));
  std::printf("%-6s %7s %6s %6s %5s %9s %10s %10s %10s %10s %12s\n", "dtype", "V", "top_k", "cands", "top", "kept",
              "bucket", "order_med", "order_max", "draw_med", "wave!=block");
  for (bool bf16 : {true, false})
    for (const Case& c : cases) {
      std::vector<uint64_t> cand, max_keys;
      std::vector<int> counts;
      candidate_sets(151936, c.target, bf16, cand, counts, max_keys);
      BENCH_RT(dcukern::runtime_copy_to_device(d_cand, cand.data(), sizeof(uint64_t) * cand.size()));
      BENCH_RT(dcukern::runtime_copy_to_device(d_counts, counts.data(), sizeof(int) * kRows));
      BENCH_RT(dcukern::runtime_copy_to_device(d_max_keys, max_keys.data(), sizeof(uint64_t) * kRows));
      for (bool known_top : {false, true}) {
        const uint64_t* top = known_top ? d_max_keys : nullptr;
        for (int run = 0; run < 3; ++run) {  // the last run's cycles are printed (code and data warm)
          if (bf16) draw_cycles_kernel<true><<<kRows, kThreads>>>(d_cand, d_counts, top, c.top_k, 0.8f, d_out);
          else draw_cycles_kernel<false><<<kRows, kThreads>>>(d_cand, d_counts, top, c.top_k, 0.8f, d_out);
        }
        BENCH_RT(dcukern::runtime_last_error());
        BENCH_RT(dcukern::runtime_synchronize());
        std::vector<long long> out(size_t(kRows) * kOut);
        BENCH_RT(dcukern::runtime_copy_to_host(out.data(), d_out, sizeof(long long) * out.size()));
        std::vector<long long> order, draw;
        long long differ = 0, trials = 0;
        for (int r = 0; r < kRows; ++r) {
          order.push_back(out[r * kOut]), draw.push_back(out[r * kOut + 1]);
          differ += out[r * kOut + 5], trials += out[r * kOut + 6];
        }
        std::sort(order.begin(), order.end());
        std::sort(draw.begin(), draw.end());
        std::printf("%-6s %7d %6d %6d %5s %9lld %10s %10lld %10lld %10lld %5lld of %4lld\n", bf16 ? "bf16" : "f32",
                    151936, c.top_k, counts[0], known_top ? "known" : "found", out[2], out[3] ? "yes" : "no",
                    order[kRows / 2], order[kRows - 1], draw[kRows / 2], differ, trials);
      }
    }
  BENCH_RT(dcukern::runtime_free(d_cand));
  BENCH_RT(dcukern::runtime_free(d_counts));
  BENCH_RT(dcukern::runtime_free(d_out));
  BENCH_RT(dcukern::runtime_free(d_max_keys));
  return 0;
}
