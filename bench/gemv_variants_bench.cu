// GEMV kernel-configuration sweep (CUDA): times compile-time variants of the mma and rowwise kernels
// (warps per block, k-steps in flight, row tiles per block, double-buffered loads, W prefetch) on the
// decode shapes, launching the kernels directly (as dependent launches, as the rows do on sm_90). Its
// results choose the defaults in gemv/launch.hpp; the rows themselves are measured by gemv_bench.
#include <string>

#include "gemv_problem.hpp"
#include "harness.hpp"

using namespace dcukern;
using namespace dcukern::bench;
using namespace dcukern::gemv_detail;

namespace {

GemvArgs args(const Buffers& b, DType dt, int c) {
  const GemvParams p = b.params(dt, c);
  return GemvArgs{static_cast<const uint16_t*>(p.x.data), static_cast<const uint16_t*>(p.w.data), nullptr,
                  static_cast<uint16_t*>(p.y.data), b.n, b.m, b.k, b.k, b.k, b.m};
}

void report(benchmark::State& st, double us, const Buffers& b) {
  st.SetIterationTime(us * 1e-6);
  st.counters["us"] = us;
  st.counters["pct_read_bw"] = 100.0 * b.bytes() / us / 1e3 / read_bandwidth_gbs();
}

template <class Cfg>
void bench_mma(benchmark::State& st, Shape s, int n) {
  constexpr DType dt = DType::bf16;
  Buffers b(dt, s, n);
  double us = 0;
  for (auto _ : st)
    us = graph_time_us(b.copies, [&](stream_t stream, int c) {
      const dim3 grid(unsigned((b.m + Cfg::kRows - 1) / Cfg::kRows));
      const GemvArgs a = args(b, dt, c);
      const auto kernel = n <= 8 ? gemv_mma_kernel<dt, 1, Cfg> : gemv_mma_kernel<dt, 2, Cfg>;
      BENCH_RT(launch_dependent(true, 0, kernel, grid, Cfg::kThreads, 0, stream, a));
    });
  report(st, us, b);
}

template <int kUnroll, int kPrefetch, NextLaunch kNext, int kMinBlocks>
void bench_rowwise(benchmark::State& st, Shape s) {
  constexpr DType dt = DType::bf16;
  Buffers b(dt, s, 1);
  double us = 0;
  for (auto _ : st)
    us = graph_time_us(b.copies, [&](stream_t stream, int c) {
      BENCH_RT(launch_dependent(true, 0, gemv_rowwise_kernel<FmaDot, dt, kUnroll, kPrefetch, kNext, kMinBlocks>,
                                dim3(unsigned((b.m + 7) / 8)), kRowwiseThreads, 0, stream, args(b, dt, c)));
    });
  report(st, us, b);
}

template <class Cfg>
void add_mma(const char* name) {
  for (const Shape& s : kShapes)
    for (int n : {1, 8, 16})
      benchmark::RegisterBenchmark(
          (std::string("mma/") + name + "/" + s.name + "/N" + std::to_string(n)).c_str(), bench_mma<Cfg>, s, n)
          ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}
template <int kUnroll, int kPrefetch = kWPrefetchBytes, NextLaunch kNext = NextLaunch::after_loads, int kMinBlocks = 0>
void add_rowwise() {
  const std::string name = "rowwise/u" + std::to_string(kUnroll) + "p" + std::to_string(kPrefetch) +
                           (kNext == NextLaunch::at_exit ? "e" : kNext == NextLaunch::at_start ? "s" : "") +
                           (kMinBlocks ? "b" + std::to_string(kMinBlocks) : std::string()) + "/";
  for (const Shape& s : kShapes)
    benchmark::RegisterBenchmark((name + s.name).c_str(), bench_rowwise<kUnroll, kPrefetch, kNext, kMinBlocks>, s)
        ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

void register_all() {
  add_rowwise<4, 0, NextLaunch::at_exit>();  // first: also brings the clocks up before the sweep proper
  // Names: w warps, g row groups, u k-steps a group, t row tiles, db double-buffered groups, p prefetch
  // bytes, and when the next kernel may launch: s at the start of a block, e at exit, else after the
  // block's last loads; bB: registers bounded for B blocks per SM (else none).
  constexpr auto kStart = NextLaunch::at_start, kExit = NextLaunch::at_exit;
  add_mma<MmaConfig<8, 4, 1, false, false, 0, kExit>>("w8u4t1p0e");
  add_mma<MmaConfig<8, 4, 1, false, false, 2048, kStart>>("w8u4t1p2048s");
  add_mma<MmaConfig<8, 4, 1>>("w8u4t1p2048");
  add_mma<MmaConfig<4, 2, 1, false, true>>("w4u2t1db");
  add_mma<MmaConfig<4, 2, 1, false, true, 0>>("w4u2t1dbp0");
  add_mma<MmaConfig<4, 2, 1, false, true, 0, kExit>>("w4u2t1dbp0e");
  add_mma<MmaConfig<4, 1, 1, false, true>>("w4u1t1db");
  add_mma<MmaConfig<4, 3, 1, false, true>>("w4u3t1db");
  add_mma<MmaConfig<2, 2, 1, false, true>>("w2u2t1db");
  add_mma<MmaConfig<6, 2, 1, false, true>>("w6u2t1db");
  add_mma<MmaConfig<4, 2, 2, false, true>>("w4u2t2db");
  add_mma<MmaConfig<4, 4, 1, false, true>>("w4u4t1db");
  add_mma<MmaConfig<8, 2, 1, false, true, 2048, NextLaunch::after_loads, 2>>("w8g2u2t1db");
  add_mma<MmaConfig<16, 2, 1, false, true, 2048, NextLaunch::after_loads, 4>>("w16g4u2t1db");
  add_mma<MmaConfig<8, 2, 1, false, true, 2048, NextLaunch::after_loads, 4>>("w8g4u2t1db");
  add_mma<MmaConfig<4, 2, 1, false, true, 2048, NextLaunch::after_loads, 1, 4>>("w4u2t1dbb4");
  add_mma<MmaConfig<4, 3, 1, false, true, 2048, NextLaunch::after_loads, 1, 4>>("w4u3t1dbb4");
  add_rowwise<2, 0, kExit>();
  add_rowwise<2, 0>();
  add_rowwise<2, 2048, kExit>();
  add_rowwise<2>();
  add_rowwise<2, 2048, kStart>();
  add_rowwise<2, 2048, kExit, 8>();
  add_rowwise<4, 2048, kExit, 8>();
}

}  // namespace

int main(int argc, char** argv) { return run_benchmarks(argc, argv, register_all); }
