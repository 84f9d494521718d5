// Sampling device tests, the draws' distribution against the host reference (ref/sampling.hpp), by the
// exactness check of sampling_check.hpp:
//  - small V (32, 257, 1000) under every filter combination; V = 151936 concentrated and flat; per-row
//    device parameters (each row's draws against its own parameters' distribution).
//  - rows without a filter on the unfiltered row (sampling.unfiltered.vec): small V, V = 151936, ties at a
//    tiny temperature and between +inf logits, seeds, greedy and invalid rows, graph replay.
//  - rows whose only filter is top-p on the top-p row (sampling.top_p.vec): small V, V = 151936, B = 1 / 32 /
//    1024, a top_p small enough that the four proposals mostly miss (the fallback's draw), per-row top_p
//    and temperature, seeds, greedy and invalid rows, graph replay.
//  - rows whose only filter is min-p on the min-p row (sampling.min_p.vec):
//    small V, min_p 1 over ties in three tiles, V = 151936, B = 1 / 32 / 1024, per-row min_p and
//    temperature, seeds, greedy and invalid rows, graph replay.
//  - the split rows' paths: few candidates ordered by bucket, a tile's list overflowing, a misleading sample,
//    tiles' own cuts, one workspace over calls of different shapes; rows whose largest logit is not above 0;
//    the threshold kernel's bin against its definition.
//  - every case runs the row automatic selection picks without a workspace (a one-block row) and the
//    split row pinned (sampling.split.vec where the shape allows 16-byte loads, else sampling.split),
//    with a workspace; most cases also the stream row (sampling.stream.vec) where 16-byte loads fit and B
//    is in its range.
#include <cfloat>
#include <cstring>
#include <utility>

#include "dcukern/platform/device_context.hpp"
#include "dcukern/sampling/kernels/split_threshold.hpp"
#include "sampling_check.hpp"

using namespace dcukern;
using namespace dcukern::test::sampling_check;
using dcukern::test::DeviceBuffer;

TEST_CASE("small vocabularies: draws follow the exact filtered distribution under every filter combination") {
  struct Case {
    DType dt;
    int64_t v;
  };
  const Case cases[] = {{DType::f32, 32}, {DType::bf16, 257}, {DType::f16, 1000}, {DType::f32, 1000}};
  int n = 0;
  for (const Case& cs : cases)
    for (const auto& rp : filter_combinations(cs.v)) {
      if (quick_mode() && n % 3) {
        ++n;
        continue;
      }
      const Batch lb(cs.dt, logits_for(cs.dt, cs.v, 2.0, rp, 100 + n), quick_mode() ? 64 : 1024);
      check_distribution(lb, rp);
      for (const char* row : workspace_rows(lb)) check_distribution(lb, rp, row);
      if (rp.top_k >= 2 && rp.top_k <= 128) {  // small batches: the tiles' own cuts (split_local_top_k)
        const Batch small(cs.dt, lb.row, quick_mode() ? 8 : 32);
        check_distribution(small, rp, split_row(small));
      }
      ++n;
    }
  // The generic row on a vector-capable shape agrees in distribution too.
  ref::SamplingRowParams rp;
  rp.top_k = 50;
  rp.top_p = 0.9;
  const Batch lb(DType::f32, logits_for(DType::f32, 1000, 2.0, rp, 7), quick_mode() ? 64 : 1024);
  check_distribution(lb, rp, "sampling.block");
}

TEST_CASE("per-row parameters from device arrays: each row's draws follow its own row's distribution") {
  // Two parameter sets on alternate rows (every parameter a device array), their draws counted apart: a
  // row that took its neighbour's parameters, or the batch's first, would draw from the other set's
  // distribution (both sets keep most of the same tokens, so membership alone would not see it).
  const int64_t v = 1000, b = quick_mode() ? 64 : 1024;
  for (DType dt : {DType::f32, DType::bf16}) {
    const ref::SamplingRowParams base = ref::row_params(1.0, 0, 1.0, 0.0);
    const Batch probe(dt, logits_for(dt, v, 2.0, base, 77), b);
    const ref::SamplingRowParams sets[2] = {away_from_edges(probe.row, ref::row_params(0.5, 50, 0.9, 0.0)),
                                            away_from_edges(probe.row, ref::row_params(2.0, 0, 0.95, 0.01))};
    std::vector<float> ts(b), ps(b), mps(b);
    std::vector<int32_t> ks(b);
    for (int64_t r = 0; r < b; ++r) {
      const ref::SamplingRowParams& rp = sets[r % 2];
      ts[r] = float(rp.temperature), ps[r] = float(rp.top_p), mps[r] = float(rp.min_p), ks[r] = int32_t(rp.top_k);
    }
    DeviceBuffer<float> dt_(b), dp(b), dmp(b);
    DeviceBuffer<int32_t> dk(b);
    dt_.upload(ts), dp.upload(ps), dmp.upload(mps), dk.upload(ks);
    std::vector<const char*> rows = workspace_rows(probe);
    rows.push_back(kAutoRow);
    for (const char* row : rows) {
      const DrawCounts drawn = draw_counts(probe, base, row, 2, [&](SamplingParams& p) {
        p.temperature.device = dt_.get(), p.top_k.device = dk.get(), p.top_p.device = dp.get();
        p.min_p.device = dmp.get();
      });
      for (int set = 0; set < 2; ++set) {
        INFO(std::string(dtype_name(dt)) << " row=" << std::string(row ? row : "auto") << " set " << set << " "
                                         << describe(sets[set]));
        check_counts(ref::filtered_distribution(probe.row, sets[set]), drawn.by_class[size_t(set)],
                     drawn.draws_per_class);
      }
    }
  }
}

TEST_CASE("V = 151936: concentrated and flat distributions") {
  const int64_t b = quick_mode() ? 8 : 1024;
  const LargeRows large(42);
  const std::vector<float>&conc = large.conc, &flat = large.flat;
  auto rp = [](int64_t k, double p, double mp) { return ref::row_params(1.0, k, p, mp); };
  const Batch c32(DType::f32, conc, b);
  for (const char* row : {kAutoRow, split_row(c32), stream_row(c32)})
    for (const auto& r : {rp(0, 1.0, 0.0), rp(50, 0.9, 0.0), rp(0, 0.95, 0.0), rp(1000, 0.95, 0.01)})
      check_distribution(c32, away_from_edges(c32.row, r), row);
  const Batch f16(DType::bf16, flat, b);
  for (const char* row : {kAutoRow, split_row(f16), stream_row(f16)})
    for (const auto& r : {rp(0, 0.95, 0.0), rp(1000, 0.8, 0.0), rp(0, 1.0, 0.9), rp(20, 0.95, 0.0)})
      check_distribution(f16, away_from_edges(f16.row, r), row);
  // Small batches: rows of small k take their tiles' own cuts (split_local_top_k).
  const int64_t small_b = quick_mode() ? 4 : 32;
  const Batch c32_small(DType::f32, conc, small_b), f16_small(DType::bf16, flat, small_b);
  check_distribution(c32_small, away_from_edges(c32_small.row, rp(50, 0.9, 0.0)), split_row(c32_small));
  // fp32 at B = 32: 40 elements a thread where 32 rows' tiles then fit one round (split_wide_f32: 132
  // compute units), with the threshold kernel and the fine buckets of top_k 1000.
  const Batch c32_wide(DType::f32, conc, 32);
  check_distribution(c32_wide, away_from_edges(c32_wide.row, rp(1000, 0.95, 0.01)), split_row(c32_wide));
  check_distribution(f16_small, away_from_edges(f16_small.row, rp(20, 0.95, 0.0)), split_row(f16_small));
  // bf16 at B = 32 (64 elements a thread, split_items) with the threshold kernel.
  check_distribution(f16_small, away_from_edges(f16_small.row, rp(1000, 0.8, 0.0)), split_row(f16_small));
  // bf16 below kSplitPairsBatch rows: a cluster of 5 tiles a row where the device has clusters
  // (split_items), with the tiles' own cuts and with the threshold kernel.
  const Batch f16_few(DType::bf16, flat, quick_mode() ? 2 : 8);
  for (const auto& r : {rp(20, 0.95, 0.0), rp(1000, 0.8, 0.0)})
    check_distribution(f16_few, away_from_edges(f16_few.row, r), split_row(f16_few));
  // bf16 over the normal background: every value bin one logit, ~40 candidates a bin near the k-th at
  // top_k 1000 (sort_top_by_bin's bucket order, token_in_bucket_order), at B = 32 and as clusters.
  const Batch c16_small(DType::bf16, conc, small_b), c16_few(DType::bf16, conc, quick_mode() ? 2 : 8);
  for (const Batch* lb : {&c16_small, &c16_few})
    for (const auto& r : {rp(1000, 0.95, 0.01), rp(200, 1.0, 0.0), rp(50, 0.9, 0.0)})
      check_distribution(*lb, away_from_edges(lb->row, r), split_row(*lb));
}

TEST_CASE("rows without a filter (sampling.unfiltered.vec): the whole softmax, ties at a tiny T, +inf, seeds") {
  auto rp = [](double t, int64_t k) { return ref::row_params(t, k); };
  const char* const row = "sampling.unfiltered.vec";
  // Small vocabularies (one partial tile), top_k 0 and top_k > V (both off).
  check_small_vocabularies(row, {rp(1.0, 0), rp(0.7, 1005)}, 300);
  // V = 151936 (19 tiles a row, the last partial): concentrated and flat, at T = 1 and 0.5.
  const LargeRows large(43);
  const int64_t v = large.v, b = quick_mode() ? 8 : 1024;
  const std::vector<float>&conc = large.conc, &flat = large.flat;
  for (DType dt : {DType::f32, DType::bf16}) {
    const Batch c(dt, conc, b), f(dt, flat, b);
    for (double t : {1.0, 0.5}) {
      check_distribution(c, rp(t, 0), row);
      check_distribution(f, rp(t, 0), row);
    }
  }
  // Small batches (the rows above: 1024): B = 1 and 32.
  for (int64_t small_b : {int64_t(1), int64_t(32)}) {
    const Batch c(DType::f32, conc, small_b);
    check_distribution(c, rp(1.0, 0), row);
  }
  // Ties across tiles at T = 1e-6: two equal maxima in tiles 0 and 12 share the draws, a logit 1e-5 below
  // them in tile 8 takes e^-10 of their mass, the rest none; two +inf logits at T = 1 share them likewise.
  std::vector<float> ties(v, -1.0f);
  ties[10] = ties[100000] = 3.0f;
  ties[70000] = 3.0f - 1e-5f;
  const Batch tied(DType::f32, ties, b);
  check_distribution(tied, rp(1e-6, 0), row);
  std::vector<float> infs(4096, 0.0f);
  infs[5] = infs[4000] = std::numeric_limits<float>::infinity();
  const Batch inf_row(DType::f32, infs, quick_mode() ? 64 : 1024);
  check_distribution(inf_row, rp(1.0, 0), row);
  // Same seed and offset: the same bits; other offsets: independent draws.
  check_seed_streams(row, rp(1.0, 0));
}

TEST_CASE("rows whose only filter is top-p (sampling.top_p.vec): proposals, their check, the fallback") {
  auto rp = [](double t, double p) { return ref::row_params(t, 0, p); };
  const char* const row = "sampling.top_p.vec";
  // Small vocabularies (one partial tile) at three temperatures and top_p values.
  check_small_vocabularies(row, {rp(1.3, 0.9), rp(1.0, 0.7), rp(0.7, 0.5)}, 500);
  // top_p 0.05 over a near-flat row: the set holds ~5 % of the mass, so all four proposals miss ~80 % of
  // the time and the row's last block draws by the one-block algorithm at the fallback's uniform.
  const Batch near_flat(DType::f32, logits_for(DType::f32, 1000, 0.3, rp(1.0, 0.05), 600), quick_mode() ? 64 : 1024);
  check_distribution(near_flat, away_from_edges(near_flat.row, rp(1.0, 0.05)), row);
  // V = 151936 (19 tiles a row, the last partial): concentrated and flat, f32 and bf16, two top_p, T 1 and 0.5.
  LargeRows large(44);
  const int64_t b = quick_mode() ? 8 : 1024;
  const std::vector<float>&conc = large.conc, &flat = large.flat;
  // (quick mode, for the sanitizers and the simulated device: f32 and T = 0.5 alone)
  const auto dts = quick_mode() ? std::vector<DType>{DType::f32} : std::vector<DType>{DType::f32, DType::bf16};
  const auto rps = quick_mode() ? std::vector<ref::SamplingRowParams>{rp(0.5, 0.9)}
                                : std::vector<ref::SamplingRowParams>{rp(1.0, 0.95), rp(1.0, 0.8), rp(0.5, 0.9)};
  for (DType dt : dts) {
    const Batch c(dt, conc, b), f(dt, flat, b);
    for (const auto& r : rps) {
      check_distribution(c, away_from_edges(c.row, r), row);
      check_distribution(f, away_from_edges(f.row, r), row);
    }
  }
  // Small batches: B = 1 and 32 (quick mode: B = 1).
  for (int64_t small_b : quick_mode() ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 32}) {
    const Batch c(DType::f32, conc, small_b);
    check_distribution(c, away_from_edges(c.row, rp(1.0, 0.9)), row);
  }
  // Per-row top_p {1, 0.9, 0.5, 0.05} (0: out of range) and temperature.
  check_per_row_filter(row, &SamplingParams::top_p, {1.0f, 0.9f, 0.5f, 0.05f}, 0.0f, &ref::SamplingRowParams::top_p,
                       large.rng);
  // Same seed and offset: the same bits; other offsets: independent draws.
  check_seed_streams(row, rp(1.0, 0.6));
}

TEST_CASE("rows whose only filter is min-p (sampling.min_p.vec): the row's maximum, then a draw over kept weights") {
  auto rp = [](double t, double mp) { return ref::row_params(t, 0, 1.0, mp); };
  const char* const row = "sampling.min_p.vec";
  // Small vocabularies (one partial tile) at three temperatures and min_p values.
  check_small_vocabularies(row, {rp(1.3, 0.05), rp(1.0, 0.1), rp(0.7, 0.3)}, 700);
  // min_p 1 keeps the row's maxima alone: three equal ones in tiles 0, 9 and 18 share the draws.
  LargeRows large(45);
  std::vector<float> tied = large.flat;
  tied[3] = tied[77777] = tied[151935] = 1.0f;
  const Batch tied_rows(DType::f32, tied, quick_mode() ? 8 : 1024);
  check_distribution(tied_rows, rp(1.0, 1.0), row);
  // V = 151936: concentrated and flat, f32 and bf16; min_p 0.05 keeps a few tokens of the concentrated row
  // and the whole flat one at T = 1; min_p 0.9 at T 0.1 the flat one's elements within 0.0105 of its
  // maximum (~1 %).
  const int64_t b = quick_mode() ? 8 : 1024;
  const auto dts = quick_mode() ? std::vector<DType>{DType::f32} : std::vector<DType>{DType::f32, DType::bf16};
  const auto rps = quick_mode() ? std::vector<ref::SamplingRowParams>{rp(0.5, 0.1)}
                                : std::vector<ref::SamplingRowParams>{rp(1.0, 0.05), rp(0.1, 0.9), rp(0.5, 0.1)};
  for (DType dt : dts) {
    const Batch c(dt, large.conc, b), f(dt, large.flat, b);
    for (const auto& r : rps) {
      check_distribution(c, away_from_edges(c.row, r), row);
      check_distribution(f, away_from_edges(f.row, r), row);
    }
  }
  // Small batches: B = 1 and 32 (quick mode: B = 1).
  for (int64_t small_b : quick_mode() ? std::vector<int64_t>{1} : std::vector<int64_t>{1, 32}) {
    const Batch c(DType::f32, large.conc, small_b);
    check_distribution(c, away_from_edges(c.row, rp(1.0, 0.01)), row);
  }
  // Per-row min_p {0, 0.05, 0.5, 1} (1.5: out of range) and temperature: the rows of min_p 0 draw from the
  // whole row in the first kernel.
  check_per_row_filter(row, &SamplingParams::min_p, {0.0f, 0.05f, 0.5f, 1.0f}, 1.5f, &ref::SamplingRowParams::min_p,
                       large.rng);
  // Same seed and offset: the same bits; other offsets: independent draws.
  check_seed_streams(row, rp(1.0, 0.5));
}

TEST_CASE("bf16 rows gathered from the tiles' lists: few candidates ordered by bucket, or the fallback") {
  // V = 248320 at B = 32: the tiles hand over through L2 (no cluster), and at top_k 20 and 50 the row's
  // candidates (8 tiles' lists of a little over k) are more than 128 and at most a block's threads, so the
  // last block orders them by value bin (order_few_by_bucket). Rows: a normal background (a few keys a
  // bin near the k-th: at top_k 50 one wave draws and finds the key); 50 ties at 7.5 over it (the k-th of
  // top_k 50 among them: more than one wave's candidates, the block-wide draw and its bucket lookup);
  // flat (hundreds a bin: more than kRankBucket, so sort_top_by_bin, which sorts them); one spike far
  // above a normal background (the k-th more than kFewBuckets bins below the largest: sort_top_by_bin).
  const int64_t v = 248320;
  std::mt19937_64 rng(31);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  std::uniform_real_distribution<float> ud(-0.5f, 0.5f);
  std::vector<float> normal(v), ties(v), flat(v), spike(v);
  for (int64_t i = 0; i < v; ++i) normal[i] = nd(rng), ties[i] = nd(rng), flat[i] = ud(rng), spike[i] = nd(rng);
  for (int64_t i = 0; i < 50; ++i) ties[(i * 4969 + 7) % v] = 7.5f;  // ~22 larger logits (normal, sd 2)
  spike[123457] = 40.0f;                                            // ~350 bins above the k-th
  ref::SamplingRowParams rp;
  rp.top_p = 0.95;
  for (const std::vector<float>* l : {&normal, &ties, &flat, &spike}) {
    const Batch lb(DType::bf16, *l, 32);  // (fewer rows would run as clusters)
    for (int64_t k : {20, 50}) {
      rp.top_k = k;
      rp.temperature = l == &spike ? 8.0 : 1.0;  // the spike then holds ~3/4 of the top-k mass, not all
      check_distribution(lb, away_from_edges(lb.row, rp), split_row(lb));
    }
  }
}

TEST_CASE("split rows: a tile with more candidates than its list holds, so the last block gathers the row again") {
  // 600 copies of the row's maximum in the first tile: with k = 1000 the threshold lies at or below
  // their bin, more than one tile's list holds, so the row's candidates are gathered from the logits
  // again. The other elements lie below the maximum's bin.
  const int64_t v = 20000;
  std::mt19937_64 rng(11);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> l(v);
  for (auto& x : l) x = std::min(nd(rng), 2.75f);
  for (int64_t i = 0; i < 600; ++i) l[(i * 13) % 8192] = 3.0f;
  ref::SamplingRowParams rp;
  rp.top_k = 1000;
  for (DType dt : {DType::f32, DType::bf16}) {
    std::vector<float> row(l);
    for (auto& x : row) x = ref::to_float(dt, ref::from_float(dt, x));
    const Batch lb(dt, row, quick_mode() ? 64 : 1024);
    for (double top_p : {1.0, 0.9}) {
      rp.top_p = top_p;
      for (const char* row : workspace_rows(lb)) check_distribution(lb, away_from_edges(lb.row, rp), row);
    }
  }
}

TEST_CASE("split rows: a sample that misleads the threshold makes the row fall back, still exact") {
  // The threshold kernel samples the first 8 elements of every 64. Here they are unlike the rest: far
  // above it (the threshold then admits fewer than k elements) or far below it (more than the
  // candidate cap); either way the row's last block runs the one-block algorithm.
  std::mt19937_64 rng(5);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  auto row_with_sample = [&](int64_t v, float sampled_shift) {
    std::vector<float> l(v);
    for (int64_t i = 0; i < v; ++i) l[i] = std::clamp(nd(rng), -3.0f, 3.0f) + (i % 64 < 8 ? sampled_shift : 0.0f);
    return l;
  };
  struct Case {
    int64_t v;
    float shift;
    int k;
    double top_p;
  };
  // (k above split_local_top_k's reach: rows of small k take their tiles' own cuts, no threshold.)
  for (const Case c : {Case{4000, 8.0f, 1000, 1.0}, Case{4000, 8.0f, 300, 0.9}, Case{40000, -30.0f, 200, 0.95}})
    for (DType dt : {DType::f32, DType::bf16}) {
      const Batch lb(dt, row_with_sample(c.v, c.shift), quick_mode() ? 64 : 1024);
      ref::SamplingRowParams rp;
      rp.top_k = c.k;
      rp.top_p = c.top_p;
      for (const char* row : workspace_rows(lb)) check_distribution(lb, away_from_edges(lb.row, rp), row);
    }
}

namespace {
// The value bin of a logit (sampling_detail::value_bin), on the host: the top 16 bits of its order key.
uint32_t host_value_bin(float x) {
  x = std::min(x, FLT_MAX);  // +inf counts as the largest finite float
  uint32_t u;
  std::memcpy(&u, &x, 4);
  if (u == 0x80000000u) u = 0;  // -0 ties with +0
  return (u >> 31 ? ~u : u | 0x80000000u) >> 16;
}
// The threshold by its definition (split_threshold.hpp): the bin of the sample's m-th largest element (the
// first kSampleRunBytes of every kSampleStrideBytes), at most kWindow - 1 bins below the sample's largest, 0
// at or below bin 0x80.
uint32_t reference_threshold(const std::vector<float>& row, int elt_bytes, int32_t top_k) {
  const int64_t run = sampling_detail::kSampleRunBytes / elt_bytes;
  const int64_t stride = sampling_detail::kSampleStrideBytes / elt_bytes;
  std::vector<uint32_t> bins;
  for (int64_t s = 0; s < int64_t(row.size()); s += stride)
    for (int64_t i = s; i < std::min(s + run, int64_t(row.size())); ++i) bins.push_back(host_value_bin(row[i]));
  std::sort(bins.rbegin(), bins.rend());
  const uint32_t m = sampling_detail::sample_target(top_k), window = uint32_t(sampling_detail::kWindow);
  const uint32_t reach = m <= bins.size() ? std::min(bins[0] - bins[m - 1], window - 1) : window - 1;
  return bins[0] > reach + 0x80u ? bins[0] - reach : 0u;
}
// The threshold kernel's bins for the batch's rows (kBlock threads a row; top_k beyond the tiles' own cuts).
template <DType DT, int kBlock>
std::vector<uint32_t> kernel_thresholds(const Batch& lb, int32_t top_k) {
  using namespace sampling_detail;
  const DeviceContext* ctx = nullptr;
  REQUIRE(current_device_context(&ctx).ok());
  DeviceBuffer<uint8_t> ws(split_workspace_bytes(lb.b, lb.v));
  const SplitWorkspace w = split_layout(ws.get(), lb.b, lb.v, DT, true, false);
  REQUIRE(!split_local_top_k(lb.b, top_k, w.tiles));
  DeviceBuffer<int32_t> tokens(size_t(lb.b));
  const SamplingArgs a{lb.d.get(), lb.ld, lb.v, tokens.get(), false, nullptr, 1.0f, nullptr, top_k, nullptr, 1.0f,
                       nullptr, 0.0f, nullptr, 1, 0, nullptr, nullptr};
  REQUIRE(launch_dependent_on(*ctx, "threshold", sampling_threshold_kernel<true, DT, kBlock>, dim3(unsigned(lb.b)),
                              dim3(unsigned(kBlock)), stream_t{}, a, w)
              .ok());
  test::device_synchronize();
  const auto bytes = ws.download();
  std::vector<uint32_t> out(size_t(lb.b));
  std::memcpy(out.data(), bytes.data() + (reinterpret_cast<const uint8_t*>(w.threshold) - ws.get()), out.size() * 4);
  return out;
}
}  // namespace

TEST_CASE("the threshold kernel's bin is that of the sample's m-th largest element, at both block sizes") {
  // It decides speed only (the tiles count exactly, a row outside [k, cap] falls back), so the draws'
  // checks cannot see it: here it is compared with its definition. Rows of one and of several groups of
  // loads a block (V = 262144 fp32: four at 512 threads), few threads holding any (V = 4096), ties, negative
  // rows, -inf and +inf entries, -0 and +0, a spread wider than the window, every entry -inf.
  std::mt19937_64 rng(11);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  std::vector<std::pair<const char*, std::vector<float>>> rows;
  auto add = [&](const char* name, int64_t v, auto f) {
    std::vector<float> l(v);
    for (int64_t i = 0; i < v; ++i) l[i] = f(i);
    rows.emplace_back(name, std::move(l));
  };
  add("normal", 151936, [&](int64_t) { return nd(rng); });
  add("normal, V = 262144", 262144, [&](int64_t) { return nd(rng); });
  add("normal, V = 4096", 4096, [&](int64_t) { return nd(rng); });
  add("ties", 151936, [&](int64_t i) { return i % 3 ? 1.0f : 0.5f; });
  add("negative", 151936, [&](int64_t) { return -5.0f - std::fabs(nd(rng)); });
  add("-inf and +inf entries", 151936, [&](int64_t i) {
    return i % 5 == 0 ? -INFINITY : i == 777 ? INFINITY : i % 7 == 0 ? (i % 2 ? -0.0f : 0.0f) : nd(rng);
  });
  add("wider than the window", 151936, [&](int64_t) { return std::ldexp(1.0f, int(nd(rng) * 30.0f)); });
  add("every entry -inf", 4096, [&](int64_t) { return -INFINITY; });
  int checked = 0;
  for (const auto& [name, values] : rows)
    for (DType dt : {DType::f32, DType::bf16})
      for (int32_t k : {20, 200, 1000, 2048}) {
        const Batch lb(dt, values, k == 20 ? sampling_detail::kSplitLargeBatch : 2);
        if (k >= lb.v) continue;
        const uint32_t want = reference_threshold(lb.row, dtype_bytes(dt), k);
        using sampling_detail::kThresholdThreads, sampling_detail::kThresholdThreadsWide;
        const auto narrow = dt == DType::f32 ? kernel_thresholds<DType::f32, kThresholdThreads>(lb, k)
                                             : kernel_thresholds<DType::bf16, kThresholdThreads>(lb, k);
        const auto wide = dt == DType::f32 ? kernel_thresholds<DType::f32, kThresholdThreadsWide>(lb, k)
                                           : kernel_thresholds<DType::bf16, kThresholdThreadsWide>(lb, k);
        INFO(name << ", " << dtype_name(dt) << ", k = " << k);
        for (int64_t r = 0; r < lb.b; ++r) {
          CHECK(narrow[size_t(r)] == want);
          CHECK(wide[size_t(r)] == want);
        }
        ++checked;
      }
  CHECK(checked == 64);  // every row, dtype and k above (none skipped)
}

TEST_CASE("rows whose largest logit is not above 0: the stream row's draw finds the largest candidate") {
  // The stream row takes a fast row's largest value from its threads' maxima, where the loads past the
  // row's end read 0 (V = 40000: a partial last tile for every dtype): a largest value not above 0 could
  // be such a 0, so the draw then finds the largest among the candidates instead.
  const int64_t v = 40000;
  std::mt19937_64 rng(23);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  std::vector<float> base(v);
  for (auto& x : base) x = nd(rng);
  const float top = *std::max_element(base.begin(), base.end());
  for (DType dt : {DType::f32, DType::bf16})
    for (float shift : {-20.0f, -top}) {  // every logit negative; the largest exactly 0
      std::vector<float> row(v);
      for (int64_t i = 0; i < v; ++i)
        row[i] = dt == DType::f32 ? base[i] + shift : ref::to_float(dt, ref::from_float(dt, base[i] + shift));
      const Batch lb(dt, row, 64);
      for (int64_t k : {20, 1000}) {
        ref::SamplingRowParams rp;
        rp.top_k = k;
        rp.top_p = 0.9;
        for (const char* r : workspace_rows(lb)) check_distribution(lb, away_from_edges(lb.row, rp), r);
      }
    }
}

TEST_CASE("split rows of small top_k: each tile's own cut holds the row's top k, or the row falls back") {
  // Rows of small k take no threshold: each tile lists its elements at or above a cut of its own, from
  // its threads' largest elements. Here the row's top k all lie in one tile (the others' cuts hold none
  // of them); one tile holds 600 copies of the maximum (its list overflows: the row is gathered from
  // the logits again, each tile from its own cut); one tile's k-th largest thread maximum lies more than
  // kWindow bins below its largest (its cut takes every element: more than the candidate cap, so the
  // row falls back to the one-block algorithm).
  const int64_t v = 40000;
  std::mt19937_64 rng(13);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> one_tile(v), ties(v), far(v);
  for (int64_t i = 0; i < v; ++i) {
    const float x = std::clamp(nd(rng), -3.0f, 2.75f);
    one_tile[i] = i >= 16384 && i < 16384 + 100 ? 5.0f + 0.01f * float(i % 97) : x;
    ties[i] = i < 7800 && i % 13 == 0 ? 3.0f : x;
    far[i] = i == 100 ? -0.1f : x - 50.0f;
  }
  struct Case {
    const std::vector<float>* row;
    int k;
    double temperature, top_p;
  };
  for (const Case c : {Case{&one_tile, 50, 1.0, 0.9}, Case{&ties, 50, 1.0, 1.0}, Case{&ties, 20, 1.0, 0.8},
                       Case{&far, 20, 20.0, 1.0}})
    for (DType dt : {DType::f32, DType::bf16}) {
      std::vector<float> row(*c.row);
      for (auto& x : row) x = ref::to_float(dt, ref::from_float(dt, x));
      const Batch lb(dt, row, quick_mode() ? 8 : 32);  // below kSplitLargeBatch: the tiles' own cuts
      ref::SamplingRowParams rp;
      rp.top_k = c.k;
      rp.temperature = c.temperature;
      rp.top_p = c.top_p;
      for (const char* row : workspace_rows(lb)) check_distribution(lb, away_from_edges(lb.row, rp), row);
    }
}

TEST_CASE("split rows: one workspace serves calls of different B and V in turn") {
  // Every call leaves the workspace's counters zero whatever its shape (a larger batch after a smaller
  // one, longer rows after shorter ones), so the next call's tickets find each row's last block. The
  // shapes also lay the workspace out for different tiles (split_items: 16, 32 and 64 elements per
  // thread; fp32 takes 32 at B = 32 and 16 at B = 64, bf16 64 from B = 32).
  std::mt19937_64 rng(9);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  auto values = [&](int64_t v) {
    std::vector<float> l(v);
    for (auto& x : l) x = nd(rng);
    return l;
  };
  const Batch small(DType::f32, values(9000), 3), mid(DType::f32, values(40000), 32);
  const Batch big(DType::f32, values(40000), 64);
  const Batch small16(DType::bf16, values(9000), 3), mid16(DType::bf16, values(70000), 32);
  const Batch big16(DType::bf16, values(40000), 64);
  Workspace ws(std::max({workspace_bytes(small), workspace_bytes(big), workspace_bytes(mid16)}));
  ref::SamplingRowParams rp;
  rp.top_k = 5;
  int call = 0;
  for (const Batch* lb :
       {&small, &big, &small, &mid, &big, &mid, &small16, &big16, &mid16, &small16, &big16, &mid16, &small}) {
    std::vector<int64_t> order(lb->v);
    for (int64_t i = 0; i < lb->v; ++i) order[i] = i;
    std::partial_sort(order.begin(), order.begin() + 5, order.end(),
                      [&](int64_t x, int64_t y) { return lb->row[x] > lb->row[y]; });
    DeviceBuffer<int32_t> tok(lb->b);
    tok.fill_bytes(0x7f);
    SamplingParams p = make_params(*lb, tok.get(), rp);
    p.seed = 3;
    p.offset = uint64_t(call++);
    const char* row = call % 2 && stream_row(*lb) ? stream_row(*lb) : split_row(*lb);
    REQUIRE(ws.sample(p, nullptr, row).ok());
    test::device_synchronize();
    INFO("call " << call << ": B = " << lb->b << ", V = " << lb->v);
    for (const int32_t t : tok.download())
      CHECK(std::find(order.begin(), order.begin() + 5, int64_t(t)) != order.begin() + 5);
    CHECK(ws.counters_zero(lb->b));
  }
}
